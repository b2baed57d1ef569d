#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Targets memleakd.conf declares ([target] sections): a program by its file (exe) and one by
name (comm), each traced from memleakd's start when it runs already and from its exec when it
starts later, its leak exact under its pid, a worker it forks followed, a program declared by
neither left alone; a cgroup not there yet at the start watched once it is made; a reload that
withdraws a declaration ends its watch and detaches its processes, one that adds a declaration
watches it. The watches attach requests made are made again after a restart, one whose cgroup
went while memleakd was down included. (The programs are copies of tests/programs/leak-service.c under names of the test's
own: other tests run the same program meanwhile.)"""

import os
import shutil
import signal
import unittest

import harness
from test_cgroups import PROGRAM, SERVICE, CgroupTestCase, cgroup2_mount


class DeclaredTargets(CgroupTestCase):

    def copy_program(self, name):
        """leak-service copied as name (also its comm: 15 bytes at most) into the test's bin."""
        bin_dir = os.path.join(self.workdir, 'bin')
        os.makedirs(bin_dir, exist_ok=True)
        path = os.path.join(bin_dir, name)
        shutil.copy(os.path.join(harness.PROGRAMS_DIR, PROGRAM), path)
        return path

    def start_copy(self, path):
        p = harness.LeakProgram(PROGRAM, command=[path])
        self.addCleanup(p.kill)
        p.expect('ready')
        return p

    def settings(self, daemon):
        s = dict(harness.TEST_CONFIG)
        s['cache_directory'] = os.path.join(daemon.workdir, 'cache')
        return s

    def reload(self, daemon, lines):
        harness.write_config(daemon.config_path, self.settings(daemon), lines)
        daemon.proc.send_signal(signal.SIGHUP)

    def live_pids(self, daemon):
        return sorted(t['pid'] for t in daemon.status()['targets'] if not t['exited'])

    def test_programs_declared_by_file_and_by_name_are_traced_from_start_and_exec(self):
        tag = os.getpid() % 100000
        by_file = self.copy_program(f'mlk-e-{tag}')
        by_name = self.copy_program(f'mlk-c-{tag}')
        neither = self.copy_program(f'mlk-n-{tag}')
        early = self.start_copy(by_file)
        # the snapshot tick (and its walk of /proc) far away: only BPF's exec events find the
        # programs started later
        d = self.start_daemon(config={'snapshot_interval_ms': 600000}, extra_config_lines=[
            '[target]', f'exe = {by_file}',
            '[target]', f'comm = {os.path.basename(by_name)}', 'sample_bytes = 0'])
        # running before memleakd started: attached at its start
        self.wait_target(d, early.pid, 'the program declared by file, running at the start')
        # started later: from its exec
        late = self.start_copy(by_file)
        named = self.start_copy(by_name)
        other = self.start_copy(neither)
        self.wait_target(d, late.pid, 'the program declared by file, started later')
        self.wait_target(d, named.pid, 'the program declared by name, started later')
        worker = self.fork_worker(d, named)
        for p in (early, late, named, other):
            self.leak(p)
        for p in (early, late, named):
            self.assert_exact(d, p.pid, SERVICE, f'pid {p.pid}')
        self.assert_exact(d, worker, {'worker_leak': {'bytes': 3 * 256, 'allocs': 3}}, 'the worker it forked')
        status = d.status()
        self.assertNotIn(other.pid, [t['pid'] for t in status['targets']])
        watches = {w.get('exe') or w.get('comm'): w for w in status['watches']}
        self.assertEqual(set(watches), {by_file, os.path.basename(by_name)}, status['watches'])
        self.assertEqual((watches[by_file]['processes'], watches[by_file]['attached'],
                          watches[by_file]['missed'], watches[by_file]['failed']), (2, 2, 0, 0), watches)
        # the program and its worker
        self.assertEqual(watches[os.path.basename(by_name)]['processes'], 2, watches)
        for p in (early, late, named, other):
            p.proc.stdin.close()
            self.assertEqual(p.proc.wait(harness.PROGRAM_TIMEOUT_S), 0)

    def test_a_cgroup_not_there_yet_is_watched_once_made_and_a_reload_withdraws_it(self):
        parent = self.make_cgroup()
        cgroup = os.path.join(parent, 'later')
        self.addCleanup(self.remove_cgroup, cgroup)
        tag = os.getpid() % 100000
        by_name = self.copy_program(f'mlk-r-{tag}')
        declared = ['[target]', f'cgroup = {cgroup}']
        d = self.start_daemon(extra_config_lines=declared)
        self.assertTrue(harness.wait_until(lambda: 'which is not there yet' in d.log(), harness.REPORT_TIMEOUT_S),
                        d.log())
        self.assertEqual(d.status()['watches'], [])
        os.mkdir(cgroup)
        # watched at a snapshot tick, from then on its processes traced
        self.assertTrue(harness.wait_until(lambda: d.status()['watches'], harness.REPORT_TIMEOUT_S), d.log())
        inside = self.start_in(cgroup)
        self.wait_target(d, inside.pid, 'a process of the cgroup made after the start')
        self.leak(inside)
        self.assert_exact(d, inside.pid, SERVICE, 'the process of the declared cgroup')

        # withdrawn, and a program declared instead: the cgroup's process let go, the program's traced
        self.reload(d, ['[target]', f'comm = {os.path.basename(by_name)}'])
        self.assertTrue(harness.wait_until(lambda: inside.pid not in self.live_pids(d), harness.REPORT_TIMEOUT_S),
                        d.status()['targets'])
        self.assertTrue(harness.wait_until(lambda: [w for w in d.status()['watches'] if 'comm' in w],
                                           harness.REPORT_TIMEOUT_S), d.log())
        self.assertEqual([w.get('comm') for w in d.status()['watches']], [os.path.basename(by_name)])
        named = self.start_copy(by_name)
        self.wait_target(d, named.pid, 'the program declared at the reload')
        with open(f'/proc/{inside.pid}/status') as f:
            self.assertIn('TracerPid:\t0\n', f.read())

    def test_a_process_detached_by_request_is_not_taken_back_by_its_watch(self):
        tag = os.getpid() % 100000
        by_name = self.copy_program(f'mlk-d-{tag}')
        name = os.path.basename(by_name)
        d = self.start_daemon(extra_config_lines=['[target]', f'comm = {name}'])
        self.assertTrue(harness.wait_until(lambda: d.status()['watches'], harness.REPORT_TIMEOUT_S), d.log())
        first = self.start_copy(by_name)
        self.wait_target(d, first.pid, 'the program declared by name')
        d.ctl_ok('detach', '--pid', first.pid)
        # let go for good while it runs that program (the ticks do not take it back); its watch
        # stays: a program started anew is traced
        second = self.start_copy(by_name)
        self.wait_target(d, second.pid, 'the program declared by name, started again')
        self.assertFalse(harness.wait_until(lambda: first.pid in self.live_pids(d), 1.0, interval=0.1),
                         d.status()['targets'])
        self.assertEqual(len(d.status()['watches']), 1)

    def test_a_process_adopted_after_a_restart_is_its_declaration_s_again(self):
        # memleakd killed and started again: the process is adopted (its probes kept pinned),
        # and the declared watch made anew takes it as its own (a watch is not kept itself)
        parent = self.make_cgroup()
        cgroup = os.path.join(parent, 'kept')
        os.mkdir(cgroup)
        self.addCleanup(self.remove_cgroup, cgroup)
        lines = ['[target]', f'cgroup = {cgroup}']
        d = self.start_daemon(extra_config_lines=lines)
        inside = self.start_in(cgroup)
        self.wait_target(d, inside.pid, 'the process of the declared cgroup')
        self.leak(inside)
        self.assert_exact(d, inside.pid, SERVICE, 'before the restart')
        again = self.restart(d, extra_config_lines=lines)
        [target] = [t for t in again.status()['targets'] if t['pid'] == inside.pid]
        self.assertTrue(target['adopted'], target)
        self.assertTrue(harness.wait_until(
            lambda: [t['pid'] for t in again.ctl_json('report', '--cgroup', cgroup)['targets']] == [inside.pid],
            harness.REPORT_TIMEOUT_S), again.status())
        self.assertEqual([w['processes'] for w in again.status()['watches']], [1])
        self.assert_exact(again, inside.pid, SERVICE, 'after the restart')

    def restart(self, d, **kwargs):
        """d SIGKILLed, and a memleakd on its directories (state, pins) started."""
        d.stopped_on_purpose = True
        d.proc.kill()
        d.proc.wait(15)
        again = harness.Daemon(d.workdir, **kwargs)
        self.daemons.append(again)
        self.addCleanup(self._stop_daemon_at_cleanup, again)
        again.start()
        return again

    def test_a_cgroup_an_attach_watched_is_watched_again_after_a_restart(self):
        cgroup = self.make_cgroup('asked')
        d = self.start_daemon()
        d.ctl_json('attach', '--cgroup', cgroup)
        again = self.restart(d)
        self.assertEqual([w['cgroup'] for w in again.status()['watches']], [cgroup], again.log())
        self.assertIn(f'Watching cgroup {cgroup} again, as before the restart', again.log())
        inside = self.start_in(cgroup)
        self.wait_target(again, inside.pid, 'a process entering the cgroup after the restart')
        self.leak(inside)
        self.assert_exact(again, inside.pid, SERVICE, 'after the restart')
        # its watch ended: not made again at the next start
        again.ctl_json('detach', '--cgroup', cgroup)
        third = self.restart(again)
        self.assertEqual(third.status()['watches'], [])

    def test_a_watched_cgroup_gone_while_memleakd_was_down_is_watched_for(self):
        # the unit stopped while memleakd was down (its cgroup removed): at the start its watch
        # is made again all the same, and the processes of its next start are traced
        cgroup = self.make_cgroup('stopped')
        d = self.start_daemon()
        d.ctl_json('attach', '--cgroup', cgroup)
        d.stopped_on_purpose = True
        d.proc.kill()
        d.proc.wait(15)
        self.remove_cgroup(cgroup)
        again = self.restart(d)
        self.assertEqual([(w['cgroup'], w['processes']) for w in again.status()['watches']], [(cgroup, 0)],
                         again.log())
        self.assertIn(f'cgroup {cgroup} is not there now: its processes are attached once it is', again.log())
        os.mkdir(cgroup)
        inside = self.start_in(cgroup)
        self.wait_target(again, inside.pid, 'a process of the cgroup made again after the restart')
        self.leak(inside)
        self.assert_exact(again, inside.pid, SERVICE, 'after the restart')
        # still kept across the next restart, as any watch an attach made
        third = self.restart(again)
        self.assertEqual([w['cgroup'] for w in third.status()['watches']], [cgroup], third.log())


if __name__ == '__main__':
    unittest.main(verbosity=2)
