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


# tests/programs/stack-stream.c: STREAM_RATE new stacks a second for STREAM_SECONDS, each block freed
# at once, then LEAK_AFTER
STREAM_SECONDS = 25
STREAM_RATE = 2000
STREAM_MAX_STACKS = 16384
LEAK_AFTER = {'leak_after': {'bytes': 5 * 4321, 'allocs': 5}}


class ReclaimTest(harness.DaemonTestCase):

    def test_reclaim_keeps_pace_with_a_steady_stream_of_new_stacks(self):
        # 50,000 new stacks into a table of 16,384 at the default snapshot interval: passes at the
        # least wait (10 ticks) of at most 16,384 stacks each could not keep pace, and stacks
        # would be lost to the full table
        daemon = self.start_daemon(config={'snapshot_interval_ms': 1000, 'max_stacks': STREAM_MAX_STACKS})
        program = harness.LeakProgram('stack-stream', [harness.os.path.join(harness.PROGRAMS_DIR, 'stack-stream'),
                                                       str(STREAM_SECONDS), str(STREAM_RATE)])
        self.addCleanup(program.kill)
        program.expect('ready')
        daemon.attach(program.pid)
        program.go()
        program.expect('streamed', timeout=STREAM_SECONDS * 3)
        status = daemon.status()
        lost, reclaim = status['lost'], status['reclaim']
        self.assertEqual((lost['stack_table_full'], lost['stack_hash_clash']), (0, 0), (lost, reclaim))
        self.assertGreaterEqual(reclaim['stacks_deleted'], STREAM_SECONDS * STREAM_RATE - STREAM_MAX_STACKS, reclaim)
        self.assertLessEqual(reclaim['stacks_held'], STREAM_MAX_STACKS, reclaim)
        program.expect('done')
        report, totals = self.wait_for_totals(daemon, program.pid, set(LEAK_AFTER), LEAK_AFTER)
        self.assert_totals(report, totals, LEAK_AFTER, 'stack-stream\'s leak after the stream')
        target = report['targets'][0]
        self.assertEqual((target['outstanding_bytes'], target['outstanding_allocs']), (5 * 4321, 5), target)

    def churn_then_leak(self, config, full_counter, reclaimed_key):
        daemon = self.start_daemon(config=config)
        program = self.start_program('churn-stacks')
        daemon.attach(program.pid)
        program.go()
        program.expect('churned')
        # the churn's stacks did not all fit: the loss is counted
        lost = daemon.status()['lost']
        self.assertGreater(lost[full_counter], 0, lost)
        # what the churn left (nothing outstanding) is given back while the target stays attached:
        # most of it, or (stacks) enough that the table is below half full, where passes stop (a
        # pass made while the churn's last blocks were still out left their stacks; on a loaded
        # machine it gave back 854 and held 170 of 1,024)
        def given_back(r):
            if r[reclaimed_key] >= 1000:
                return r
            if reclaimed_key == 'stacks_deleted' and r['stacks_deleted'] > 0 and r['stacks_held'] < max_stacks // 2:
                return r
            return None

        max_stacks = config.get('max_stacks', 0)
        reclaim = harness.wait_until(lambda: given_back(daemon.status()['reclaim']), RECLAIM_TIMEOUT_S)
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
