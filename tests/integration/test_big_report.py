# SPDX-License-Identifier: MIT
"""A full report at any size: tests/programs/leak-wide-report.c leaks one 24-byte block from each
of 65,536 distinct call stacks of 20 frames. `memleakctl report --top 100000` writes all of them
in every format (JSON, folded, pprof, text), each file but the text under 64 MiB and memleakctl
under 256 MiB of RSS: memleakd sends each distinct frame once (the report's "locations") and memleakctl keeps
each stack as its text until it writes it.

With every frame spelt out in every stack, the same JSON report is some 400 MB: past the
protocol's 256 MiB bound on a reply."""

import os
import re
import subprocess
import sys
import unittest

import harness

PROGRAM = 'leak-wide-report'
LEVELS = 16
STACKS = 1 << LEVELS
BLOCK_SIZE = 24
TOTAL = STACKS * BLOCK_SIZE
TOP = 100000
MAX_FILE_BYTES = 64 << 20
MAX_RSS_BYTES = 256 << 20
CTL_TIMEOUT_S = 300
# Under AddressSanitizer (tests/run.sh's second round), memory freed is held in a quarantine of up
# to 256 MiB: counted as memleakctl's own, it would pass any bound. Freed at once here.
CTL_ENV = dict(os.environ, ASAN_OPTIONS=':'.join(filter(None, [os.environ.get('ASAN_OPTIONS'),
                                                               'quarantine_size_mb=0'])))
# argv: FILE CMD ARGS...: runs CMD in a child forked from this small process, writes "STATUS MAXRSS_KIB"
MEASURE = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], 'w') as f:
    f.write(f'{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}')
