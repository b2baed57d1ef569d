# SPDX-License-Identifier: MIT
"""Never blind past the allocation table's limit: a target whose share of max_allocs nears full
is sampled from then on (auto_sample_percent), instead of having its new allocations dropped.

tests/programs/leak-table-fill.c keeps 3,000 blocks of 100 bytes (keep_early), then grows a
reachable list by 5 blocks of 48 bytes a millisecond (grow_cache) while leak_steadily() leaks one
block of 256 bytes each time: with max_allocs = 16384 its share of the table is 80% full about
2.5 s after "go", and full about 3 s after. Without sampling, every allocation past that is
dropped: the leak's bytes go flat and leaks says "No stack is growing." With it, leaks keeps
naming leak_steadily as growing, its bytes estimated (~, +/-), the sampling and its start shown;
the 3,000 blocks recorded before the switch are still reported to the byte; nothing is dropped
(the switch comes at 80%, with 0.7 s to spare before the table would be full)."""

import math
import os
import re
import time
import unittest

import harness

PROGRAM = 'leak-table-fill'
MAX_ALLOCS = 16384
EARLY = {'keep_early': {'bytes': 3000 * 100, 'allocs': 3000}}
PERCENT = 80                            # auto_sample_percent's default
FAST_MAX_ALLOCS = 8192
BURST_PROGRAM = 'leak-table-burst'
BURST_MAX_ALLOCS = 8192
LEAK_SIZE = 256
BURST_BLOCKS = 20000
BURST_EARLY = {'keep_early': {'bytes': 5000 * 100, 'allocs': 5000}}
BURST_SIZE = 48
FIRST_BURST_BLOCKS = 60000


