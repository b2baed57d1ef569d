# SPDX-License-Identifier: MIT
"""Byte sampling (--sample-bytes N): each thread records only the allocations that cross a sample
point (exponential gaps, mean N bytes), weighted so that every stack's bytes are estimated without
bias; the report states each estimate's expected relative error, sqrt(N / bytes).

tests/programs/leak-sample.c leaks exactly 64 MiB from each of four functions, in blocks of 16 to
4,096 bytes, and churns 64 MiB more. With N = 512 KiB the stated error is about 8.8%; each
estimate must come within FOUR times it. (Three times is the issue's target, and bench/ checks
how often it holds over many runs: at three standard errors, four functions fail together about
1% of the time, a flaky test; at four, about 2.5 in 10,000.)"""

import math
import os
import unittest

import harness

PROGRAM = 'leak-sample'
LEAKERS = ('leak_one', 'leak_two', 'leak_three', 'leak_four')
LEAK_BYTES = 64 << 20
SAMPLE_BYTES = 512 << 10
Z_BOUND = 4
BLOCKS_PER_LEAK = 32721                 # leak_bytes()'s blocks, the last one cut to fit
ALLOCATIONS = 160000                   # the program's mallocs: 4 leaks and a churn of about 32,700 each


def program(name):
    return os.path.join(harness.PROGRAMS_DIR, name)


