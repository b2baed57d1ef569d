# SPDX-License-Identifier: MIT
"""Targets under a real memleakd: two at once, detach, attaching twice, a target that exits, one
that execs."""

import os
import subprocess
import sys
import time
import unittest

import harness
from test_allocators import NAMES as ALLOC_NAMES, expected_for as alloc_expected_for
from test_every_hook import EXPECTED as EVERY_HOOK_EXPECTED, NAMES as EVERY_HOOK_NAMES

EVERY_HOOK = 'leak-every-hook'
EXIT_PROGRAM = 'leak-exit'
EXIT_EXPECTED = {'leak_then_exit': {'bytes': 3001 * 13, 'allocs': 13}}     # tests/programs/leak-exit.c
EXIT_NAMES = {'leak_then_exit', 'main'}

PIDNS_ENV = 'MEMLEAKD_IT_IN_PIDNS'     # set in the pid namespace a test runs itself again in
EXEC_PROGRAM = 'leak-exec'
EXEC_BEFORE = {'leak_before_exec': {'bytes': 333 * 5, 'allocs': 5}}       # tests/programs/leak-exec.c
EXEC_AFTER = {'leak_after_exec': {'bytes': 999 * 7, 'allocs': 7}}
EXEC_NAMES = {'leak_before_exec', 'leak_after_exec', 'main'}


def target_pids(reply):
    return sorted(t['pid'] for t in reply['targets'])


