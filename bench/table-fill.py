#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What memleakd says about a service whose heap outgrows its allocation table (issue 38,
finding 1), and whose losses a later target does not inherit (finding 3).

Debian's redis-server (installed here with apt-get when missing, with redis-tools) listens on a
Unix socket only; a memleakd with `max_allocs = 20000` (and `auto_sample_percent` as given:
the default 80, or 0 for the old drop-and-count behaviour) attaches to it; then a client in this
script adds --rate keys a second (SET of --value-size bytes, over the Unix socket) for
--seconds. Every --every seconds it records redis's dbsize, RSS and INFO used_memory, and what
`memleakctl leaks --pid` says (text and --json): the suspects, their estimated bytes and error,
whether the target is sampled (auto_sample), its verdicts_qualified/blind_since and its own
`lost`, and its outstanding bytes against used_memory's growth since the attach (the truth).
The text is searched for "No stack is growing".

With --after (the default), redis is then detached and shut down; a python3 that sleeps is
attached and its `report --pid` read (its own lost: none expected), then
`memleakctl run -- /usr/bin/true`; the daemon's own `lost` (status) is printed beside them.

usage: bench/table-fill.py [--build DIR] [--auto-sample-percent P] [--max-allocs N] [--rate R]
                           [--seconds S] [--every S] [--value-size B] [--no-after] [--json FILE]
Needs root (BPF, apt-get) and a build (meson setup build && ninja -C build)."""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from benchlib import rss_mib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOT_GROWING = 'No stack is growing'


def install_redis():
    if shutil.which('redis-server') and shutil.which('redis-cli'):
        return
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    subprocess.run(['apt-get', 'update', '-q'], check=True, env=env, timeout=600)
    subprocess.run(['apt-get', 'install', '-y', '-q', 'redis-server', 'redis-tools'], check=True, env=env, timeout=900)
    # the package starts its own service on port 6379: not ours, leave it stopped
    subprocess.run(['systemctl', 'stop', 'redis-server'], capture_output=True, timeout=60)


def ctl(build, sock, *args, json_out=True, check=True):
    cmd = [os.path.join(build, 'client', 'memleakctl'), '--socket', sock] + (['--json'] if json_out else []) + list(map(str, args))
    r = subprocess.run(cmd, capture_output=True, timeout=300)
    if check and r.returncode != 0:
        raise OSError(f'memleakctl {args}: {r.stderr.decode()}{r.stdout.decode()}')
    return json.loads(r.stdout) if json_out else r.stdout.decode() + r.stderr.decode()


class Redis:
    """A minimal RESP client over redis's Unix socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(path)
        self.buffer = b''

    @staticmethod
    def encode(*args):
        out = [b'*%d\r\n' % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b'$%d\r\n%s\r\n' % (len(a), a))
        return b''.join(out)

    def _line(self):
        while b'\r\n' not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError('redis closed the connection')
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b'\r\n', 1)
        return line

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b'+', b':'):
            return int(rest) if kind == b':' else rest.decode()
        if kind == b'-':
            raise RuntimeError(rest.decode())
        if kind == b'$':
            n = int(rest)
            if n < 0:
                return None
            while len(self.buffer) < n + 2:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise EOFError('redis closed the connection')
                self.buffer += chunk
            data, self.buffer = self.buffer[:n], self.buffer[n + 2:]
            return data.decode()
        raise RuntimeError(f'unexpected reply {line!r}')

    def call(self, *args):
        self.sock.sendall(self.encode(*args))
        return self.reply()

    def pipeline(self, commands):
        self.sock.sendall(b''.join(self.encode(*c) for c in commands))
        for _ in commands:
            self.reply()

    def info(self, section):
        return dict(l.split(':', 1) for l in self.call('INFO', section).splitlines() if ':' in l)


def wait_for(path, what, timeout=60, ready=None):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) or (ready and not ready()):
        if time.monotonic() > deadline:
            raise TimeoutError(f'{what} did not start')
        time.sleep(0.1)


