# SPDX-License-Identifier: MIT
"""memleakctl report --format pprof, read by the tool people run: Go's own pprof (Debian's
golang-go, `go tool pprof`), told not to symbolize anything itself (-symbolize=none), so that
every name, file and line it prints comes from the profile memleakctl wrote.

tests/programs/leak-pprof.c leaks 7 x 1000 bytes from leak_direct, 3 x 2048 bytes from
fill_block inlined into leak_through_helper, and 1 MiB from leak_big."""

import json
import os
import re
import subprocess
import time
import unittest

import harness

PROGRAM = 'leak-pprof'
SOURCE = os.path.join(os.path.realpath(harness.SOURCE_ROOT), 'tests', 'programs', PROGRAM + '.c')
NAMES = ('leak_direct', 'leak_through_helper', 'leak_big')
EXPECTED = {
    'leak_direct': {'bytes': 7 * 1000, 'allocs': 7},
    'leak_through_helper': {'bytes': 3 * 2048, 'allocs': 3},
    'leak_big': {'bytes': 1 << 20, 'allocs': 1},
}
SAMPLE_BYTES = 4096
PPROF_TIMEOUT_S = 120


def site_line(function):
    lines = harness.call_sites(PROGRAM)[function]
    assert len(lines) == 1, (function, lines)
    return next(iter(lines))


def readelf_build_id(path):
    """The GNU build ID readelf -n prints for the file at path; None without one."""
    out = subprocess.run(['readelf', '-n', '--wide', path], capture_output=True, text=True, check=True).stdout
    ids = re.findall(r'Build ID: ([0-9a-f]+)', out)
    assert len(ids) <= 1, out
    return ids[0] if ids else None


