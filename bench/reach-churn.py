#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A concurrent live scan's last stops against a program that rewrites its pointers all along.

tests/programs/leak-reach-churn.c holds 100,000 data blocks moved between 20,000 holders, holders
replaced and freed, memory mapped and unmapped, millions of times a second; 2,000 definitely and
500 indirectly lost blocks among the holders. memleakd attaches to it (every block tracked); then
SCANS times `report --reachability` on each of PROCESSES fresh processes. For each scan: the
pause memleakd measured in all and its longest stop, the last stops it made (more than one when
one would have passed its budget: the process let go for another round), the rounds, what was
written meanwhile, and whether the verdict was whole and exact. --max-pause-ms sets
reachability_max_pause_ms (the daemon's default when not given); --build DIR measures another
build (an older commit) the same way.

usage: bench/reach-churn.py [--build DIR] [--processes N] [--scans N] [--max-pause-ms MS]
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from benchlib import start_memleakd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPECTED = {'definitely_lost': 2000, 'indirectly_lost': 500, 'undecided': 0}
KILL_WAIT_S = 30


def ctl(build, sock, *args):
    r = subprocess.run([os.path.join(build, 'client', 'memleakctl'), '--socket', sock, *map(str, args), '--json'],
                       capture_output=True, timeout=600)
    if r.returncode != 0:
        raise OSError(f'memleakctl {args}: {r.stderr.decode()}{r.stdout.decode()}')
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--processes', type=int, default=3)
    ap.add_argument('--scans', type=int, default=3)
    ap.add_argument('--max-pause-ms', type=int)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    rows = []
    with tempfile.TemporaryDirectory(prefix='reach-churn-') as workdir:
        config = 'max_allocs = 1048576\nsnapshot_interval_ms = 60000\n'
        if args.max_pause_ms:
            config += (f'reachability_max_pause_ms = {args.max_pause_ms}\n'
                       f'reachability_concurrent_max_stop_ms = {args.max_pause_ms}\n')
        daemon, sock = start_memleakd(build, workdir, config,
                                      stderr=sys.stderr if os.environ.get('REACH_DEBUG') else None)
        try:
            for _ in range(args.processes):
                p = subprocess.Popen([os.path.join(build, 'tests', 'programs', 'leak-reach-churn')],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                try:
                    assert p.stdout.readline() == b'ready\n'
                    ctl(build, sock, 'attach', '--pid', p.pid)
                    p.stdin.write(b'go\n')
                    p.stdin.flush()
                    assert p.stdout.readline() == b'made\n'
                    for scan in range(args.scans):
                        report = ctl(build, sock, 'report', '--pid', p.pid, '--reachability', '--top', 1)
                        r = report['targets'][0]['reachability']
                        exact = all(r.get(c, {}).get('allocs') == n for c, n in EXPECTED.items())
                        rows.append(r)
                        print(f'scan {scan}: paused {r.get("paused_ms")} ms, longest {r.get("longest_pause_ms")} ms, '
                              f'last stops {r.get("last_stops")}, rounds {r.get("rounds")}, written '
                              f'{(r.get("written_bytes") or 0) / 2**20:.1f} MiB, read '
                              f'{r.get("bytes_scanned", 0) / 2**20:.1f} MiB, mark {r.get("mark_ms")} ms, '
                              f'{"exact" if exact else "NOT EXACT"}, partial {r.get("partial")}, '
                              f'error {r.get("error")}', flush=True)
                finally:
                    p.kill()
                    try:
                        p.wait(KILL_WAIT_S)
                    except subprocess.TimeoutExpired:
                        # a thread of it still traced (by memleakd: a stop that gave up and never let
                        # it go): its tracer must reap it before its parent can
                        sys.exit(f'leak-reach-churn (pid {p.pid}) killed but not reaped in {KILL_WAIT_S} s: '
                                 f'is a thread of it still traced?')
        finally:
            daemon.terminate()
            daemon.wait(30)
    # the longest stop: longest_pause_ms where the build reports it; else the pause less the first stop's
    # share cannot be told apart, and the whole pause stands for it
    longest = [r.get('longest_pause_ms', r.get('paused_ms')) for r in rows]
    paused = [r.get('paused_ms') for r in rows]
    print(f'{len(rows)} scans: paused median {statistics.median(paused):.1f} ms ({min(paused):.1f}-{max(paused):.1f}); '
          f'longest stop median {statistics.median(longest):.1f} ms ({min(longest):.1f}-{max(longest):.1f}); '
          f'partial {sum(1 for r in rows if r.get("partial"))}; no verdict {sum(1 for r in rows if r.get("error"))}; '
          f'last stops {sorted(r.get("last_stops") for r in rows if r.get("last_stops") is not None)}')


if __name__ == '__main__':
    sys.exit(main())