class AutoSampleTest(harness.DaemonTestCase):

    def assert_leak_named(self, daemon, pid, when):
        """leaks (JSON and text) names leak_steadily as growing, with its estimate's error."""
        leaks = daemon.ctl_json('leaks', '--pid', pid)
        growing = {s['frames'][0]['symbol']: s for s in leaks['suspects']
                   if s['frames'] and s['verdict'] == 'growing'}
        self.assertIn('leak_steadily', growing, f'{when}: {leaks}')
        leak = growing['leak_steadily']
        self.assertGreater(leak['growth_bytes_per_s'], 0, leak)
        self.assertIsInstance(leak['expected_error'], float, leak)
        self.assertAlmostEqual(leak['expected_error'],
                               math.sqrt(leaks['targets'][0]['sample_bytes'] / leak['bytes']), places=2)
        self.assertIsNotNone(leaks['targets'][0]['auto_sample'], leaks['targets'])
        text = daemon.ctl_ok('leaks', '--pid', pid).stdout
        self.assertNotIn('No stack is growing', text)
        self.assertIn('leak_steadily', text)
        self.assertRegex(text, r'~\d+ bytes \(\+/-\d+\.\d%\) in ~\d+ allocations from stack .*\[growing')
        self.assertRegex(text, r'sampled since \d\d:\d\d:\d\d \(its share of the allocation table \d+% full\), '
                               r'1 in ~\d+ bytes')
        return leaks

    def test_table_fills_then_the_target_is_sampled_and_the_leak_still_seen(self):
        daemon = self.start_daemon(config={'max_allocs': MAX_ALLOCS})
        p = self.start_program(PROGRAM)
        reply = daemon.attach(p.pid)
        self.assertEqual(reply['target']['sample_bytes'], 0, reply)
        self.assertIsNone(reply['target']['auto_sample'], reply)
        p.go()
        p.expect('kept')
        report, found = self.wait_for_totals(daemon, p.pid, ('keep_early',), EARLY)
        self.assert_totals(report, found, EARLY, 'before the table fills')
        self.assertIsNone(report['targets'][0]['auto_sample'])
        started = time.time()
        p.go()

        # Well past the time the table fills (about 3 s after go), and again later: the leak is
        # still seen growing. Without sampling its bytes stop at the fill, and leaks finds
        # nothing growing.
        time.sleep(6)
        self.assert_leak_named(daemon, p.pid, '6 s after go')
        time.sleep(5)
        leaks = self.assert_leak_named(daemon, p.pid, '11 s after go')

        # status says since when, how full, and at what mean it is sampled
        [target] = [t for t in daemon.status()['targets'] if t['pid'] == p.pid]
        auto = target['auto_sample']
        self.assertIsNotNone(auto, target)
        self.assertEqual(target['sample_bytes'], auto['sample_bytes'])
        self.assertEqual(auto['sample_bytes'], auto['changes'][-1]['sample_bytes'])
        self.assertEqual(auto['since'], auto['changes'][0]['at'])
        self.assertLessEqual(abs(auto['since'] - started), 10, auto)
        # switched when its share is (or, at its pace, will be by the next tick) 80% full: the
        # 100 ms ticks here see it grow 3-4% of its share a tick
        self.assertGreaterEqual(auto['table_percent'], PERCENT - 10, auto)
        self.assertLess(auto['table_percent'], 100, auto)
        self.assertEqual(auto['changes_total'], len(auto['changes']))
        means = [c['sample_bytes'] for c in auto['changes']]
        self.assertEqual(means, sorted(set(means)), auto)      # each change raises the mean
        for mean in means:
            self.assertEqual(mean & (mean - 1), 0, auto)
            self.assertGreaterEqual(mean, 256, auto)
        for c in auto['changes']:
            self.assertGreaterEqual(c['table_blocks'], MAX_ALLOCS * (PERCENT - 10) // 100, auto)
            self.assertLess(c['table_blocks'], MAX_ALLOCS, auto)
        status_text = daemon.ctl_ok('status').stdout
        self.assertRegex(status_text, r'sampled since \d\d:\d\d:\d\d \(its share of the allocation table '
                                      r'\d+% full\), 1 in ~' + str(auto['sample_bytes']) + ' bytes')

        # the report: the blocks recorded before the switch exactly, nothing dropped, the
        # sampling said in JSON and text
        report = daemon.report(pid=p.pid)
        totals = harness.per_function(report, ('keep_early',), pid=p.pid)
        self.assert_totals(report, totals, EARLY, 'after the switch')
        self.assertEqual(report['targets'][0]['auto_sample']['since'], auto['since'])
        self.assertEqual(report['lost']['allocs_map_full'], 0, report['lost'])
        # most allocations since the switch crossed no sample point: counted, not recorded
        counters = daemon.status()['counters']
        self.assertGreater(counters['allocs_unsampled'], counters['allocs'], counters)
        report_text = daemon.ctl_ok('report', '--pid', p.pid).stdout
        self.assertIn('sampled since', report_text)
        self.assertIn('a sample point every', report_text)
        reach = daemon.ctl_json('report', '--pid', p.pid, '--reachability')['targets'][0]['reachability']
        self.assertIn('sampled', reach['error'], reach)

        # history and top say it too
        history = daemon.ctl_json('history', '--pid', p.pid)
        self.assertEqual(history['targets'][0]['auto_sample']['since'], auto['since'])
        self.assertIn('sampled since', daemon.ctl_ok('history', '--pid', p.pid).stdout)
        # one screen of top each time; the leak's row shows growing within the report timeout
        # (under ASan a screen once came before it did)
        growing_row = re.compile(r'~\d+ +~\d+ +growing +leak_steadily')

        def top_screen():
            r = daemon.ctl('top', '--pid', p.pid, '--frames', 1, '--interval', 100)
            return r if r.returncode != 0 or growing_row.search(r.stdout) else None

        r = harness.wait_until(top_screen, harness.REPORT_TIMEOUT_S, interval=0.5) or \
            daemon.ctl('top', '--pid', p.pid, '--frames', 1, '--interval', 100)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('sampled since', r.stdout)
        self.assertRegex(r.stdout, growing_row)

        # the page shows the same data (its script draws the line from auto_sample)
        page_path = os.path.join(self.workdir, 'report.html')
        r = daemon.ctl('html', '--pid', p.pid, '--output', page_path)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(page_path) as f:
            page = f.read()
        self.assertIn('"auto_sample":{"since":' + str(auto['since']), page.replace(' ', ''))

        p.go()
        p.expect('done')
        self.assertEqual(p.finish(), 0)
        self.assertGreater(len(leaks['suspects']), 0)

    def test_a_share_filled_within_a_snapshot_interval_is_switched_before_it_is_full(self):
        # a share of 8,192 blocks, which leak-table-fill grows by about two thirds a second, at one
        # snapshot a second: it is switched before it is full and nothing is dropped (redis at
        # 5,000 keys a second into a share of 20,000, checked on the snapshot tick, was switched
        # at 99% and dropped from then on: bench/table-fill.py)
        daemon = self.start_daemon(config={'max_allocs': FAST_MAX_ALLOCS, 'snapshot_interval_ms': 1000})
        p = self.start_program(PROGRAM)
        daemon.attach(p.pid)
        p.go()
        p.expect('kept')
        p.go()

        def switched():
            [t] = [t for t in daemon.status()['targets'] if t['pid'] == p.pid]
            return t['auto_sample']

        auto = harness.wait_until(switched, harness.REPORT_TIMEOUT_S, interval=0.2)
        self.assertIsNotNone(auto, daemon.status()['targets'])
        self.assertLess(auto['changes'][0]['table_percent'], 95, auto)
        time.sleep(5)
        self.assert_leak_named(daemon, p.pid, '5 s after the switch')
        [target] = [t for t in daemon.status()['targets'] if t['pid'] == p.pid]
        self.assertEqual(target['lost']['allocs_map_full'], 0, target)
        p.go()
        p.expect('done')

    def test_a_share_filled_faster_than_it_is_checked_is_switched_by_bpf(self):
        # leak-table-burst keeps 5,000 blocks of 100 bytes, leaks one of 256 bytes a millisecond
        # for a second, then makes 20,000 blocks of 48 bytes at once: its share of a table of
        # 8,192 (the whole table) fills within the burst, faster than the daemon's checks a tenth
        # of a second apart see (from over 5,000 blocks, no check can see it will pass 80%
        # before it has). BPF switches it itself at 80% of its share, at the mean the daemon set
        # ahead from its mean block: nothing dropped, the switch in its history as any other,
        # the leak named and estimated within the error stated. (Before, the daemon switched it
        # at its next check, mostly after allocations had been dropped.)
        daemon = self.start_daemon(config={'max_allocs': BURST_MAX_ALLOCS})
        p = self.start_program(BURST_PROGRAM)
        daemon.attach(p.pid)
        p.go()
        p.expect('kept')
        report, found = self.wait_for_totals(daemon, p.pid, ('keep_early',), BURST_EARLY)
        self.assert_totals(report, found, BURST_EARLY, 'before the burst')
        p.go()
        # leaking steadily (at most 1,000 blocks: below 80% still): a snapshot, and checks that
        # set its limit from its mean block
        time.sleep(1)
        before = time.time()
        p.go()
        burst_usec = int(p.line('"burst <usec>"').split()[1])
        after = time.time()

        # switched by BPF at its limit: 80% of its share, those blocks, from within the burst
        def switched():
            [t] = [t for t in daemon.status()['targets'] if t['pid'] == p.pid]
            return t['auto_sample']

        auto = harness.wait_until(switched, harness.REPORT_TIMEOUT_S, interval=0.1)
        self.assertIsNotNone(auto, daemon.status()['targets'])
        first = auto['changes'][0]
        limit = (BURST_MAX_ALLOCS * PERCENT + 99) // 100
        self.assertEqual(first['table_blocks'], limit, auto)
        self.assertEqual(first['table_percent'], PERCENT, auto)
        self.assertEqual(auto['table_percent'], PERCENT, auto)
        self.assertGreaterEqual(auto['since'], int(before) - 1, auto)
        self.assertLessEqual(auto['since'], after + 1, auto)
        mean = first['sample_bytes']
        self.assertEqual(mean & (mean - 1), 0, auto)
        self.assertGreaterEqual(mean, 256, auto)

        # growth needs a few snapshots of the sampled leak: named within the report timeout
        # (3 s on a quiet machine), whatever else loads the machine
        def named():
            leaks = daemon.ctl_json('leaks', '--pid', p.pid)
            return any(s['frames'] and s['frames'][0]['symbol'] == 'leak_steadily' and s['verdict'] == 'growing'
                       for s in leaks['suspects'])

        harness.wait_until(named, harness.REPORT_TIMEOUT_S, interval=0.5)
        self.assert_leak_named(daemon, p.pid, 'after the burst')
        p.go()
        leaked = int(p.line('"done <leaked>"').split()[1])

        # nothing dropped; the blocks kept before the switch still exact
        report = daemon.report(pid=p.pid)
        self.assertEqual(report['lost']['allocs_map_full'], 0, (report['lost'], burst_usec))
        [target] = [t for t in daemon.status()['targets'] if t['pid'] == p.pid]
        self.assertEqual(target['lost']['allocs_map_full'], 0, target)
        totals = harness.per_function(report, ('keep_early',), pid=p.pid)
        self.assert_totals(report, totals, BURST_EARLY, 'after the burst')
        # the leak's and the burst's bytes estimated within 4 times the standard error stated,
        # sqrt(mean / bytes) (less in truth: the blocks before the switch are exact)
        # the mean the report applied is its own latest change; the daemon's next check may
        # raise it again before status is asked, never lower it
        mean = report['targets'][0]['sample_bytes']
        self.assertEqual(mean, report['targets'][0]['auto_sample']['changes'][-1]['sample_bytes'], report['targets'])
        self.assertLessEqual(mean, target['sample_bytes'])
        estimated = harness.per_function(report, ('leak_steadily', 'fill_burst'), pid=p.pid)
        for name, truth in (('leak_steadily', leaked * LEAK_SIZE), ('fill_burst', BURST_BLOCKS * BURST_SIZE)):
            error = math.sqrt(mean / truth)
            self.assertLessEqual(abs(estimated[name]['bytes'] - truth), 4 * error * truth,
                                 (name, estimated, truth, auto))
        report_text = daemon.ctl_ok('report', '--pid', p.pid).stdout
        self.assertIn('sampled since', report_text)
        self.assertIn('a sample point every', report_text)

        # the next target in its slot starts exact, with no switch of BPF's left from it
        daemon.ctl_ok('detach', '--pid', p.pid)
        p.go()
        self.assertEqual(p.finish(), 0)
        again = self.start_program(BURST_PROGRAM)
        reply = daemon.attach(again.pid)
        again.go()
        again.expect('kept')
        report, found = self.wait_for_totals(daemon, again.pid, ('keep_early',), BURST_EARLY)
        self.assert_totals(report, found, BURST_EARLY, 'the next target')
        time.sleep(0.5)                 # checks that would note a switch left in the slot
        [target] = [t for t in daemon.status()['targets'] if t['pid'] == again.pid]
        self.assertIsNone(target['auto_sample'], (reply, target))
        self.assertEqual(target['sample_bytes'], 0, target)

    def test_a_burst_before_any_check_is_sampled_ever_more_sparsely_not_dropped(self):
        # leak-table-burst first: 60,000 blocks of 48 bytes at once, right after the attach,
        # before the daemon saw any of its heap (its preset mean is the least, 256 bytes: at it,
        # the 20% of an 8,192-block share left past the limit fills after ~10,000 of them). BPF
        # switches it at the limit, then raises its mean fourfold each time half the room left is
        # used: nothing dropped, each raise in its history, the burst estimated within the error of
        # the mean in effect.
        # (Before, BPF switched once and the rest of the burst was dropped until the daemon's
        # next check.)
        daemon = self.start_daemon(config={'max_allocs': BURST_MAX_ALLOCS})
        p = harness.LeakProgram(BURST_PROGRAM, command=[os.path.join(harness.PROGRAMS_DIR, BURST_PROGRAM), 'first'])
        self.addCleanup(p.kill)
        p.expect('ready')
        daemon.attach(p.pid)
        p.go()
        burst_usec = int(p.line('"burst <usec>"').split()[1])

        def raised_twice():
            [t] = [t for t in daemon.status()['targets'] if t['pid'] == p.pid]
            auto = t['auto_sample']
            return auto if auto and len(auto['changes']) >= 2 else None

        self.assertIsNotNone(harness.wait_until(raised_twice, harness.REPORT_TIMEOUT_S, interval=0.1),
                             (daemon.status()['targets'], burst_usec))
        p.go()
        p.expect('done 0')
        report = daemon.report(pid=p.pid)
        self.assertEqual(report['lost']['allocs_map_full'], 0, (report['lost'], burst_usec))
        # the history as the report has it (a raise may be noted after the one seen above)
        auto = report['targets'][0]['auto_sample']
        changes = auto['changes']
        limit = (BURST_MAX_ALLOCS * PERCENT + 99) // 100
        self.assertEqual(changes[0]['table_blocks'], limit, auto)
        means = [c['sample_bytes'] for c in changes]
        self.assertGreaterEqual(len(means), 2, auto)
        self.assertEqual(means, sorted(set(means)), auto)
        blocks = [c['table_blocks'] for c in changes]
        self.assertEqual(blocks, sorted(blocks), auto)
        self.assertLessEqual(blocks[-1], BURST_MAX_ALLOCS, auto)
        mean = report['targets'][0]['sample_bytes']
        self.assertEqual(mean, means[-1], (report['targets'][0], auto))
        # every change BPF made is in the history, the latest included (not only the latest
        # made between two of the daemon's checks): the blocks held now have not passed the step
        # after the last change noted, where BPF would have raised the mean again
        # (bpf/memleak.bpf.c's steps); nor did any change come past the step after the one before
        tables = daemon.status()['limits']['tables']['allocs']
        share = tables['share']

        def step_after(at):
            # BPF's own step, or the daemon's where later (it writes one with each check: half
            # the room left at the change, a room counting as at least a sixteenth of the share)
            own = at + (share - at) // 2 if share > at + 1 else at + share // 16 + 1
            return max(own, at + max(share - at, share // 16) // 2)

        for before, after in zip(blocks, blocks[1:] + [tables['held']]):
            self.assertLessEqual(after, step_after(before), (tables, auto))
        estimated = harness.per_function(report, ('fill_burst',), pid=p.pid)
        truth = FIRST_BURST_BLOCKS * BURST_SIZE
        error = math.sqrt(mean / truth)
        self.assertLessEqual(abs(estimated['fill_burst']['bytes'] - truth), 4 * error * truth,
                             (estimated, truth, auto))

    def test_off_when_the_config_says_so(self):
        daemon = self.start_daemon(config={'max_allocs': MAX_ALLOCS, 'auto_sample_percent': 0})
        p = self.start_program(PROGRAM)
        daemon.attach(p.pid)
        p.go()
        p.expect('kept')
        p.go()
        # the table fills; allocations past it are dropped and counted, never sampled
        self.assertTrue(harness.wait_until(
            lambda: daemon.status()['lost']['allocs_map_full'] > 0, harness.REPORT_TIMEOUT_S, interval=0.2),
            daemon.status()['lost'])
        [target] = [t for t in daemon.status()['targets'] if t['pid'] == p.pid]
        self.assertIsNone(target['auto_sample'], target)
        self.assertEqual(target['sample_bytes'], 0, target)


if __name__ == '__main__':
    unittest.main(verbosity=2)