def observe(build, sock, client, pid, t, used_at_attach):
    leaks = ctl(build, sock, 'leaks', '--pid', pid)
    text = ctl(build, sock, 'leaks', '--pid', pid, json_out=False)
    target = leaks['targets'][0]
    mem = client.info('memory')
    lost = {k: v for k, v in (target.get('lost') or {}).items() if v}
    auto = target.get('auto_sample')
    suspects = leaks['suspects']
    row = {'t': round(t, 1), 'dbsize': client.call('DBSIZE'), 'redis_rss_mib': round(rss_mib(pid), 1),
           'used_memory_growth': int(mem['used_memory']) - used_at_attach,
           'outstanding_bytes': target.get('outstanding_bytes'), 'sample_bytes': target.get('sample_bytes'),
           'auto_sample': {k: auto.get(k) for k in ('since', 'sample_bytes', 'table_percent', 'changes_total')} if auto else None,
           'verdicts_qualified': target.get('verdicts_qualified'), 'blind_since': target.get('blind_since'),
           'lost_in_window': target.get('lost_in_window'), 'lost': lost, 'snapshots': target.get('snapshots'),
           'suspects': len(suspects), 'suspect_bytes': sum(s.get('bytes', 0) for s in suspects),
           'top_suspect': ({'bytes': suspects[0].get('bytes'), 'expected_error': suspects[0].get('expected_error'),
                            'growth_bytes_per_s': suspects[0].get('growth_bytes_per_s'),
                            'frames': [f.get('symbol') for f in suspects[0].get('frames', [])[:4]]} if suspects else None),
           'not_growing_said': NOT_GROWING in text, 'text_last_line': text.strip().splitlines()[-1] if text.strip() else ''}
    return row, text


def show(row):
    a = row['auto_sample']
    sampled = f"sampled 1/{a['sample_bytes']} B since +{row['auto_sample_since_s']} s" if a else 'exact'
    print(f"{row['t']:5.0f} s  dbsize {row['dbsize']:>6}  rss {row['redis_rss_mib']:6.1f} MiB  "
          f"used_memory +{row['used_memory_growth'] / 2**20:6.2f} MiB  memleakd outstanding "
          f"{'~' if row['sample_bytes'] else ''}{(row['outstanding_bytes'] or 0) / 2**20:6.2f} MiB "
          f"({(row['outstanding_bytes'] or 0) / max(1, row['used_memory_growth']):.2f}x)  {sampled}  "
          f"suspects {row['suspects']} ({row['suspect_bytes'] / 2**20:.2f} MiB)  "
          f"qualified {row['verdicts_qualified']}  lost {row['lost'] or '{}'}  "
          f"\"No stack is growing\": {'SAID' if row['not_growing_said'] else 'no'}", flush=True)


