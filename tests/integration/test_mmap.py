# SPDX-License-Identifier: MIT
"""--mmap: anonymous mappings a program makes itself are tracked exactly through partial munmap and
mremap, reported apart from heap bytes; the mappings glibc's malloc makes for itself (nested in
malloc) and file mappings are not; without --mmap nothing of it is probed."""

import unittest

import harness

PAGE = 4096
HEAP = {'leak_heap': {'bytes': 2 * 64, 'allocs': 2}}
MAPPINGS = {
    'leak_mmap': {'bytes': 3 * 5 * PAGE, 'allocs': 3},
    'leak_cut': {'bytes': (2 + 4 + 2) * PAGE, 'allocs': 3},
    'leak_mremap': {'bytes': (6 + 1) * PAGE, 'allocs': 2},
    'leak_fixed': {'bytes': 2 * PAGE, 'allocs': 2},
}
NAMES = set(HEAP) | set(MAPPINGS) | {'churn', 'main'}


def split(report, pid, mmap):
    return harness.per_function({'stacks': [s for s in report['stacks'] if s['mmap'] == mmap]}, NAMES, pid=pid)


class MmapTest(harness.DaemonTestCase):

    def run_program(self, *attach_args):
        def scenario():
            daemon = self.start_daemon()
            program = self.start_program('leak-mmap')
            target = daemon.attach(program.pid, *attach_args)['target']
            program.run_leaks()
            return daemon, program, target, daemon.report(pid=program.pid)

        return scenario()

    def test_mappings_are_exact_through_partial_unmaps_and_mremap_and_apart_from_the_heap(self):
        daemon, program, target, report = self.run_program('--mmap')
        self.assertTrue(target['mmap'])
        self.assert_totals(report, split(report, program.pid, True), MAPPINGS, 'mappings')
        self.assert_totals(report, split(report, program.pid, False), HEAP, 'heap')
        t = report['targets'][0]
        self.assertEqual(t['outstanding_bytes'], 128)
        self.assertEqual(t['outstanding_allocs'], 2)
        self.assertEqual(t['outstanding_mmap_bytes'], sum(m['bytes'] for m in MAPPINGS.values()))
        self.assertEqual(t['outstanding_mmaps'], sum(m['allocs'] for m in MAPPINGS.values()))
        self.assertEqual({k: v for k, v in report['lost'].items() if v}, {}, harness.format_stacks(report))
        # the cut mapping's two pieces keep the stack of the mmap that made them
        cut = [s for s in report['stacks'] if s['mmap'] and s['frames'][0]['symbol'] == 'leak_cut']
        self.assertEqual(len(cut), 2, harness.format_stacks(report))
        self.assertEqual(sorted(s['allocs'] for s in cut), [1, 2])
        text = daemon.ctl_ok('report', '--pid', program.pid).stdout
        self.assertIn('anonymous mappings from stack', text)
        self.assertIn(f'and {t["outstanding_mmap_bytes"]} bytes in 10 anonymous mappings', text)

    def test_without_mmap_only_the_heap_is_tracked(self):
        daemon, program, target, report = self.run_program()
        self.assertFalse(target['mmap'])
        self.assertEqual([s for s in report['stacks'] if s['mmap']], [])
        self.assert_totals(report, harness.per_function(report, NAMES, pid=program.pid), HEAP, 'heap')
        self.assertEqual(report['targets'][0]['outstanding_mmap_bytes'], 0)


if __name__ == '__main__':
    unittest.main(verbosity=2)
