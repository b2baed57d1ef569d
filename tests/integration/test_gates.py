# SPDX-License-Identifier: MIT
"""CI gates: memleakctl run --error-exitcode N exits N when the program loses a block (every stack
judged, not only those listed), its own status once a LeakSanitizer suppressions file names that
block's function (the suppressed bytes and blocks reported exactly), and N when it cannot decide;
run --fail-on growing exits N on a stack that grew until the program exited (its verdict kept at
the exit), the program's status on balanced churn or once the growing stack is suppressed, and N
on a program that ran too short to judge; memleakctl leaks --error-exitcode N on a live program
whose stack grows, and 0 once that stack is suppressed."""

import json
import re
import unittest
import os
import time

import harness

# tests/programs/leak-lose.c at its exit
LOST = {
    'lose_list': {'bytes': 48, 'allocs': 1},              # definitely lost
    'make_child': {'bytes': 333, 'allocs': 1},            # indirectly lost (under lose_list)
    'lose_overwritten': {'bytes': 400, 'allocs': 4},      # definitely lost
}
LOST_BYTES = sum(v['bytes'] for v in LOST.values())       # 781
LOST_ALLOCS = sum(v['allocs'] for v in LOST.values())     # 6
REACHABLE = {'keep_in_global': {'bytes': 222, 'allocs': 1}}

# tests/programs/leak-verdicts.c: leak_steadily() grows (and loses its blocks), the rest does not
VERDICTS_PROGRAM = 'leak-verdicts'
VERDICTS_RUN_S = 3.0
# memleakctl run of it: 3 s at one snapshot every 100 ms, 30 of them, where a verdict needs 6
VERDICTS_RUN_MS = 3000
VERDICTS_CONFIG = {'snapshot_interval_ms': 100}


def program(name):
    return os.path.join(harness.PROGRAMS_DIR, name)


