# SPDX-License-Identifier: MIT
"""Stacks through JIT code (tests/programs/leak-jit.c): machine code the program makes at run time
in anonymous executable memory, with a frame pointer as V8's and the JVM's keep, named in its perf
map (/tmp/perf-PID.map) as node --perf-basic-prof names JavaScript. Each leak's exact bytes and
counts, its stack walked through the JIT frame (by its frame pointer: no CFI covers it) to _start,
the frame named from the perf map where the program wrote a name, shown as JIT code where it did
not (code made before the attach, in the walker's list of the target's mappings, and after it, met
through its vma), and the churn through the same code absent; and, by memleakctl run, named at its exit.
A stack through JIT code that keeps no frame pointer stops there and says so (no_cfi), never
reported as walked to its end."""

import json
import os
import subprocess
import unittest

import harness

PROGRAM = 'leak-jit'
EXPECTED = {
    'jit_leak': {'bytes': 7 * 131, 'allocs': 7},
    'jit_leak_unnamed': {'bytes': 5 * 137, 'allocs': 5},
    'jit_leak_frameless': {'bytes': 3 * 139, 'allocs': 3},
}
NAMES = set(EXPECTED) | {'jit_churn'}


def symbols(stack):
    return [f['symbol'] for f in stack['frames']]


