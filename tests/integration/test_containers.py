# SPDX-License-Identifier: MIT
"""A target in its own mount and pid namespaces (a container, as far as memleakd can tell):
its libc and binary are found through /proc/PID/root, its pid is the one the daemon sees; its perf
map is the one in its own /tmp, named by the pid it knows itself by."""

import os
import subprocess
import unittest

import harness
from test_every_hook import EXPECTED, NAMES, PROGRAM
from test_jit import EXPECTED as JIT_EXPECTED, NAMES as JIT_NAMES


def descendant_running(pid, path):
    """The pid of the process below pid whose executable is path (the program the wrapper ran)."""
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            if os.readlink(f'/proc/{p}/exe') == path:
                return p
            with open(f'/proc/{p}/task/{p}/children') as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return None


class ContainerTest(harness.DaemonTestCase):

    def test_target_in_other_mount_and_pid_namespace_reports_exact_ground_truth(self):
        # The binary is copied onto a tmpfs mounted only inside the target's mount namespace: the
        # daemon cannot open it by its path, only through /proc/PID/root.
        hidden = os.path.join(self.workdir, 'container-only')
        os.mkdir(hidden)
        inner_path = os.path.join(hidden, PROGRAM)
        script = (f'mount -t tmpfs tmpfs {hidden} && cp {os.path.join(harness.PROGRAMS_DIR, PROGRAM)} {hidden}/ '
                  f'&& exec {inner_path}')
        command = ['unshare', '--mount', '--propagation', 'private', '--pid', '--fork', '--mount-proc',
                   'sh', '-c', script]

        def scenario():
            daemon = self.start_daemon()
            program = harness.LeakProgram(PROGRAM, command=command)
            self.addCleanup(program.kill)
            program.expect('ready')
            self.assertFalse(os.path.exists(inner_path), 'the tmpfs leaked into the test\'s namespace')
            pid = harness.wait_until(lambda: descendant_running(program.proc.pid, inner_path), 5)
            self.assertIsNotNone(pid, 'the namespaced program was not found')
            with open(f'/proc/{pid}/status') as f:
                nspid = [line.split()[1:] for line in f if line.startswith('NSpid:')][0]
            self.assertEqual(nspid[-1], '1', f'not pid 1 in its own pid namespace: NSpid {nspid}')
            program.pid = pid

            reply = daemon.attach(pid)
            self.assertEqual(reply['target']['pid'], pid)
            program.run_leaks()
            report, totals = self.wait_for_totals(daemon, pid, NAMES, EXPECTED)
            self.assert_totals(report, totals, EXPECTED, f'{PROGRAM} in its own namespaces')
            leaking = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] in EXPECTED]
            self.assertTrue(leaking)
            for stack in leaking:
                # the module is named as the target sees it, and still resolves to its source line
                self.assertEqual(stack['frames'][0]['module'], inner_path, stack)
                self.assertIsNotNone(stack['frames'][0]['line'], stack)
            return report

        scenario()

    def test_jit_code_of_a_target_in_its_own_namespaces_is_named_by_its_own_perf_map(self):
        # leak-jit, pid 1 in its namespace, writes /tmp/perf-1.map on a tmpfs only it sees.
        path = os.path.join(harness.PROGRAMS_DIR, 'leak-jit')
        command = ['unshare', '--mount', '--propagation', 'private', '--pid', '--fork', '--mount-proc',
                   'sh', '-c', f'mount -t tmpfs tmpfs /tmp && exec {path}']
        daemon = self.start_daemon()
        program = harness.LeakProgram('leak-jit', command=command)
        self.addCleanup(program.kill)
        program.expect('ready')
        pid = harness.wait_until(lambda: descendant_running(program.proc.pid, path), 5)
        self.assertIsNotNone(pid, 'the namespaced program was not found')
        program.pid = pid
        daemon.attach(pid)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, pid, JIT_NAMES, JIT_EXPECTED)
        self.assert_totals(report, totals, JIT_EXPECTED, 'leak-jit in its own namespaces')
        [named] = [s for s in report['stacks'] if s['frames'][0]['symbol'] == 'jit_leak']
        self.assertEqual([f['symbol'] for f in named['frames'][:3]],
                         ['jit_leak', 'jit_named_stub', 'leak_through_named_stub'], harness.format_stacks(report))


if __name__ == '__main__':
    unittest.main(verbosity=2)
