# SPDX-License-Identifier: MIT
"""C++ programs: the function that called new is the first frame (the seed's
LeakLib::slowMemoryLeak()), names are demangled, and nothing is counted twice (new -> malloc,
delete -> free, new[] -> new). libstdc++'s operators only call malloc, aligned_alloc or free: where
stacks are walked by the unwind tables they are left unprobed (the malloc inside records the call,
at one trap instead of two) and the report drops their frames; with frame pointers only (the walk
from inside them would skip their caller) every form is probed as an outer call."""

import os
import unittest

import harness

SOURCE = 'leak-cxx.cpp'

# (bytes per block, blocks) by the demangled name of the function that called new.
LEAKS = {
    'LeakLib::slowMemoryLeak()': (40, 12),
    'leak_objects()': (56, 5),
    'leak_nothrow()': (72, 3),
    'leak_aligned()': (128, 2),
}
EXPECTED = {name: {'bytes': size * count, 'allocs': count} for name, (size, count) in LEAKS.items()}
MUST_NOT_APPEAR = ['balanced_every_delete()', 'caller()', 'main']


class CxxTest(harness.DaemonTestCase):

    def run_cxx(self, program_name, *attach_args, daemon_env=None):
        def scenario():
            daemon = self.start_daemon(env=daemon_env)
            program = self.start_program(program_name)
            reply = daemon.attach(program.pid, *attach_args)
            probed = {os.path.basename(o['path']).split('.so')[0]: (o['probes'], o['forwarded'])
                      for o in reply['target']['objects']}
            # libstdc++'s 8 operator new and 12 operator delete forms, each at its own address:
            # probed with frame pointers only, else left to the malloc or free they call
            by_fp = '--unwind' in attach_args and attach_args[attach_args.index('--unwind') + 1] == 'fp'
            self.assertEqual(probed.get('libstdc++'), (20, 0) if by_fp else (0, 20), reply)
            program.run_leaks()
            report = daemon.report(pid=program.pid)
            totals = harness.per_first_frame(report, program.pid)
            self.assertEqual(totals, EXPECTED, harness.format_stacks(report))
            return daemon, program, report

        return scenario()

    def assert_nothing_counted_twice(self, daemon, report, nested=False):
        lost = {k: v for k, v in report['lost'].items() if v}
        self.assertEqual(lost, {}, 'a delete whose free was also counted shows up as free_unknown')
        if nested:
            # the probed operators' malloc and free calls are nested in them, not counted again
            counters = daemon.status()['counters']
            self.assertGreater(counters['nested_calls'], 0, counters)

    def test_seed_program_names_slow_memory_leak_with_its_line_and_exact_bytes(self):
        daemon, program, report = self.run_cxx('leak-cxx')
        source = os.path.join(os.path.realpath(harness.SOURCE_ROOT), 'tests', 'programs', SOURCE)
        slow = [s for s in report['stacks'] if s['frames'][0]['symbol'] == 'LeakLib::slowMemoryLeak()']
        self.assertEqual(len(slow), 1, harness.format_stacks(report))
        frames = slow[0]['frames']
        self.assertEqual(frames[0]['file'], source)
        with open(source) as f:
            line = 1 + [i for i, text in enumerate(f) if 'site: slowMemoryLeak' in text][0]
        self.assertEqual(frames[0]['line'], line, frames[0])
        self.assertEqual(frames[0]['module'], os.path.realpath(program.path))
        # main -> caller -> slowMemoryLeak, all there with frame pointers
        self.assertEqual([f['symbol'] for f in frames[1:3]], ['caller()', 'main'], frames)
        for name in MUST_NOT_APPEAR:
            self.assertNotIn(name, harness.per_first_frame(report, program.pid))
        self.assertEqual(report['targets'][0]['outstanding_bytes'], sum(t['bytes'] for t in EXPECTED.values()))
        self.assert_nothing_counted_twice(daemon, report)

    def test_new_and_delete_count_once_with_or_without_alloc_sessions(self):
        # operators probed (frame pointers): with uprobe sessions, malloc's return is not run
        # inside new (nested: new's return records the block); without them it runs and is
        # ignored. Operators left unprobed: malloc's return records the block either way. The
        # same totals and first frames every time.
        for unwind in ('fp', 'auto'):
            for env, sessions in ((None, harness.kernel_at_least(6, 12)), ({'MEMLEAKD_UPROBE_SESSION': '0'}, False)):
                daemon, program, report = self.run_cxx('leak-cxx', '--unwind', unwind, daemon_env=env)
                self.assertEqual(daemon.status()['probes']['alloc_sessions'], sessions, env)
                self.assert_nothing_counted_twice(daemon, report, nested=unwind == 'fp')
                program.kill()
                daemon.stop()

    def test_without_frame_pointers_the_stacks_are_walked_complete_by_the_cfi(self):
        daemon, program, report = self.run_cxx('leak-cxx-nofp')
        self.assertEqual(report['targets'][0]['outstanding_bytes'], sum(t['bytes'] for t in EXPECTED.values()))
        self.assert_nothing_counted_twice(daemon, report)
        # The unwind tables (.eh_frame) walk what frame pointers cannot: every leak's stack goes
        # up to main, through libc's start, and ends there cleanly.
        stacks = harness.format_stacks(report)
        self.assertEqual(len(report['stacks']), len(EXPECTED), stacks)
        for stack in report['stacks']:
            symbols = [f['symbol'] for f in stack['frames']]
            self.assertIn('main', symbols, stacks)
            self.assertEqual(symbols[-1], '_start', stacks)
            self.assertEqual((stack['addresses_cut'], stack['unwind_stopped']), (0, None), stack)

    def test_without_frame_pointers_the_fp_walk_still_names_the_caller_of_new(self):
        daemon, program, report = self.run_cxx('leak-cxx-nofp', '--unwind', 'fp')
        self.assertEqual(report['targets'][0]['outstanding_bytes'], sum(t['bytes'] for t in EXPECTED.values()))
        self.assert_nothing_counted_twice(daemon, report, nested=True)
        # The frame-pointer walk past the first frame reads junk: it is cut where it leaves the
        # program's code, so no junk address is shown and each leak is one stack, not several.
        stacks = harness.format_stacks(report)
        self.assertEqual(len(report['stacks']), len(EXPECTED), stacks)
        for stack in report['stacks']:
            self.assertTrue(all(f['module'] for f in stack['frames']), stack)
            self.assertNotIn('main', [f['symbol'] for f in stack['frames']], stacks)
        self.assertTrue(any(s['addresses_cut'] > 0 for s in report['stacks']), stacks)
        self.assertEqual(daemon.status()['targets'][0]['unwind']['mode'], 'fp')

    def test_attach_mid_flight_names_the_caller_of_new_from_the_first_block(self):
        # Recording starts once libstdc++'s unwind table is in: a block recorded before it, walked
        # by frame pointer from inside operator new, would name busy_caller() (new's caller's
        # caller) first. Attached while the program allocates all the time, over several daemons
        # (each builds its tables afresh).
        for _ in range(3):
            daemon = self.start_daemon()
            program = self.start_program('leak-cxx-busy')
            reply = daemon.attach(program.pid)
            self.assertEqual([o['forwarded'] for o in reply['target']['objects'] if 'libstdc++' in o['path']],
                             [20], reply)
            program.run_leaks()
            report = daemon.report(pid=program.pid)
            totals = harness.per_first_frame(report, program.pid)
            self.assertIn('leak_busy()', totals, harness.format_stacks(report))
            self.assertGreater(totals['leak_busy()']['allocs'], 0)
            self.assertNotIn('busy_caller()', totals, harness.format_stacks(report))
            program.kill()
            daemon.stop()


if __name__ == '__main__':
    unittest.main(verbosity=2)
