#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The privileges memleakd keeps: only the capabilities its work needs, in every thread, and
that work done with them alone (as under memleakd.service, whose bounding set is the same):
another user's process scanned from a snapshot whose copy it must kill without CAP_KILL (and
kernel frames named with CAP_SYSLOG: test_kernel.py, run with these)."""

import os
import shutil
import unittest

import harness
from test_reachability import CLASSES, EXPECTED, PROGRAM as REACH_PROGRAM, classes_by_first_frame

# linux/capability.h: what memleakd keeps (daemon/core/capabilities.c)
CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_SYSLOG, CAP_PERFMON, CAP_BPF = 2, 19, 21, 34, 38, 39
KEPT = sum(1 << c for c in (CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_SYSLOG, CAP_PERFMON, CAP_BPF))
UID = 65534                     # nobody's: any user but root


def capability_sets(pid):
    """{tid: {'CapEff': int, ...}} for every thread of pid."""
    found = {}
    for tid in os.listdir(f'/proc/{pid}/task'):
        with open(f'/proc/{pid}/task/{tid}/status') as f:
            found[int(tid)] = {k: int(v, 16) for k, v in
                               (line.split(':\t') for line in f if line.startswith('Cap'))}
    return found


def processes_of(exe):
    """The pids running exe (no procps on a fresh machine)."""
    found = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            if os.readlink(f'/proc/{pid}/exe') == exe:
                found.append(int(pid))
        except OSError:
            pass
    return found


class PrivilegesTest(harness.DaemonTestCase):

    def test_the_daemon_keeps_only_the_capabilities_it_needs_in_every_thread(self):
        daemon = self.start_daemon()
        p = self.start_program(REACH_PROGRAM)
        daemon.attach(p.pid)
        p.go()
        p.expect('made')
        # its threads made by now: the report worker, the unwind tables' loader, a scan's
        daemon.ctl_json('report', '--pid', p.pid, '--reachability')
        sets = capability_sets(daemon.proc.pid)
        self.assertGreater(len(sets), 1, sets)
        for tid, caps in sets.items():
            self.assertEqual(caps, {'CapInh': 0, 'CapPrm': KEPT, 'CapEff': KEPT, 'CapBnd': KEPT, 'CapAmb': 0},
                             (tid, {k: hex(v) for k, v in caps.items()}))

    def test_another_user_s_process_is_scanned_from_a_snapshot_whose_copy_is_killed(self):
        # the copy a snapshot makes is the process's user's: kill() would need CAP_KILL, which
        # memleakd does not keep; as the copy's tracer it kills it all the same (before, the scan
        # waited for a copy that never died: no answer, the copy left stopped)
        daemon = self.start_daemon(config={'reachability_concurrent': 0, 'snapshot_interval_ms': 200})
        os.chmod(self.workdir, 0o711)
        bin_dir = os.path.join(self.workdir, 'bin')
        os.mkdir(bin_dir, 0o755)
        shutil.copy(os.path.join(harness.PROGRAMS_DIR, REACH_PROGRAM), bin_dir)
        p = harness.LeakProgram(REACH_PROGRAM, command=[
            'setpriv', f'--reuid={UID}', f'--regid={UID}', '--clear-groups', os.path.join(bin_dir, REACH_PROGRAM)])
        self.addCleanup(p.kill)
        p.expect('ready')
        daemon.attach(p.pid)
        p.go()
        p.expect('made')
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        reach = report['targets'][0]['reachability']
        self.assertEqual((reach['method'], reach['error'], reach['copy_reaped']), ('snapshot', None, True), reach)
        found = classes_by_first_frame(report, set(EXPECTED) | {'free_block'})
        self.assertEqual(found, EXPECTED, harness.format_stacks(report))
        self.assertTrue(set(CLASSES) <= set(reach), reach)
        # nothing of the copy left: the program's only process of that user
        self.assertEqual(processes_of(os.path.join(bin_dir, REACH_PROGRAM)), [p.pid])
        with open(f'/proc/{p.pid}/status') as f:
            self.assertIn('TracerPid:\t0\n', f.read())


if __name__ == '__main__':
    unittest.main(verbosity=2)
