#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare two (or more) memleakd builds or configurations on the same allocator churn, in one
run: each side's daemon is started once, then every round attaches each in turn to a fresh
bench/alloc-churn and times its loop, so that the machine's drift falls on every side alike.
What a change to the probes' programs buys is measured this way before it is kept (the figures
in bench/RESULTS.md that say "interleaved A/B runs").

A side is BUILD or BUILD:CONFIG, CONFIG being memleakd.conf lines separated by ';'
(`build:max_allocs = 65536`). The workload is the one of bench/run.py's churn table:
alloc-churn ITERATIONS THREADS (C malloc/free, or C++ new/delete with --cxx), one thread unless
--threads says more; or, with
--deep, its deep-stack one: bench/leak-deep (786,432 blocks leaked from 65,536 stacks).

usage: bench/ab-churn.py SIDE SIDE... [--rounds R] [--iterations N] [--threads T] [--cxx | --deep] [--sample-bytes N]
Needs root (BPF) and the builds (meson setup DIR && ninja -C DIR)."""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (bench/run.py: the daemon's start)


def churn_ms(bench_dir, ctl, sock, args):
    """One run of the workload with the daemon behind sock attached: its loop's milliseconds."""
    if args.deep:
        cmd = [os.path.join(bench_dir, 'leak-deep')]
    else:
        cmd = [os.path.join(bench_dir, 'alloc-churn'), str(args.iterations), str(args.threads)] + (['cxx'] if args.cxx else [])
    attach = ['--sample-bytes', str(args.sample_bytes)] if args.sample_bytes else []
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        while (line := p.stdout.readline()) and line.strip() != 'ready':
            pass
        subprocess.run([ctl, '--socket', sock, 'attach', '--pid', str(p.pid)] + attach, check=True,
                       capture_output=True)
        p.stdin.write('go\n')
        p.stdin.flush()
        ns = None
        while (line := p.stdout.readline()):
            if re.fullmatch(r'\d+ \d+', line.strip()):
                ns = int(line.split()[0])
                break
        subprocess.run([ctl, '--socket', sock, 'detach', '--pid', str(p.pid)], capture_output=True)
    finally:
        p.stdin.close()
        p.wait()
    if ns is None:
        sys.exit(f'{cmd[0]} printed no timing')
    return ns / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('sides', nargs='+', metavar='SIDE', help='BUILD or BUILD:CONFIG')
    ap.add_argument('--rounds', type=int, default=8)
    ap.add_argument('--iterations', type=int, default=200000)
    ap.add_argument('--threads', type=int, default=1, help='alloc-churn threads (one table of counts they share)')
    ap.add_argument('--cxx', action='store_true', help='C++ new/delete instead of malloc/free')
    ap.add_argument('--deep', action='store_true', help='bench/leak-deep instead of the churn')
    ap.add_argument('--sample-bytes', type=int, default=0, help='attach with --sample-bytes N')
    args = ap.parse_args()
    if len(args.sides) < 2:
        ap.error('give two sides or more')
    bench_dir = os.path.join(args.sides[0].partition(':')[0], 'bench')
    daemons = []
    try:
        for side in args.sides:
            build, _, config = side.partition(':')
            workdir = tempfile.mkdtemp(prefix='memleakd-ab-')
            proc, sock = run.daemon_start(build, workdir, config.replace(';', '\n') + '\n')
            daemons.append((side, os.path.join(build, 'client', 'memleakctl'), proc, sock))
        times = {side: [] for side in args.sides}
        for _ in range(args.rounds):
            for side, ctl, _, sock in daemons:
                times[side].append(churn_ms(bench_dir, ctl, sock, args))
    finally:
        for _, _, proc, _ in daemons:
            proc.terminate()
            proc.wait()
    base = statistics.median(times[args.sides[0]])
    workload = 'leak-deep' if args.deep else f'alloc-churn {args.iterations} x {args.threads} thread(s){" (C++)" if args.cxx else ""}'
    print(f'{workload}'
          f'{f", --sample-bytes {args.sample_bytes}" if args.sample_bytes else ""}, {args.rounds} rounds')
    for side in args.sides:
        med = statistics.median(times[side])
        print(f'{side}: median {med:.1f} ms ({med / base:.2f}x the first side); rounds: '
              + ' '.join(f'{t:.1f}' for t in times[side]))


if __name__ == '__main__':
    main()
