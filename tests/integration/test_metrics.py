# SPDX-License-Identifier: MIT
"""Prometheus metrics: `memleakctl metrics` and the file memleakd writes to metrics_textfile say
what the report says (a quiet program's outstanding bytes and blocks to the byte, a steady leak
as the one growing stack among a cache and churn), parse with promtool, and reach a real Prometheus
through a real node_exporter's textfile collector (Debian's prometheus and
prometheus-node-exporter), which answers a query for the program's outstanding bytes."""

import json
import os
import re
import socket
import subprocess
import time
import unittest
import urllib.parse
import urllib.request

import harness

SAMPLE = re.compile(r'^([a-z_]+)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-z_]+)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """{(name, frozenset(labels.items())): value} of the text format; the HELP and TYPE lines
    checked to come once each, before their samples."""
    samples, typed = {}, set()
    for line in text.splitlines():
        if line.startswith('# HELP '):
            continue
        if line.startswith('# TYPE '):
            name = line.split()[2]
            assert name not in typed, f'{name} typed twice'
            typed.add(name)
            continue
        m = SAMPLE.match(line)
        assert m, f'not a sample line: {line!r}'
        name, labels, value = m.groups()
        assert name in typed or name.rsplit('_total', 1)[0] + '_total' in typed, f'{name} sampled before its TYPE'
        samples[(name, frozenset(LABEL.findall(labels or '')))] = float(value)
    return samples


def of_pid(samples, name, pid):
    found = [v for (n, labels), v in samples.items() if n == name and ('pid', str(pid)) in labels]
    assert len(found) <= 1, (name, pid, found)
    return found[0] if found else None


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class MetricsTest(harness.DaemonTestCase):

    def daemon_with_textfile(self, **config):
        directory = os.path.join(self.workdir, 'textfile')
        os.mkdir(directory)
        path = os.path.join(directory, 'memleakd.prom')
        daemon = self.start_daemon(config=dict({'metrics_textfile': path, 'metrics_interval_ms': 1000}, **config))
        return daemon, path

    def read_file(self, path, pid=None):
        """The textfile once it is there (and names pid, when given)."""
        seen = {}

        def ready():
            try:
                with open(path) as f:
                    seen['text'] = f.read()
            except FileNotFoundError:
                return False
            return pid is None or f'pid="{pid}"' in seen['text']

        self.assertTrue(harness.wait_until(ready, 10), f'{path}: {seen.get("text")!r}')
        return seen['text']

    def test_a_quiet_program_s_metrics_are_its_report_s(self):
        # tests/programs/leak-restart.c once it printed "before": quiet from then on
        daemon, path = self.daemon_with_textfile()
        program = self.start_program('leak-restart')
        daemon.attach(program.pid)
        program.go()
        program.expect('before')
        expected = {'leak_before': {'bytes': 1001 * 16, 'allocs': 16},
                    'held_then_freed': {'bytes': 3003 * 8, 'allocs': 8}}
        self.wait_for_totals(daemon, program.pid, set(expected), expected)
        [target] = daemon.report(pid=program.pid)['targets']
        self.assertGreaterEqual(target['outstanding_bytes'], 1001 * 16 + 3003 * 8)
        status = daemon.status()

        text = daemon.ctl_ok('metrics').stdout
        samples = parse(text)
        labels = frozenset({('pid', str(program.pid)), ('comm', 'leak-restart')})
        self.assertEqual(samples[('memleakd_target_outstanding_bytes', labels)], target['outstanding_bytes'], text)
        self.assertEqual(samples[('memleakd_target_outstanding_allocations', labels)], target['outstanding_allocs'])
        self.assertEqual(samples[('memleakd_target_sampled', labels)], 0)
        self.assertEqual(samples[('memleakd_target_stacks', labels)],
                         len([s for s in daemon.report(pid=program.pid)['stacks'] if s['allocs'] > 0]))
        self.assertEqual(samples[('memleakd_target_lost_events_total', labels | {('reason', 'allocs_map_full')})], 0)
        self.assertNotIn(('memleakd_target_lost_bytes', labels), samples, 'no scan: nothing said of lost blocks')
        self.assertEqual(samples[('memleakd_build_info', frozenset({('version', status['version'])}))], 1)
        self.assertEqual(samples[('memleakd_targets', frozenset())], 1)
        self.assertGreater(samples[('memleakd_resident_memory_bytes', frozenset())], 0)
        self.assertGreater(samples[('memleakd_bpf_map_bytes', frozenset())], 0)
        # --json: the same text (memleakd's own figures move between the two)
        again = parse(daemon.ctl_json('metrics')['metrics'])
        def targets_own(found):     # (not the growth nor the verdicts: they move with the clock)
            return {k: v for k, v in found.items()
                    if k[0] in ('memleakd_target_outstanding_bytes', 'memleakd_target_outstanding_allocations',
                                'memleakd_target_stacks', 'memleakd_target_sampled',
                                'memleakd_target_lost_events_total')}

        self.assertEqual(targets_own(again), targets_own(samples))

        # the file says the same (once written after the leaks), and promtool finds nothing wrong in it
        self.assertTrue(harness.wait_until(
            lambda: parse(self.read_file(path, program.pid)).get(('memleakd_target_outstanding_bytes', labels)) ==
            target['outstanding_bytes'], 10), self.read_file(path))
        check = subprocess.run(['promtool', 'check', 'metrics'], input=self.read_file(path), capture_output=True,
                               text=True, timeout=30)
        self.assertEqual((check.returncode, check.stdout + check.stderr), (0, ''))
        self.assertEqual([n for n in os.listdir(os.path.dirname(path))], ['memleakd.prom'], 'a temporary file left')

    def test_a_steady_leak_is_the_one_growing_stack(self):
        # tests/programs/leak-verdicts.c: a leak every 50 ms, a cache filled once, churn
        daemon, path = self.daemon_with_textfile(snapshot_interval_ms=100, ring_depth=30)
        program = self.start_program('leak-verdicts')
        daemon.attach(program.pid)
        program.go()
        program.expect('started')
        # the growth over the ring: 3 s from a second after the cache was filled, the churn's
        # 3 KB coming and going in it
        time.sleep(4)
        last = {}

        def one_growing():
            last['samples'] = parse(daemon.ctl_ok('metrics').stdout)
            return of_pid(last['samples'], 'memleakd_target_growing_stacks', program.pid) == 1

        self.assertTrue(harness.wait_until(one_growing, 20), last)
        # about 2,220 bytes a second (111 every 50 ms; the loop may run late), give or take the
        # churn's 3 KB over the window
        growth = of_pid(last['samples'], 'memleakd_target_growth_bytes_per_second', program.pid)
        self.assertIsNotNone(growth, last)
        self.assertGreater(growth, 500)
        self.assertLess(growth, 3500)
        leaks = daemon.ctl_json('leaks', '--pid', program.pid)
        self.assertEqual([s['frames'][0]['symbol'] for s in leaks['suspects']], ['leak_steadily'], leaks)
        # the file too, a write each second
        self.assertTrue(harness.wait_until(
            lambda: of_pid(parse(self.read_file(path, program.pid)), 'memleakd_target_growing_stacks', program.pid) == 1,
            10))

    def test_prometheus_scrapes_it_through_node_exporter(self):
        daemon, path = self.daemon_with_textfile()
        program = self.start_program('leak-restart')
        daemon.attach(program.pid)
        program.go()
        program.expect('before')
        expected = {'leak_before': {'bytes': 1001 * 16, 'allocs': 16}}
        self.wait_for_totals(daemon, program.pid, {'leak_before'}, expected)
        [target] = daemon.report(pid=program.pid)['targets']
        self.read_file(path, program.pid)

        exporter_port, prometheus_port = free_port(), free_port()
        exporter = subprocess.Popen(
            ['prometheus-node-exporter', f'--web.listen-address=127.0.0.1:{exporter_port}',
             '--collector.disable-defaults', '--collector.textfile',
             f'--collector.textfile.directory={os.path.dirname(path)}'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: (exporter.kill(), exporter.wait()))
        config = os.path.join(self.workdir, 'prometheus.yml')
        with open(config, 'w') as f:
            f.write('global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n'
                    'scrape_configs:\n  - job_name: node\n    static_configs:\n'
                    f'      - targets: ["127.0.0.1:{exporter_port}"]\n')
        prometheus = subprocess.Popen(
            ['prometheus', f'--config.file={config}', f'--storage.tsdb.path={os.path.join(self.workdir, "tsdb")}',
             f'--web.listen-address=127.0.0.1:{prometheus_port}'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(lambda: (prometheus.kill(), prometheus.wait()))

        query = urllib.parse.urlencode({'query': f'memleakd_target_outstanding_bytes{{pid="{program.pid}"}}'})
        url = f'http://127.0.0.1:{prometheus_port}/api/v1/query?{query}'
        answer = {}

        def answered():
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    answer['json'] = harness.load_json_file(r)
            except OSError as e:
                answer['error'] = str(e)
                return False
            return bool(answer['json'].get('data', {}).get('result'))

        self.assertTrue(harness.wait_until(answered, 60, interval=0.5), answer)
        [series] = answer['json']['data']['result']
        self.assertEqual(series['metric']['comm'], 'leak-restart', series)
        self.assertEqual(float(series['value'][1]), target['outstanding_bytes'], series)


if __name__ == '__main__':
    unittest.main(verbosity=2)
