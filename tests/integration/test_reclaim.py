# SPDX-License-Identifier: MIT
"""Stacks and per-stack rows given back while a target stays attached: a process whose
allocations come from ever new stacks (tests/programs/churn-stacks.c: 2,173 stacks, each block
freed at once) fills a small stack table, or a small per-stack totals table; memleakd gives back
what no outstanding block uses, and the leaks the process makes afterwards are reported exactly,
under their own frames, with no loss counted for them."""

import unittest

import harness

CHURN_STACKS = 41 * 53
LEAKS = {'leak_first': {'bytes': 7 * 1000, 'allocs': 7}, 'leak_second': {'bytes': 3 * 333, 'allocs': 3}}
RECLAIM_TIMEOUT_S = 30


class ReclaimTest(harness.DaemonTestCase):

    def churn_then_leak(self, config, full_counter, reclaimed_key):
        daemon = self.start_daemon(config=config)
        program = self.start_program('churn-stacks')
        daemon.attach(program.pid)
        program.go()
        program.expect('churned')
        # the churn's stacks did not all fit: the loss is counted
        lost = daemon.status()['lost']
        self.assertGreater(lost[full_counter], 0, lost)
        # what the churn left (nothing outstanding) is given back while the target stays attached
        reclaim = harness.wait_until(lambda: (lambda r: r if r[reclaimed_key] >= 1000 else None)(
            daemon.status()['reclaim']), RECLAIM_TIMEOUT_S)
        self.assertTrue(reclaim, daemon.status()['reclaim'])
        before = daemon.status()['lost']
        program.go()
        program.expect('done')

        report = harness.wait_until(lambda: (lambda r: r if harness.per_function(r, set(LEAKS)) == LEAKS else None)(
            daemon.report(pid=program.pid)), harness.REPORT_TIMEOUT_S)
        last = daemon.report(pid=program.pid)
        self.assertTrue(report, f'{harness.per_function(last, set(LEAKS))}; {harness.format_stacks(last)}')
        # nothing of the churn is outstanding, every stack shown has its frames, and the leaks
        # lost nothing
        target = report['targets'][0]
        self.assertEqual((target['outstanding_bytes'], target['outstanding_allocs']), (7 * 1000 + 3 * 333, 10), target)
        self.assertEqual([s for s in report['stacks'] if s['stack_error']], [], harness.format_stacks(report))
        after = daemon.status()['lost']
        self.assertEqual(after[full_counter], before[full_counter], (before, after))
        self.assertEqual(after['stack_hash_clash'], 0, after)
        return daemon.status()['reclaim']

    def test_a_full_stack_table_gives_back_stacks_no_block_uses(self):
        # 2,173 stacks into a table of 1,024
        reclaim = self.churn_then_leak({'max_stacks': 1024}, 'stack_table_full', 'stacks_deleted')
        self.assertGreater(reclaim['passes'], 0, reclaim)
        self.assertLessEqual(reclaim['stacks_held'], 1024, reclaim)

    def test_full_per_stack_totals_give_back_rows_at_zero(self):
        # 2,173 stacks' rows into a table of 2,048 rows (max_combined = 1,024)
        reclaim = self.churn_then_leak({'max_combined': 1024}, 'combined_map_full', 'rows_freed')
        self.assertEqual(reclaim['stacks_deleted'], 0, reclaim)     # the stack table had room


if __name__ == '__main__':
    unittest.main(verbosity=2)
