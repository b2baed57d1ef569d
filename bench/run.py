#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Measure what memleakd costs a traced process and what it holds itself, in one run.

The workload (bench/alloc-churn.c) churns malloc/free in THREADS threads. Each configuration is
run RUNS times untraced and RUNS times traced, interleaved, on the same machine in the same
minute; the medians give the ratio traced/untraced and the cost per allocator call. The daemon's
resident memory and the kernel memory of its BPF maps are read while it traces. Results go to
stdout and, with --output, to a Markdown file (bench/RESULTS.md keeps the last one written).

usage: bench/run.py [--build DIR] [--iterations N] [--threads T] [--runs R] [--output FILE]
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import datetime
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TCMALLOC = '/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4'
daemon_pid = 0


def daemon_start(build, workdir):
    sock = os.path.join(workdir, 'memleakd.sock')
    conf = os.path.join(workdir, 'memleakd.conf')
    with open(conf, 'w') as f:
        f.write(f'socket_path = {sock}\nmax_stacks = 262144\n')
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


def ctl(build, sock, *args):
    r = subprocess.run([os.path.join(build, 'client', 'memleakctl'), '--socket', sock] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit(f'memleakctl {" ".join(map(str, args))} failed: {r.stderr}')
    return r.stdout


def run_once(build, sock, cfg, iterations, threads, traced, memory):
    env = dict(os.environ)
    if cfg.get('preload'):
        env['LD_PRELOAD'] = cfg['preload']
    p = subprocess.Popen([os.path.join(build, 'bench', 'alloc-churn'), str(iterations), str(threads)] +
                         cfg.get('args', []),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline().strip() == 'ready'
    if traced:
        ctl(build, sock, 'attach', '--pid', p.pid, *cfg.get('attach', []))
        bpf_before = bpf_prog_time_ns(daemon_pid)
    p.stdin.write('go\n')
    p.stdin.flush()
    ns, calls = map(int, p.stdout.readline().split())
    if traced:
        bpf_after = bpf_prog_time_ns(daemon_pid)
        memory.append(daemon_memory(daemon_pid))
        memory[-1]['bpf_ns'] = bpf_after - bpf_before
        start = time.monotonic()
        ctl(build, sock, 'report', '--pid', p.pid, '--json')
        memory[-1]['report_ms'] = (time.monotonic() - start) * 1000
    p.stdin.close()
    p.wait(30)
    if traced:
        ctl(build, sock, 'detach', '--pid', p.pid)
    return ns, calls


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
    return sum(int(info['run_time_ns']) for info in fd_infos(pid) if 'prog_type' in info and 'run_time_ns' in info)


def daemon_memory(pid):
    """The daemon's resident memory and the kernel memory of its BPF maps."""
    rss_kb = 0
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                rss_kb = int(line.split()[1])
    maps_bytes = sum(int(info['memlock']) for info in fd_infos(pid) if 'map_type' in info and 'memlock' in info)
    return {'rss_kb': rss_kb, 'maps_bytes': maps_bytes}


def main():
    global daemon_pid
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--iterations', type=int, default=2_000_000)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--output')
    args = ap.parse_args()

    configs = [{'name': 'glibc'}, {'name': 'glibc, --mmap', 'attach': ['--mmap']},
               # the worker a traced server forks: memleakd clears the breakpoints it inherits
               {'name': 'glibc, forked child of the traced process', 'args': ['fork']}]
    if os.path.exists(TCMALLOC):
        configs.append({'name': 'tcmalloc (LD_PRELOAD)', 'preload': TCMALLOC})
    # BPF programs' own run time, to tell our cost from the kernel's uprobe mechanism
    stats_path = '/proc/sys/kernel/bpf_stats_enabled'
    with open(stats_path) as f:
        stats_were = f.read().strip()
    with open(stats_path, 'w') as f:
        f.write('1')
    workdir = tempfile.mkdtemp(prefix='memleakd-bench-')
    proc, sock = daemon_start(args.build, workdir)
    daemon_pid = proc.pid
    rows = []
    try:
        for cfg in configs:
            base, traced, memory = [], [], []
            for _ in range(args.runs):
                base.append(run_once(args.build, sock, cfg, args.iterations, args.threads, False, memory))
                traced.append(run_once(args.build, sock, cfg, args.iterations, args.threads, True, memory))
            b = statistics.median(ns for ns, _ in base)
            t = statistics.median(ns for ns, _ in traced)
            calls = base[0][1]
            rows.append({
                'name': cfg['name'], 'base_ms': b / 1e6, 'traced_ms': t / 1e6, 'ratio': t / b,
                'ns_per_call': (t - b) / calls, 'calls': calls,
                'rss_kb': max(m['rss_kb'] for m in memory), 'maps_mb': max(m['maps_bytes'] for m in memory) / 2**20,
                'report_ms': statistics.median(m['report_ms'] for m in memory),
                'bpf_ns_per_call': statistics.median(m['bpf_ns'] for m in memory) / calls,
            })
    finally:
        proc.terminate()
        proc.wait(30)
        shutil.rmtree(workdir, ignore_errors=True)
        with open(stats_path, 'w') as f:
            f.write(stats_were)

    out = [f'# memleakd overhead, {datetime.date.today()}',
           '',
           f'`bench/run.py --iterations {args.iterations} --threads {args.threads} --runs {args.runs}` on '
           f'{platform.node()} (Linux {platform.release()}, {os.cpu_count()} CPUs): bench/alloc-churn '
           f'makes {rows[0]["calls"]:,} malloc/free calls with 1024 blocks live per thread; medians of '
           f'{args.runs} untraced and {args.runs} traced runs, interleaved.',
           '',
           '| configuration | untraced ms | traced ms | traced / untraced | ns per allocator call | '
           'of which in BPF | daemon RSS | BPF maps | report ms |',
           '|---|---:|---:|---:|---:|---:|---:|---:|---:|']
    for r in rows:
        out.append(f'| {r["name"]} | {r["base_ms"]:.1f} | {r["traced_ms"]:.1f} | {r["ratio"]:.2f}x | '
                   f'{r["ns_per_call"]:.0f} | {r["bpf_ns_per_call"]:.0f} | {r["rss_kb"] / 1024:.1f} MiB | '
                   f'{r["maps_mb"]:.1f} MiB | '
                   f'{r["report_ms"]:.0f} |')
    out += ['', '"forked child": the traced process forks at once and the child (not traced) does the '
            'churn; its breakpoints, inherited from the parent, are cleared by memleakd within about '
            'the first 50 ms (20 ms to gather forks, then a grace period), so the figure is what the '
            'child pays until then, spread over its run.']
    out += ['', '"of which in BPF": the run time of memleakd\'s BPF programs per allocator call '
            '(kernel.bpf_stats_enabled); the rest of the traced cost is the kernel\'s uprobe mechanism '
            '(breakpoint trap, out-of-line single step, return trampoline), which any uprobe-based '
            'tool pays and which depends heavily on the machine.', '',
            'BPF maps: the kernel memory of the daemon\'s maps as sized by its config (here '
            '`max_stacks = 262144`, other sizes default), charged to its cgroup. report ms: '
            '`memleakctl report --json` right after the workload exited (its last report), symbolization included.', '']
    text = '\n'.join(out)
    print(text)
    if args.output:
        with open(args.output, 'w') as f:
            f.write(text)


if __name__ == '__main__':
    main()
