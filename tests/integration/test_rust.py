# SPDX-License-Identifier: MIT
"""Rust on the system allocator, built by Debian's rustc with legacy and v0 symbol mangling, and on
jemalloc's _rjem_ names as tikv-jemallocator links them: Box::leak and an Rc cycle are reported at the program's own functions with demangled names and exact bytes;
balanced churn (Vec growth through realloc, String, Box) does not appear; nothing is counted twice."""

import os
import unittest

import harness

SOURCE = os.path.join(os.path.realpath(harness.SOURCE_ROOT), 'tests', 'programs', 'leak-rust.rs')
CRATE = 'leak_rust::'

# (bytes per block, blocks) by the program's own function that allocated
LEAKS = {
    'leak_rust::leak_boxes': (96, 7),
    'leak_rust::leak_rc_cycle': (72, 2 * 3),
}
EXPECTED = {name: {'bytes': size * count, 'allocs': count} for name, (size, count) in LEAKS.items()}


def site_lines(marker):
    with open(SOURCE) as f:
        return {n for n, text in enumerate(f, 1) if f'// site: {marker}' in text}


def first_own_frame(stack):
    """The first frame of the program's own code: above it are the standard library's allocation
    functions (alloc::alloc::exchange_malloc, Rc::new, ...), which the program calls like new."""
    for frame in stack['frames']:
        if (frame['symbol'] or '').startswith(CRATE):
            return frame
    return None


class RustTest(harness.DaemonTestCase):

    def check_program(self, name):
        def scenario():
            daemon = self.start_daemon()
            program = self.start_program(name)
            self.attached = daemon.attach(program.pid)['target']
            program.run_leaks()
            return daemon, program, daemon.report(pid=program.pid)

        daemon, program, report = scenario()
        stacks = harness.format_stacks(report)
        totals, own = {}, {}
        for stack in report['stacks']:
            frame = first_own_frame(stack)
            key = frame['symbol'] if frame else None
            t = totals.setdefault(key, {'bytes': 0, 'allocs': 0})
            t['bytes'] += stack['bytes']
            t['allocs'] += stack['allocs']
            if frame:
                own.setdefault(key, set()).add((frame['file'], frame['line']))
        # every outstanding byte is one of the two leaks: no churn, no runtime noise, no stack lost
        self.assertEqual(totals, EXPECTED, stacks)
        self.assertEqual(report['targets'][0]['outstanding_bytes'], sum(t['bytes'] for t in EXPECTED.values()))
        self.assertEqual({k: v for k, v in report['lost'].items() if v}, {}, 'nothing lost, nothing counted twice')
        # at the lines that allocate
        self.assertEqual(own['leak_rust::leak_boxes'], {(SOURCE, n) for n in site_lines('leak_boxes')})
        self.assertEqual(own['leak_rust::leak_rc_cycle'], {(SOURCE, n) for n in site_lines('leak_rc_cycle')})
        # names from the standard library are demangled too, legacy hashes dropped
        symbols = {f['symbol'] for s in report['stacks'] for f in s['frames'] if f['symbol']}
        self.assertIn('leak_rust::main', symbols)
        self.assertFalse([s for s in symbols if s.startswith(('_ZN', '_R'))], symbols)
        self.assertFalse([s for s in symbols if '::h' in s and s.rsplit('::h', 1)[1].isalnum()
                          and len(s.rsplit('::h', 1)[1]) == 16], symbols)
        self.assertEqual(program.finish(), 0)
        return report

    def test_legacy_mangling(self):
        self.check_program('leak-rust')

    def test_without_frame_pointers_every_leak_is_walked_up_to_main(self):
        report = self.check_program('leak-rust-nofp')
        stacks = harness.format_stacks(report)
        for stack in report['stacks']:
            symbols = [f['symbol'] or '' for f in stack['frames']]
            # the leaking function, main, the runtime's start (std's, then libc's), _start
            self.assertIn('leak_rust::main', symbols, stacks)
            self.assertEqual(symbols[-1], '_start', stacks)
            self.assertIsNone(stack['unwind_stopped'], stack)

    def test_jemalloc_linked_in_as_tikv_jemallocator_does(self):
        # The program defines _rjem_malloc & co (jemalloc's names with Rust's prefix): it is the
        # allocator; libc's malloc inside them nests and counts nothing twice.
        self.check_program('leak-rust-rjem')
        target = self.attached
        self.assertEqual(target['allocator'], 'jemalloc', target)
        chosen = [o for o in target['objects'] if o['role'] == 'allocator']
        self.assertEqual([os.path.basename(o['path']) for o in chosen], ['leak-rust-rjem'], target)

    def test_v0_mangling(self):
        report = self.check_program('leak-rust-v0')
        # v0 names generic instances in full: Rc::new for the cycle's nodes
        symbols = {f['symbol'] for s in report['stacks'] for f in s['frames'] if f['symbol']}
        self.assertTrue([s for s in symbols if s.startswith('<alloc::rc::Rc<')], symbols)


if __name__ == '__main__':
    unittest.main(verbosity=2)
