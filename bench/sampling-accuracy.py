#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How often --sample-bytes estimates fall within the error the report states.

tests/programs/leak-sample leaks exactly 64 MiB from each of four functions (blocks of 16 to
4,096 bytes) and churns 64 MiB more. It runs RUNS times under `memleakctl run --sample-bytes N`;
for each function and run, z = (estimate - truth) / (truth * stated error), the stated error being
sqrt(N / estimate) as the report gives it. Unbiased estimates with a correctly stated error have
a mean z near 0 and about 68%, 95% and 99.7% of |z| within 1, 2 and 3.

usage: bench/sampling-accuracy.py [--build DIR] [--runs R] [--sample-bytes N] [--output FILE]
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile

from run import daemon_start

from benchlib import print_and_write

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEAKERS = ('leak_one', 'leak_two', 'leak_three', 'leak_four')
LEAK_BYTES = 64 << 20


def estimates(report):
    """Bytes per leaking function: each stack goes to the first frame naming one."""
    totals = {}
    for stack in report['stacks']:
        for frame in stack['frames']:
            if frame.get('symbol') in LEAKERS:
                totals[frame['symbol']] = totals.get(frame['symbol'], 0) + stack['bytes']
                break
    return totals


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--runs', type=int, default=50)
    ap.add_argument('--sample-bytes', type=int, default=512 << 10)
    ap.add_argument('--output')
    args = ap.parse_args()

    workdir = tempfile.mkdtemp(prefix='memleakd-sampling-')
    daemon, sock = daemon_start(args.build, workdir)
    zs, all_within_3 = [], 0
    try:
        for i in range(args.runs):
            out = os.path.join(workdir, f'report-{i}.json')
            r = subprocess.run([os.path.join(args.build, 'client', 'memleakctl'), '--socket', sock, 'run', '--json',
                                '--top', '1000', '--output', out, '--sample-bytes', str(args.sample_bytes), '--',
                                os.path.join(args.build, 'tests', 'programs', 'leak-sample')],
                               input=b'go\n', capture_output=True, timeout=300)
            if r.returncode != 0:
                sys.exit(f'memleakctl run failed: {r.stderr.decode()}')
            with open(out) as f:
                est = estimates(json.load(f))
            run_z = []
            for name in LEAKERS:
                e = est.get(name, 0)
                stated = math.sqrt(args.sample_bytes / e) if e else float('inf')
                run_z.append((e - LEAK_BYTES) / (LEAK_BYTES * stated) if e else float('-inf'))
            zs += run_z
            all_within_3 += all(abs(z) <= 3 for z in run_z)
    finally:
        daemon.terminate()
        daemon.wait(30)
        shutil.rmtree(workdir, ignore_errors=True)

    finite = [z for z in zs if math.isfinite(z)]
    within = {k: sum(abs(z) <= k for z in zs) / len(zs) for k in (1, 2, 3)}
    expected_error = math.sqrt(args.sample_bytes / LEAK_BYTES)
    text = '\n'.join([
        f'## Sampling accuracy: {datetime.date.today()}, {platform.node()} (Linux {platform.release()})', '',
        f'`bench/sampling-accuracy.py --runs {args.runs} --sample-bytes {args.sample_bytes}`: tests/programs/'
        f'leak-sample (four functions leaking 64 MiB each, 64 MiB churned) under `memleakctl run`, '
        f'{len(zs)} estimates; the stated error is about {expected_error:.1%}.', '',
        '| estimates | mean z (bias) | sd of z | within 1 stated error | within 2 | within 3 | '
        'runs with all four within 3 |',
        '|---:|---:|---:|---:|---:|---:|---:|',
        f'| {len(zs)} | {statistics.mean(finite):+.2f} | {statistics.pstdev(finite):.2f} | {within[1]:.0%} | '
        f'{within[2]:.0%} | {within[3]:.1%} | {all_within_3} of {args.runs} |', ''])
    print_and_write(text, args.output)


if __name__ == '__main__':
    main()