class SamplingTest(harness.DaemonTestCase):

    def assert_estimates(self, report, names, true_bytes):
        """Each function's estimate within Z_BOUND times the relative error the report states."""
        sample_bytes = report['targets'][0]['sample_bytes']
        totals = harness.per_function(report, names + ('churn',))
        self.assertNotIn('churn', totals, 'balanced alloc/free churn shows in a sampled report:\n'
                         + harness.format_stacks(report))
        for stack in report['stacks']:
            self.assertIsNotNone(stack['expected_error'], stack)
            self.assertAlmostEqual(stack['expected_error'], math.sqrt(sample_bytes / stack['bytes']), places=3)
        for name in names:
            self.assertIn(name, totals, f'{name} is missing from the sampled report:\n'
                          + harness.format_stacks(report))
            estimate = totals[name]['bytes']
            stated = math.sqrt(sample_bytes / estimate)
            z = (estimate - true_bytes) / (true_bytes * stated)
            self.assertLess(abs(z), Z_BOUND,
                            f'{name}: estimated {estimate} bytes of {true_bytes}, {z:+.2f} times the '
                            f'stated error of {stated:.1%}')
            self.assertGreater(totals[name]['allocs'], 0)

    def test_run_estimates_each_leak_within_its_stated_error(self):
        daemon = self.start_daemon(config={'max_allocs': 8192})
        # on Linux 6.12 and later, an unsampled malloc's return is skipped (an uprobe session)
        self.assertEqual(daemon.status()['probes']['alloc_sessions'], harness.kernel_at_least(6, 12))
        r, report = self.run_json(daemon, program(PROGRAM), input=b'go\n',
                                  options=('--sample-bytes', SAMPLE_BYTES))
        self.assertEqual(r.returncode, 0, r.stderr)
        target = report['targets'][0]
        self.assertEqual(target['sample_bytes'], SAMPLE_BYTES)
        # a scan needs every block: sampling implies no reachability
        self.assertIsNone(target['reachability'])
        self.assertTrue(all(s['reachability'] is None for s in report['stacks']))
        self.assert_estimates(report, LEAKERS, LEAK_BYTES)
        self.assertFalse(any(report['lost'].values()), report['lost'])
        # every allocation was seen, and only about one in a hundred recorded; the rest counted
        counters = daemon.status()['counters']
        seen = counters['allocs'] + counters['allocs_unsampled']
        self.assertGreaterEqual(seen, ALLOCATIONS, counters)
        self.assertLess(counters['allocs'], seen // 50, counters)
        self.assertGreater(counters['frees_unsampled'], 30000, counters)

        text = self.run_ctl(daemon.socket_path, '--sample-bytes', SAMPLE_BYTES, '--',
                            program(PROGRAM), input=b'go\n')
        self.assertEqual(text.returncode, 0, text.stderr)
        out = text.stderr.decode()
        self.assertIn(f'a sample point every {SAMPLE_BYTES} bytes on average', out)
        self.assertRegex(out, r'~\d+ bytes \(\+/-\d+\.\d%\) in ~\d+ allocations')

    def test_attach_samples_a_live_process_and_refuses_a_scan(self):
        # a table that holds the exact target's blocks and little more: not sampled by memleakd
        # for filling it (auto_sample_percent, test_auto_sample.py), which would blur the truth
        daemon = self.start_daemon(config={'max_allocs': 4 * BLOCKS_PER_LEAK + 8192, 'auto_sample_percent': 0})
        p = self.start_program(PROGRAM)
        reply = daemon.attach(p.pid, '--sample-bytes', SAMPLE_BYTES)
        self.assertEqual(reply['target']['sample_bytes'], SAMPLE_BYTES, reply)
        p.run_leaks()
        report = daemon.report(pid=p.pid)
        self.assert_estimates(report, LEAKERS, LEAK_BYTES)
        self.assertIn(f'Sampled (a sample point every {SAMPLE_BYTES} bytes on average)',
                      daemon.ctl_ok('report', '--pid', p.pid).stdout)

        reach = daemon.ctl_json('report', '--pid', p.pid, '--reachability')['targets'][0]['reachability']
        self.assertIn('sampled', reach['error'], reach)
        self.assertIsNone(p.proc.poll(), 'the program stopped running')

        # sample_bytes 1 records every allocation of a byte or more: exact, and said so
        q = self.start_program(PROGRAM)
        reply = daemon.attach(q.pid, '--sample-bytes', 1)
        self.assertEqual(reply['target']['sample_bytes'], 0, reply)
        q.run_leaks()
        totals = {name: {'bytes': LEAK_BYTES, 'allocs': BLOCKS_PER_LEAK} for name in LEAKERS}
        report, found = self.wait_for_totals(daemon, q.pid, LEAKERS, totals)
        self.assert_totals(report, found, totals, 'sample_bytes 1')
        self.assertTrue(all(s['expected_error'] is None for s in report['stacks'] if s['pid'] == q.pid))

    def test_estimates_hold_with_every_return_of_malloc_run(self):
        # without uprobe sessions (Linux < 6.12), every malloc's return runs and an unsampled
        # one is dropped there; with them (the other tests here, on this kernel), an unsampled
        # malloc's return is skipped: both must draw each allocation's sample points once
        daemon = self.start_daemon(config={'max_allocs': 4 * BLOCKS_PER_LEAK + 8192},
                                   env={'MEMLEAKD_UPROBE_SESSION': '0'})
        self.assertFalse(daemon.status()['probes']['alloc_sessions'])
        self.assertIn('No uprobe sessions on this kernel', daemon.log())
        p = self.start_program(PROGRAM)
        daemon.attach(p.pid, '--sample-bytes', SAMPLE_BYTES)
        p.run_leaks()
        self.assert_estimates(daemon.report(pid=p.pid), LEAKERS, LEAK_BYTES)
        counters = daemon.status()['counters']
        self.assertGreaterEqual(counters['allocs'] + counters['allocs_unsampled'], ALLOCATIONS, counters)

    def test_config_default_and_requests_that_cannot_be_met(self):
        daemon = self.start_daemon(config={'sample_bytes': SAMPLE_BYTES})
        p = self.start_program(PROGRAM)
        self.assertEqual(daemon.attach(p.pid)['target']['sample_bytes'], SAMPLE_BYTES)
        daemon.ctl_ok('detach', '--pid', p.pid)
        self.assertEqual(daemon.attach(p.pid, '--sample-bytes', 0)['target']['sample_bytes'], SAMPLE_BYTES,
                         '0 means the configured default')
        daemon.ctl_ok('detach', '--pid', p.pid)

        def refused(msg, words):
            reply = daemon.request(dict({'v': 1, 'id': 7, 'cmd': 'attach'}, **msg))
            self.assertFalse(reply.get('ok'), reply)
            self.assertEqual(reply['error']['code'], 'EINVAL', reply)
            self.assertIn(words, reply['error']['message'], reply)

        refused({'kernel': True, 'sample_bytes': SAMPLE_BYTES}, 'sample_bytes')
        refused({'pid': p.pid, 'sample_bytes': (1 << 32) + 1}, 'sample_bytes')
        refused({'pid': p.pid, 'sample_bytes': -1}, 'sample_bytes')
        refused({'pid': p.pid, 'sample_bytes': 'many'}, 'sample_bytes')
        refused({'pid': p.pid, 'sample_bytes': SAMPLE_BYTES, 'reachability': True}, 'reachability')
        r = daemon.ctl('attach', '--kernel', '--sample-bytes', SAMPLE_BYTES)
        self.assertEqual(r.returncode, 2, r)
        r = daemon.ctl('attach', '--pid', p.pid, '--sample-bytes', '1e9')
        self.assertEqual(r.returncode, 2, r)
        self.assertIn('--sample-bytes', r.stderr)
        self.assertEqual(daemon.status()['targets'], [])


if __name__ == '__main__':
    unittest.main(verbosity=2)
