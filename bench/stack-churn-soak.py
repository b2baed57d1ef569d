#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The stack table's reclaim against a process that makes new call stacks all the time
(issue 38: "a program making ~2,000 new stacks/s for 30 minutes: zero stack losses").

bench/stack-churn makes RATE allocations a second, each from a call stack it never used before
(3,200,000 distinct ones, up to 103 frames deep), each block freed at once. A memleakd with the
default configuration (only its socket moved) attaches to it; every --every seconds this prints
the target's stack losses (stack_table_full, stack_hash_clash, stack_no_scratch, stack_other),
its allocs_map_full and combined_map_full, the daemon's reclaim (passes, stacks_deleted,
stacks_held), the daemon's RSS and its maps' kernel memory. At the end the target is detached
and the daemon's RSS read again after a few snapshot ticks.

usage: bench/stack-churn-soak.py [--build DIR] [--seconds S] [--rate R] [--every S] [--json FILE]
Needs root (BPF) and a build (meson setup build && ninja -C build)."""

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time

from benchlib import rss_mib, start_memleakd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STACK_LOSSES = ('stack_table_full', 'stack_hash_clash', 'stack_no_scratch', 'stack_other')
TABLE_LOSSES = ('allocs_map_full', 'combined_map_full')


def ctl(build, sock, *args):
    r = subprocess.run([os.path.join(build, 'client', 'memleakctl'), '--socket', sock, '--json', *map(str, args)],
                       capture_output=True, timeout=120)
    if r.returncode != 0:
        raise OSError(f'memleakctl {args}: {r.stderr.decode()}{r.stdout.decode()}')
    return json.loads(r.stdout)


def read_line(proc, timeout):
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise TimeoutError('the program said nothing')
    line = proc.stdout.readline().decode().strip()
    if not line:
        raise EOFError('the program exited')
    return line


def sample(build, sock, daemon, pid, t0):
    status = ctl(build, sock, 'status')
    target = next((t for t in status['targets'] if t['pid'] == pid), None)
    row = {'t': round(time.monotonic() - t0, 1), 'daemon_rss_mib': round(rss_mib(daemon.pid), 1),
           'maps_mib': round(status['limits']['maps']['kernel_bytes'] / 2**20, 1),
           'reclaim': status['reclaim'], 'daemon_lost': {k: status['lost'].get(k) for k in STACK_LOSSES + TABLE_LOSSES}}
    if target:
        row['lost'] = {k: target['lost'].get(k) for k in STACK_LOSSES + TABLE_LOSSES}
        row['allocs'] = target['counters'].get('allocs')
    return row


def show(row):
    r = row['reclaim']
    lost = row.get('lost', {})
    print(f"{row['t']:7.0f} s  allocs {row.get('allocs', '-')!s:>9}  "
          f"stack losses {sum(lost.get(k) or 0 for k in STACK_LOSSES)} "
          f"({', '.join(f'{k}={lost.get(k)}' for k in STACK_LOSSES)})  "
          f"table losses {sum(lost.get(k) or 0 for k in TABLE_LOSSES)}  "
          f"passes {r['passes']}  stacks_deleted {r['stacks_deleted']}  stacks_held {r['stacks_held']}  "
          f"restored {r['stacks_restored']}  rss {row['daemon_rss_mib']} MiB  maps {row['maps_mib']} MiB", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--seconds', type=int, default=1800)
    ap.add_argument('--rate', type=int, default=2000)
    ap.add_argument('--every', type=int, default=60)
    ap.add_argument('--json', help='write every sample here')
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    rows = []
    with tempfile.TemporaryDirectory(prefix='stack-churn-') as workdir:
        daemon, sock = start_memleakd(build, workdir)
        program = None
        try:
            time.sleep(1)
            rss_start = rss_mib(daemon.pid)
            program = subprocess.Popen([os.path.join(build, 'bench', 'stack-churn'), str(args.seconds), str(args.rate)],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert read_line(program, 30) == 'ready'
            ctl(build, sock, 'attach', '--pid', program.pid)
            rss_attached = rss_mib(daemon.pid)
            print(f'daemon RSS {rss_start:.1f} MiB at start, {rss_attached:.1f} MiB attached; '
                  f'{args.rate} new stacks/s for {args.seconds} s', flush=True)
            t0 = time.monotonic()
            program.stdin.write(b'go\n')
            program.stdin.flush()
            streamed = None
            deadline = t0 + args.seconds + 120
            next_sample = t0 + args.every
            while time.monotonic() < deadline:
                ready, _, _ = select.select([program.stdout], [], [], max(0, next_sample - time.monotonic()))
                if ready:
                    streamed = program.stdout.readline().decode().strip()
                    break
                row = sample(build, sock, daemon, program.pid, t0)
                rows.append(row)
                show(row)
                next_sample += args.every
            wall = time.monotonic() - t0
            assert streamed and streamed.startswith('streamed'), streamed
            made = int(streamed.split()[1])
            time.sleep(2)
            final = sample(build, sock, daemon, program.pid, t0)
            rows.append(final)
            show(final)
            ctl(build, sock, 'detach', '--pid', program.pid)
            rss_detach = rss_mib(daemon.pid)
            time.sleep(10)
            after = sample(build, sock, daemon, program.pid, t0)
            rows.append(after)
            lost = final.get('lost', {})
            losses = sum(lost.get(k) or 0 for k in STACK_LOSSES + TABLE_LOSSES)
            peak = max(r['daemon_rss_mib'] for r in rows)
            print(f'{made} allocations from new stacks in {wall:.0f} s ({made / wall:.0f}/s); '
                  f'target allocs counted {final.get("allocs")}; losses {losses} '
                  f'({", ".join(f"{k}={lost.get(k)}" for k in STACK_LOSSES + TABLE_LOSSES)}); '
                  f'reclaim passes {final["reclaim"]["passes"]}, stacks_deleted {final["reclaim"]["stacks_deleted"]}, '
                  f'stacks_restored {final["reclaim"]["stacks_restored"]}, stacks_held at the end {final["reclaim"]["stacks_held"]}; '
                  f'daemon RSS {rss_start:.1f} MiB at start, {rss_attached:.1f} attached, peak {peak:.1f}, '
                  f'{final["daemon_rss_mib"]:.1f} at the end, {rss_detach:.1f} just after detach, '
                  f'{after["daemon_rss_mib"]:.1f} 10 s later (maps {after["maps_mib"]} MiB)', flush=True)
            if args.json:
                with open(args.json, 'w') as f:
                    json.dump({'rows': rows, 'made': made, 'wall_s': wall, 'rss_start': rss_start,
                               'rss_attached': rss_attached, 'rss_detach': rss_detach}, f, indent=1)
            return 1 if losses else 0
        finally:
            if program:
                program.kill()
                program.wait()
            daemon.terminate()
            daemon.wait(30)


if __name__ == '__main__':
    sys.exit(main())
