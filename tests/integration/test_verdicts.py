# SPDX-License-Identifier: MIT
"""Leak verdicts from the snapshot ring: a program with a steady leak, a cache filled once and
buffers that fill and empty (tests/programs/leak-verdicts.c); the report names each for what it
is, and every stack carries its stack id, the same in every report; memleakctl html puts the same
report and history in one page."""

import json
import os
import re
import time
import unittest

import harness

PROGRAM = 'leak-verdicts'
SNAPSHOT_MS = 100
RUN_S = 3.0


def stacks_by_first_frame(report):
    found = {}
    for stack in report['stacks']:
        if stack['frames']:
            found.setdefault(stack['frames'][0]['symbol'], []).append(stack)
    return found


class VerdictsTest(harness.DaemonTestCase):

    def test_a_leak_a_plateau_and_churn_are_told_apart(self):
        daemon = self.start_daemon(config={'snapshot_interval_ms': SNAPSHOT_MS})
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.go()
        program.expect('started')
        first = daemon.report(pid=program.pid)
        time.sleep(RUN_S)
        report = daemon.report(pid=program.pid)
        stacks = stacks_by_first_frame(report)
        text = harness.format_stacks(report)

        [leak] = stacks['leak_steadily']
        self.assertEqual(leak['verdict'], 'growing', leak)
        # one 111-byte block every 50 ms: about 2,220 bytes a second (the loop may run late)
        self.assertGreater(leak['growth_bytes_per_s'], 500, leak)
        self.assertLess(leak['growth_bytes_per_s'], 2600, leak)
        self.assertEqual(leak['bytes'] % 111, 0, leak)

        [cache] = stacks['fill_cache']
        self.assertEqual((cache['bytes'], cache['allocs']), (20 * 222, 20), cache)
        self.assertEqual(cache['verdict'], 'plateau', cache)

        churn = stacks.get('churn_buffers', [])
        # between two fill-ups the buffers may all be freed at the moment of the report
        for stack in churn:
            self.assertEqual(stack['verdict'], 'churn', text)

        # memleakctl leaks names the leak, and only it
        leaks = daemon.ctl_json('leaks', '--pid', program.pid)
        self.assertEqual([s['frames'][0]['symbol'] for s in leaks['suspects']], ['leak_steadily'], leaks)
        suspect = leaks['suspects'][0]
        self.assertEqual(set(suspect), {'pid', 'stack_id', 'verdict', 'verdict_qualified', 'bytes', 'allocs',
                                        'expected_error', 'growth_bytes_per_s', 'first_bytes', 'last_bytes',
                                        'reachability', 'frames'}, suspect)
        # exact figures, and verdicts that saw every allocation
        self.assertIsNone(suspect['expected_error'], suspect)
        self.assertFalse(suspect['verdict_qualified'], suspect)
        # scanned concurrently by default: the leaked blocks are definitely lost (the newest
        # may still sit in a register or on the stack); the plateau's are reachable, not listed
        # (where memleakd may not take the userfaultfd too: a container's seccomp, the process
        # holds it)
        self.assertEqual(leaks['targets'][0]['reachability']['method'], 'concurrent', leaks['targets'])
        self.assertGreater(suspect['reachability']['definitely_lost']['allocs'], 0, suspect)
        self.assertLessEqual(suspect['reachability']['still_reachable']['allocs'], 1, suspect)
        self.assertEqual(leaks['growing_caches'], [], leaks)
        self.assertEqual((suspect['pid'], suspect['verdict']), (program.pid, 'growing'), suspect)
        self.assertLessEqual(suspect['first_bytes'], suspect['last_bytes'], suspect)
        self.assertGreaterEqual(leaks['targets'][0]['snapshots'], 6, leaks['targets'])
        text = daemon.ctl_ok('leaks', '--pid', program.pid).stdout
        self.assertIn('1 stack growing or holding lost blocks', text)
        self.assertRegex(text, r'\[growing: \+\d+ B/s\]')
        self.assertIn('leak_steadily', text)
        self.assertNotIn('fill_cache', text)
        # no scan (--no-reachability): growth alone, no classes
        plain = daemon.ctl_json('leaks', '--pid', program.pid, '--no-reachability')
        self.assertEqual([s['frames'][0]['symbol'] for s in plain['suspects']], ['leak_steadily'], plain)
        self.assertIsNone(plain['suspects'][0]['reachability'], plain)
        text = daemon.ctl_ok('leaks', '--pid', program.pid, '--no-reachability').stdout
        self.assertIn('1 stack still growing', text)

        # memleakctl history: the ring as series; the leak's stack by its id rises
        history = daemon.ctl_json('history', '--pid', program.pid, '--stack', leak['stack_id'])
        [target] = history['targets']
        self.assertEqual(target['pid'], program.pid)
        self.assertEqual(len(target['totals']), target['snapshots'])
        times = [p['t'] for p in target['totals']]
        self.assertEqual(times, sorted(times))
        [series] = target['stacks']
        self.assertEqual(series['stack_id'], leak['stack_id'])
        self.assertEqual(series['verdict'], 'growing', series)
        bytes_ = [p['bytes'] for p in series['points']]
        self.assertEqual(bytes_, sorted(bytes_), series)
        self.assertTrue(all(b % 111 == 0 for b in bytes_), series)
        # (a snapshot may come after the report above: compare with one taken after the history)
        [later] = stacks_by_first_frame(daemon.report(pid=program.pid))['leak_steadily']
        self.assertLessEqual(bytes_[-1], later['bytes'])
        # without --stack: the largest stacks of the newest snapshot, each with its verdict
        history = daemon.ctl_json('history', '--pid', program.pid)
        verdicts = {s['stack_id']: s['verdict'] for s in history['targets'][0]['stacks']}
        self.assertEqual(verdicts.get(cache['stack_id']), 'plateau', verdicts)
        self.assertEqual(verdicts.get(leak['stack_id']), 'growing', verdicts)
        text = daemon.ctl_ok('history', '--pid', program.pid).stdout
        self.assertIn(f'stack {leak["stack_id"]} [growing', text)
        self.assertIn(f'stack {cache["stack_id"]} [plateau]', text)
        r = daemon.ctl('history', '--pid', 1)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('Not attached', r.stderr)

        # memleakctl top, not on a terminal: successive plain frames, the leak first
        r = daemon.ctl('top', '--pid', program.pid, '--frames', 2, '--interval', 100)
        self.assertEqual(r.returncode, 0, r.stderr)
        frames = r.stdout.split('memleakctl top: ')[1:]
        self.assertEqual(len(frames), 2, r.stdout)
        for frame in frames:
            lines = frame.splitlines()
            header = [i for i, line in enumerate(lines) if line.split()[:2] == ['GROWTH/s', 'BYTES']]
            self.assertEqual(len(header), 1, frame)
            top_row = lines[header[0] + 1].split()
            self.assertEqual(top_row[3:5], ['growing', 'leak_steadily'], frame)
            self.assertTrue(top_row[0].startswith('+'), frame)
            self.assertIn('resident:', frame)
        self.assertIn('fill_cache', r.stdout)

        # memleakctl html: one page holding the report and the history as data (drawn by its
        # script): the leak growing, the cache at its exact bytes, the ring's series
        page_path = os.path.join(self.workdir, 'report.html')
        r = daemon.ctl('html', '--pid', program.pid, '--output', page_path)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(page_path) as f:
            page = f.read()
        self.assertTrue(page.startswith('<!DOCTYPE html>'), page[:100])
        [data] = re.findall(r'<script type="application/json" id="memleakd-data">(.*?)</script>', page, re.S)
        data = harness.load_json(data)
        page_stacks = stacks_by_first_frame(data['report'])
        self.assertEqual(page_stacks['leak_steadily'][0]['verdict'], 'growing', data['report'])
        self.assertEqual([(c['bytes'], c['allocs'], c['verdict']) for c in page_stacks['fill_cache']],
                         [(20 * 222, 20, 'plateau')])
        [page_target] = data['history']['targets']
        self.assertEqual(page_target['pid'], program.pid)
        self.assertGreaterEqual(len(page_target['totals']), 6, page_target)
        self.assertIn(leak['stack_id'], [s['stack_id'] for s in page_target['stacks']])
        self.assertEqual(os.listdir(self.workdir).count('report.html'), 1)
        self.assertFalse([f for f in os.listdir(self.workdir) if f.startswith('report.html.')])

        # ids are stable: the first report's stacks are the same stacks now
        before = {s['frames'][0]['symbol']: s['stack_id'] for s in first['stacks'] if s['frames']}
        self.assertEqual(before['fill_cache'], cache['stack_id'], text)
        self.assertIsInstance(cache['stack_id'], int)

    def test_a_new_target_is_pending_and_says_how_many_snapshots_more(self):
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000})
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.go()
        program.expect('started')
        report = daemon.report(pid=program.pid)
        [cache] = stacks_by_first_frame(report)['fill_cache']
        # no snapshot yet: no history to judge by
        self.assertIsNone(cache['verdict'], cache)

        daemon = self.start_daemon(config={'snapshot_interval_ms': 400})
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.go()
        program.expect('started')
        harness.wait_until(lambda: daemon.status()['targets'][0]['snapshots'] >= 2, 10)
        report = daemon.report(pid=program.pid)
        [leak] = stacks_by_first_frame(report)['leak_steadily']
        # two or three snapshots and this report's read: a verdict needs six points
        self.assertEqual(leak['verdict'], 'pending', leak)
        self.assertIn(leak['snapshots_missing'], (1, 2, 3), leak)


if __name__ == '__main__':
    unittest.main(verbosity=2)
