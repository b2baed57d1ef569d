#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A full report at any size: tests/programs/leak-wide-report.c built with LEVELS=17 leaks one
24-byte block from each of 131,072 call stacks of 21 frames; `memleakctl report --top 100000`
writes the 100,000 largest in each format. For each: the file's size, the time, memleakctl's
peak RSS (forked from this small python: a process's peak counts the one it was exec'd from), and
memleakd's RSS before and after, with its high-water mark.

usage: bench/big-report.py [--build DIR] [--output FILE]
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import print_and_write, start_memleakd  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEVELS = 17
TOP = 100000
CONFIG = 'max_allocs = 524288\nmax_stacks = 262144\nmax_combined = 262144\nsnapshot_interval_ms = 1000\n'


def status_kib(pid, field):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1])
    return None


def measured(cmd):
    """(exit status, seconds, peak RSS in KiB) of cmd, run in a child forked from here."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(cmd[0], cmd)
    _, status, usage = os.wait4(pid, 0)
    return os.waitstatus_to_exitcode(status), time.monotonic() - start, usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--output')
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix='memleakd-bigreport-') as work:
        program = os.path.join(work, 'leak-wide-report')
        subprocess.run(['cc', '-O0', '-g', '-fno-omit-frame-pointer', '-fno-inline', f'-DLEVELS={LEVELS}',
                        '-I', os.path.join(ROOT, 'tests', 'programs'), '-o', program,
                        os.path.join(ROOT, 'tests', 'programs', 'leak-wide-report.c')], check=True)
        daemon, sock = start_memleakd(args.build, work, CONFIG)
        ctl = [os.path.join(args.build, 'client', 'memleakctl'), '--socket', sock]
        leak = subprocess.Popen([program], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert leak.stdout.readline().strip() == 'ready'
            subprocess.run(ctl + ['attach', '--pid', str(leak.pid)], check=True, stdout=subprocess.DEVNULL)
            leak.stdin.write('go\n')
            leak.stdin.flush()
            assert leak.stdout.readline().strip() == 'done'
            time.sleep(3)       # a snapshot or two
            rss_before = status_kib(daemon.pid, 'VmRSS')
            rows = []
            for fmt in ('json', 'folded', 'pprof', 'text', 'html'):
                out = os.path.join(work, f'report.{fmt}')
                cmd = ctl + (['html', '--pid', str(leak.pid), '--top', str(TOP), '--output', out] if fmt == 'html' else
                             ['report', '--pid', str(leak.pid), '--top', str(TOP), '--format', fmt, '--output', out])
                status, seconds, peak = measured(cmd)
                rows.append((fmt, status, os.path.getsize(out) if status == 0 else 0, seconds, peak))
            rss_after = status_kib(daemon.pid, 'VmRSS')
            hwm = status_kib(daemon.pid, 'VmHWM')
        finally:
            leak.kill()
            leak.wait()
            daemon.terminate()
            daemon.wait()
    lines = [f'{1 << LEVELS} stacks of {LEVELS + 4} frames, report --top {TOP} (memleakd {args.build})',
             '| format | status | file | time | memleakctl peak RSS |', '|---|---|---|---|---|']
    for fmt, status, size, seconds, peak in rows:
        lines.append(f'| {fmt} | {status} | {size / (1 << 20):.1f} MiB | {seconds:.1f} s | {peak / 1024:.0f} MiB |')
    lines.append(f'memleakd RSS: {rss_before / 1024:.0f} MiB before the reports, {rss_after / 1024:.0f} MiB after, '
                 f'{hwm / 1024:.0f} MiB at most')
    print_and_write('\n'.join(lines) + '\n', args.output)


if __name__ == '__main__':
    main()