def after_detach(build, sock, workdir):
    """Finding 3: a clean target after one that overflowed shows no losses."""
    out = {}
    daemon_lost = {k: v for k, v in ctl(build, sock, 'status')['lost'].items() if v}
    out['daemon_lost'] = daemon_lost
    print(f'daemon lost (status, every target since start): {daemon_lost}')
    sleeper = subprocess.Popen(['python3', '-c', 'import sys, time; print("ready", flush=True); '
                                'd = {}\nfor i in range(200): d[i] = bytearray(1024 * (i % 8 + 1)); time.sleep(0.05)\ntime.sleep(30)'],
                               stdout=subprocess.PIPE)
    try:
        assert sleeper.stdout.readline().strip() == b'ready'
        ctl(build, sock, 'attach', '--pid', sleeper.pid)
        time.sleep(12)
        report = ctl(build, sock, 'report', '--pid', sleeper.pid, '--top', 3)
        text = ctl(build, sock, 'report', '--pid', sleeper.pid, '--top', 3, json_out=False)
        leaks_text = ctl(build, sock, 'leaks', '--pid', sleeper.pid, json_out=False)
        t = report['targets'][0]
        out['python3'] = {'lost': {k: v for k, v in t['lost'].items() if v}, 'allocs': t['counters'].get('allocs'),
                          'verdicts_qualified': t.get('verdicts_qualified'),
                          'lost_line': [l for l in text.splitlines() if 'Lost events' in l],
                          'leaks_lost_line': [l for l in leaks_text.splitlines() if 'Lost events' in l]}
        print(f"python3 (pid {sleeper.pid}) attached after: its own lost {out['python3']['lost']}, "
              f"allocs {out['python3']['allocs']}, verdicts_qualified {out['python3']['verdicts_qualified']}; "
              f"report says {out['python3']['lost_line']}; leaks says {out['python3']['leaks_lost_line']}")
        ctl(build, sock, 'detach', '--pid', sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
    run_text = ctl(build, sock, 'run', '--', '/usr/bin/true', json_out=False, check=False)
    out_path = os.path.join(workdir, 'run-true.json')
    # the report goes to stderr, or to --output: run's stdout is CMD's
    ctl_json = [os.path.join(build, 'client', 'memleakctl'), '--socket', sock, '--json', 'run', '--output', out_path,
                '--', '/usr/bin/true']
    subprocess.run(ctl_json, capture_output=True, timeout=300)
    with open(out_path) as f:
        run_json = json.load(f)
    rt = (run_json.get('targets') or [{}])[0]
    out['true'] = {'lost': {k: v for k, v in (rt.get('lost') or {}).items() if v},
                   'lost_lines': [l for l in run_text.splitlines() if 'Lost' in l]}
    print(f"memleakctl run -- /usr/bin/true: its lost {out['true']['lost']}; text: {out['true']['lost_lines']}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--auto-sample-percent', type=int, help="memleakd.conf's (default: the daemon's, 80)")
    ap.add_argument('--max-allocs', type=int, default=20000)
    ap.add_argument('--rate', type=int, default=1000, help='keys added a second')
    ap.add_argument('--seconds', type=int, default=60)
    ap.add_argument('--every', type=int, default=5)
    ap.add_argument('--value-size', type=int, default=256)
    ap.add_argument('--no-after', action='store_true', help='skip the clean targets after the detach')
    ap.add_argument('--json', help='write every row here')
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    install_redis()
    version = subprocess.run(['redis-server', '--version'], capture_output=True, text=True).stdout.strip()
    print(version)
    with tempfile.TemporaryDirectory(prefix='table-fill-') as workdir:
        sock = os.path.join(workdir, 'memleakd.sock')
        rsock = os.path.join(workdir, 'redis.sock')
        conf = os.path.join(workdir, 'memleakd.conf')
        with open(conf, 'w') as f:
            f.write(f'socket_path = {sock}\nmax_allocs = {args.max_allocs}\n')
            if args.auto_sample_percent is not None:
                f.write(f'auto_sample_percent = {args.auto_sample_percent}\n')
        daemon = subprocess.Popen([os.path.join(build, 'daemon', 'memleakd'), '--config', conf, '--socket', sock],
                                  stderr=open(os.path.join(workdir, 'memleakd.log'), 'w'))
        redis = None
        rows, texts, after = [], [], None
        try:
            wait_for(sock, 'memleakd', ready=lambda: subprocess.run(
                [os.path.join(build, 'client', 'memleakctl'), '--socket', sock, 'status'], capture_output=True).returncode == 0)
            redis = subprocess.Popen(['redis-server', '--port', '0', '--unixsocket', rsock, '--unixsocketperm', '700',
                                      '--save', '', '--appendonly', 'no', '--dir', workdir],
                                     stdout=subprocess.DEVNULL)
            wait_for(rsock, 'redis-server')
            client = Redis(rsock)
            assert client.call('PING') == 'PONG'
            used_at_attach = int(client.info('memory')['used_memory'])
            ctl(build, sock, 'attach', '--pid', redis.pid)
            value = b'v' * args.value_size
            t0 = time.monotonic()
            key = 0
            ticks = args.seconds * 10
            next_obs = args.every
            for tick in range(ticks):
                due = t0 + tick / 10
                while time.monotonic() < due:
                    time.sleep(max(0, due - time.monotonic()))
                batch = args.rate // 10
                client.pipeline([(b'SET', b'key:%09d' % (key + i), value) for i in range(batch)])
                key += batch
                now = time.monotonic() - t0
                if now >= next_obs:
                    row, text = observe(build, sock, client, redis.pid, now, used_at_attach)
                    a = row['auto_sample']
                    row['auto_sample_since_s'] = None
                    if a:
                        row['auto_sample_since_s'] = round(a['since'] - (time.time() - now), 0)
                    rows.append(row)
                    texts.append(text)
                    show(row)
                    next_obs += args.every
            row, text = observe(build, sock, client, redis.pid, time.monotonic() - t0, used_at_attach)
            row['auto_sample_since_s'] = None
            if row['auto_sample']:
                row['auto_sample_since_s'] = round(row['auto_sample']['since'] - (time.time() - row['t']), 0)
            rows.append(row)
            texts.append(text)
            show(row)
            print(f'achieved {key / (time.monotonic() - t0):.0f} keys/s; the last `memleakctl leaks --pid` text:')
            print('    ' + text.strip().replace('\n', '\n    '))
            said = [r['t'] for r in rows if r['not_growing_said']]
            print(f'"{NOT_GROWING}" said at {said or "no observation"} of {len(rows)}')
            ctl(build, sock, 'detach', '--pid', redis.pid)
            redis.terminate()
            redis.wait(30)
            redis = None
            if not args.no_after:
                after = after_detach(build, sock, workdir)
            if args.json:
                with open(args.json, 'w') as f:
                    json.dump({'rows': rows, 'texts': texts, 'after': after, 'redis': version}, f, indent=1)
        finally:
            if redis:
                redis.kill()
                redis.wait()
            daemon.terminate()
            daemon.wait(30)
    return 0


if __name__ == '__main__':
    sys.exit(main())
