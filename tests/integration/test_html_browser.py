# SPDX-License-Identifier: MIT
"""memleakctl html's page in a real browser: headless Chromium (Debian's chromium) opens the page
written for a program with a known call tree of leaks (tests/programs/leak-flame.c). The page,
asked by its address (#selftest=FUNCTION), clicks FUNCTION's frame in its flame graph as a user
would and writes what it drew into the DOM, which Chromium dumps: the flame graph holds each
function's exact bytes, merged across stacks; the click zoomed on the frame and the root zoomed
back out; the diff of the ring's oldest and newest snapshots lists the growing stack, and only it.
Chromium's network log shows that the page asked nothing of the network."""

import json
import os
import shutil
import subprocess
import time
import unittest
import urllib.parse
from html.parser import HTMLParser

import harness

PROGRAM = 'leak-flame'
CHROMIUM_TIMEOUT_S = 120
ROOT = 'all processes'


class DumpedPage(HTMLParser):
    """What the test reads in the DOM Chromium dumped: the flame graph's frames in the order drawn,
    the selftest's record, the diff's headings and rows."""

    def __init__(self):
        super().__init__()
        self.frames = []            # [(depth, name, bytes, width)], drawn depth first
        self.selftest = None
        self.diff_rows = []         # [{'stack_id', 'gained'}]
        self.headings = []
        self.flame_svg = None
        self._heading = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'g' and 'frame' in (a.get('class') or '').split():
            self.frames.append((int(a['data-depth']), a['data-name'], int(a['data-bytes']), a['data-width']))
        elif tag == 'svg' and 'data-focus' in a:
            self.flame_svg = a
        elif tag == 'div' and a.get('id') == 'selftest':
            self.selftest = a
        elif tag == 'tr' and 'data-gained' in a:
            self.diff_rows.append({'stack_id': int(a['data-stack-id']), 'gained': int(a['data-gained'])})
        elif tag == 'h3':
            self._heading = ''

    def handle_data(self, data):
        if self._heading is not None:
            self._heading += data

    def handle_endtag(self, tag):
        if tag == 'h3' and self._heading is not None:
            self.headings.append(self._heading)
            self._heading = None


def frame_paths(frames):
    """{(name, ..., name): bytes}: each frame by the path from the root to it (frames come depth first)."""
    path, paths = [], {}
    for depth, name, bytes_, _ in frames:
        del path[depth:]
        path.append(name)
        paths[tuple(path)] = bytes_
    return paths


def under(paths, *tail):
    """The frames whose path ends in tail: {path: bytes}."""
    return {p: b for p, b in paths.items() if p[-len(tail):] == tail}


def page_requests(netlog_path):
    """The URLs the page asked the network for, from Chromium's net log: requests made for a
    document at a file: address (the browser's own, e.g. for updates, are no page's)."""
    with open(netlog_path) as f:
        log = harness.load_json_file(f)
    types = {v: k for k, v in log['constants']['logEventTypes'].items()}
    urls = []
    for event in log['events']:
        params = event.get('params') or {}
        if types.get(event['type']) != 'URL_REQUEST_START_JOB' or 'url' not in params:
            continue
        if 'file://' in str(params.get('network_isolation_key', '')) or params.get('initiator') == 'null':
            urls.append(params['url'])
    return urls, len(log['events'])


