# SPDX-License-Identifier: MIT
"""Counters that belong to the target: each target's report, leaks and status show what it
counted and lost itself, not what another target lost into the shared tables; and where a target
lost allocations within the snapshots its verdicts look at, leaks, history and the report say so
instead of "No stack is growing" (tests/programs/leak-table-full.c)."""

import re
import time
import unittest

import harness

PROGRAM = 'leak-table-full'
SNAPSHOT_MS = 100
RING_DEPTH = 16
WINDOW_S = SNAPSHOT_MS * RING_DEPTH / 1000
# auto_sample_percent 0: a target filling its share of the table drops and counts (the losses
# these tests are about) instead of being switched to sampling (test_auto_sample.py)
SMALL_TABLE = {'max_allocs': 1024, 'snapshot_interval_ms': SNAPSHOT_MS, 'ring_depth': RING_DEPTH,
               'auto_sample_percent': 0}
LEAK_ONCE = {'leak_once': {'bytes': 10 * 100, 'allocs': 10}}
FILL_NAMES = {'leak_steadily', 'keep_reachable'}
# what fill() allocates per round: one leak_steadily block and 40 keep_reachable ones
ALLOCS_PER_ROUND = 41
# the counters whose events a report of a target that lost nothing shows as 0 (free_unknown is
# printed apart: frees of blocks from before the attach are no loss)
NOT_LOSSES = {'free_unknown'}


def losses(lost):
    return {k: v for k, v in lost.items() if v and k not in NOT_LOSSES}


def target_of(reply, pid):
    [t] = [t for t in reply['targets'] if t['pid'] == pid]
    return t