class PprofTest(harness.DaemonTestCase):

    def pprof(self, profile, *args):
        """go tool pprof ARGS PROFILE's output; Go's caches and pprof's files in the test's directory."""
        r = harness.go_tool_pprof(self.workdir, profile, *args, timeout=PPROF_TIMEOUT_S)
        self.assertEqual(r.returncode, 0, f'go tool pprof {" ".join(args)} failed:\n{r.stderr}')
        return r.stdout

    def top(self, profile, *args):
        """{name: (flat, cum)} of go tool pprof -top, values in the sample type's own unit."""
        out = self.pprof(profile, '-top', '-nodecount=1000', '-unit=B', *args)
        rows = {}
        for line in out.splitlines():
            # "      7000  0.67%  0.67%       7000  0.67%  leak_direct /src/leak-pprof.c:41"
            m = re.match(r'^\s*(\d+)B?\s+\S+%\s+\S+%\s+(\d+)B?\s+\S+%\s+(.+?)\s*$', line)
            if m:
                rows[m.group(3)] = (int(m.group(1)), int(m.group(2)))
        return out, rows

    def profile_of(self, daemon, program, *options):
        path = os.path.join(self.workdir, f'{PROGRAM}-{len(os.listdir(self.workdir))}.pb.gz')
        r = daemon.ctl_ok('report', '--pid', program.pid, '--top', harness.UNLIMITED_TOP, '--format', 'pprof',
                          '--output', path, *options)
        self.assertEqual(r.stdout, '')
        self.assertEqual(r.stderr, f'Wrote {path}\n')
        with open(path, 'rb') as f:
            self.assertEqual(f.read(2), b'\x1f\x8b', 'not gzip: pprof files are gzip\'d')
        return path

    def test_go_tool_pprof_shows_each_leak_exact_with_file_and_line(self):
        daemon = self.start_daemon()
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
        self.assert_totals(report, totals, EXPECTED, 'the JSON report')
        profile = self.profile_of(daemon, program)

        # bytes (inuse_space, the default): the allocating function's own, then its callers'
        out, rows = self.top(profile)
        self.assertIn('Type: inuse_space', out)
        self.assertEqual(rows.get('leak_direct'), (7000, 7000), out)
        # the helper inlined into leak_through_helper holds the bytes; its caller has them below it
        self.assertEqual(rows.get('fill_block (inline)'), (6144, 6144), out)
        self.assertEqual(rows.get('leak_through_helper'), (0, 6144), out)
        self.assertEqual(rows.get('leak_big'), (1 << 20, 1 << 20), out)
        self.assertEqual(rows.get('main', (None, None))[1], 7000 + 6144 + (1 << 20), out)
        # what pprof sums is what the report says the process holds
        total = report['targets'][0]['outstanding_bytes']
        self.assertRegex(out, rf'of {total}B total')

        # counts (inuse_objects)
        out, rows = self.top(profile, '-sample_index=inuse_objects')
        self.assertIn('Type: inuse_objects', out)
        self.assertEqual(rows.get('leak_direct'), (7, 7), out)
        self.assertEqual(rows.get('fill_block (inline)'), (3, 3), out)
        self.assertEqual(rows.get('leak_big'), (1, 1), out)

        # file:line of each allocation, and of the inlined helper's call
        out, rows = self.top(profile, '-lines')
        for function, flat, suffix in (('leak_direct', 7000, ''), ('fill_block', 6144, ' (inline)'),
                                       ('leak_big', 1 << 20, '')):
            self.assertEqual(rows.get(f'{function} {SOURCE}:{site_line(function)}{suffix}', (None,))[0], flat, out)
        self.assertEqual(rows.get(f'leak_through_helper {SOURCE}:{site_line("leak_through_helper")}',
                                  (None, None))[1], 6144, out)

        # the stacks, leaf first, the inlined frame above the function it is inlined into
        out = self.pprof(profile, '-traces', '-unit=B')
        self.assertRegex(out, r'(?m)^\s+6144B\s+fill_block \(inline\)\n\s+leak_through_helper\n\s+main\n', out)
        self.assertRegex(out, r'(?m)^\s+7000B\s+leak_direct\n\s+main\n', out)
        self.assertRegex(out, rf'(?m)^\s+pid:\s+{program.pid}\n\s+comm:\s+leak-pprof\n\s+kind:\s+heap\n\s+7000B\s+leak_direct',
                         out)

        # the process, as labels
        out = self.pprof(profile, '-tags')
        self.assertRegex(out, rf'pid: Total \S+\n\s+\S+ \(\s*100%\): {program.pid}\n', out)
        self.assertRegex(out, r'comm: Total \S+\n\s+\S+ \(\s*100%\): leak-pprof\n', out)
        self.assertRegex(out, r'kind: Total \S+\n\s+\S+ \(\s*100%\): heap\n', out)

        # --output takes every format: folded and JSON as report prints them
        path = os.path.join(self.workdir, 'report.folded')
        daemon.ctl_ok('report', '--pid', program.pid, '--top', harness.UNLIMITED_TOP, '--format', 'folded',
                      '--output', path)
        with open(path) as f:
            self.assertEqual(f.read(), daemon.ctl_ok('report', '--pid', program.pid, '--top', harness.UNLIMITED_TOP,
                                                     '--folded').stdout)
        path = os.path.join(self.workdir, 'report.json')
        r = daemon.ctl_ok('report', '--pid', program.pid, '--top', harness.UNLIMITED_TOP, '--format', 'json',
                          '--output', path)
        self.assertEqual((r.stdout, r.stderr), ('', ''))        # JSON mode: nothing but the document
        def stacks(report):     # what does not move with the snapshots (verdicts do)
            return [(s['stack_id'], s['bytes'], s['allocs'], s['frames']) for s in report['stacks']]
        with open(path) as f:
            self.assertEqual(stacks(harness.load_json_file(f)), stacks(daemon.report(pid=program.pid)))
        # html: memleakctl html's page, the report and its history in it
        path = os.path.join(self.workdir, 'report.html')
        r = daemon.ctl_ok('report', '--pid', program.pid, '--format', 'html', '--output', path)
        self.assertEqual((r.stdout, r.stderr), ('', f'Wrote {path}\n'))
        with open(path) as f:
            page = f.read()
        self.assertTrue(page.startswith('<!DOCTYPE html>'), page[:100])
        data = harness.load_json(page.split('<script type="application/json" id="memleakd-data">', 1)[1]
                                 .split('</script>', 1)[0])
        self.assertEqual(stacks(data['report']), stacks(daemon.report(pid=program.pid)))
        self.assertEqual([t['pid'] for t in data['history']['targets']], [program.pid])

        # an exact target: no period, no estimate, the file's mapping named
        raw = self.pprof(profile, '-raw')
        self.assertIn('PeriodType: space bytes\n', raw)
        self.assertNotIn('sampled', raw)
        self.assertRegex(raw, rf'(?m)^\s*1: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ {re.escape(program.path)}', raw)

    def test_mappings_carry_each_file_s_build_id_and_file_offsets(self):
        daemon = self.start_daemon()
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
        self.assert_totals(report, totals, EXPECTED, 'the JSON report')
        program_id = readelf_build_id(program.path)

        # the JSON: each frame of a file carries that file's build ID, as readelf reads its note
        frames = [f for s in report['stacks'] if s['pid'] == program.pid for f in s['frames']]
        modules = {f['module'] for f in frames if f['module']}
        self.assertIn(program.path, modules)
        for module in modules:
            want = readelf_build_id(module)
            self.assertEqual({f['build_id'] for f in frames if f['module'] == module}, {want}, module)
        self.assertEqual({f['build_id'] for f in frames if not f['module']} - {None}, set())
        [direct] = [f for f in frames if f['symbol'] == 'leak_direct']

        # the profile: go tool pprof -raw lists each mapping with its build ID, and the file
        # offsets it gives a location are the report's module_offset
        raw = self.pprof(self.profile_of(daemon, program), '-raw')
        mappings = {}
        for line in raw[raw.index('\nMappings\n'):].splitlines()[2:]:
            # "1: 0x55d0c0a01000/0x55d0c0a02000/0x1000 /tmp/leak-pprof 5f2b...a1 [FN][FL][LN][IN]"
            m = re.match(r'^\s*(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+) ?([0-9a-f]*)', line)
            if m:
                mappings[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16),
                                             m.group(5), m.group(6))
        self.assertEqual(mappings[1][3:], (program.path, program_id), raw)
        for start, limit, offset, path, build_id in mappings.values():
            if path.startswith('/'):
                self.assertEqual(build_id, readelf_build_id(path), raw)
        # "     3: 0x55d0c0a011a9 M=1 leak_direct /src/leak-pprof.c:41 s=0"
        m = re.search(r'(?m)^\s*\d+: 0x([0-9a-f]+) M=(\d+) leak_direct ', raw)
        self.assertTrue(m, raw)
        addr, mapping = int(m.group(1), 16), mappings[int(m.group(2))]
        self.assertEqual(addr, int(direct['addr'], 16))
        self.assertEqual(mapping[3:], (program.path, program_id))
        self.assertTrue(mapping[0] <= addr < mapping[1], raw)
        self.assertEqual(addr - mapping[0] + mapping[2], direct['module_offset'], raw)

    def test_sampled_target_profile_carries_its_period_and_estimates(self):
        daemon = self.start_daemon()
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid, '--sample-bytes', SAMPLE_BYTES)
        program.run_leaks()
        # a 1 MiB block always crosses a sample point, and weighs its own size: exact even here
        expected_big = {'leak_big': EXPECTED['leak_big']}
        report, totals = self.wait_for_totals(daemon, program.pid, ('leak_big',), expected_big)
        self.assert_totals(report, totals, expected_big, 'the sampled JSON report')
        self.assertEqual(report['targets'][0]['sample_bytes'], SAMPLE_BYTES)
        profile = self.profile_of(daemon, program)

        raw = self.pprof(profile, '-raw')
        self.assertIn(f'PeriodType: space bytes\nPeriod: {SAMPLE_BYTES}\n', raw)
        self.assertIn(f'pid {program.pid} (leak-pprof) is sampled: a sample point every {SAMPLE_BYTES} bytes on '
                      f'average, its heap stacks\' values are estimates', raw)
        out, rows = self.top(profile)
        self.assertEqual(rows.get('leak_big'), (1 << 20, 1 << 20), out)
        # what pprof sums are the report's estimates, not rescaled again
        self.assertRegex(out, rf'of {report["targets"][0]["outstanding_bytes"]}B total')
        out = self.pprof(profile, '-tags')
        self.assertRegex(out, r'sample_bytes: Total \S+\n\s+\S+ \(\s*100%\): 4kB\n', out)

    def test_profile_takes_every_stack_unless_top_is_given(self):
        # tests/programs/leak-many-stacks.c: one block of 77 bytes from each of 41 x 53 stacks
        stacks, block = 41 * 53, 77
        daemon = self.start_daemon()
        program = self.start_program('leak-many-stacks')
        daemon.attach(program.pid)
        program.run_leaks()
        expected = {'descend_inner': {'bytes': stacks * block, 'allocs': stacks}}
        report, totals = self.wait_for_totals(daemon, program.pid, ('descend_inner',), expected)
        self.assert_totals(report, totals, expected, 'the JSON report')

        path = os.path.join(self.workdir, 'all.pb.gz')
        daemon.ctl_ok('report', '--pid', program.pid, '--format', 'pprof', '--output', path)
        out, rows = self.top(path, '-sample_index=inuse_objects')
        self.assertEqual(rows.get('descend_inner', (None, None))[1], stacks, out)
        self.assertFalse(any(name.startswith('[other') for name in rows), out)
        self.assertEqual(len(re.findall(r'(?m)^-+\+-+$', self.pprof(path, '-traces'))) - 1, stacks)

        # with --top, the rest is one sample that says what it stands for
        path = os.path.join(self.workdir, 'top.pb.gz')
        daemon.ctl_ok('report', '--pid', program.pid, '--top', 100, '--format', 'pprof', '--output', path)
        out, rows = self.top(path, '-sample_index=inuse_objects')
        self.assertEqual(rows.get(f'[other: {stacks - 100} stacks past top 100]'), (stacks - 100, stacks - 100), out)
        self.assertIn(f'{stacks - 100} stacks ({(stacks - 100) * block} bytes in {stacks - 100} allocations) past '
                      f'top 100 are one sample', out)

    def test_folded_stacks_to_a_file_or_pipe_are_every_stack_and_sum_to_the_report(self):
        # tests/programs/leak-many-stacks.c: one block of 77 bytes from each of 41 x 53 stacks
        stacks, block = 41 * 53, 77
        daemon = self.start_daemon()
        program = self.start_program('leak-many-stacks')
        daemon.attach(program.pid)
        program.run_leaks()
        expected = {'descend_inner': {'bytes': stacks * block, 'allocs': stacks}}
        self.wait_for_totals(daemon, program.pid, ('descend_inner',), expected)
        [target] = daemon.report(pid=program.pid)['targets']

        def parsed(text):
            values = {}
            for line in text.splitlines():
                if line.startswith('#'):
                    continue
                m = re.fullmatch(r'(.+) (\d+)', line)
                self.assertTrue(m, f'not a folded line: {line!r}')
                self.assertNotIn(m.group(1), values, 'a stack twice')
                values[m.group(1)] = int(m.group(2))
            return values

        # to a file: every stack, each line a stack, their sum the target's outstanding bytes
        path = os.path.join(self.workdir, 'all.folded')
        daemon.ctl_ok('report', '--pid', program.pid, '--folded', '--output', path)
        with open(path) as f:
            text = f.read()
        values = parsed(text)
        self.assertNotIn('#', text)
        self.assertEqual(len([k for k in values if k.endswith(';descend_inner')]), stacks)
        self.assertEqual(sum(values.values()), target['outstanding_bytes'])
        # to a pipe (what flamegraph.pl reads) the same; --value allocs counts the blocks
        piped = parsed(daemon.ctl_ok('report', '--pid', program.pid, '--folded').stdout)
        self.assertEqual(piped, values)
        allocs = parsed(daemon.ctl_ok('report', '--pid', program.pid, '--folded', '--value', 'allocs').stdout)
        self.assertEqual(sum(allocs.values()), target['outstanding_allocs'])
        self.assertEqual({v for k, v in allocs.items() if k.endswith(';descend_inner')}, {1})
        # --top: the rest said on a first line, a comment flame graph tools skip
        text = daemon.ctl_ok('report', '--pid', program.pid, '--folded', '--top', 100).stdout
        first = text.splitlines()[0]
        self.assertRegex(first, rf'^# memleakctl report: the 100 largest stacks; \d+ more \(\d+ bytes in \d+ '
                                r'allocations\) left out: --top for them$')
        self.assertEqual(len(parsed(text)), 100)
        r = daemon.ctl('report', '--value', 'allocs')
        self.assertEqual(r.returncode, 2, r)
        self.assertIn('--value is for --format folded', r.stderr)

    def test_run_writes_the_program_s_profile_at_its_exit(self):
        daemon = self.start_daemon()
        path = os.path.join(self.workdir, 'run.pb.gz')
        r = subprocess.run([harness.MEMLEAKCTL, '--socket', daemon.socket_path, 'run', '--format', 'pprof',
                            '--output', path, '--', os.path.join(harness.PROGRAMS_DIR, PROGRAM)],
                           input='go\n', capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        out, rows = self.top(path)
        self.assertEqual(rows.get('leak_direct'), (7000, 7000), out)
        self.assertEqual(rows.get('fill_block (inline)'), (6144, 6144), out)
        self.assertEqual(rows.get('leak_big'), (1 << 20, 1 << 20), out)
        # a profile is bytes: not onto run's terminal; folded stacks are text
        r = daemon.ctl('run', '--format', 'pprof', '--', '/bin/true')
        self.assertEqual(r.returncode, 2, r)
        self.assertIn('--format pprof writes a binary profile: give --output FILE', r.stderr)
        folded = os.path.join(self.workdir, 'run.folded')
        r = subprocess.run([harness.MEMLEAKCTL, '--socket', daemon.socket_path, 'run', '--format', 'folded',
                            '--output', folded, '--', os.path.join(harness.PROGRAMS_DIR, PROGRAM)],
                           input='go\n', capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(folded) as f:
            lines = f.read().splitlines()
        self.assertIn(7000, [int(line.rsplit(' ', 1)[1]) for line in lines if line.endswith(';leak_direct 7000')])

    def test_export_dir_holds_each_target_s_newest_profiles(self):
        # memleakd.conf's export_dir: each live target's profile every interval, the newest 2 kept
        directory = os.path.join(self.workdir, 'profiles')
        os.mkdir(directory)
        daemon = self.start_daemon(config={'export_dir': directory, 'export_interval_ms': 1000, 'export_keep': 2})
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.run_leaks()
        self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
        prefix = f'memleakd-{program.pid}-leak-pprof-'

        def files():
            return sorted(n for n in os.listdir(directory) if n.startswith(prefix) and n.endswith('.pb.gz'))

        def newest_has_every_leak():
            names = files()
            if not names:
                return False
            out, rows = self.top(os.path.join(directory, names[-1]))
            return rows.get('leak_direct') == (7000, 7000) and rows.get('leak_big') == (1 << 20, 1 << 20)

        self.assertTrue(harness.wait_until(newest_has_every_leak, 30, interval=0.5), files())
        # a few intervals more: still the newest two, and nothing else in the directory
        time.sleep(3.5)
        self.assertEqual(len(files()), 2, os.listdir(directory))
        self.assertEqual(sorted(os.listdir(directory)), files())

    def test_pprof_is_refused_on_a_terminal_and_with_json(self):
        daemon = self.start_daemon()
        r = daemon.ctl('report', '--format', 'pprof', '--json')
        self.assertEqual(r.returncode, 2, r)
        self.assertIn('--format pprof is not JSON', r.stdout + r.stderr)
        r = daemon.ctl('report', '--format', 'svg')
        self.assertEqual(r.returncode, 2, r)
        self.assertIn('--format must be text, json, folded, pprof or html', r.stderr)
        r = daemon.ctl('report', '--format', 'html', '--suppressions', '/dev/null', '--output', '/dev/null')
        self.assertEqual(r.returncode, 2, r)
        self.assertIn('--format html is memleakctl html\'s page: not with --suppressions', r.stderr)
        # stdout a terminal: memleakctl under a pseudo-terminal of script(1)'s
        r = subprocess.run(['script', '-qec', f'{harness.MEMLEAKCTL} --socket {daemon.socket_path} report '
                            f'--format pprof', '/dev/null'], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2, r)
        self.assertIn('--format pprof writes a binary profile: give --output FILE', r.stdout)
        r = subprocess.run(['script', '-qec', f'{harness.MEMLEAKCTL} --socket {daemon.socket_path} report '
                            f'--format html', '/dev/null'], capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 2, r)
        self.assertIn('--format html writes a page: give --output FILE', r.stdout)


if __name__ == '__main__':
    unittest.main()
