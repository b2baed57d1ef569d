#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Measure what memleakd costs a traced process, against the floors of its probes and against
other tools, in one run.

Workloads: bench/alloc-churn (malloc/free or C++ new/delete, 1 and 2 threads, and malloc/free
with Debian's mimalloc preloaded; it times its own loop), bench/leak-deep (786,432 blocks leaked from 65,536 stacks 19 frames deep) and, where Debian's redis-server and redis-benchmark are installed, a real service under
`redis-benchmark -q -n N -c 10 -t set,get,lpush,lpop -d 256`. Each workload runs under every
configuration (and, apart, the daemon's own figures at 50,000 and 100,000 stacks), RUNS rounds interleaved (every configuration once per round), medians kept:

  untraced        nothing attached
  entry floor     empty BPF programs at each allocator function's first instruction, with return
                  probes on the allocating ones (where entry-probing tools such as BCC's memleak
                  place them): the bare price of the uprobe mechanism there (bench/probe-floor)
  sites floor     empty programs on exactly the sites memleakd chose (its entry probes may sit a
                  few harmless instructions in, where the kernel emulates instead of single-steps)
  memleakd        attached exactly (every allocation recorded)
  memleakd, sampled   attached with --sample-bytes 524288
  bpftrace        a bpftrace script doing memleak's bookkeeping (size at malloc's entry, address,
                  size and stack at its return, delete at free) on the allocator's malloc and free
  heaptrack       Debian's heaptrack (LD_PRELOAD), the program started under it
  valgrind        Debian's valgrind (memcheck, --leak-check=full)

The floors and memleakd probe the objects memleakd reports in `status` for that workload.
Every timed run has kernel.bpf_stats_enabled off: with it on the kernel times each BPF program
run (about 55 ns a run on the VM of bench/RESULTS.md, for an empty program too), which no
production daemon pays. memleakd's own BPF time ("in BPF") comes from one more run of each of
its configurations per workload with it on, whose time is not used.
Results go to stdout and, with --output, to a Markdown file (bench/RESULTS.md keeps them, with
what they say).

usage: bench/run.py [--build DIR] [--iterations N] [--runs R] [--requests N] [--redis-runs R]
                    [--only KEYS] [--no-redis] [--no-scale] [--output FILE]
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import contextlib
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import print_and_write

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIBC = '/lib/x86_64-linux-gnu/libc.so.6'
BPF_STATS = '/proc/sys/kernel/bpf_stats_enabled'
SAMPLE_BYTES = 524288


def daemon_start(build, workdir, extra_config=''):
    sock = os.path.join(workdir, 'memleakd.sock')
    conf = os.path.join(workdir, 'memleakd.conf')
    with open(conf, 'w') as f:
        f.write(f'socket_path = {sock}\n' + extra_config)
    log = open(os.path.join(workdir, 'memleakd.log'), 'w')
    proc = subprocess.Popen([os.path.join(build, 'daemon', 'memleakd'), '--config', conf],
                            stdout=log, stderr=log)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(sock)
                return proc, sock
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit('memleakd did not start; see ' + log.name)


def fd_infos(pid):
    """/proc/PID/fdinfo of each of the process's fds, as dicts of strings."""
    for fd in os.listdir(f'/proc/{pid}/fdinfo'):
        try:
            with open(f'/proc/{pid}/fdinfo/{fd}') as f:
                yield {k: v.strip() for k, v in (line.split(':', 1) for line in f if ':' in line)}
        except OSError:
            continue


def bpf_prog_time_ns(pid):
    """Run time summed over the process's BPF programs (kernel.bpf_stats_enabled)."""
    return sum(int(i['run_time_ns']) for i in fd_infos(pid) if 'prog_type' in i and 'run_time_ns' in i)


def set_bpf_stats(on):
    with open(BPF_STATS, 'w') as f:
        f.write('1' if on else '0')


@contextlib.contextmanager
def running_daemon(build):
    """A memleakd of build on a socket in a scratch directory, as (its process, the socket), stopped
    after; kernel.bpf_stats_enabled is put back as it was."""
    with open(BPF_STATS) as f:
        stats_were = f.read().strip() == '1'
    try:
        with tempfile.TemporaryDirectory(prefix='memleakd-bench-') as workdir:
            proc, sock = daemon_start(build, workdir)
            try:
                yield proc, sock
            finally:
                proc.terminate()
                proc.wait(30)
    finally:
        set_bpf_stats(stats_were)


def median_bpf_ns(extra):
    """The median of memleakd's BPF time over the runs that measured it (bpf_stats on), or None."""
    ns = [e['bpf_ns'] for e in extra or [] if e['bpf_ns'] is not None]
    return statistics.median(ns) if ns else None


def rss_kb(pid):
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
    return 0


def maps_bytes(pid):
    return sum(int(i['memlock']) for i in fd_infos(pid) if 'map_type' in i and 'memlock' in i)


def machine_line():
    """Today's date, the CPUs and the kernel, for a table's heading."""
    with open('/proc/cpuinfo') as f:
        cpu = next((line.split(':', 1)[1].strip() for line in f if line.startswith('model name')), '?')
    return f'{datetime.date.today()}, {os.cpu_count()} CPUs ({cpu}), Linux {platform.release()}'


def ctl(build, sock, *args):
    """memleakctl's output for args, or an error naming what failed."""
    r = subprocess.run([os.path.join(build, 'client', 'memleakctl'), '--socket', sock] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f'memleakctl {" ".join(map(str, args))} failed: {r.stderr}')
    return r.stdout


class Bench:
    def __init__(self, args, workdir):
        self.args = args
        self.build = args.build
        self.workdir = workdir
        self.daemon, self.sock = daemon_start(args.build, workdir)
        self.objects = {}           # workload name -> the objects memleakd probed
        self.extra = {}             # (workload, config) -> [{'bpf_ns':, 'rss_kb':, 'maps':}]
        self.stats = False          # kernel.bpf_stats_enabled, as bpf_stats() set it

    def bpf_stats(self, on):
        set_bpf_stats(on)
        self.stats = on

    def stats_runs(self, configs, once):
        """One more run of each memleakd configuration with bpf_stats on, for its BPF time."""
        self.bpf_stats(True)
        try:
            for c in configs:
                if c['kind'] == 'memleakd':
                    once(c)
        finally:
            self.bpf_stats(False)

    def ctl(self, *args):
        return ctl(self.build, self.sock, *args)

    # --- tracers: attach(workload, config, pid) -> state; detach(state) ---------------------

    def attach(self, wl, cfg, pid):
        kind = cfg['kind']
        if kind == 'memleakd':
            self.ctl('attach', '--pid', pid, *cfg.get('attach', []))
            st = json.loads(self.ctl('status', '--json'))
            objs = [o for t in st['targets'] if t['pid'] == pid for o in t['objects']]
            # the allocator first: the bpftrace script probes it
            objs.sort(key=lambda o: o.get('role') != 'allocator')
            self.objects.setdefault(wl, [o['path'] for o in objs])
            return {'pid': pid, 'bpf_ns': bpf_prog_time_ns(self.daemon.pid) if self.stats else None}
        if kind == 'floor':
            objs = self.objects.get(wl) or [LIBC]
            p = subprocess.Popen([os.path.join(self.build, 'bench', 'probe-floor'), cfg['placement'], str(pid)] + objs,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            line = p.stdout.readline()
            if not line:
                raise RuntimeError('probe-floor failed')
            return {'proc': p, 'probes': line.split()}
        if kind == 'bpftrace':
            lib = (self.objects.get(wl) or [LIBC])[0]   # the allocator memleakd chose
            script = (f'uprobe:{lib}:malloc /pid == {pid}/ {{ @size[tid] = arg0; }}\n'
                      f'uretprobe:{lib}:malloc /pid == {pid} && @size[tid]/ '
                      f'{{ @blocks[retval] = (@size[tid], ustack); delete(@size[tid]); }}\n'
                      f'uprobe:{lib}:free /pid == {pid} && arg0/ {{ delete(@blocks[arg0]); }}\n'
                      'END { clear(@size); clear(@blocks); }\n')
            p = subprocess.Popen(['bpftrace', '-e', script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                 text=True, preexec_fn=os.setsid)
            line = p.stdout.readline()
            if not line.startswith('Attaching'):
                raise RuntimeError('bpftrace did not attach: ' + line)
            time.sleep(0.5)     # "Attaching" comes before the probes are all in
            return {'proc': p}
        return {}

    def detach(self, cfg, state):
        kind = cfg['kind']
        if kind == 'memleakd':
            if state['bpf_ns'] is not None:
                state['bpf_ns'] = bpf_prog_time_ns(self.daemon.pid) - state['bpf_ns']
            state['rss_kb'] = rss_kb(self.daemon.pid)
            state['maps'] = maps_bytes(self.daemon.pid)
            self.ctl('detach', '--pid', state['pid'])
        elif kind == 'floor':
            state['proc'].stdin.close()
            state['proc'].wait(60)
        elif kind == 'bpftrace':
            # bpftrace has been seen to miss a SIGINT (and then wait forever): ask again.
            for _ in range(12):
                os.killpg(state['proc'].pid, signal.SIGINT)
                try:
                    state['proc'].communicate(timeout=10)
                    return
                except subprocess.TimeoutExpired:
                    continue
            os.killpg(state['proc'].pid, signal.SIGKILL)
            state['proc'].communicate(timeout=60)

    def wrapper(self, cfg, name):
        out = os.path.join(self.workdir, name)
        if cfg['kind'] == 'heaptrack':
            return ['heaptrack', '-o', out]
        if cfg['kind'] == 'valgrind':
            return ['valgrind', '-q', '--leak-check=full', f'--log-file={out}.valgrind']
        return []

    # --- workloads ----------------------------------------------------------------------------

    def churn_once(self, wl, cfg):
        """One run of alloc-churn: (ns of its loop, allocator calls), memleakd's figures aside."""
        if wl.get('program'):
            cmd = [os.path.join(self.build, 'bench', wl['program'])]
        else:
            cmd = [os.path.join(self.build, 'bench', 'alloc-churn'), str(self.args.iterations), str(wl['threads'])]
        cmd = self.wrapper(cfg, 'churn') + cmd + wl.get('args', [])
        env = dict(os.environ, **wl['env']) if wl.get('env') else None
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=self.workdir, env=env)
        while (line := p.stdout.readline()) and line.strip() != 'ready':
            pass
        state = self.attach(wl['name'], cfg, p.pid)
        p.stdin.write('go\n')
        p.stdin.flush()
        result = None
        while (line := p.stdout.readline()):
            if re.fullmatch(r'\d+ \d+', line.strip()):
                result = tuple(map(int, line.split()))
                break
        if cfg['kind'] == 'memleakd':
            self.detach(cfg, state)
            self.extra.setdefault((wl['name'], cfg['name']), []).append(state)
        p.stdin.close()
        p.wait(300)
        if cfg['kind'] != 'memleakd':
            self.detach(cfg, state)
        if not result:
            raise RuntimeError(f'{wl["name"]} under {cfg["name"]}: no result')
        return result

    def redis_once(self, wl, cfg):
        """One run of redis-benchmark against a fresh redis-server: {test: requests per second}."""
        port = 6390
        cmd = self.wrapper(cfg, 'redis') + ['redis-server', '--port', str(port), '--save', '',
                                            '--appendonly', 'no', '--daemonize', 'no']
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=self.workdir)
        deadline = time.monotonic() + 60
        while subprocess.run(['redis-cli', '-p', str(port), 'ping'], capture_output=True,
                             text=True).stdout.strip() != 'PONG':
            if time.monotonic() > deadline or p.poll() is not None:
                p.kill()
                raise RuntimeError('redis-server did not start')
            time.sleep(0.1)
        pid = int(subprocess.run(['redis-cli', '-p', str(port), 'info', 'server'], capture_output=True,
                                 text=True).stdout.split('process_id:')[1].split()[0])
        state = self.attach(wl['name'], cfg, pid)
        r = subprocess.run(['redis-benchmark', '-p', str(port), '-q', '-n', str(self.args.requests), '-c', '10',
                            '-t', 'set,get,lpush,lpop', '-d', '256'], capture_output=True, text=True, timeout=3600)
        rates = {}
        for m in re.finditer(r'(\w+): ([\d.]+) requests per second', r.stdout.replace('\r', '\n')):
            rates[m.group(1)] = float(m.group(2))
        self.detach(cfg, state)
        if cfg['kind'] == 'memleakd':
            self.extra.setdefault((wl['name'], cfg['name']), []).append(state)
        subprocess.run(['redis-cli', '-p', str(port), 'shutdown', 'nosave'], capture_output=True)
        try:
            p.wait(120)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if len(rates) != 4:
            raise RuntimeError(f'redis-benchmark under {cfg["name"]}: {r.stdout!r}')
        return rates


CONFIGS = [
    {'name': 'untraced', 'key': 'untraced', 'kind': 'none'},
    {'name': 'memleakd', 'key': 'exact', 'kind': 'memleakd'},     # first traced: the floors probe what it chose
    {'name': 'memleakd, sampled', 'key': 'sampled', 'kind': 'memleakd', 'attach': ['--sample-bytes', SAMPLE_BYTES]},
    {'name': 'sites floor', 'key': 'sites', 'kind': 'floor', 'placement': 'sites'},
    {'name': 'entry floor', 'key': 'entry', 'kind': 'floor', 'placement': 'entry'},
    {'name': 'bpftrace', 'key': 'bpftrace', 'kind': 'bpftrace', 'tool': 'bpftrace'},
    {'name': 'heaptrack', 'key': 'heaptrack', 'kind': 'heaptrack', 'tool': 'heaptrack'},
    {'name': 'valgrind', 'key': 'valgrind', 'kind': 'valgrind', 'tool': 'valgrind'},
]

CHURNS = [
    {'name': 'C malloc/free, 1 thread', 'threads': 1, 'args': []},
    {'name': 'C malloc/free, 2 threads', 'threads': 2, 'args': []},
    {'name': 'C++ new/delete, 1 thread', 'threads': 1, 'args': ['cxx']},
    {'name': 'C++ new/delete, 2 threads', 'threads': 2, 'args': ['cxx']},
    # mimalloc's malloc moves its argument before its first branch (probe placement follows it)
    {'name': 'C malloc/free, 1 thread, mimalloc', 'threads': 1, 'args': [],
     'env': {'LD_PRELOAD': '/usr/lib/x86_64-linux-gnu/libmimalloc.so.2'}, 'needs': '/usr/lib/x86_64-linux-gnu/libmimalloc.so.2'},
]


def churn_table(bench, configs, runs):
    out = ['| workload | configuration | ms | ns per call added | x entry floor | x sites floor | '
           'in BPF ns per call | daemon RSS | BPF maps |', '|---|---|---:|---:|---:|---:|---:|---:|---:|']
    for wl in CHURNS:
        if wl.get('needs') and not os.path.exists(wl['needs']):
            continue
        times = {c['name']: [] for c in configs}
        calls = 0
        for _ in range(runs):
            for c in configs:
                ns, calls = bench.churn_once(wl, c)
                times[c['name']].append(ns)
        bench.stats_runs(configs, lambda c: bench.churn_once(wl, c))
        med = {k: statistics.median(v) for k, v in times.items()}
        added = {k: (v - med['untraced']) / calls for k, v in med.items()}
        for c in configs:
            k = c['name']
            row = [wl['name'], k, f'{med[k] / 1e6:.1f}', f'{added[k]:.0f}' if k != 'untraced' else '-']
            for floor in ('entry floor', 'sites floor'):
                row.append(f'{added[k] / added[floor]:.2f}' if k != 'untraced' and added.get(floor, 0) > 0 else '-')
            ex = bench.extra.get((wl['name'], k))
            if ex:
                bpf_ns = median_bpf_ns(ex)
                row += [f'{bpf_ns / calls:.0f}' if bpf_ns is not None else '-',
                        f'{max(e["rss_kb"] for e in ex) / 1024:.1f} MiB', f'{max(e["maps"] for e in ex) / 2**20:.1f} MiB']
            else:
                row += ['-', '-', '-']
            out.append('| ' + ' | '.join(row) + ' |')
        print('\n'.join(out[-len(configs):]), flush=True)
    return out


def deep_table(bench, configs, runs):
    wl = {'name': 'deep stacks', 'program': 'leak-deep'}
    times = {c['name']: [] for c in configs}
    for _ in range(runs):
        for c in configs:
            ns, _ = bench.churn_once(wl, c)
            times[c['name']].append(ns)
    bench.stats_runs(configs, lambda c: bench.churn_once(wl, c))
    base = statistics.median(times['untraced'])
    out = ['| configuration | s | x untraced | in BPF s |', '|---|---:|---:|---:|']
    for c in configs:
        k = c['name']
        t = statistics.median(times[k])
        bpf_ns = median_bpf_ns(bench.extra.get((wl['name'], k)))
        out.append(f'| {k} | {t / 1e9:.2f} | {t / base:.1f} | '
                   + (f'{bpf_ns / 1e9:.2f}' if bpf_ns is not None else '-') + ' |')
    print('\n'.join(out), flush=True)
    return out


def daemon_scale(args, workdir):
    """The daemon at scale: snapshot ticks with 50,000 stacks, `report --top 20` over 100,000 stacks
    and 1,000,000 outstanding allocations (bench/leak-stacks), its RSS and its maps' memory."""
    sub = os.path.join(workdir, 'scale')
    os.makedirs(sub)
    proc, sock = daemon_start(args.build, sub, 'max_allocs = 1200000\nmax_stacks = 262144\nmax_combined = 262144\n')
    ctl = os.path.join(args.build, 'client', 'memleakctl')

    def status():
        return json.loads(subprocess.run([ctl, '--socket', sock, 'status', '--json'], capture_output=True,
                                         text=True, check=True).stdout)
    rows = []
    try:
        for stacks, allocs in ((50_000, 500_000), (100_000, 1_000_000)):
            p = subprocess.Popen([os.path.join(args.build, 'bench', 'leak-stacks'), str(stacks), str(allocs)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert p.stdout.readline().strip() == 'ready'
            subprocess.run([ctl, '--socket', sock, 'attach', '--pid', str(p.pid)], check=True, capture_output=True)
            p.stdin.write('go\n')
            p.stdin.flush()
            assert p.stdout.readline().strip() == 'done'
            ticks = []
            deadline = time.monotonic() + 60
            while len(ticks) < 5 and time.monotonic() < deadline:
                c = status()['snapshot_cost']
                if c['last_rows'] >= stacks and (not ticks or c['last_ms'] != ticks[-1]):
                    ticks.append(c['last_ms'])
                time.sleep(1.1)
            reports = []
            for _ in range(4):      # the first one fills the symbol cache
                start = time.monotonic()
                subprocess.run([ctl, '--socket', sock, 'report', '--pid', str(p.pid), '--top', '20', '--json'],
                               check=True, capture_output=True, timeout=600)
                reports.append((time.monotonic() - start) * 1000)
            st = status()
            rows.append({'stacks': stacks, 'allocs': allocs, 'rows': st['snapshot_cost']['last_rows'],
                         'tick_ms': statistics.median(ticks) if ticks else float('nan'),
                         'cold_ms': reports[0], 'warm_ms': statistics.median(reports[1:]),
                         'rss': rss_kb(proc.pid) / 1024, 'maps': maps_bytes(proc.pid) / 2**20})
            subprocess.run([ctl, '--socket', sock, 'detach', '--pid', str(p.pid)], capture_output=True)
            p.stdin.close()
            p.wait(60)
    finally:
        proc.terminate()
        proc.wait(30)
    out = ['| stacks | outstanding allocations | rows per tick | snapshot tick ms (median of 5) | '
           '`report --top 20` ms, first | then (warm) | daemon RSS | BPF maps |',
           '|---:|---:|---:|---:|---:|---:|---:|---:|']
    for r in rows:
        out.append(f'| {r["stacks"]:,} | {r["allocs"]:,} | {r["rows"]:,} | {r["tick_ms"]:.1f} | {r["cold_ms"]:.0f} | '
                   f'{r["warm_ms"]:.0f} | {r["rss"]:.1f} MiB | {r["maps"]:.1f} MiB |')
    print('\n'.join(out), flush=True)
    return out


def redis_table(bench, configs, runs):
    wl = {'name': 'redis'}
    tests = ['SET', 'GET', 'LPUSH', 'LPOP']
    rates = {c['name']: {t: [] for t in tests} for c in configs}
    for _ in range(runs):
        for c in configs:
            r = bench.redis_once(wl, c)
            for t in tests:
                rates[c['name']][t].append(r[t])
    bench.stats_runs(configs, lambda c: bench.redis_once(wl, c))
    out = ['| configuration | ' + ' | '.join(f'{t} req/s (of untraced)' for t in tests) + ' | in BPF ms |',
           '|---|' + '---:|' * (len(tests) + 1)]
    base = {t: statistics.median(rates['untraced'][t]) for t in tests}
    for c in configs:
        k = c['name']
        cells = []
        for t in tests:
            v = statistics.median(rates[k][t])
            cells.append(f'{v:,.0f} ({v / base[t]:.0%})')
        bpf_ns = median_bpf_ns(bench.extra.get(('redis', k)))
        cells.append(f'{bpf_ns / 1e6:.0f}' if bpf_ns is not None else '-')
        out.append(f'| {k} | ' + ' | '.join(cells) + ' |')
    print('\n'.join(out), flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--iterations', type=int, default=200_000, help='churn iterations per thread')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--requests', type=int, default=100_000, help='redis-benchmark -n')
    ap.add_argument('--redis-runs', type=int, default=1, help='rounds of the redis workload')
    ap.add_argument('--only', help='comma-separated configurations: exact, sampled, sites, entry, bpftrace, '
                    'heaptrack, valgrind (untraced always runs)')
    ap.add_argument('--no-redis', action='store_true')
    ap.add_argument('--no-scale', action='store_true', help='skip the daemon-at-scale figures')
    ap.add_argument('--output')
    args = ap.parse_args()

    configs = [c for c in CONFIGS if not c.get('tool') or shutil.which(c['tool'])]
    missing = [c['name'] for c in CONFIGS if c not in configs]
    if args.only:
        names = set(args.only.split(',')) | {'untraced'}
        configs = [c for c in configs if c['key'] in names]
    with open(BPF_STATS) as f:
        stats_were = f.read().strip() == '1'
    set_bpf_stats(False)
    workdir = tempfile.mkdtemp(prefix='memleakd-bench-')
    bench = Bench(args, workdir)
    started = time.monotonic()
    try:
        churn = churn_table(bench, configs, args.runs)
        deep = deep_table(bench, configs, args.runs)
        scale = daemon_scale(args, workdir) if not args.no_scale else None
        redis = None
        if not args.no_redis and shutil.which('redis-server') and shutil.which('redis-benchmark'):
            redis = redis_table(bench, configs, args.redis_runs)
    finally:
        bench.daemon.terminate()
        bench.daemon.wait(30)
        shutil.rmtree(workdir, ignore_errors=True)
        set_bpf_stats(stats_were)

    out = [f'## Probe cost: {datetime.date.today()}, {platform.node()} (Linux {platform.release()}, '
           f'{os.cpu_count()} CPUs)', '',
           f'`bench/run.py --iterations {args.iterations} --runs {args.runs} --requests {args.requests} '
           f'--redis-runs {args.redis_runs}`, '
           f'{(time.monotonic() - started) / 60:.0f} minutes; medians of {args.runs} rounds, every configuration '
           'once per round, kernel.bpf_stats_enabled off; "in BPF" from one more run of each memleakd '
           'configuration with it on.' + (f' Not installed, not run: {", ".join(missing)}.' if missing else ''), '',
           f'### Allocator churn (bench/alloc-churn, {args.iterations:,} iterations per thread, 1024 blocks '
           'live per thread)', '',
           '"ns per call added": over the untraced run, per allocator call (malloc or free, new or '
           'delete). "x entry floor", "x sites floor": that cost over the floor\'s. "in BPF": '
           'memleakd\'s programs\' own run time, per call.', ''] + churn
    out += ['', '### Deep stacks (bench/leak-deep: 786,432 blocks of 32 bytes leaked from 65,536 distinct '
            'stacks 19 frames deep)', '', 'The leaking loop\'s wall time; every block stays outstanding.', ''] + deep
    if scale:
        out += ['', '### The daemon at scale (bench/leak-stacks; a daemon with `max_allocs = 1200000`, '
                '`max_stacks = max_combined = 262144`)', '',
                'The snapshot tick reads every live target\'s per-stack totals on the event loop; the report is '
                'built on the worker thread, its first run symbolizing the 20 stacks shown.', ''] + scale
    if redis:
        out += ['', f'### redis-server (Debian, jemalloc) under `redis-benchmark -q -n {args.requests} -c 10 '
                '-t set,get,lpush,lpop -d 256`', '',
                f'{args.redis_runs} round(s); each cell: requests per second and its share of the untraced '
                'rate. "in BPF": memleakd\'s programs\' run time over the whole benchmark.', ''] + redis
    text = '\n'.join(out) + '\n'
    print_and_write(text, args.output)


if __name__ == '__main__':
    main()