class HtmlBrowserTest(harness.DaemonTestCase):

    def open_in_chromium(self, page_path, function):
        """Chromium's dump of the page's DOM after its selftest clicked function's frame, and the
        requests the page made."""
        chromium = shutil.which('chromium')
        self.assertIsNotNone(chromium, "Debian's chromium is not installed (scripts/install-deps.sh)")
        netlog = os.path.join(self.workdir, 'netlog.json')
        url = 'file://' + urllib.parse.quote(page_path) + '#selftest=' + urllib.parse.quote(function)
        r = subprocess.run([chromium, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
                            '--user-data-dir=' + os.path.join(self.workdir, 'chromium-profile'),
                            '--disable-background-networking', '--disable-component-update', '--disable-sync',
                            '--disable-extensions', '--log-net-log=' + netlog,
                            # were the page to ask, no name would resolve: nothing leaves the machine
                            '--host-resolver-rules=MAP * ~NOTFOUND',
                            '--virtual-time-budget=5000', '--dump-dom', url],
                           capture_output=True, text=True, timeout=CHROMIUM_TIMEOUT_S)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        dom = DumpedPage()
        dom.feed(r.stdout)
        self.assertIsNotNone(dom.selftest, f'no #selftest in the DOM: did the page script run?\n{r.stdout[-3000:]}')
        requests, events = page_requests(netlog)
        self.assertGreater(events, 0, 'an empty net log proves nothing')
        return dom, requests

    def test_flame_graph_zooms_and_the_diff_names_the_growth_in_chromium(self):
        daemon = self.start_daemon()
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.go()
        program.expect('started')
        started = time.time()
        # the ring (16 snapshots, 100 ms apart) all after the tree was allocated: its oldest
        # snapshot holds the whole tree and a little of the growth
        def ring_after_start():
            totals = daemon.ctl_json('history', '--pid', program.pid)['targets'][0]['totals']
            return totals and totals[0]['t'] > started + 0.2
        self.assertTrue(harness.wait_until(ring_after_start, 15))

        page_path = os.path.join(self.workdir, 'report.html')
        daemon.ctl_ok('html', '--pid', program.pid, '--output', page_path)
        with open(page_path) as f:
            page = f.read()
        data = harness.load_json(page.split('<script type="application/json" id="memleakd-data">', 1)[1]
                          .split('</script>', 1)[0])
        stacks = data['report']['stacks']
        [grow] = [s for s in stacks if s['frames'] and s['frames'][0]['symbol'] == 'grow_steadily']
        [series] = [s for s in data['history']['targets'][0]['stacks'] if s['stack_id'] == grow['stack_id']]
        [target] = data['history']['targets']

        dom, requests = self.open_in_chromium(page_path, 'handle_get')
        selftest = dom.selftest
        self.assertEqual(selftest.get('data-state'), 'done', selftest)
        self.assertNotIn('data-error', selftest, selftest)

        # the flame graph (as drawn last: zoomed back out to the root), every byte the report has
        paths = frame_paths(dom.frames)
        total = sum(s['bytes'] for s in stacks) + ((data['report'].get('other') or {}).get('bytes') or 0)
        self.assertEqual(paths[(ROOT,)], total, paths)
        self.assertEqual(dom.flame_svg['data-focus'], ROOT)
        # handle_get's two call sites of parse_header: two stacks, one frame of their bytes
        [(get_path, get_bytes)] = under(paths, 'serve', 'handle_get').items()
        self.assertEqual(get_bytes, 15 * 300, paths)
        self.assertEqual(under(paths, 'serve', 'handle_get', 'parse_header'), {get_path + ('parse_header',): 15 * 300})
        self.assertEqual(list(under(paths, 'serve', 'handle_post', 'parse_header').values()), [3 * 300], paths)
        self.assertEqual(list(under(paths, 'main', 'serve').values()), [18 * 300], paths)
        self.assertEqual(list(under(paths, 'main', 'load_config').values()), [4000], paths)
        # the leak still growing: its bytes as the page's report has them, 64 at a time
        [grow_bytes] = under(paths, 'main', 'grow_steadily').values()
        self.assertEqual(grow_bytes, grow['bytes'])
        self.assertGreater(grow_bytes, 0)
        self.assertEqual(grow_bytes % 64, 0)
        self.assertTrue(get_path[1].startswith(f'leak-flame (pid {program.pid}'), get_path)

        # the click on handle_get zoomed on it: the whole width, its callee below; then the root
        # drew the whole graph again
        self.assertEqual(selftest['data-before-focus'], ROOT)
        self.assertEqual(selftest['data-before-width'], f'{1000 * 15 * 300 / total:.2f}', selftest)
        self.assertEqual(selftest['data-zoomed-focus'], 'handle_get', selftest)
        self.assertEqual(selftest['data-zoomed-width'], '1000.00', selftest)
        self.assertEqual(int(selftest['data-zoomed-frames']), len(get_path) + 1, selftest)
        self.assertEqual(selftest['data-back-focus'], ROOT, selftest)
        self.assertEqual(selftest['data-back-width'], selftest['data-before-width'], selftest)

        # the diff of the oldest and the newest snapshot: the growing stack, and nothing else grew
        self.assertEqual(dom.headings, [f'leak-flame (pid {program.pid}): {len(target["totals"])} snapshots '
                                        f'in the ring, over {round(target["totals"][-1]["t"] - target["totals"][0]["t"])} s'])
        by_t = {p['t']: p['bytes'] for p in series['points']}
        gained = by_t.get(target['totals'][-1]['t'], 0) - by_t.get(target['totals'][0]['t'], 0)
        self.assertGreater(gained, 0, series)
        self.assertEqual(dom.diff_rows, [{'stack_id': grow['stack_id'], 'gained': gained}])

        # and no request left the page: none in the net log, none refused by its policy, none timed
        self.assertEqual(requests, [])
        self.assertEqual(selftest['data-violations'], '', selftest)
        self.assertEqual(selftest['data-resources'], '', selftest)


if __name__ == '__main__':
    unittest.main(verbosity=2)
