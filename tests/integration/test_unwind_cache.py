# SPDX-License-Identifier: MIT
"""Unwind tables kept on disk (cache_directory/unwind-tables): a program run again, by a daemon
started afresh, takes every table from there and is reported exactly as the first time; a stored
file that was truncated, had bytes flipped or is of another format version is rejected, counted,
removed and built again, the report still exact; the store stays within unwind_cache_max_mb, the
least recently used out; a symlink planted in the directory is never
followed (neither read through nor written through), nor is a symlink in place of the directory."""

import json
import os
import struct
import subprocess
import unittest

import harness
import test_unwind

PROGRAM = test_unwind.PROGRAM
NAMES = test_unwind.NAMES
EXPECTED = test_unwind.EXPECTED
SUBDIR = 'unwind-tables'
HEADER_BYTES = 352
VERSION_OFFSET = 8


def program_path():
    return os.path.join(harness.PROGRAMS_DIR, PROGRAM)


def build_id(path):
    """The GNU build ID of path as hex, from readelf (None without one)."""
    out = subprocess.run(['readelf', '-n', path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if 'Build ID:' in line:
            return line.split('Build ID:')[1].strip()
    return None


def table_name(path):
    """The name the store gives path's table (table-file.c: by build ID and size)."""
    real = os.path.realpath(path)
    bid = build_id(real)
    assert bid, f'{real} has no build ID'
    return f'b-{bid}-{os.path.getsize(real)}.unwind'


def libc_path():
    out = subprocess.run(['ldd', program_path()], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if 'libc.so.6' in line:
            return line.split('=>')[1].split()[0]
    raise AssertionError(out)


def ld_so_path():
    out = subprocess.run(['ldd', program_path()], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if 'ld-linux' in line:
            return line.split()[0] if '=>' not in line else line.split('=>')[1].split()[0]
    raise AssertionError(out)


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def shape(report):
    """What a report says about the program's stacks, independent of where it was loaded: each
    stack's frames (symbol, module, offset in it), bytes and count."""
    out = []
    for s in report['stacks']:
        frames = tuple((f.get('symbol'), os.path.basename(f.get('module') or ''), f.get('module_offset'))
                       for f in s['frames'])
        out.append((frames, s['bytes'], s['allocs'], json.dumps(s['unwind_stopped'], sort_keys=True),
                    s['addresses_cut']))
    return sorted(out, key=repr)


class UnwindCacheTest(harness.DaemonTestCase):

    def setUp(self):
        super().setUp()
        self.cache = os.path.join(self.workdir, 'shared-cache')
        self.tables = os.path.join(self.cache, SUBDIR)

    def daemon(self):
        """A daemon that keeps its tables in the cache shared by this test's daemons."""
        return self.start_daemon(config={'cache_directory': self.cache})

    def run_program(self, daemon):
        r, report = self.run_json(daemon, program_path(), input=b'go\n\n')
        self.assertEqual(r.returncode, 0, r.stderr)
        totals = harness.per_function(report, NAMES)
        self.assert_totals(report, totals, EXPECTED, f'memleakctl run {PROGRAM}')
        test_unwind.UnwindTest.assert_chains(self, report)
        return report

    def disk_cache(self, daemon):
        stats = daemon.status()['limits']['unwind_tables']['disk_cache']
        self.assertIsNotNone(stats, daemon.log())
        return stats

    def first_run(self):
        """A run by a first daemon, which builds every table and stores it; stopped after."""
        daemon = self.daemon()
        report = self.run_program(daemon)
        first = self.disk_cache(daemon)
        self.assertEqual(first['hits'], 0, first)
        self.assertEqual(first['rejected'], 0, first)
        self.assertGreaterEqual(first['misses'], 3, first)     # the program, libc, ld.so at least
        self.assertEqual(first['written'], first['misses'], first)
        self.assertEqual(first['write_failed'], 0, first)
        self.assertEqual(first['directory'], self.cache)
        stored = sorted(os.listdir(self.tables))
        self.assertEqual(len(stored), first['written'], stored)
        self.assertEqual(first['files'], len(stored), first)
        self.assertEqual(first['bytes'], sum(os.path.getsize(os.path.join(self.tables, n)) for n in stored))
        for name in (table_name(program_path()), table_name(libc_path()), table_name(ld_so_path())):
            self.assertIn(name, stored)
        st = os.stat(self.tables)
        self.assertEqual(st.st_mode & 0o777, 0o700)
        for name in stored:
            self.assertEqual(os.stat(os.path.join(self.tables, name)).st_mode & 0o777, 0o600, name)
        self.assertEqual(daemon.stop(), 0, daemon.log())
        return report, first

    def test_a_second_run_takes_every_table_from_the_cache_and_reports_the_same(self):
        report, first = self.first_run()

        daemon = self.daemon()
        again = self.run_program(daemon)
        second = self.disk_cache(daemon)
        self.assertEqual((second['hits'], second['misses'], second['rejected'], second['written']),
                         (first['misses'], 0, 0, 0), second)
        self.assertEqual(shape(again), shape(report))

    def test_corrupt_truncated_and_other_version_files_are_rejected_and_rebuilt(self):
        report, first = self.first_run()
        program, libc, ld_so = (os.path.join(self.tables, table_name(p))
                                for p in (program_path(), libc_path(), ld_so_path()))
        # truncated: the program's table loses its last row
        size = os.path.getsize(program)
        self.assertGreater(size, HEADER_BYTES + 12)
        os.truncate(program, size - 12)
        # bytes flipped: one byte in the middle of libc's rows
        with open(libc, 'r+b') as f:
            f.seek(HEADER_BYTES + (os.path.getsize(libc) - HEADER_BYTES) // 2)
            b = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([b[0] ^ 0x10]))
        # another format version: ld.so's header says version 2
        with open(ld_so, 'r+b') as f:
            f.seek(VERSION_OFFSET)
            self.assertEqual(struct.unpack('<I', f.read(4))[0], 1)
            f.seek(VERSION_OFFSET)
            f.write(struct.pack('<I', 2))
        corrupted = {p: read(p) for p in (program, libc, ld_so)}

        daemon = self.daemon()
        again = self.run_program(daemon)
        second = self.disk_cache(daemon)
        self.assertEqual(second['rejected'], 3, second)
        self.assertEqual(second['hits'], first['misses'] - 3, second)
        self.assertEqual(second['misses'], 0, second)
        self.assertEqual(second['written'], 3, second)
        self.assertEqual(shape(again), shape(report))
        # built again and stored whole: a third daemon takes all of them from the cache
        for p, bad in corrupted.items():
            self.assertNotEqual(read(p), bad, p)
        self.assertEqual(daemon.stop(), 0, daemon.log())
        daemon = self.daemon()
        third = self.run_program(daemon)
        stats = self.disk_cache(daemon)
        self.assertEqual((stats['hits'], stats['misses'], stats['rejected']), (first['misses'], 0, 0), stats)
        self.assertEqual(shape(third), shape(report))

    def test_a_symlink_planted_in_the_cache_is_never_followed(self):
        report, first = self.first_run()
        # A valid table of the program, moved out of the store: a symlink to it in its place would
        # be a hit if followed.
        name = table_name(program_path())
        outside = os.path.join(self.workdir, 'elsewhere.unwind')
        os.rename(os.path.join(self.tables, name), outside)
        before = read(outside)
        mtime = os.stat(outside).st_mtime_ns
        # one planted before the daemon starts goes at once (its count of the store)
        early = os.path.join(self.tables, 'b-00-1.unwind')
        os.symlink(outside, early)
        daemon = self.daemon()
        self.assertFalse(os.path.lexists(early))
        # one planted under a running daemon, where it looks for the program's table, is refused
        os.symlink(outside, os.path.join(self.tables, name))
        again = self.run_program(daemon)
        second = self.disk_cache(daemon)
        self.assertEqual(second['rejected'], 1, second)
        self.assertEqual(second['hits'], first['misses'] - 1, second)
        self.assertEqual(second['misses'], 0, second)
        self.assertEqual(second['written'], 1, second)
        self.assertEqual(shape(again), shape(report))
        # the link was replaced by a file of the store's own; what it pointed to is untouched
        self.assertFalse(os.path.islink(os.path.join(self.tables, name)))
        self.assertEqual(read(os.path.join(self.tables, name)), before)
        self.assertEqual(read(outside), before)
        self.assertEqual(os.stat(outside).st_mtime_ns, mtime)

    def test_the_store_stays_within_its_bound_least_recently_used_out(self):
        # 1 MiB: less than the tables of Debian's python3 and the libraries it maps (1.3 MiB)
        daemon = self.start_daemon(config={'cache_directory': self.cache, 'unwind_cache_max_mb': 1})
        r = self.run_ctl(daemon.socket_path, '--', '/usr/bin/python3', '-c', 'pass')
        self.assertEqual(r.returncode, 0, r.stderr)
        stats = self.disk_cache(daemon)
        self.assertEqual(stats['max_bytes'], 1 << 20)
        self.assertGreaterEqual(stats['evicted'], 1, stats)
        self.assertEqual(stats['write_failed'], 0, stats)
        stored = os.listdir(self.tables)
        on_disk = sum(os.path.getsize(os.path.join(self.tables, n)) for n in stored)
        self.assertLessEqual(on_disk, 1 << 20, stored)
        self.assertEqual((stats['files'], stats['bytes']), (len(stored), on_disk), stats)
        self.assertEqual(stats['written'] - stats['evicted'], len(stored), stats)

    def test_a_symlink_in_place_of_the_directory_is_refused(self):
        elsewhere = os.path.join(self.workdir, 'elsewhere')
        os.mkdir(elsewhere, 0o700)
        os.mkdir(self.cache, 0o700)
        os.symlink(elsewhere, self.tables)
        daemon = self.daemon()
        self.run_program(daemon)
        self.assertIsNone(daemon.status()['limits']['unwind_tables']['disk_cache'])
        self.assertIn('Not keeping unwind tables', daemon.log())
        self.assertEqual(os.listdir(elsewhere), [])


if __name__ == '__main__':
    unittest.main(verbosity=2)
