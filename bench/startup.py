#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What `memleakctl run` costs a short program before it can start: `memleakctl run -- cmake
--version` (Debian's cmake: 48 files mapped, 529,000 unwind rows; installed here with apt-get if
absent) timed end to end, RUNS rounds interleaved, medians kept:

  cold        the table store emptied first: every unwind table built from its file's CFI
  warm        the same again: every table taken from the store (cache_directory/unwind-tables)
  fp          --unwind fp: no tables at all
  untraced    cmake --version alone

with the daemon's own CPU time for each (utime + stime from /proc, which other load on the
machine does not inflate the way it does wall time) and, with --breakdown, one more warm run
under strace that sums the time the daemon's threads spent in each bpf() command, and in updates
and deletes of the unwind_tables map of maps (each call waits for an RCU grace period in the
kernel: memleakd fills and empties its slots in batches).

usage: bench/startup.py [--build DIR] [--runs R] [--breakdown] [--output FILE]
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench_run  # noqa: E402  (daemon_start, machine_line)

from benchlib import print_and_write

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CMD = ['cmake', '--version']
TICK_S = os.sysconf('SC_CLK_TCK')


def ensure_cmake():
    if shutil.which('cmake'):
        return
    subprocess.run(['apt-get', 'install', '-y', '--no-install-recommends', 'cmake'], check=True,
                   env=dict(os.environ, DEBIAN_FRONTEND='noninteractive'))


def cpu_s(pid):
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK_S


def loadavg():
    with open('/proc/loadavg') as f:
        return f.read().split()[0]


class Startup:
    def __init__(self, build, workdir):
        self.build = build
        self.cache = os.path.join(workdir, 'cache')
        self.daemon, self.sock = bench_run.daemon_start(build, workdir, f'cache_directory = {self.cache}\n')

    def status(self):
        return json.loads(bench_run.ctl(self.build, self.sock, 'status', '--json'))

    def disk(self):
        return self.status()['limits']['unwind_tables']['disk_cache']

    def empty_store(self):
        tables = os.path.join(self.cache, 'unwind-tables')
        for name in os.listdir(tables):
            os.unlink(os.path.join(tables, name))

    def once(self, config):
        """(wall s, daemon CPU s, store hits, store misses) of one run of CMD under config."""
        ctl = [os.path.join(self.build, 'client', 'memleakctl'), '--socket', self.sock, 'run']
        cmd = {'cold': ctl + ['--'] + CMD, 'warm': ctl + ['--'] + CMD, 'fp': ctl + ['--unwind', 'fp', '--'] + CMD,
               'untraced': CMD}[config]
        if config == 'cold':
            self.empty_store()
        before = self.disk() if config != 'untraced' else None
        cpu0 = cpu_s(self.daemon.pid)
        t0 = time.monotonic()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
        wall = time.monotonic() - t0
        cpu = cpu_s(self.daemon.pid) - cpu0
        if r.returncode != 0:
            raise RuntimeError(f'{" ".join(cmd)} failed: {r.stderr.decode(errors="replace")}')
        if before is None:
            return wall, 0.0, 0, 0
        after = self.disk()
        return wall, cpu, after['hits'] - before['hits'], after['misses'] - before['misses']

    def tables_map_fd(self):
        """The fd of unwind_tables (an array of maps, UNWIND_TABLES_MAX slots) in the daemon."""
        for fd in os.listdir(f'/proc/{self.daemon.pid}/fdinfo'):
            try:
                with open(f'/proc/{self.daemon.pid}/fdinfo/{fd}') as f:
                    info = dict(line.split(':', 1) for line in f.read().splitlines() if ':' in line)
            except OSError:
                continue
            if info.get('map_type', '').strip() == '12' and info.get('max_entries', '').strip() == '4096':
                return int(fd)
        return None

    def breakdown(self, workdir):
        """One warm run with the daemon under strace: seconds in each bpf() command, and in
        updates/deletes of unwind_tables; the run's wall time (strace slows it)."""
        log = os.path.join(workdir, 'bpf.strace')
        tables_fd = self.tables_map_fd()
        tracer = subprocess.Popen(['strace', '-f', '-T', '-e', 'trace=bpf', '-o', log, '-p', str(self.daemon.pid)],
                                  stderr=subprocess.DEVNULL)
        time.sleep(1)
        wall, _, _, _ = self.once('warm')
        time.sleep(0.5)
        tracer.terminate()
        tracer.wait()
        per_cmd, tables = {}, [0, 0.0]
        with open(log) as f:
            for line in f:
                m = re.search(r'bpf\((BPF_\w+), .*<([0-9.]+)>$', line)
                if not m:
                    continue
                n, s = per_cmd.get(m.group(1), (0, 0.0))
                per_cmd[m.group(1)] = (n + 1, s + float(m.group(2)))
                fd = re.search(r'map_fd=(\d+)', line)
                if fd and int(fd.group(1)) == tables_fd and m.group(1) in ('BPF_MAP_UPDATE_ELEM', 'BPF_MAP_DELETE_ELEM',
                                                                          'BPF_MAP_UPDATE_BATCH'):
                    tables[0] += 1
                    tables[1] += float(m.group(2))
        return wall, per_cmd, tables

    def stop(self):
        self.daemon.terminate()
        self.daemon.wait(30)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--breakdown', action='store_true')
    ap.add_argument('--output')
    args = ap.parse_args()
    ensure_cmake()
    configs = ['cold', 'warm', 'fp', 'untraced']
    results = {c: [] for c in configs}
    lines = []
    with tempfile.TemporaryDirectory(prefix='memleakd-startup-') as workdir:
        s = Startup(args.build, workdir)
        try:
            load0 = loadavg()
            s.once('fp')        # page cache and the daemon's first attach, for no one's figure
            for _ in range(args.runs):
                for c in configs:
                    results[c].append(s.once(c))
            load1 = loadavg()
            disk = s.disk()
            tables = os.path.join(s.cache, 'unwind-tables')
            stored = [os.path.getsize(os.path.join(tables, n)) for n in os.listdir(tables)]
            extra = s.breakdown(workdir) if args.breakdown else None
        finally:
            s.stop()

    med = {c: statistics.median(r[0] for r in results[c]) for c in configs}
    cpu = {c: statistics.median(r[1] for r in results[c]) for c in configs}
    lines.append(f'{bench_run.machine_line()}; `{" ".join(CMD)}` ({subprocess.run(CMD, capture_output=True, text=True).stdout.splitlines()[0]}), '
                 f'{args.runs} rounds, medians; load average {load0} at the start, {load1} at the end\n')
    lines.append('| configuration | wall | x fp | x untraced | daemon CPU | tables from the store / built |')
    lines.append('|---|---:|---:|---:|---:|---:|')
    for c in configs:
        hits = statistics.median(r[2] for r in results[c])
        misses = statistics.median(r[3] for r in results[c])
        lines.append(f'| {c} | {med[c] * 1000:.0f} ms | {med[c] / med["fp"]:.2f} | {med[c] / med["untraced"]:.1f} | '
                     f'{cpu[c] * 1000:.0f} ms | ' + ('-' if c == 'untraced' else f'{hits:.0f} / {misses:.0f}') + ' |')
    lines.append('')
    lines.append(f'warm / cold: {med["warm"] / med["cold"]:.2f}; the store after the runs: {len(stored)} files, '
                 f'{sum(stored) / 1048576:.1f} MiB; {disk["rejected"]} files rejected, {disk["write_failed"]} writes failed')
    if extra:
        wall, per_cmd, tables = extra
        lines.append('')
        lines.append(f'One more warm run with the daemon under strace (wall {wall * 1000:.0f} ms, slowed by it): '
                     f'time in bpf() by command, all threads:\n')
        lines.append('| bpf() command | calls | time |')
        lines.append('|---|---:|---:|')
        for cmd_name, (n, sec) in sorted(per_cmd.items(), key=lambda kv: -kv[1][1])[:6]:
            lines.append(f'| {cmd_name} | {n} | {sec * 1000:.0f} ms |')
        lines.append('')
        lines.append(f'of which updates and deletes of unwind_tables (the map of maps; each call waits for an RCU '
                     f'grace period): {tables[0]} calls, {tables[1] * 1000:.0f} ms')
    text = '\n'.join(lines) + '\n'
    print_and_write(text, args.output)


if __name__ == '__main__':
    main()
