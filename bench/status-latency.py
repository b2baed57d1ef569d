#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How long `status` waits while a large report is being built: the event loop's responsiveness.

A target (bench/leak-stacks.c) leaks ALLOCS blocks from STACKS distinct stacks; memleakd traces
it. Then a client asks for `report --top TOP` over all of it while another client sends `status`
every 20 ms on its own connection, timing each answer. The figures: how long the report took,
and the status latencies while it ran (median, 99th percentile, worst) against those of the same
daemon idle. With --baseline BUILD the same is done, in the same run, against another build (an
older commit built elsewhere), so the two can be compared as a ratio.

usage: bench/status-latency.py [--build DIR] [--baseline DIR] [--stacks N] [--allocs N] [--top N]...
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def request_raw(sock, req, timeout=300):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(sock)
        s.sendall((json.dumps(dict(req, v=1, id=1)) + '\n').encode())
        chunks = []
        while not chunks or not chunks[-1].endswith(b'\n'):
            chunk = s.recv(1 << 20)
            if not chunk:
                raise OSError('memleakd hung up')
            chunks.append(chunk)
    return b''.join(chunks)


def parse_reply(req, raw):
    reply = json.loads(raw)
    if reply.get('error'):
        raise OSError(f'{req["cmd"]}: {reply["error"]}')
    return reply


def request(sock, req, timeout=300):
    return parse_reply(req, request_raw(sock, req, timeout))


def daemon_start(build, workdir, stacks, allocs):
    sock = os.path.join(workdir, 'memleakd.sock')
    conf = os.path.join(workdir, 'memleakd.conf')
    with open(conf, 'w') as f:
        f.write(f'socket_path = {sock}\nmax_allocs = {allocs + allocs // 5}\n'
                f'max_stacks = 262144\nmax_combined = 262144\n')
    log = open(os.path.join(workdir, 'memleakd.log'), 'w')
    proc = subprocess.Popen([os.path.join(build, 'daemon', 'memleakd'), '--config', conf],
                            stdout=log, stderr=log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            request(sock, {'cmd': 'status'}, timeout=5)
            return proc, sock
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit('memleakd did not start; see ' + log.name)


def status_latencies(sock, stop, out):
    while not stop.is_set():
        t = time.monotonic()
        request(sock, {'cmd': 'status'}, timeout=120)
        out.append(time.monotonic() - t)
        time.sleep(0.02)


def measure(build, workload, stacks, allocs, top):
    with tempfile.TemporaryDirectory(prefix='memleakd-bench-') as workdir:
        daemon, sock = daemon_start(build, workdir, stacks, allocs)
        target = subprocess.Popen([workload, str(stacks), str(allocs)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert target.stdout.readline().strip() == 'ready'
            request(sock, {'cmd': 'attach', 'pid': target.pid})
            target.stdin.write('go\n')
            target.stdin.flush()
            assert target.stdout.readline().strip() == 'done'
            time.sleep(2.5)                     # a snapshot tick or two over the full map
            idle = []
            stop = threading.Event()
            prober = threading.Thread(target=status_latencies, args=(sock, stop, idle))
            prober.start()
            time.sleep(2)
            stop.set()
            prober.join()
            busy = []
            stop = threading.Event()
            prober = threading.Thread(target=status_latencies, args=(sock, stop, busy))
            prober.start()
            t = time.monotonic()
            req = {'cmd': 'report', 'pid': target.pid, 'top': top}
            raw = request_raw(sock, req)
            report_s = time.monotonic() - t
            stop.set()
            prober.join()
            # Parsed once the prober stopped: json.loads holds Python's GIL, which would count
            # against the prober's latencies.
            report = parse_reply(req, raw)['report']
            outstanding = report['targets'][0]['outstanding_allocs']
        finally:
            target.kill()
            target.wait()
            daemon.terminate()
            daemon.wait(timeout=30)
    return {'report_s': report_s, 'idle': idle, 'busy': busy, 'rows': len(report['stacks']),
            'outstanding': outstanding}


def summary(lat):
    lat = sorted(lat)
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    return (f'{statistics.median(lat) * 1000:.1f} ms median, {p99 * 1000:.1f} ms p99, '
            f'{lat[-1] * 1000:.1f} ms worst ({len(lat)} requests)')


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--baseline', help='another build directory to measure the same way')
    ap.add_argument('--stacks', type=int, default=100000)
    ap.add_argument('--allocs', type=int, default=1000000)
    ap.add_argument('--top', type=int, action='append',
                    help='the report\'s --top (repeatable; default: 20, then every stack)')
    a = ap.parse_args()
    a.top = a.top or [20, a.stacks]
    workload = os.path.join(a.build, 'bench', 'leak-stacks')
    builds = [('this build', a.build)] + ([('baseline', a.baseline)] if a.baseline else [])
    for top in a.top:
        for name, build in builds:
            r = measure(os.path.abspath(build), workload, a.stacks, a.allocs, top)
            print(f'{name} ({build}): report --top {top} over {a.stacks} stacks, {a.allocs} allocations: '
                  f'{r["report_s"]:.2f} s ({r["rows"]} stacks shown, {r["outstanding"]} allocations outstanding)')
            print(f'  status, daemon idle:       {summary(r["idle"])}')
            print(f'  status, during the report: {summary(r["busy"])}', flush=True)


if __name__ == '__main__':
    main()