class CountersTest(harness.DaemonTestCase):

    def start_filling(self, program):
        program.proc.stdin.write(b'fill\n')
        program.proc.stdin.flush()
        program.expect('started')

    def stop_filling(self, program):
        """Stop the rounds: the allocations they made, 41 a round."""
        program.proc.stdin.write(b'stop\n')
        program.proc.stdin.flush()
        line = program.line('"rounds N"')
        m = re.fullmatch(r'rounds (\d+)', line)
        self.assertIsNotNone(m, line)
        return int(m.group(1)) * ALLOCS_PER_ROUND

    def assert_recorded_or_lost(self, daemon, program, allocated):
        """Every allocation the filling target made is in its report or in its own loss count."""
        report = daemon.report(pid=program.pid)
        totals = harness.per_function(report, FILL_NAMES, pid=program.pid)
        recorded = sum(t['allocs'] for t in totals.values())
        lost = report['lost']['allocs_map_full']
        self.assertGreater(lost, 0, report['lost'])
        self.assertEqual(recorded + lost, allocated, f'recorded {totals}, lost {report["lost"]}')
        self.assertEqual(target_of(report, program.pid)['lost']['allocs_map_full'], lost)
        return report

    def test_a_target_that_overflows_the_table_does_not_make_the_others_lossy(self):
        daemon = self.start_daemon(config=SMALL_TABLE)
        clean = self.start_program(PROGRAM)
        daemon.attach(clean.pid)
        clean.run_leaks()
        filling = self.start_program(PROGRAM)
        daemon.attach(filling.pid)
        self.start_filling(filling)
        time.sleep(0.5)
        allocated = self.stop_filling(filling)

        # the overflowing target: its own allocs_map_full, every allocation recorded or counted
        full_report = self.assert_recorded_or_lost(daemon, filling, allocated)
        lost = full_report['lost']['allocs_map_full']
        text = daemon.ctl_ok('report', '--pid', filling.pid).stdout
        self.assertIn(f'allocs_map_full={lost}', text)

        # the clean one: its leak exact, nothing lost, in the report, leaks and their text
        report, totals = self.wait_for_totals(daemon, clean.pid, {'leak_once'}, LEAK_ONCE)
        self.assert_totals(report, totals, LEAK_ONCE, 'the clean target beside a full table')
        self.assertEqual(losses(report['lost']), {}, report['lost'])
        self.assertEqual(losses(target_of(report, clean.pid)['lost']), {}, report['targets'])
        self.assertEqual(target_of(report, clean.pid)['counters']['allocs'], 10, report['targets'])
        text = daemon.ctl_ok('report', '--pid', clean.pid).stdout
        self.assertIn('Lost events: none', text)
        self.assertNotIn('allocs_map_full', text)
        leaks = daemon.ctl_json('leaks', '--pid', clean.pid)
        self.assertEqual(losses(target_of(leaks, clean.pid)['lost']), {}, leaks['targets'])
        # every JSON document memleakctl prints says which memleakd made it
        version = daemon.status()['version']
        self.assertRegex(version, r'^\d+\.\d+\.\d+')
        for command in ('leaks', 'report', 'history'):
            self.assertEqual(daemon.ctl_json(command, '--pid', clean.pid).get('version'), version, command)
        self.assertFalse(target_of(leaks, clean.pid)['verdicts_qualified'], leaks['targets'])
        self.assertNotIn('allocs_map_full', daemon.ctl_ok('leaks', '--pid', clean.pid).stdout)

        # status: each target's own, and the daemon's, which is their sum
        status = daemon.status()
        self.assertEqual(losses(target_of(status, clean.pid)['lost']), {}, status['targets'])
        self.assertEqual(target_of(status, filling.pid)['lost']['allocs_map_full'], lost, status['targets'])
        self.assertEqual(status['lost']['allocs_map_full'], lost, status['lost'])
        text = daemon.ctl_ok('status').stdout
        self.assertIn(f'allocs_map_full={lost}', text)
        self.assertEqual(text.count(f'allocs_map_full={lost}'), 2, text)   # the target's and the daemon's

        # the next target in the overflowing one's slot starts from zero
        daemon.ctl_ok('detach', '--pid', filling.pid)
        after = self.start_program(PROGRAM)
        daemon.attach(after.pid)
        after.run_leaks()
        report, totals = self.wait_for_totals(daemon, after.pid, {'leak_once'}, LEAK_ONCE)
        self.assert_totals(report, totals, LEAK_ONCE, 'a target attached after the full one left')
        self.assertEqual(losses(report['lost']), {}, report['lost'])
        self.assertIn('Lost events: none', daemon.ctl_ok('report', '--pid', after.pid).stdout)
        # the daemon keeps counting what the detached target lost
        self.assertEqual(daemon.status()['lost']['allocs_map_full'], lost)

    def test_run_of_a_program_that_allocates_nothing_shows_no_losses(self):
        daemon = self.start_daemon(config=SMALL_TABLE)
        # another target's losses first, then it is gone: they are not the run's
        filling = self.start_program(PROGRAM)
        daemon.attach(filling.pid)
        self.start_filling(filling)
        time.sleep(0.3)
        self.stop_filling(filling)
        daemon.ctl_ok('detach', '--pid', filling.pid)
        self.assertGreater(daemon.status()['lost']['allocs_map_full'], 0)
        r, report = self.run_json(daemon, '/usr/bin/true')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(losses(report['lost']), {}, report['lost'])
        [target] = report['targets']
        self.assertEqual(losses(target['lost']), {}, target)
        self.assertFalse(target['verdicts_qualified'], target)
        r = self.run_ctl(daemon.socket_path, '--', '/usr/bin/true')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('Lost events: none', r.stderr.decode(errors='replace'))

    def test_leaks_never_says_nothing_grows_while_allocations_are_dropped(self):
        daemon = self.start_daemon(config=SMALL_TABLE)
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        self.start_filling(program)
        # the table is full within a fraction of a second; past a ring of snapshots every stack
        # looks flat, though leak_steadily leaks on
        time.sleep(WINDOW_S + 1.0)

        leaks = daemon.ctl_json('leaks', '--pid', program.pid)
        target = target_of(leaks, program.pid)
        self.assertTrue(target['verdicts_qualified'], target)
        self.assertGreater(target['lost_in_window']['allocs_map_full'], 0, target)
        self.assertIsNotNone(target['blind_since'], target)
        self.assertLessEqual(target['blind_since'], time.time(), target)
        text = daemon.ctl_ok('leaks', '--pid', program.pid).stdout
        self.assertNotIn('No stack is growing', text)
        self.assertIn('Verdicts qualified', text)
        self.assertRegex(text, r'since \d\d:\d\d:\d\d it lost allocs_map_full=\d+')
        # the report marks each verdict it touches, and so does history
        report = daemon.report(pid=program.pid)
        self.assertTrue(target_of(report, program.pid)['verdicts_qualified'], report['targets'])
        verdicts = [s for s in report['stacks'] if s['verdict'] not in (None, 'pending')]
        self.assertTrue(verdicts, harness.format_stacks(report))
        self.assertTrue(all(s['verdict_qualified'] for s in verdicts), harness.format_stacks(report))
        history = daemon.ctl_json('history', '--pid', program.pid)
        self.assertTrue(target_of(history, program.pid)['verdicts_qualified'], history)
        self.assertIn('Verdicts qualified', daemon.ctl_ok('history', '--pid', program.pid).stdout)
        self.assertIn('Verdicts qualified', daemon.ctl_ok('report', '--pid', program.pid).stdout)
        top = daemon.ctl_ok('top', '--pid', program.pid, '--frames', 1, '--interval', 100).stdout
        self.assertIn('Verdicts qualified', top)
        rows = [line.split() for line in top.splitlines() if line.split()[4:5] in (['keep_reachable'],
                                                                                   ['leak_steadily'])]
        self.assertTrue(rows, top)
        self.assertTrue(all(row[3].endswith('?') for row in rows), top)

        allocated = self.stop_filling(program)
        self.assert_recorded_or_lost(daemon, program, allocated)

        # once the losses are older than the ring, the verdicts stand again: an old loss is not
        # a new one
        def qualified():
            t = target_of(daemon.ctl_json('leaks', '--pid', program.pid), program.pid)
            return t['verdicts_qualified']

        self.assertTrue(harness.wait_until(lambda: not qualified(), WINDOW_S + 5), 'losses stay new')
        leaks = daemon.ctl_json('leaks', '--pid', program.pid)
        target = target_of(leaks, program.pid)
        self.assertEqual(target['lost_in_window'], {}, target)
        self.assertGreater(target['lost']['allocs_map_full'], 0, target)
        # growth alone (a scan would find leak_steadily's recorded blocks lost, another matter)
        self.assertIn('No stack is growing.', daemon.ctl_ok('leaks', '--pid', program.pid, '--no-reachability').stdout)

    def test_leaks_shows_a_sampled_targets_figures_as_estimates(self):
        daemon = self.start_daemon(config={'snapshot_interval_ms': SNAPSHOT_MS, 'ring_depth': RING_DEPTH})
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid, '--sample-bytes', 4096)
        self.start_filling(program)
        time.sleep(WINDOW_S + 1.0)
        leaks = daemon.ctl_json('leaks', '--pid', program.pid)
        growing = {s['frames'][0]['symbol']: s for s in leaks['suspects']}
        # keep_reachable grows by 192 KB/s, some 47 sample points a second (leak_steadily's 11 KB/s
        # may have too few points yet for a verdict); no scan tells a leak from what stays reachable
        self.assertIn('keep_reachable', growing, leaks['suspects'])
        self.assertLessEqual(set(growing), FILL_NAMES, leaks['suspects'])
        for stack in growing.values():
            self.assertAlmostEqual(stack['expected_error'], (4096 / stack['bytes']) ** 0.5, places=3)
        self.assertFalse(target_of(leaks, program.pid)['verdicts_qualified'], leaks['targets'])
        text = daemon.ctl_ok('leaks', '--pid', program.pid).stdout
        self.assertRegex(text, r'~\d+ bytes \(\+/-\d+\.\d%\) in ~\d+ allocations from stack \(pid \d+\) '
                               r'\[growing: \+\d+ B/s\]')
        self.assertRegex(text, r'\(~\d+ bytes at the oldest snapshot\)')
        self.assertNotRegex(text, r'\t\d+ bytes in \d+ allocations from stack')
        self.stop_filling(program)


if __name__ == '__main__':
    unittest.main()