class JitTest(harness.DaemonTestCase):

    def start_program(self, name):
        # a program killed at the cleanup leaves its perf map behind, as node would
        program = super().start_program(name)
        perf_map = f'/tmp/perf-{program.pid}.map'
        self.addCleanup(lambda: os.path.lexists(perf_map) and os.unlink(perf_map))
        return program

    def leak(self):
        daemon = self.start_daemon()
        program = self.start_program(PROGRAM)
        perf_map = f'/tmp/perf-{program.pid}.map'
        self.assertTrue(os.path.exists(perf_map), perf_map)
        daemon.attach(program.pid)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
        self.assert_totals(report, totals, EXPECTED, PROGRAM)
        return daemon, program, report

    def test_stacks_are_walked_through_jit_code_and_named_by_the_perf_map(self):
        daemon, program, report = self.leak()
        text = harness.format_stacks(report)

        [named] = [s for s in report['stacks'] if s['frames'][0]['symbol'] == 'jit_leak']
        self.assertEqual(symbols(named)[:4], ['jit_leak', 'jit_named_stub', 'leak_through_named_stub', 'main'], text)
        jit_frame = named['frames'][1]
        self.assertEqual(jit_frame['module'], '[jit]', jit_frame)
        # the return address right after the stub's call (push, mov, call: 6 bytes in)
        self.assertEqual(jit_frame['offset'], 6, jit_frame)
        self.assertIsNone(jit_frame['module_offset'], jit_frame)
        self.assertIsNone(jit_frame['build_id'], jit_frame)     # no file: no build

        [unnamed] = [s for s in report['stacks'] if s['frames'][0]['symbol'] == 'jit_leak_unnamed']
        self.assertEqual(symbols(unnamed)[:4], ['jit_leak_unnamed', None, 'leak_through_unnamed_stub', 'main'], text)
        self.assertEqual(unnamed['frames'][1]['module'], '[jit]', unnamed)

        for stack in (named, unnamed):
            self.assertEqual(symbols(stack)[-1], '_start', text)
            self.assertIsNone(stack['unwind_stopped'], stack)
            self.assertEqual(stack['addresses_cut'], 0, stack)

        # through JIT code that keeps no frame pointer (rbp zeroed), the walk goes no further and
        # says so: it reached no outermost frame there
        [frameless] = [s for s in report['stacks'] if s['frames'][0]['symbol'] == 'jit_leak_frameless']
        self.assertEqual(symbols(frameless), ['jit_leak_frameless', None], text)
        self.assertEqual(frameless['frames'][1]['module'], '[jit]', frameless)
        self.assertEqual(frameless['unwind_stopped']['reason'], 'no_cfi', frameless)

        out = daemon.ctl_ok('report', '--pid', program.pid).stdout
        self.assertRegex(out, r'\n\t\tjit_named_stub\+0x6 \[jit\]\n\t\tleak_through_named_stub\+0x[0-9a-f]+ \[leak-jit\]')
        self.assertRegex(out, r'\n\t\t\?\? \[jit\]\n\t\tleak_through_unnamed_stub\+0x[0-9a-f]+ \[leak-jit\]')

    def test_run_names_jit_code_from_the_perf_map_taken_at_exit(self):
        # memleakctl run holds the program at its exit (to scan it): its perf map is read there,
        # and the report of the exited program still names its JIT frame.
        daemon = self.start_daemon()
        out = os.path.join(self.workdir, 'report.json')
        r = subprocess.run([harness.MEMLEAKCTL, '--socket', daemon.socket_path, 'run', '--json', '--top',
                            str(harness.UNLIMITED_TOP), '--output', out, '--',
                            os.path.join(harness.PROGRAMS_DIR, PROGRAM), '--keep-perf-map'],
                           input=b'go\n\n', capture_output=True, timeout=60)
        with open(out) as f:
            report = harness.load_json_file(f)
        pid = report['targets'][0]['pid']
        self.addCleanup(lambda: os.path.exists(f'/tmp/perf-{pid}.map') and os.unlink(f'/tmp/perf-{pid}.map'))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(report['targets'][0]['exited'], report['targets'])
        totals = harness.per_function(report, NAMES)
        self.assert_totals(report, totals, EXPECTED, f'memleakctl run {PROGRAM}')
        [named] = [s for s in report['stacks'] if s['frames'][0]['symbol'] == 'jit_leak']
        self.assertEqual(symbols(named)[:3], ['jit_leak', 'jit_named_stub', 'leak_through_named_stub'],
                         harness.format_stacks(report))
        self.assertEqual(named['frames'][1]['module'], '[jit]', named)

    def test_an_attached_program_that_exits_keeps_its_jit_frames_named(self):
        # Its perf map stays behind (as node's does); its root is no longer reachable through
        # /proc once it is gone: memleakd reads the map from where it was while the program ran.
        daemon = self.start_daemon()
        program = harness.LeakProgram(PROGRAM, command=[os.path.join(harness.PROGRAMS_DIR, PROGRAM), '--keep-perf-map'])
        self.addCleanup(program.kill)
        self.addCleanup(lambda: os.path.exists(f'/tmp/perf-{program.pid}.map') and os.unlink(f'/tmp/perf-{program.pid}.map'))
        program.expect('ready')
        daemon.attach(program.pid)
        program.run_leaks()
        self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
        self.assertEqual(program.finish(), 0)
        last = {}

        def named_after_exit():
            last['report'] = daemon.report(pid=program.pid)
            [stack] = [s for s in last['report']['stacks'] if s['frames'][0]['symbol'] == 'jit_leak']
            return last['report']['targets'][0]['exited'] and symbols(stack)[1] == 'jit_named_stub'

        self.assertTrue(harness.wait_until(named_after_exit, harness.REPORT_TIMEOUT_S),
                        harness.format_stacks(last['report']))
        self.assert_totals(last['report'], harness.per_function(last['report'], NAMES), EXPECTED, 'after its exit')

    def test_a_perf_map_of_another_user_or_through_a_symlink_is_not_read(self):
        # As perf has it: a map is its process's user's or root's; and it is the file itself, not
        # a symlink the process put there to make the daemon read another file.
        for how in ('chown', 'symlink'):
            with self.subTest(how=how):
                daemon = self.start_daemon()
                program = self.start_program(PROGRAM)
                perf_map = f'/tmp/perf-{program.pid}.map'
                if how == 'chown':
                    os.chown(perf_map, 65534, 65534)
                else:
                    elsewhere = os.path.join(self.workdir, 'elsewhere.map')
                    os.rename(perf_map, elsewhere)
                    os.symlink(elsewhere, perf_map)
                    self.addCleanup(lambda p=perf_map: os.path.lexists(p) and os.unlink(p))
                daemon.attach(program.pid)
                program.run_leaks()
                report, totals = self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
                self.assert_totals(report, totals, EXPECTED, PROGRAM)
                [named] = [s for s in report['stacks'] if s['frames'][0]['symbol'] == 'jit_leak']
                self.assertEqual(symbols(named)[:3], ['jit_leak', None, 'leak_through_named_stub'],
                                 harness.format_stacks(report))
                program.finish()

    def test_a_perf_map_that_is_not_a_regular_file_is_not_read(self):
        # The perf map is the traced process's to write: a FIFO in its place would hang a reader
        # that opened it. The report names nothing from it, and comes back.
        daemon = self.start_daemon()
        program = self.start_program(PROGRAM)
        perf_map = f'/tmp/perf-{program.pid}.map'
        os.unlink(perf_map)
        os.mkfifo(perf_map)
        self.addCleanup(lambda: os.path.exists(perf_map) and os.unlink(perf_map))
        daemon.attach(program.pid)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
        self.assert_totals(report, totals, EXPECTED, PROGRAM)
        [named] = [s for s in report['stacks'] if s['frames'][0]['symbol'] == 'jit_leak']
        self.assertEqual(symbols(named)[:3], ['jit_leak', None, 'leak_through_named_stub'], harness.format_stacks(report))


if __name__ == '__main__':
    unittest.main(verbosity=2)