class TargetsTest(harness.DaemonTestCase):

    def attach_and_leak(self, daemon):
        program = self.start_program(EVERY_HOOK)
        daemon.attach(program.pid)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, EVERY_HOOK_NAMES, EVERY_HOOK_EXPECTED)
        self.assert_totals(report, totals, EVERY_HOOK_EXPECTED, f'{EVERY_HOOK} pid {program.pid}')
        return program

    def attached_programs(self, daemon, n):
        programs = [self.start_program(EVERY_HOOK) for _ in range(n)]
        for p in programs:
            daemon.attach(p.pid)
        return programs

    def test_two_targets_attached_at_once_reported_separately(self):
        def scenario():
            daemon = self.start_daemon()
            a, b = self.attached_programs(daemon, 2)
            self.assertEqual(target_pids(daemon.status()), sorted([a.pid, b.pid]))
            a.go()
            b.go()
            a.expect('done')
            b.expect('done')
            for p in (a, b):
                report, totals = self.wait_for_totals(daemon, p.pid, EVERY_HOOK_NAMES, EVERY_HOOK_EXPECTED)
                self.assert_totals(report, totals, EVERY_HOOK_EXPECTED, f'report --pid {p.pid}')
                self.assertEqual(target_pids(report), [p.pid])
                self.assertEqual({s['pid'] for s in report['stacks']}, {p.pid})
            return daemon, a, b

        daemon, a, b = scenario()
        full = daemon.report()
        self.assertEqual(target_pids(full), sorted([a.pid, b.pid]))
        self.assertEqual({s['pid'] for s in full['stacks']}, {a.pid, b.pid})
        for p in (a, b):
            totals = harness.per_function(full, EVERY_HOOK_NAMES, pid=p.pid)
            self.assert_totals(full, totals, EVERY_HOOK_EXPECTED, f'report without --pid, pid {p.pid}')

    def test_detach_removes_target_and_its_stacks(self):
        def scenario():
            daemon = self.start_daemon()
            return daemon, self.attach_and_leak(daemon)

        daemon, program = scenario()
        reply = daemon.ctl_json('detach', '--pid', program.pid)
        self.assertEqual(reply['target']['pid'], program.pid, reply)

        reply = daemon.request({'v': 1, 'id': 41, 'cmd': 'report', 'pid': program.pid})
        self.assertIs(reply['ok'], False, reply)
        self.assertEqual(reply['error']['code'], 'ESRCH', reply)
        self.assertEqual(reply['id'], 41, reply)
        r = daemon.ctl('report', '--pid', program.pid)
        self.assertNotEqual(r.returncode, 0, f'memleakctl report --pid of a detached target:\n{r.stdout}{r.stderr}')

        self.assertEqual(daemon.status()['targets'], [])
        full = daemon.report()
        self.assertEqual(full['targets'], [])
        self.assertEqual(full['stacks'], [], harness.format_stacks(full))

        reply = daemon.request({'v': 1, 'id': 42, 'cmd': 'detach', 'pid': program.pid})
        self.assertEqual(reply['error']['code'], 'ESRCH', reply)

        # The probes are gone and the program runs on unharmed; attached again, it starts from
        # nothing: the old allocations were dropped with the target.
        daemon.attach(program.pid)
        report = daemon.report(pid=program.pid)
        self.assertEqual(report['stacks'], [], harness.format_stacks(report))
        self.assertEqual(program.finish(), 0)

    def test_a_slot_given_back_by_a_detach_serves_the_next_target_alone(self):
        # Each target's probes find its settings at its slot of BPF's target_slots. A detach gives
        # the slot back at once, while its probes are still being removed in the background: the
        # next target takes it, and the detached process's calls must count for nobody.
        def scenario():
            daemon = self.start_daemon()
            a, b = self.attached_programs(daemon, 2)
            daemon.ctl_json('detach', '--pid', a.pid)
            c, = self.attached_programs(daemon, 1)
            self.assertEqual(target_pids(daemon.status()), sorted([b.pid, c.pid]))
            for p in (a, b, c):
                p.go()
            for p in (a, b, c):
                p.expect('done')
            for p in (b, c):
                report, totals = self.wait_for_totals(daemon, p.pid, EVERY_HOOK_NAMES, EVERY_HOOK_EXPECTED)
                self.assert_totals(report, totals, EVERY_HOOK_EXPECTED, f'report --pid {p.pid}')
            return daemon, a, b, c

        daemon, a, b, c = scenario()
        full = daemon.report()
        self.assertEqual({s['pid'] for s in full['stacks']}, {b.pid, c.pid}, harness.format_stacks(full))
        # More attaches than max_targets (8), one after another: every detach gave its slot back.
        for i in range(harness.TEST_CONFIG['max_targets'] + 2):
            p, = self.attached_programs(daemon, 1)
            daemon.ctl_json('detach', '--pid', p.pid)
            p.run_leaks()
            self.assertEqual(p.finish(), 0)
        self.assertEqual(target_pids(daemon.status()), sorted([b.pid, c.pid]))

    def test_attaching_twice_is_an_error(self):
        def scenario():
            daemon = self.start_daemon()
            program = self.start_program(EVERY_HOOK)
            daemon.attach(program.pid)

            r = daemon.ctl('attach', '--pid', program.pid)
            self.assertNotEqual(r.returncode, 0, f'second attach succeeded:\n{r.stdout}{r.stderr}')
            reply = daemon.request({'v': 1, 'id': 9, 'cmd': 'attach', 'pid': program.pid})
            self.assertIs(reply['ok'], False, reply)
            self.assertEqual(reply['error']['code'], 'EEXIST', reply)
            self.assertEqual(reply['id'], 9, reply)
            self.assertEqual(target_pids(daemon.status()), [program.pid])

            # The refused attaches added no second set of probes: every allocation still counts once.
            program.run_leaks()
            report, totals = self.wait_for_totals(daemon, program.pid, EVERY_HOOK_NAMES, EVERY_HOOK_EXPECTED)
            self.assert_totals(report, totals, EVERY_HOOK_EXPECTED, 'after two refused attaches')

        scenario()

    def attach_until_exited(self, daemon):
        """leak-exit attached, leaking, then exited: once status shows it exited, its program."""
        program = self.start_program(EXIT_PROGRAM)
        daemon.attach(program.pid)
        program.go()
        program.expect('done')
        self.assertEqual(program.proc.wait(harness.PROGRAM_TIMEOUT_S), 0)

        def exited():
            return [t for t in daemon.status()['targets'] if t['pid'] == program.pid and t['exited']]

        self.assertTrue(harness.wait_until(exited, harness.REPORT_TIMEOUT_S, interval=0.1),
                        f'status never showed pid {program.pid} as exited: {daemon.status()["targets"]}')
        return program

    def test_target_that_exits_is_marked_exited_and_keeps_its_report(self):
        def scenario():
            daemon = self.start_daemon()
            program = self.attach_until_exited(daemon)
            report, totals = self.wait_for_totals(daemon, program.pid, EXIT_NAMES, EXIT_EXPECTED)
            self.assert_totals(report, totals, EXIT_EXPECTED, f'{EXIT_PROGRAM} after it exited')
            return daemon, program, report

        daemon, program, report = scenario()
        self.assertEqual([(t['pid'], t['exited'], t['outstanding_bytes'], t['outstanding_allocs'])
                          for t in report['targets']],
                         [(program.pid, True, 3001 * 13, 13)])
        # Still there a little later: the last report is kept, not dropped with the process.
        full = daemon.report()
        self.assertEqual(harness.per_function(full, EXIT_NAMES, pid=program.pid), EXIT_EXPECTED)

    def start_program_at_pid(self, name, pid, tries=200):
        """name started with pid (free again: the process that had it was reaped), by having the
        kernel hand out pid - 1 last (ns_last_pid, as CRIU does); None when other forks kept
        taking it first."""
        for _ in range(tries):
            with open('/proc/sys/kernel/ns_last_pid', 'w') as f:
                f.write(str(pid - 1))
            p = harness.LeakProgram(name)
            if p.pid == pid:
                self.addCleanup(p.kill)
                p.expect('ready')
                return p
            p.kill()
        return None

    def test_a_new_process_on_an_exited_target_s_pid_keeps_its_report(self):
        # attaching to a process that reused an exited target's pid dropped that target's last
        # report, silently; now both are kept and reported under the pid, the exited one marked.
        # The pid is made to come back by setting the next one (ns_last_pid), which a container's
        # read-only /proc/sys forbids: the test runs again, daemon and all, in a pid namespace of
        # its own with a /proc of its own, where it may.
        if os.environ.get(PIDNS_ENV) != '1':
            name = f'{type(self).__name__}.test_a_new_process_on_an_exited_target_s_pid_keeps_its_report'
            r = subprocess.run(['unshare', '--pid', '--fork', '--mount-proc', sys.executable, os.path.abspath(__file__),
                                name], env=dict(os.environ, **{PIDNS_ENV: '1'}), capture_output=True, text=True,
                               timeout=harness.RUN_TIMEOUT_S * 2)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertRegex(r.stderr, r'Ran 1 test.*\n\nOK', r.stderr)
            return
        daemon = self.start_daemon()
        pid = self.attach_until_exited(daemon).pid
        again = self.start_program_at_pid(EXIT_PROGRAM, pid)
        self.assertIsNotNone(again, f'pid {pid} never came back')
        reply = daemon.attach(pid)
        self.assertEqual(reply['target']['phase'], 'recording', reply)
        report = daemon.report(pid=pid)
        self.assertEqual(sorted((t['exited'], t['outstanding_bytes'], t['outstanding_allocs'])
                                for t in report['targets'] if t['pid'] == pid),
                         [(False, 0, 0), (True, 3001 * 13, 13)], report['targets'])
        self.assertEqual(sorted(t['exited'] for t in daemon.status()['targets'] if t['pid'] == pid), [False, True])
        # a detach by the pid is the live process's; the exited one's report stays
        self.assertFalse(daemon.ctl_json('detach', '--pid', pid)['target']['exited'])
        report = daemon.report(pid=pid)
        self.assertEqual([(t['exited'], t['outstanding_bytes']) for t in report['targets'] if t['pid'] == pid],
                         [(True, 3001 * 13)], report['targets'])

    def test_each_target_s_phase_follows_its_life(self):
        # The manager's state machine (targets/target-phase.h) shows in every target it names: an
        # attach is answered once the target records; one that exits is exited; a detach names
        # the phase it left in.
        def scenario():
            daemon = self.start_daemon()
            stays = self.start_program(EVERY_HOOK)
            goes = self.start_program(EXIT_PROGRAM)
            for p in (stays, goes):
                self.assertEqual(daemon.attach(p.pid)['target']['phase'], 'recording')
            self.assertEqual({t['pid']: t['phase'] for t in daemon.status()['targets']},
                             {stays.pid: 'recording', goes.pid: 'recording'})
            goes.go()
            goes.expect('done')
            self.assertEqual(goes.proc.wait(harness.PROGRAM_TIMEOUT_S), 0)

            def phases():
                return {t['pid']: (t['phase'], t['exited']) for t in daemon.status()['targets']}

            self.assertTrue(harness.wait_until(lambda: phases()[goes.pid] == ('exited', True),
                                               harness.REPORT_TIMEOUT_S, interval=0.1),
                            f'status never showed pid {goes.pid} exited: {phases()}')
            return daemon, stays, goes

        daemon, stays, goes = scenario()
        comm = {t['pid']: t['comm'] for t in daemon.status()['targets']}
        text = daemon.ctl_ok('status').stdout
        self.assertIn(f'pid {stays.pid} ({comm[stays.pid]}): recording, attached ', text)
        self.assertIn(f'pid {goes.pid} ({comm[goes.pid]}, exited): attached ', text)
        self.assertEqual(daemon.ctl_json('detach', '--pid', goes.pid)['target']['phase'], 'exited')
        self.assertEqual(daemon.ctl_json('detach', '--pid', stays.pid)['target']['phase'], 'recording')
        self.assertEqual(daemon.status()['targets'], [])
        stays.run_leaks()
        self.assertEqual(stays.finish(), 0)

    def test_an_attach_right_after_a_detach_waits_for_the_old_probes_and_counts_once(self):
        # A detach hands the probes to the detacher; an attach to the same pid right after is
        # queued in the manager's pending operations until the detacher lets the pid go, then
        # awaits its tables like any attach, and is answered once, recording. Two sets of probes
        # never run at once: each allocation counts once.
        def scenario():
            daemon = self.start_daemon()
            program = self.start_program(EVERY_HOOK)
            daemon.attach(program.pid)
            for _ in range(3):
                daemon.ctl_json('detach', '--pid', program.pid)
                reply = daemon.attach(program.pid)
                self.assertEqual((reply['target']['pid'], reply['target']['phase']), (program.pid, 'recording'))
            self.assertIn(f'Attach to pid {program.pid} queued', daemon.log())
            self.assertEqual([(t['pid'], t['phase']) for t in daemon.status()['targets']],
                             [(program.pid, 'recording')])
            program.run_leaks()
            report, totals = self.wait_for_totals(daemon, program.pid, EVERY_HOOK_NAMES, EVERY_HOOK_EXPECTED)
            self.assert_totals(report, totals, EVERY_HOOK_EXPECTED, 'attached again right after detaches')
            return program

        self.assertEqual(scenario().finish(), 0)

    def exec_scenario(self, exec_line, freed_by_exec):
        """leak-exec leaks, execs itself (exec_line says from which thread), leaks again: the first
        image's blocks are gone, the second's exact, and the target named as the process is now."""
        daemon = self.start_daemon()
        program = self.start_program(EXEC_PROGRAM)
        daemon.attach(program.pid)
        program.go()
        program.expect('leaked')
        report, totals = self.wait_for_totals(daemon, program.pid, EXEC_NAMES, EXEC_BEFORE)
        self.assert_totals(report, totals, EXEC_BEFORE, f'{EXEC_PROGRAM} before its exec')
        freed_before = daemon.status()['counters']['freed_by_exec']

        program.proc.stdin.write(exec_line)
        program.proc.stdin.flush()
        program.expect('execd')

        # probes in the new image: libc's, once the daemon has seen what it maps
        def probed():
            targets = [t for t in daemon.status()['targets'] if t['pid'] == program.pid]
            return targets and any(o['path'].endswith('libc.so.6') and o['probes'] > 0 for o in targets[0]['objects'])
        self.assertTrue(harness.wait_until(probed, harness.REPORT_TIMEOUT_S, interval=0.1),
                        f'libc never probed in the new image: {daemon.status()["targets"]}\n{daemon.log()}')
        program.go()
        program.expect('done')
        report, totals = self.wait_for_totals(daemon, program.pid, EXEC_NAMES, EXEC_AFTER)
        self.assert_totals(report, totals, EXEC_AFTER, f'{EXEC_PROGRAM} after its exec')
        # the first image's blocks are gone from the target's totals, not only from its named stacks,
        # and it is named as its new image names itself (exec'd as /proc/self/exe: "exe" here)
        with open(f'/proc/{program.pid}/comm') as f:
            comm = f.read().strip()
        target = [t for t in daemon.report(pid=program.pid)['targets'] if t['pid'] == program.pid]
        self.assertEqual([(t['outstanding_bytes'], t['outstanding_allocs'], t['comm']) for t in target],
                         [(999 * 7, 7, comm)], report['targets'])
        self.assertEqual(daemon.status()['counters']['freed_by_exec'] - freed_before, freed_by_exec)
        self.assertEqual(program.finish(), 0)
        return daemon

    def test_exec_takes_the_old_images_blocks_away(self):
        self.exec_scenario(b'go\n', 5)

    def test_exec_from_another_thread_is_traced_on(self):
        # the thread takes over the process's pid; the kernel's probe links named the old leader
        # glibc's pthread_create allocates the thread's vector of TLS blocks (its dtv): one more
        daemon = self.exec_scenario(b'thread\n', 5 + 1)
        self.assertIn('exec\'d another program from one of its threads', daemon.log())

    def test_a_program_exec_d_on_another_allocator_is_probed_at_its_exec(self):
        """A traced shell-like process execs a program linked with jemalloc: BPF tells the daemon
        of the exec, which reads the new maps and probes jemalloc within moments, not at the next
        snapshot (a minute here): what the program leaks right after is all there."""
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000})
        program = self.start_program(EXEC_PROGRAM)
        daemon.attach(program.pid)
        program.go()
        program.expect('leaked')
        started = time.monotonic()
        jemalloc_program = os.path.join(harness.PROGRAMS_DIR, 'leak-alloc-jemalloc')
        program.proc.stdin.write(f'prog {jemalloc_program}\n'.encode())
        program.proc.stdin.flush()
        program.expect('ready')

        def jemalloc_probed():
            targets = [t for t in daemon.status()['targets'] if t['pid'] == program.pid]
            return targets and any('libjemalloc.so' in o['path'] and o['probes'] > 0 for o in targets[0]['objects'])
        self.assertTrue(harness.wait_until(jemalloc_probed, 20, interval=0.02),
                        f'jemalloc not probed after the exec: {daemon.status()["targets"]}\n{daemon.log()}')
        self.assertLess(time.monotonic() - started, 50, 'probed by the snapshot tick, not at the exec')
        program.run_leaks()
        expected = alloc_expected_for('jemalloc')
        report, totals = self.wait_for_totals(daemon, program.pid, ALLOC_NAMES, expected)
        self.assert_totals(report, totals, expected, 'leak-alloc-jemalloc exec\'d by a traced process')
        self.assertEqual(program.finish(), 0)

if __name__ == '__main__':
    unittest.main(verbosity=2)
