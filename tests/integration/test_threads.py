# SPDX-License-Identifier: MIT
"""leak-threads under a real memleakd: eight threads leaking at once, exact totals per thread."""

import time
import unittest

import harness

PROGRAM = 'leak-threads'
N_THREADS = 8

# Thread i leaks LEAK_COUNT(i) blocks of LEAK_SIZE(i) bytes from leak_thread_i
# (tests/programs/leak-threads.c).
LEAKS = {f'leak_thread_{i}': (33 + 16 * i, 200 + 31 * i) for i in range(N_THREADS)}
EXPECTED = {name: {'bytes': size * count, 'allocs': count} for name, (size, count) in LEAKS.items()}
NAMES = set(LEAKS) | {'churn_in_thread', 'thread_main'}


class ThreadsTest(harness.DaemonTestCase):

    def test_eight_threads_leak_concurrently_exact_per_thread(self):
        def scenario():
            daemon = self.start_daemon()
            program = self.start_program(PROGRAM)
            daemon.attach(program.pid)
            program.run_leaks()
            report, totals = self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
            self.assert_totals(report, totals, EXPECTED, f'{PROGRAM}: per-thread leaks')
            return daemon, report

        daemon, report = scenario()
        # Each thread's leak is one call site on one thread's stack: one stack per function.
        for name in LEAKS:
            stacks = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] == name]
            self.assertEqual(len(stacks), 1, f'{name}:\n{harness.format_stacks(report)}')
        for counter in ('allocs_map_full', 'combined_map_full', 'thread_state_unavailable', 'inflight_stale'):
            self.assertEqual(report['lost'][counter], 0, f'lost: {report["lost"]}')

    def test_blocks_past_the_table_are_kept_in_the_allocs_map_exactly(self):
        # max_allocs = 4096: alloc_table has 2048 slots, the allocs map the other 2048. The 2468
        # leaked blocks cannot all sit in the table: the rest go to the map, and every free is
        # found in either (no churn shown, none lost for want of room); the report summed from the outstanding
        # blocks themselves (--min-age) reads both and agrees. Not sampled (auto_sample_percent = 0):
        # the leaks come so fast that the share would fill before the next check, and exactness
        # past the table is what is tested.
        daemon = self.start_daemon(config={'max_allocs': 4096, 'auto_sample_percent': 0})
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
        self.assert_totals(report, totals, EXPECTED, f'{PROGRAM} with max_allocs 4096')
        self.assertNotIn('churn_in_thread', totals, harness.format_stacks(report))
        for counter in ('allocs_map_full', 'combined_map_full'):
            self.assertEqual(report['lost'][counter], 0, f'lost: {report["lost"]}')
        time.sleep(1.1)
        aged = daemon.report(pid=program.pid, min_age_s=1)
        aged_totals = harness.per_function(aged, NAMES, pid=program.pid)
        self.assert_totals(aged, aged_totals, EXPECTED, f'{PROGRAM} with max_allocs 4096, --min-age')
        self.assertNotIn('churn_in_thread', aged_totals, harness.format_stacks(aged))
        # detached, its blocks leave both; attached again, it starts from nothing
        daemon.ctl_json('detach', '--pid', program.pid)
        daemon.attach(program.pid)
        again = daemon.report(pid=program.pid, min_age_s=1)
        self.assertEqual(again['stacks'], [], harness.format_stacks(again))

    def test_full_allocs_map_counts_every_allocation_it_could_not_keep(self):
        # 2468 leaked blocks into a map of 1024: the overflow is counted, never silently dropped,
        # and nothing is invented: each function reports at most its ground truth. (Not sampled
        # once the table nears full, auto_sample_percent = 0: the drops are what is tested.)
        daemon = self.start_daemon(config={'max_allocs': 1024, 'auto_sample_percent': 0})
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.run_leaks()
        report = daemon.report(pid=program.pid)
        totals = harness.per_function(report, NAMES, pid=program.pid)
        leaked = sum(count for _, count in LEAKS.values())
        recorded = sum(t['allocs'] for name, t in totals.items() if name in LEAKS)
        lost = report['lost']['allocs_map_full']
        self.assertLessEqual(recorded, 1024, totals)
        self.assertGreater(lost, 0, report['lost'])
        self.assertGreaterEqual(recorded + lost, leaked, f'recorded {recorded} + lost {lost} < {leaked}')
        for name, t in totals.items():
            if name in LEAKS:
                size, count = LEAKS[name]
                self.assertLessEqual(t['allocs'], count, name)
                self.assertEqual(t['bytes'], size * t['allocs'], name)
        self.assertNotIn('churn_in_thread', totals, harness.format_stacks(report))
        # the text report shows the loss to the person reading it
        text = daemon.ctl_ok('report', '--pid', program.pid).stdout
        self.assertIn(f'allocs_map_full={lost}', text)

    def test_overflowing_per_stack_totals_map_still_reports_exact_bytes(self):
        # 41 * 53 = 2173 distinct stacks into per-stack totals of max_combined = 1024 (a table of
        # 2048 rows): the overflow is counted and the report sums the outstanding allocations
        # instead, so the totals stay exact.
        daemon = self.start_daemon(config={'max_combined': 1024})
        program = self.start_program('leak-many-stacks')
        daemon.attach(program.pid)
        program.run_leaks()
        report = daemon.report(pid=program.pid)
        self.assertGreater(report['lost']['combined_map_full'], 0, report['lost'])
        target = report['targets'][0]
        self.assertEqual((target['outstanding_bytes'], target['outstanding_allocs']), (2173 * 77, 2173), target)
        # Every one of the 2173 stacks is kept apart, under its own frames: the stack table
        # compares frames, so no two stacks share an id and none is lost at the default size.
        totals = harness.per_function(report, {'descend_inner'}, pid=program.pid)
        self.assertEqual([s for s in report['stacks'] if s['stack_error']], [], harness.format_stacks(report))
        for counter in ('stack_table_full', 'stack_hash_clash', 'stack_no_scratch', 'stack_efault', 'stack_other'):
            self.assertEqual(report['lost'][counter], 0, report['lost'])
        self.assertEqual(totals['descend_inner'], {'bytes': 77 * 2173, 'allocs': 2173}, f'lost: {report["lost"]}')
        self.assertEqual(len(report['stacks']), 2173)

    def test_many_stacks_each_report_their_own_frames(self):
        # 2173 stacks: the report reads the per-stack totals in place and the stack table whole
        # (from 512 rows on): through its BPF iterator where the kernel loads one, else, and with
        # MEMLEAKD_MAP_ITER=0, by batch look-ups. Each stack gets back exactly its own frames.
        for env in (None, {'MEMLEAKD_MAP_ITER': '0'}):
            with self.subTest(env=env):
                daemon = self.start_daemon(env=env)
                if env:
                    self.assertIn('does not load map-element iterators', daemon.log())
                program = self.start_program('leak-many-stacks')
                daemon.attach(program.pid)
                program.run_leaks()
                report = daemon.report(pid=program.pid)
                program.kill()
                target = report['targets'][0]
                self.assertEqual((target['outstanding_bytes'], target['outstanding_allocs']), (2173 * 77, 2173),
                                 target)
                self.assertEqual(report['lost']['combined_map_full'], 0, report['lost'])
                self.assertEqual(len(report['stacks']), 2173)
                frames = set()
                for s in report['stacks']:
                    self.assertEqual((s['bytes'], s['allocs'], s['stack_error']), (77, 1, None), s)
                    addrs = tuple(f['addr'] for f in s['frames'])
                    self.assertIn('descend_inner', [f.get('symbol') for f in s['frames']], s)
                    frames.add(addrs)
                self.assertEqual(len(frames), 2173, 'two stacks came back with the same frames')

if __name__ == '__main__':
    unittest.main(verbosity=2)