"""


def chain_number(symbols):
    """The n a stack of leak-wide-report spells (step_a at depth d: bit d set), from its symbols
    innermost first; None when it is not such a stack."""
    steps = symbols[:LEVELS]
    if len(symbols) <= LEVELS or symbols[LEVELS] != 'main' or any(s not in ('step_a', 'step_b') for s in steps):
        return None
    # the innermost step is at depth LEVELS - 1
    return sum(1 << (LEVELS - 1 - i) for i, s in enumerate(steps) if s == 'step_a')


class BigReportTest(harness.DaemonTestCase):

    def ctl_measured(self, daemon, *args):
        """memleakctl ARGS (its output to a file): (its status, stderr, its peak RSS in bytes).

        It is forked by a small python of its own: a process's peak RSS counts the memory of the
        process it was exec'd from (the kernel keeps the old one's high-water mark at exec), and
        this test's own, which holds a parsed report of 65,536 stacks, is hundreds of MB."""
        cmd = [harness.MEMLEAKCTL, '--socket', daemon.socket_path] + [str(a) for a in args]
        measured = os.path.join(self.workdir, 'measured')
        r = subprocess.run([sys.executable, '-c', MEASURE, measured, *cmd], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=CTL_TIMEOUT_S, env=CTL_ENV)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(measured) as f:
            status, maxrss_kib = map(int, f.read().split())
        return status, r.stderr.decode(errors='replace'), maxrss_kib * 1024

    def write_report(self, daemon, pid, fmt, bounded=True):
        """report --top 100000 --format fmt to a file: its path, once its bounds are checked (the
        file's only when bounded: text spells out every frame of every stack, for people)."""
        path = os.path.join(self.workdir, f'report.{fmt}')
        status, stderr, rss = self.ctl_measured(daemon, 'report', '--pid', pid, '--top', TOP, '--format', fmt,
                                                '--output', path)
        self.assertEqual(status, 0, f'report --format {fmt} failed: {stderr}\nmemleakd:\n{daemon.log()}')
        size = os.path.getsize(path)
        print(f'report --format {fmt}: {size / (1 << 20):.1f} MiB, memleakctl peak RSS {rss / (1 << 20):.1f} MiB',
              file=sys.stderr)
        if bounded:
            self.assertLess(size, MAX_FILE_BYTES, f'report --format {fmt}: {size} bytes')
        self.assertLess(rss, MAX_RSS_BYTES, f'report --format {fmt}: memleakctl peaked at {rss} bytes')
        return path

    def test_65536_stacks_are_reported_whole_in_every_format(self):
        # tables that hold every block and stack exact (the tests' small defaults would sample)
        daemon = self.start_daemon(config={'max_allocs': 262144, 'max_stacks': 131072, 'max_combined': 131072})
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.run_leaks()

        def all_in():
            t = daemon.ctl_json('report', '--pid', program.pid, '--top', 0)['targets']
            return t and (t[0]['outstanding_bytes'], t[0]['outstanding_allocs']) == (TOTAL, STACKS)
        self.assertTrue(harness.wait_until(all_in, harness.REPORT_TIMEOUT_S),
                        daemon.ctl_ok('report', '--pid', program.pid, '--top', 0).stdout)

        # JSON: every stack, each frame once in "locations", each stack exact and its own
        with open(self.write_report(daemon, program.pid, 'json')) as f:
            report = harness.load_json_file(f)
        self.assertEqual(report['other'], {'stacks': 0, 'bytes': 0, 'allocs': 0})
        self.assertEqual(len(report['stacks']), STACKS)
        self.assertLess(len(report['locations']), 100, 'each distinct frame once')
        numbers = set()
        for stack in report['stacks']:
            self.assertEqual((stack['pid'], stack['bytes'], stack['allocs'], stack['stack_error'],
                              stack['addresses_cut'], stack['unwind_stopped']),
                             (program.pid, BLOCK_SIZE, 1, None, 0, None), stack)
            numbers.add(chain_number([f['symbol'] for f in stack['frames']]))
        self.assertEqual(numbers, set(range(STACKS)), 'each stack its own chain, none cut, none merged')

        # folded: a line a stack (nothing left out: no comment), summing to the total
        with open(self.write_report(daemon, program.pid, 'folded')) as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), STACKS, lines[:3])
        numbers = set()
        for line in lines:
            frames, value = line.rsplit(' ', 1)
            self.assertEqual(int(value), BLOCK_SIZE, line)
            numbers.add(chain_number(frames.split(';')[::-1]))
        self.assertEqual(numbers, set(range(STACKS)))

        # pprof: what go tool pprof sums is the total, split between the two steps
        profile = self.write_report(daemon, program.pid, 'pprof')
        r = harness.go_tool_pprof(self.workdir, profile, '-top', '-unit=B', timeout=CTL_TIMEOUT_S)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, rf'of {TOTAL}B total')
        # the innermost step (depth LEVELS - 1) is step_a in half of the chains, step_b in the others
        flat = {m.group(2): int(m.group(1)) for m in re.finditer(r'(?m)^\s*(\d+)B\s+\S+%\s+\S+%\s+\d+B\s+\S+%\s+(\w+)$',
                                                                 r.stdout)}
        self.assertEqual((flat.get('step_a'), flat.get('step_b')), (TOTAL // 2, TOTAL // 2), r.stdout)

        # text: every stack printed, one at a time (some 100 MB here: frames spelt out for people)
        with open(self.write_report(daemon, program.pid, 'text', bounded=False)) as f:
            text = f.read()
        self.assertEqual(len(re.findall(rf'(?m)^\t{BLOCK_SIZE} bytes in 1 allocation from stack', text)), STACKS)
        self.assertNotIn('more stacks', text)

        # html: the page holds every stack as memleakd sent them, its script finds their frames
        path = os.path.join(self.workdir, 'report.html')
        status, stderr, rss = self.ctl_measured(daemon, 'html', '--pid', program.pid, '--top', TOP, '--output', path)
        self.assertEqual(status, 0, stderr)
        print(f'html: {os.path.getsize(path) / (1 << 20):.1f} MiB, memleakctl peak RSS {rss / (1 << 20):.1f} MiB',
              file=sys.stderr)
        self.assertLess(os.path.getsize(path), MAX_FILE_BYTES)
        self.assertLess(rss, MAX_RSS_BYTES)
        with open(path) as f:
            page = f.read()
        data = harness.load_json(page.split('<script type="application/json" id="memleakd-data">', 1)[1]
                                 .split('</script>', 1)[0])
        self.assertEqual(len(data['report']['stacks']), STACKS)
        program.finish()

        # a CI gate over every stack of a run, the 10 largest printed: its blocks are reachable
        # (kept in an array), not lost, and all outstanding at the exit
        out = os.path.join(self.workdir, 'run.json')
        r = self.run_ctl(daemon.socket_path, '--json', '--output', out, '--top', 10, '--error-exitcode', 23,
                         '--fail-on', 'lost,outstanding', '--', program.path, input=b'go\n')
        self.assertEqual(r.returncode, 23, r.stderr)
        with open(out) as f:
            run = harness.load_json_file(f)
        self.assertEqual(run['gate']['lost'], {'stacks': 0, 'allocs': 0, 'bytes': 0}, run['gate'])
        self.assertEqual(run['gate']['outstanding'], {'stacks': STACKS, 'allocs': STACKS, 'bytes': TOTAL},
                         run['gate'])
        self.assertEqual(len(run['stacks']), 10)
        self.assertEqual(run['other'], {'stacks': STACKS - 10, 'bytes': TOTAL - 10 * BLOCK_SIZE,
                                        'allocs': STACKS - 10})


if __name__ == '__main__':
    unittest.main()
