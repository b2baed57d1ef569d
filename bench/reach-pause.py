#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a live reachability scan costs the process scanned: the longest stall one of its threads
saw, the pause memleakd measured, and how fast the scan read.

tests/programs/leak-reach-big.c holds 256 MiB of reachable blocks (262,144 of 1 KiB), 1,000
definitely lost and 200 indirectly lost ones, and a thread that spins on clock_gettime keeping the
longest gap between two readings. memleakd attaches to it (every block tracked); then RUNS times
`report --reachability`, each time the program's longest stall read before and after. With
--noclone the program forbids itself clone (seccomp): no snapshot can be taken, and the scan
stops it all along, within reachability_max_pause_ms (--max-pause-ms; the daemon's default when
not given). With --snapshot the concurrent scan is turned off (reachability_concurrent = 0): a
snapshot is taken. --block-bytes N makes the 262,144 reachable blocks N bytes each (8192: 2 GiB).
With --build DIR another build (an older commit) is measured the same way. Run under a seccomp
wrapper that refuses pidfd_getfd, in a PID namespace (`unshare --pid --fork --mount-proc`), it
measures the scan as in a systemd-nspawn container (bench/RESULTS.md).

usage: bench/reach-pause.py [--build DIR] [--runs N] [--noclone] [--snapshot] [--block-bytes N]
                            [--max-pause-ms MS]
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import start_memleakd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Program:
    def __init__(self, path, args):
        self.proc = subprocess.Popen([path] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.buffer = b''

    def line(self, timeout=300):
        deadline = time.monotonic() + timeout
        while b'\n' not in self.buffer:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError('the program said nothing')
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                raise EOFError('the program exited')
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b'\n', 1)
        return line.decode()

    def send(self, text):
        self.proc.stdin.write(text.encode() + b'\n')
        self.proc.stdin.flush()

    def stall_us(self):
        self.send('stall')
        word, value = self.line().split()
        assert word == 'stall', word
        return int(value)


def ctl(build, sock, *args):
    r = subprocess.run([os.path.join(build, 'client', 'memleakctl'), '--socket', sock, *map(str, args), '--json'],
                       capture_output=True, timeout=600)
    if r.returncode != 0:
        raise OSError(f'memleakctl {args}: {r.stderr.decode()}{r.stdout.decode()}')
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--noclone', action='store_true')
    ap.add_argument('--max-pause-ms', type=int)
    ap.add_argument('--snapshot', action='store_true')
    ap.add_argument('--block-bytes', type=int)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    with tempfile.TemporaryDirectory(prefix='reach-pause-') as workdir:
        config = 'max_allocs = 1048576\nsnapshot_interval_ms = 60000\n'
        if args.max_pause_ms:
            config += (f'reachability_max_pause_ms = {args.max_pause_ms}\n'
                       f'reachability_concurrent_max_stop_ms = {args.max_pause_ms}\n')
        if args.snapshot:
            config += 'reachability_concurrent = 0\n'
        daemon, sock = start_memleakd(build, workdir, config,
                                      stderr=sys.stderr if os.environ.get('SNAPDEBUG') else None)
        program = None
        try:
            program = Program(os.path.join(build, 'tests', 'programs', 'leak-reach-big'),
                              ['noclone' if args.noclone else '-'] +
                              ([str(args.block_bytes)] if args.block_bytes else []))
            assert program.line() == 'ready'
            ctl(build, sock, 'attach', '--pid', program.proc.pid)
            program.send('go')
            assert program.line() == 'made'
            time.sleep(1)
            idle = program.stall_us()
            time.sleep(1)
            idle = program.stall_us()
            rows = []
            for _ in range(args.runs):
                program.stall_us()
                report = ctl(build, sock, 'report', '--pid', program.proc.pid, '--reachability', '--top', 1)
                stall = program.stall_us()
                reach = report['targets'][0]['reachability']
                rows.append((stall, reach))
                print(f'stall {stall / 1000:.1f} ms  paused {reach.get("paused_ms")} ms  '
                      f'method {reach.get("method", "stopped")}  scan {reach.get("scan_ms")} ms (mark {reach.get("mark_ms")} ms, cpu {reach.get("mark_cpu_ms")} ms)  '
                      f'read {reach.get("bytes_scanned", 0) / 2**20:.1f} MiB  '
                      f'rate {reach.get("scan_mib_per_s", "?")} MiB/s  '
                      f'rounds {reach.get("rounds")} written {(reach.get("written_bytes") or 0) / 2**20:.1f} MiB  '
                      f'lost {reach.get("definitely_lost")} {reach.get("indirectly_lost")}  '
                      f'longest stop {reach.get("longest_pause_ms")} ms  no_concurrent {reach.get("no_concurrent")}  '
                      f'error {reach.get("error")}  partial {reach.get("partial")}')
            stalls = [s / 1000 for s, _ in rows]
            rates = [r.get('scan_mib_per_s') or (r['bytes_scanned'] / 2**20 / (r['scan_ms'] / 1000) if r.get('scan_ms') else 0)
                     for _, r in rows]
            print(f'idle stall {idle / 1000:.1f} ms; scan stall median {statistics.median(stalls):.1f} ms, '
                  f'worst {max(stalls):.1f} ms; rate median {statistics.median(rates):.0f} MiB/s')
        finally:
            if program:
                program.proc.kill()
                program.proc.wait()
            daemon.terminate()
            daemon.wait(30)


if __name__ == '__main__':
    sys.exit(main())
