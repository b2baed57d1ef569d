#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What building unwind tables costs, on files a Debian machine has: libc, libstdc++, the largest
of a few big binaries. Prints a Markdown table for bench/RESULTS.md (machine and date first).

usage: bench/unwind-tables.py [--build DIR] [FILE...]"""

import argparse
import datetime
import os
import platform
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = ['/lib/x86_64-linux-gnu/libc.so.6', '/usr/lib/x86_64-linux-gnu/libstdc++.so.6']
BIG = ['/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1', '/usr/bin/python3.11', '/usr/bin/gdb']


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('files', nargs='*')
    args = ap.parse_args()
    files = args.files or DEFAULT + [f for f in BIG if os.path.exists(f)]
    out = subprocess.run([os.path.join(args.build, 'bench', 'unwind-tables')] + files,
                         capture_output=True, text=True, check=True).stdout
    cpu = next((line.split(':', 1)[1].strip() for line in open('/proc/cpuinfo') if line.startswith('model name')), '?')
    print(f'{datetime.date.today()}, {os.cpu_count()} CPUs ({cpu}), Linux {platform.release()}; best of 5\n')
    print('| file | text | rows | table (BPF) | per MiB of text | build | FDEs (.debug_frame) | rows the walker cannot follow |')
    print('|---|---:|---:|---:|---:|---:|---:|---:|')
    for line in out.splitlines():
        path, text, rows, table, per_mib, ms, fdes, debug_frame, uncomputable = line.split('\t')
        print(f'| {os.path.realpath(path)} | {int(text) / 1048576:.1f} MiB | {int(rows):,} | '
              f'{int(table) / 1048576:.2f} MiB | {int(per_mib) / 1024:.0f} KiB | {float(ms):.1f} ms | '
              f'{int(fdes):,} ({int(debug_frame):,}) | {int(uncomputable):,} |')


if __name__ == '__main__':
    main()