class GatesTest(harness.DaemonTestCase):

    def suppressions(self, *lines):
        path = os.path.join(self.workdir, f'supp-{time.monotonic_ns()}.txt')
        with open(path, 'w') as f:
            f.write(''.join(line + '\n' for line in lines))
        return path

    def run_gate(self, daemon, *options, args=()):
        """memleakctl run OPTIONS --json --output FILE -- leak-lose ARGS: (CompletedProcess, report)."""
        return self.run_json(daemon, program('leak-lose'), *args, options=options)

    def lost_of(self, report):
        """{first frame's function: its lost bytes and blocks} (definitely plus indirectly)."""
        lost = {}
        for stack in report['stacks']:
            reach = stack.get('reachability') or {}
            b = sum(reach.get(c, {}).get('bytes', 0) for c in ('definitely_lost', 'indirectly_lost'))
            a = sum(reach.get(c, {}).get('allocs', 0) for c in ('definitely_lost', 'indirectly_lost'))
            if b or a:
                t = lost.setdefault(stack['frames'][0]['symbol'], {'bytes': 0, 'allocs': 0})
                t['bytes'] += b
                t['allocs'] += a
        return lost

    def test_run_exits_23_on_a_lost_block_and_the_programs_status_once_suppressed(self):
        daemon = self.start_daemon()
        # no gate: the program's status, whatever it lost (the scan agrees with the ground truth)
        r, report = self.run_gate(daemon)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.lost_of(report), LOST, harness.format_stacks(report))
        self.assertNotIn('gate', report)
        self.assertNotIn('suppressed', report)

        # the gate: 23, what failed on stderr and in the JSON
        r, report = self.run_gate(daemon, '--error-exitcode', 23)
        stderr = r.stderr.decode()
        self.assertEqual(r.returncode, 23, stderr)
        self.assertIn(f'fails on lost: 3 stacks holding lost blocks: {LOST_BYTES} bytes in {LOST_ALLOCS} blocks',
                      stderr)
        self.assertIn('the leak check failed (--fail-on lost): exit status 23 (--error-exitcode)', stderr)
        gate = report['gate']
        self.assertEqual((gate['fail_on'], gate['error_exitcode'], gate['failed'], gate['undecided']),
                         (['lost'], 23, True, []), gate)
        self.assertEqual(gate['lost'], {'stacks': 3, 'allocs': LOST_ALLOCS, 'bytes': LOST_BYTES}, gate)
        # a status of the program's own does not hide it
        r, _ = self.run_gate(daemon, '--error-exitcode', 23, args=('--exit', 7))
        self.assertEqual(r.returncode, 23, r.stderr)

        # suppressed by function name (and a stack whose inner frame is another function's:
        # make_child's stack passes through lose_list), by an anchored pattern, by source file
        supp = self.suppressions('# the known leaks of leak-lose', '', 'leak:never_matches_anything',
                                 'leak:lose_list', '   leak:^lose_overwritten$  ')
        for status in (0, 7):
            r, report = self.run_gate(daemon, '--error-exitcode', 23, '--suppressions', supp,
                                      args=('--exit', status))
            self.assertEqual(r.returncode, status, r.stderr)
            self.assertEqual(r.stderr.decode().count('fails on'), 0, r.stderr)
            self.assertEqual(self.lost_of(report), {}, harness.format_stacks(report))
            self.assertEqual(harness.per_function(report, REACHABLE, pid=report['targets'][0]['pid']), REACHABLE)
            s = report['suppressed']
            self.assertEqual((s['file'], s['stacks'], s['allocs'], s['bytes']),
                             (supp, 3, LOST_ALLOCS, LOST_BYTES), s)
            self.assertEqual([(p['pattern'], p['line'], p['stacks'], p['allocs'], p['bytes']) for p in s['patterns']],
                             [('never_matches_anything', 3, 0, 0, 0),
                              ('lose_list', 4, 2, 2, 48 + 333),
                              ('^lose_overwritten$', 5, 1, 4, 400)], s)
            self.assertEqual((report['gate']['failed'], report['gate']['lost']['stacks']), (False, 0), report['gate'])

        # the text report says what was suppressed, as LeakSanitizer's "Suppressions used:"
        r = self.run_ctl(daemon.socket_path, '--error-exitcode', 23, '--suppressions', supp, '--',
                         program('leak-lose'))
        text = r.stderr.decode()
        self.assertEqual(r.returncode, 0, text)
        self.assertIn(f'Suppressed: {LOST_BYTES} bytes in {LOST_ALLOCS} blocks by 3 stacks ({supp})\n'
                      'Suppressions used:\n'
                      '  stacks   blocks      bytes  pattern\n'
                      '       2        2        381  lose_list (line 4)\n'
                      '       1        4        400  ^lose_overwritten$ (line 5)\n', text)
        listed = text.split('Suppressed:')[0]
        for name in LOST:
            self.assertNotIn(name, listed)
        self.assertIn('keep_in_global', listed)

        # one suppressed, one not: still 23, and only the other's bytes fail it
        supp_file = self.suppressions('leak:leak-lose.c*')    # by source file: every stack of the program
        r, report = self.run_gate(daemon, '--error-exitcode', 23, '--suppressions', supp_file)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(report['suppressed']['bytes'], LOST_BYTES + 222, report['suppressed'])
        partial = self.suppressions('leak:^lose_overwritten$')
        r, report = self.run_gate(daemon, '--error-exitcode', 23, '--suppressions', partial)
        self.assertEqual(r.returncode, 23, r.stderr)
        self.assertEqual(report['gate']['lost'], {'stacks': 2, 'allocs': 2, 'bytes': 381}, report['gate'])

    def test_run_judges_every_stack_not_only_those_listed(self):
        daemon = self.start_daemon()
        r, report = self.run_gate(daemon, '--error-exitcode', 23, '--top', 0)
        self.assertEqual(r.returncode, 23, r.stderr)
        self.assertEqual(report['stacks'], [])
        self.assertEqual(report['gate']['lost']['bytes'], LOST_BYTES, report['gate'])
        self.assertGreaterEqual(report['other']['stacks'], 4, report['other'])
        self.assertGreaterEqual(report['other']['bytes'], LOST_BYTES + 222, report['other'])

    def test_report_leaves_suppressed_stacks_out_before_top(self):
        daemon = self.start_daemon()
        r, report = self.run_gate(daemon)
        self.assertEqual(r.returncode, 0, r.stderr)
        pid = report['targets'][0]['pid']
        supp = self.suppressions('leak:^lose_overwritten$', 'leak:make_child')
        # the first two stacks (lost ones come first) are suppressed: --top 1 lists the next
        report = daemon.ctl_json('report', '--pid', pid, '--top', 1, '--suppressions', supp)
        self.assertEqual(harness.per_function(report, {'make_child', 'lose_list', 'keep_in_global'}, pid=pid),
                         {'lose_list': {'bytes': 48, 'allocs': 1}}, harness.format_stacks(report))
        self.assertEqual(len(report['stacks']), 1, harness.format_stacks(report))
        self.assertEqual((report['other']['stacks'], report['other']['bytes']), (1, 222), report['other'])
        s = report['suppressed']
        self.assertEqual((s['stacks'], s['allocs'], s['bytes']), (2, 5, 733), s)
        self.assertNotIn('gate', report)
        text = daemon.ctl_ok('report', '--pid', pid, '--suppressions', supp).stdout
        self.assertIn(f'Suppressed: 733 bytes in 5 blocks by 2 stacks ({supp})', text)
        self.assertNotIn('lose_overwritten', text.split('Suppressed:')[0])
        # the options a gate takes are not report's
        self.assertEqual(daemon.ctl('report', '--error-exitcode', 1).returncode, 2)

    def test_run_of_a_program_without_leaks_exits_its_own_status(self):
        daemon = self.start_daemon()
        for status in (0, 5):
            r, report = self.run_gate(daemon, '--error-exitcode', 23, args=('--clean', '--exit', status))
            self.assertEqual(r.returncode, status, r.stderr)
            self.assertEqual(self.lost_of(report), {}, harness.format_stacks(report))
            self.assertEqual(report['gate']['failed'], False, report['gate'])
        # its reachable block is outstanding: --fail-on outstanding fails on it
        r, report = self.run_gate(daemon, '--error-exitcode', 23, '--fail-on', 'outstanding', args=('--clean',))
        self.assertEqual(r.returncode, 23, r.stderr)
        self.assertGreaterEqual(report['gate']['outstanding']['bytes'], 222, report['gate'])
        self.assertNotIn('lost', report['gate'])

    def test_run_without_a_scan_cannot_decide_and_fails(self):
        daemon = self.start_daemon()
        r, report = self.run_gate(daemon, '--error-exitcode', 23, '--no-reachability', args=('--clean',))
        stderr = r.stderr.decode()
        self.assertEqual(r.returncode, 23, stderr)
        self.assertRegex(stderr, r'cannot decide lost: pid \d+ \(leak-lose\) was not scanned')
        self.assertEqual(len(report['gate']['undecided']), 1, report['gate'])
        # but --fail-on outstanding needs no scan: with everything suppressed it passes
        everything = self.suppressions('leak:*')
        r, report = self.run_gate(daemon, '--error-exitcode', 23, '--no-reachability', '--fail-on', 'outstanding',
                                  '--suppressions', everything, args=('--clean', '--exit', 3))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(report['stacks'], [])
        self.assertGreaterEqual(report['suppressed']['bytes'], 222, report['suppressed'])
        # untraced (--untraced-ok, no memleakd there): no report, no check: it fails
        r = self.run_ctl(os.path.join(self.workdir, 'no-daemon.sock'), '--untraced-ok', '--error-exitcode', 23, '--',
                         program('leak-lose'), '--clean')
        self.assertEqual(r.returncode, 23, r.stderr)
        self.assertIn('the leak check cannot be made without a report of', r.stderr.decode())

    def run_verdicts(self, daemon, *options, args=()):
        """memleakctl run OPTIONS -- leak-verdicts --run-ms VERDICTS_RUN_MS ARGS: (CompletedProcess,
        JSON report)."""
        return self.run_json(daemon, program(VERDICTS_PROGRAM), '--run-ms', VERDICTS_RUN_MS, *args,
                             options=options)

    def verdicts_of(self, report):
        """{first frame's function: (verdict, bytes, allocs)} of the report's heap stacks."""
        return {s['frames'][0]['symbol']: (s['verdict'], s['bytes'], s['allocs'])
                for s in report['stacks'] if s['frames'] and not s['mmap']}

    def test_run_fails_on_a_stack_that_grew_until_the_program_exited(self):
        daemon = self.start_daemon(config=VERDICTS_CONFIG)
        r, report = self.run_verdicts(daemon, '--error-exitcode', 23, '--fail-on', 'growing')
        stderr = r.stderr.decode()
        self.assertEqual(r.returncode, 23, stderr)
        [target] = report['targets']
        self.assertTrue(target['exited'], target)
        self.assertGreaterEqual(target['snapshots'], 6, target)     # the harness's ring holds 16
        self.assertFalse(target['verdicts_qualified'], target)
        # each stack's verdict as it stood at the exit: the leak grew, the cache and the churn did not
        verdicts = self.verdicts_of(report)
        verdict, grown, blocks = verdicts['leak_steadily']
        self.assertEqual(verdict, 'growing', harness.format_stacks(report))
        self.assertGreaterEqual(blocks, 20, verdicts)
        self.assertEqual(grown, 111 * blocks, verdicts)
        self.assertEqual(verdicts['fill_cache'], ('plateau', 20 * 222, 20), verdicts)
        if 'churn_buffers' in verdicts:
            self.assertEqual(verdicts['churn_buffers'][0], 'churn', verdicts)
        [stack] = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] == 'leak_steadily']
        self.assertGreater(stack['growth_bytes_per_s'], 0, stack)
        gate = report['gate']
        self.assertEqual((gate['fail_on'], gate['failed'], gate['undecided']), (['growing'], True, []), gate)
        self.assertEqual(gate['growing'], {'stacks': 1, 'allocs': blocks, 'bytes': grown}, gate)
        self.assertNotIn('lost', gate)
        self.assertIn(f'fails on growing: 1 stack growing, now {grown} bytes in {blocks} blocks', stderr)
        self.assertIn('the leak check failed (--fail-on growing): exit status 23', stderr)

        # with lost: both fail it (leak_steadily's blocks are lost too: it keeps none)
        r, report = self.run_verdicts(daemon, '--error-exitcode', 23, '--fail-on', 'lost,growing',
                                      args=('--exit', 4))
        self.assertEqual(r.returncode, 23, r.stderr)
        gate = report['gate']
        self.assertEqual((gate['fail_on'], gate['growing']['stacks'], gate['undecided']),
                         (['lost', 'growing'], 1, []), gate)
        self.assertEqual(gate['lost']['bytes'], 111 * gate['lost']['allocs'], gate)
        self.assertGreaterEqual(gate['lost']['allocs'], 20, gate)

        # the text report names the growing stack, its verdict beside it
        r = self.run_ctl(daemon.socket_path, '--error-exitcode', 23, '--fail-on', 'growing', '--',
                         program(VERDICTS_PROGRAM), '--run-ms', VERDICTS_RUN_MS)
        text = r.stderr.decode()
        self.assertEqual(r.returncode, 23, text)
        lines = text.splitlines()
        growing = [i for i, line in enumerate(lines) if re.search(r'from stack \(pid \d+\) \[growing: \+\d+ B/s\]$', line)]
        self.assertEqual(len(growing), 1, text)
        # its frames follow it (after its blocks' classes), the leaking function first
        self.assertIn('leak_steadily', '\n'.join(lines[growing[0] + 1:growing[0] + 3]), text)

    def test_run_fail_on_growing_passes_on_churn_and_once_the_growing_stack_is_suppressed(self):
        daemon = self.start_daemon(config=VERDICTS_CONFIG)
        # balanced churn and a cache only: the program's own status
        for status in (0, 6):
            r, report = self.run_verdicts(daemon, '--error-exitcode', 23, '--fail-on', 'growing',
                                          args=('--no-leak', '--exit', status))
            self.assertEqual(r.returncode, status, r.stderr)
            verdicts = self.verdicts_of(report)
            self.assertNotIn('leak_steadily', verdicts)
            self.assertEqual(verdicts['fill_cache'], ('plateau', 20 * 222, 20), verdicts)
            if 'churn_buffers' in verdicts:
                self.assertEqual(verdicts['churn_buffers'][0], 'churn', verdicts)
            self.assertNotIn('growing', [v for v, _, _ in verdicts.values()], verdicts)
            gate = report['gate']
            self.assertEqual((gate['failed'], gate['growing']['stacks'], gate['undecided']), (False, 0, []), gate)

        # the growing stack suppressed: the program's status, the stack counted as suppressed
        supp = self.suppressions('leak:^leak_steadily$')
        r, report = self.run_verdicts(daemon, '--error-exitcode', 23, '--fail-on', 'growing',
                                      '--suppressions', supp, args=('--exit', 5))
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertNotIn('leak_steadily', self.verdicts_of(report))
        s = report['suppressed']
        self.assertEqual(s['stacks'], 1, s)
        self.assertGreaterEqual(s['allocs'], 20, s)
        self.assertEqual(s['bytes'], 111 * s['allocs'], s)
        self.assertEqual((report['gate']['failed'], report['gate']['undecided']), (False, []), report['gate'])

    def test_run_fail_on_growing_cannot_judge_a_program_that_ran_too_short(self):
        # 2 snapshots at most before it exits: its stacks' verdicts stay pending
        daemon = self.start_daemon(config={'snapshot_interval_ms': 1000})
        r, report = self.run_json(daemon, program(VERDICTS_PROGRAM), '--run-ms', 300, '--no-leak',
                                  options=('--error-exitcode', 23, '--fail-on', 'growing'))
        stderr = r.stderr.decode()
        self.assertEqual(r.returncode, 23, stderr)
        verdicts = self.verdicts_of(report)
        self.assertEqual(verdicts['fill_cache'], ('pending', 20 * 222, 20), verdicts)
        gate = report['gate']
        self.assertEqual((gate['failed'], gate['growing']['stacks'], len(gate['undecided'])), (True, 0, 1), gate)
        self.assertRegex(stderr, r'cannot decide growing: pid \d+ \(leak-verdicts\) exited after \d snapshots: a '
                                 r'growth verdict needed \d+ more .*: it ran too short to judge its growth')
        # what it holds at its exit suppressed: nothing is left to judge, it passes
        everything = self.suppressions('leak:*')
        r, report = self.run_json(daemon, program(VERDICTS_PROGRAM), '--run-ms', 300, '--no-leak', '--exit', 3,
                                  options=('--error-exitcode', 23, '--fail-on', 'growing', '--suppressions',
                                           everything))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(report['stacks'], [], report['stacks'])

    def test_bad_gate_options_and_suppressions_are_usage_errors(self):
        daemon = self.start_daemon()
        marker = os.path.join(self.workdir, 'ran')
        bad = self.suppressions('leak:ok', '# fine', 'interceptor_via_fun:foo')
        empty = self.suppressions('leak:')
        cases = [
            (('--error-exitcode', 0), "--error-exitcode must be an exit status between 1 and 255"),
            (('--error-exitcode', 256), "--error-exitcode must be an exit status between 1 and 255"),
            (('--fail-on', 'lost'), "--fail-on says what fails --error-exitcode N: give both"),
            (('--error-exitcode', 1, '--fail-on', 'lost,bogus'), "--fail-on takes a comma list"),
            (('--suppressions', bad), f"{bad}:3: 'interceptor_via_fun' suppressions are not memleakd's"),
            (('--suppressions', empty), f"{empty}:1: leak: without a pattern"),
            (('--suppressions', os.path.join(self.workdir, 'absent')), "cannot read the suppressions file"),
        ]
        for options, message in cases:
            r = self.run_ctl(daemon.socket_path, *options, '--', program('leak-run'),
                             env={'LEAK_RUN_MARKER': marker})
            self.assertEqual(r.returncode, 2, (options, r.stderr))
            self.assertIn(message, r.stderr.decode(), options)
            self.assertFalse(os.path.exists(marker), options)
        # leaks: outstanding is not its to judge
        r = daemon.ctl('leaks', '--error-exitcode', 1, '--fail-on', 'outstanding')
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn('leaks judges only lost,growing', r.stderr)

    def test_leaks_exits_n_on_a_growing_stack_and_0_once_it_is_suppressed(self):
        daemon = self.start_daemon(config={'snapshot_interval_ms': 100})
        p = self.start_program(VERDICTS_PROGRAM)
        daemon.attach(p.pid)
        p.go()
        p.expect('started')
        time.sleep(VERDICTS_RUN_S)

        # growing, and its blocks lost: both verdicts fail it
        r = daemon.ctl('leaks', '--pid', p.pid, '--error-exitcode', 3, '--json')
        self.assertEqual(r.returncode, 3, r.stderr)
        leaks = harness.load_json(r.stdout)
        gate = leaks['gate']
        self.assertEqual((gate['fail_on'], gate['failed'], gate['undecided']), (['lost', 'growing'], True, []), gate)
        self.assertEqual(gate['growing']['stacks'], 1, gate)
        self.assertEqual(gate['growing']['bytes'] % 111, 0, gate)
        self.assertGreater(gate['lost']['allocs'], 0, gate)
        self.assertIn('fails on growing: 1 stack growing, now', r.stderr)
        self.assertEqual([s['frames'][0]['symbol'] for s in leaks['suspects']], ['leak_steadily'], leaks)

        # suppressed: nothing fails; the suppressed stack is counted, and listed no more
        supp = self.suppressions('leak:^leak_steadily$')
        r = daemon.ctl('leaks', '--pid', p.pid, '--error-exitcode', 3, '--suppressions', supp, '--json')
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        leaks = harness.load_json(r.stdout)
        self.assertEqual(leaks['suspects'], [], leaks)
        self.assertEqual(leaks['gate']['failed'], False, leaks['gate'])
        s = leaks['suppressed']
        self.assertEqual(s['stacks'], 1, s)
        self.assertGreater(s['allocs'], 0, s)
        self.assertEqual(s['bytes'], 111 * s['allocs'], s)
        text = daemon.ctl('leaks', '--pid', p.pid, '--error-exitcode', 3, '--suppressions', supp)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertRegex(text.stdout, r'Suppressed: \d+ bytes in \d+ blocks by 1 stack \(' + supp + r'\)\n'
                                      r'Suppressions used:\n')

        # growth alone (no scan): --fail-on growing can be decided, lost cannot
        r = daemon.ctl('leaks', '--pid', p.pid, '--no-reachability', '--error-exitcode', 3, '--fail-on', 'growing')
        self.assertEqual(r.returncode, 3, r.stderr)
        r = daemon.ctl('leaks', '--pid', p.pid, '--no-reachability', '--error-exitcode', 3, '--fail-on', 'growing',
                       '--suppressions', supp)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = daemon.ctl('leaks', '--pid', p.pid, '--no-reachability', '--error-exitcode', 3, '--suppressions', supp)
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertRegex(r.stderr, r'cannot decide lost: pid \d+ \(leak-verdicts\) was not scanned')
        # without a gate, leaks exits 0 whatever it lists
        self.assertEqual(daemon.ctl('leaks', '--pid', p.pid).returncode, 0)

    def test_leaks_fail_on_growing_passes_on_a_leak_that_grows_no_more(self):
        # leak-lose --wait loses its blocks once, then runs on: lost, but not growing
        daemon = self.start_daemon(config={'snapshot_interval_ms': 100})
        p = harness.LeakProgram('leak-lose', command=[program('leak-lose'), '--wait'])
        self.addCleanup(p.kill)
        p.expect('ready')
        daemon.attach(p.pid)
        p.go()
        p.expect('made')

        def judged():
            report = daemon.report(pid=p.pid)
            verdicts = {s['frames'][0]['symbol']: s['verdict'] for s in report['stacks'] if s['frames']}
            return verdicts if all(verdicts.get(f) == 'plateau' for f in LOST) else None

        verdicts = harness.wait_until(judged, harness.REPORT_TIMEOUT_S, interval=0.2)
        self.assertTrue(verdicts, harness.format_stacks(daemon.report(pid=p.pid)))
        r = daemon.ctl('leaks', '--pid', p.pid, '--error-exitcode', 5, '--fail-on', 'growing', '--json')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(harness.load_json(r.stdout)['gate']['growing']['stacks'], 0)
        # its lost blocks fail the default (lost,growing), found by a live scan
        r = daemon.ctl('leaks', '--pid', p.pid, '--error-exitcode', 5, '--json')
        self.assertEqual(r.returncode, 5, r.stderr)
        gate = harness.load_json(r.stdout)['gate']
        self.assertEqual((gate['growing']['stacks'], gate['undecided']), (0, []), gate)
        self.assertGreater(gate['lost']['bytes'], 0, gate)
        self.assertIn('fails on lost:', r.stderr)

    def test_leaks_of_a_target_with_too_few_snapshots_cannot_decide_growth(self):
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000})
        p = self.start_program(VERDICTS_PROGRAM)
        daemon.attach(p.pid)
        p.go()
        p.expect('started')
        r = daemon.ctl('leaks', '--pid', p.pid, '--no-reachability', '--error-exitcode', 4, '--fail-on', 'growing')
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertRegex(r.stderr, r'cannot decide growing: pid \d+ \(leak-verdicts\) has (too few snapshots '
                                   r'\(\d+ more needed|no snapshot yet)')


if __name__ == '__main__':
    unittest.main(verbosity=2)
