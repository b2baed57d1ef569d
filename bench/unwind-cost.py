#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a captured stack costs, by how it is walked and how deep it is, in one run.

bench/unwind-depth.c makes malloc/free pairs DEPTH frames deep (8, 32, 64), built with frame
pointers (-fp) and without (-nofp). Each case is attached with --unwind fp or --unwind dwarf; the
BPF programs' run time (kernel.bpf_stats_enabled) over the run, divided by the pairs, is the BPF
cost per pair: one stack captured at malloc's return, plus the bookkeeping of both calls, which
is the same in every case. The program then leaks one block from the same depth: the frames of
descend() in its reported stack say how far the walk went (a cut walk shows fewer than DEPTH).

usage: bench/unwind-cost.py [--build DIR] [--pairs N] [--runs R]
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib  # noqa: E402

run = importlib.import_module('run')

DEPTHS = (8, 32, 64)
CASES = (('fp', 'unwind-depth-fp', 'fp'),
         ('dwarf', 'unwind-depth-nofp', 'dwarf'),
         ('dwarf, binary with frame pointers', 'unwind-depth-fp', 'dwarf'))


def one(build, sock, binary, depth, pairs, mode):
    p = subprocess.Popen([os.path.join(build, 'bench', binary), str(depth), str(pairs)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == 'ready'
    run.ctl(build, sock, 'attach', '--pid', p.pid, '--unwind', mode)
    # the walker needs the target's tables: they load at attach and at each snapshot tick
    before = run.bpf_prog_time_ns(run.daemon_pid)
    p.stdin.write('go\n')
    p.stdin.flush()
    ns, n = map(int, p.stdout.readline().split())
    bpf_ns = run.bpf_prog_time_ns(run.daemon_pid) - before
    report = json.loads(run.ctl(build, sock, 'report', '--pid', p.pid, '--json'))
    p.stdin.close()
    p.wait(30)
    run.ctl(build, sock, 'detach', '--pid', p.pid)
    return ns / n, bpf_ns / n, frames_reached(report)


def frames_reached(report):
    """descend() frames in the stack of the 1-byte leak."""
    for stack in report['stacks']:
        if stack['bytes'] == 1:
            return sum(1 for f in stack['frames'] if f.get('symbol') == 'descend')
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(run.ROOT, 'build'))
    ap.add_argument('--pairs', type=int, default=200000)
    ap.add_argument('--runs', type=int, default=3)
    args = ap.parse_args()
    rows = []
    with run.running_daemon(args.build) as (proc, sock):
        run.set_bpf_stats(True)
        run.daemon_pid = proc.pid
        for depth in DEPTHS:
            for label, binary, mode in CASES:
                samples = [one(args.build, sock, binary, depth, args.pairs, mode) for _ in range(args.runs)]
                rows.append((depth, label, statistics.median(s[0] for s in samples),
                             statistics.median(s[1] for s in samples), min(s[2] for s in samples)))
                print(f'depth {depth:3} {label:36} {rows[-1][2]:8.0f} ns/pair wall '
                      f'{rows[-1][3]:8.0f} ns/pair in BPF, {rows[-1][4]} descend() frames', flush=True)
    print(f'\n{run.machine_line()}, '
          f'{args.pairs} pairs per run, median of {args.runs} runs\n')
    print('| depth | walk | ns per pair (wall, traced) | ns per pair in BPF | descend() frames reported |')
    print('|---:|---|---:|---:|---:|')
    for depth, label, wall, bpf, frames in rows:
        print(f'| {depth} | {label} | {wall:.0f} | {bpf:.0f} | {frames} of {depth} |')


if __name__ == '__main__':
    main()
