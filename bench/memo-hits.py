#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How often real programs' stacks come from the walk memos, and what a traced allocation costs.

Each workload is a Debian program run untraced, then under `memleakctl run --no-reachability`
(rounds interleaved). From memleakd: the unwind-table walks and how many of them a memo answered
(`unwind_walks`, `unwind_repeats`), and its BPF programs' run time per allocation
(kernel.bpf_stats_enabled on, for the traced runs only). A walk a memo answers reads the stack
words the earlier walk read and compares them; one it does not answer steps every frame.

  python3   Debian's /usr/bin/python3: json.dumps and re.sub in a loop (its interpreter's frames
            put about 2 KiB of stack between malloc's return and _start)
  sqlite3   Debian's sqlite3: 50,000 rows inserted by a recursive query (its VDBE's frame puts
            about 7 KiB there)
  perl      Debian's perl: a hash of strings filled and emptied

usage: bench/memo-hits.py [--build DIR] [--runs R]
Needs root (BPF), a build (meson setup build && ninja -C build), python3, sqlite3 and perl."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib  # noqa: E402

run = importlib.import_module('run')

PYTHON_SCRIPT = '''
import json, re
for i in range(3000):
    d = [json.dumps({"a": list(range(50)), "b": "x" * 600}) for _ in range(3)]
    s = re.sub(r"\\d", "#", d[0] * 3)
'''
SQLITE_QUERY = ('create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c '
                'where x < 50000) insert into t select x, randomblob(100) from c; select count(*) from t;')
PERL_SCRIPT = 'my %h; for my $i (1..200000) { $h{$i} = "x" x ($i % 300); delete $h{$i - 50} if $i > 50 }'

WORKLOADS = (
    ('python3', ['/usr/bin/python3', '-c', PYTHON_SCRIPT]),
    ('sqlite3', ['sqlite3', ':memory:', SQLITE_QUERY]),
    ('perl', ['perl', '-e', PERL_SCRIPT]),
)


def counters(build, sock):
    return json.loads(run.ctl(build, sock, 'status', '--json'))['counters']


def timed(argv):
    t = time.monotonic()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.monotonic() - t


def traced(build, sock, daemon_pid, argv):
    """Wall time, walks, walks a memo answered, allocations, BPF ns under memleakctl run."""
    before, bpf_before = counters(build, sock), run.bpf_prog_time_ns(daemon_pid)
    wall = timed([os.path.join(build, 'client', 'memleakctl'), '--socket', sock, 'run', '--no-reachability',
                  '--output', os.devnull, '--'] + argv)
    after, bpf_after = counters(build, sock), run.bpf_prog_time_ns(daemon_pid)
    return (wall, after['unwind_walks'] - before['unwind_walks'], after['unwind_repeats'] - before['unwind_repeats'],
            after['allocs'] - before['allocs'], bpf_after - bpf_before)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(run.ROOT, 'build'))
    ap.add_argument('--runs', type=int, default=3)
    args = ap.parse_args()
    for tool in ('sqlite3', 'perl'):
        if not shutil.which(tool):
            sys.exit(f'{tool} is not installed (apt-get install {tool})')
    rows = []
    with run.running_daemon(args.build) as (proc, sock):
        for name, argv in WORKLOADS:
            plain, under = [], []
            for _ in range(args.runs):
                run.set_bpf_stats(False)
                plain.append(timed(argv))
                run.set_bpf_stats(True)
                under.append(traced(args.build, sock, proc.pid, argv))
            walks, repeats, allocs, bpf_ns = (sum(u[i] for u in under) for i in range(1, 5))
            rows.append((name, statistics.median(plain), statistics.median(u[0] for u in under),
                         allocs / args.runs, walks, repeats, bpf_ns / max(allocs, 1)))
            print(f'{name:8} untraced {rows[-1][1]:6.2f} s, traced {rows[-1][2]:6.2f} s, '
                  f'{repeats} of {walks} walks from memos, {rows[-1][6]:.0f} ns in BPF per allocation', flush=True)
    print(f'\n{run.machine_line()}, '
          f'median of {args.runs} runs (walks summed over them)\n')
    print('| program | untraced s | traced s (`run`, statistics on) | allocations per run | walks from memos | '
          'BPF ns per allocation |')
    print('|---|---:|---:|---:|---:|---:|')
    for name, plain, under, allocs, walks, repeats, bpf in rows:
        print(f'| {name} | {plain:.2f} | {under:.2f} | {allocs:,.0f} | {100.0 * repeats / max(walks, 1):.1f}% '
              f'| {bpf:.0f} |')


if __name__ == '__main__':
    main()
