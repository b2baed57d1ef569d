#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""--follow-forks under a fork storm: which short-lived children are followed.

tests/programs/leak-fork-storm forks children at RATE a second, COUNT of each lifetime (1, 2, 5,
10, 20 ms by default) in turn; each leaks one block of 1000 + its lifetime in ms just before it
exits. memleakd is attached to the parent with --follow-forks. For each lifetime: the share of
children followed (a target forked from the parent), and the share whose leak was reported
exactly under their pid (followed before they leaked); then the parent's counters
(children_forked, children_followed, children_missed). --build DIR measures another build (an
older commit) the same way; --log FILE keeps memleakd's log, --births FILE each child's fork time
(to set against timestamps of the daemon's own, when instrumented).

usage: bench/fork-storm.py [--build DIR] [--rates 50,200] [--count N] [--lifetimes 1,2,5,10,20]
                           [--max-targets N] [--log FILE] [--births FILE] [--output FILE]
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

from benchlib import start_memleakd, print_and_write

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ctl(build, sock, *args):
    r = subprocess.run([os.path.join(build, 'client', 'memleakctl'), '--socket', sock, *map(str, args), '--json'],
                       capture_output=True, timeout=600)
    if r.returncode != 0:
        raise OSError(f'memleakctl {args}: {r.stderr.decode()}{r.stdout.decode()}')
    return json.loads(r.stdout)


def storm(build, sock, rate, lifetimes, count, births=None):
    prog = subprocess.Popen([os.path.join(build, 'tests', 'programs', 'leak-fork-storm'), str(rate),
                             *[f'{ms}:{count}' for ms in lifetimes]],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert prog.stdout.readline().strip() == 'ready'
        ctl(build, sock, 'attach', '--pid', prog.pid, '--follow-forks')
        prog.stdin.write('go\n')
        prog.stdin.flush()
        lifetime_of = {}
        born_usec = {}
        for line in prog.stdout:
            words = line.split()
            if words == ['done']:
                break
            lifetime_of[int(words[1])] = int(words[2])
            born_usec[int(words[1])] = int(words[3])
        deadline = time.monotonic() + 30        # the last follows and exits handled
        while time.monotonic() < deadline:
            status = ctl(build, sock, 'status')
            live = [t for t in status['targets'] if t['forked_from'] == prog.pid and not t['exited']]
            if not live:
                break
            time.sleep(0.2)
        report = ctl(build, sock, 'report', '--pid', prog.pid, '--children', '--top', 1000000)
        prog.stdin.write('\n')
        prog.stdin.flush()
        prog.wait(timeout=30)
    finally:
        prog.kill()
    parent = [t for t in report['targets'] if t['pid'] == prog.pid][0]
    followed = {t['pid'] for t in report['targets'] if t['forked_from'] == prog.pid}
    leaked = {}
    for s in report['stacks']:
        if any(f.get('symbol') == 'storm_leak' for f in s['frames']):
            b, n = leaked.get(s['pid'], (0, 0))
            leaked[s['pid']] = (b + s['bytes'], n + s['allocs'])
    if births:
        with open(births, 'a') as f:
            json.dump(born_usec, f)
            f.write('\n')
    rows = []
    for ms in lifetimes:
        pids = [p for p, life in lifetime_of.items() if life == ms]
        f = sum(p in followed for p in pids)
        exact = sum(leaked.get(p) == (1000 + ms, 1) for p in pids)
        rows.append((rate, ms, len(pids), f, exact))
    ctl(build, sock, 'detach', '--pid', prog.pid, '--children')
    return rows, parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--rates', default='50,200')
    ap.add_argument('--count', type=int, default=100)
    ap.add_argument('--lifetimes', default='1,2,5,10,20')
    ap.add_argument('--max-targets', type=int, default=512,
                    help='the daemon\'s max_targets: at least the children followed in a rate, whose '
                         'reports are kept (default 512)')
    ap.add_argument('--log', help='keep memleakd\'s log there')
    ap.add_argument('--births', help='append each child\'s fork time (CLOCK_MONOTONIC usec) there, as JSON')
    ap.add_argument('--output')
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    lifetimes = [int(x) for x in args.lifetimes.split(',')]
    out = ['| rate/s | lifetime | children | followed | leak exact |', '|---:|---:|---:|---:|---:|']
    totals = []
    with tempfile.TemporaryDirectory(prefix='fork-storm-') as workdir:
        config = f'max_targets = {args.max_targets}\n'
        daemon, sock = start_memleakd(build, workdir, config)
        try:
            for rate in (int(x) for x in args.rates.split(',')):
                rows, parent = storm(build, sock, rate, lifetimes, args.count, args.births)
                for rate_, ms, n, f, exact in rows:
                    out.append(f'| {rate_} | {ms} ms | {n} | {f} ({100 * f / n:.0f}%) | {exact} ({100 * exact / n:.0f}%) |')
                totals.append(f'rate {rate}/s: children_forked {parent["children_forked"]}, children_followed '
                              f'{parent["children_followed"]}, children_missed {parent.get("children_missed")} '
                              f'(exited {parent.get("children_missed_exited")})')
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
        if args.log:
            shutil.copy(os.path.join(workdir, 'memleakd.log'), args.log)
    with open('/proc/loadavg') as f:
        load = f.read().split()[0]
    print_and_write('\n'.join(out + [''] + totals + [f'load average {load}']) + '\n', args.output)


if __name__ == '__main__':
    main()
