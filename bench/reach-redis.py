#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 38's finding 4 as it was found: a live `report --reachability` of Debian's redis-server
holding a large, pointer-dense heap. What the scan costs redis (the longest PING round trip
while it runs, against the same measured idle just before) and what it answers.

memleakd (max_allocs 4,194,304: every block tracked) attaches to a redis-server on a Unix
socket; redis then makes KEYS keys of 256 bytes (`DEBUG POPULATE`), so every block is tracked;
then RUNS times `report --pid --reachability --json`, while a thread PINGs redis every
millisecond. Prints, per run, the PING worst case (and idle), the daemon's paused_ms, the mark's
wall and CPU time, the rate, and the classes (redis leaks nothing: all still reachable).

usage: bench/reach-redis.py [--build DIR] [--keys N] [--runs N]
Needs root (BPF), a build, and redis-server (apt-get install redis-server)."""

import argparse
import json
import os
import socket
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Pinger:
    """PINGs redis every millisecond on a connection of its own, keeping the longest round trip."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.worst = 0.0
        self.stop = False
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.stop:
            started = time.monotonic()
            self.sock.sendall(b'PING\r\n')
            self.sock.recv(64)
            self.worst = max(self.worst, time.monotonic() - started)
            time.sleep(0.001)

    def take(self):
        worst, self.worst = self.worst, 0.0
        return worst * 1000

    def close(self):
        self.stop = True
        self.thread.join()
        self.sock.close()


def wait_for(path, timeout=60):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f'{path} did not appear')
        time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--keys', type=int, default=600000)
    ap.add_argument('--runs', type=int, default=3)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix='reach-redis.')
    conf, sock, rsock = (os.path.join(work, n) for n in ('memleakd.conf', 'memleakd.sock', 'redis.sock'))
    with open(conf, 'w') as f:
        f.write('[memleakd]\nmax_allocs = 4194304\n')
    daemon = subprocess.Popen([os.path.join(args.build, 'daemon', 'memleakd'), '--config', conf, '--socket', sock],
                              stderr=open(os.path.join(work, 'memleakd.log'), 'w'))
    redis = subprocess.Popen(['redis-server', '--unixsocket', rsock, '--port', '0', '--save', '',
                              '--appendonly', 'no', '--enable-debug-command', 'yes'], stdout=subprocess.DEVNULL)
    pinger = None

    def ctl(*a):
        r = subprocess.run([os.path.join(args.build, 'client', 'memleakctl'), '--socket', sock] + [str(x) for x in a],
                           capture_output=True, text=True)
        return r.stdout or r.stderr

    try:
        wait_for(sock)
        wait_for(rsock)
        time.sleep(1)
        print(ctl('attach', '--pid', redis.pid).strip()[:100])
        subprocess.run(['redis-cli', '-s', rsock, 'DEBUG', 'POPULATE', str(args.keys), 'key', '256'], check=True,
                       stdout=subprocess.DEVNULL)
        with open(f'/proc/{redis.pid}/status') as f:
            rss = [line.split()[1] for line in f if line.startswith('VmRSS')][0]
        print(f'redis: {args.keys} keys, RSS {int(rss) // 1024} MiB')
        pinger = Pinger(rsock)
        for run in range(args.runs):
            time.sleep(1)
            idle = pinger.take()
            j = json.loads(ctl('report', '--pid', redis.pid, '--reachability', '--json', '--top', '1'))
            worst = pinger.take()
            t = j['targets'][0]
            ra = t['reachability']
            classes = {k: ra[k]['allocs'] for k in ('definitely_lost', 'indirectly_lost', 'undecided',
                                                    'still_reachable')}
            print(f'run {run + 1} (load {os.getloadavg()[0]:.1f}): PING worst {worst:.1f} ms (idle {idle:.1f}), '
                  f'paused {ra["paused_ms"]} ms, {ra["method"]}, mark {ra["mark_ms"]:.0f} ms '
                  f'(CPU {ra["mark_cpu_ms"]:.0f}), {ra["bytes_scanned"] >> 20} MiB read, '
                  f'{ra["scan_mib_per_s"]} MiB/s; {t["outstanding_allocs"]} blocks: {classes}')
    finally:
        if pinger:
            pinger.close()
        redis.terminate()
        daemon.terminate()
        redis.wait()
        daemon.wait()


if __name__ == '__main__':
    main()
