# SPDX-License-Identifier: MIT
"""Complete chains walked by the unwind tables (unwind = auto, the default), in programs built -O2
-fomit-frame-pointer, with exact bytes and counts per chain and balanced churn that never shows:

- the seed's C++ leak (tests/programs/leak-unwind-cxx.cpp): every byte new[] and new leave in
  LeakLib::slowMemoryLeak(int) is on slowMemoryLeak <- caller <- main, and the 2,000 blocks of
  makeShape(long) on makeShape <- slowMemoryLeak <- caller <- main; attached with --unwind fp the
  same stacks lose caller and main (the frame-pointer walk cannot follow them: the test can fail);
- a library dlopen()ed after the attach (tests/programs/leak-unwind-lib.c, also -O2 without frame
  pointers) called through a function pointer: lib_leak <- call_plugin <- main, once the snapshot
  tick has loaded the library's table;
- the programs really are built as claimed: no frame pointers in them, and no FDE covers the
  assembly function of leak-unwind (whose own chains test_unwind.py checks: qsort, recursion,
  signal handler, thread, no CFI; Rust without frame pointers is in test_rust.py)."""

import os
import re
import subprocess
import unittest

import harness

NO_LOSS = ('stack_table_full', 'stack_hash_clash', 'stack_no_scratch', 'stack_efault', 'stack_other')

# leak-unwind-cxx.cpp's ground truth
CXX = 'leak-unwind-cxx'
SLOW = 'LeakLib::slowMemoryLeak(int)'
SHAPE = 'makeShape(long)'
ROUNDS = 20
SHAPES = 2000
CXX_EXPECTED = {
    SLOW: {'bytes': ROUNDS * 40 + ROUNDS * 48, 'allocs': 2 * ROUNDS},     # new int[10], new Record
    SHAPE: {'bytes': SHAPES * 32, 'allocs': SHAPES},                       # new Shape
}
# every outstanding byte by its chain of frames from the leaking function up to main
CXX_CHAINS = {
    (SLOW, 'caller()', 'main'): CXX_EXPECTED[SLOW],
    (SHAPE, SLOW, 'caller()', 'main'): CXX_EXPECTED[SHAPE],
}
CXX_NAMES = {SLOW, SHAPE, 'caller()', 'churn(int)', 'keep(void*)'}

# leak-unwind-dlopen.c and leak-unwind-lib.c's ground truth
DLOPEN = 'leak-unwind-dlopen'
LIBRARY = 'libleak-unwind-lib.so'
DLOPEN_EXPECTED = {'lib_leak': {'bytes': 6 * 111, 'allocs': 6}}
DLOPEN_NAMES = {'lib_leak', 'lib_churn', 'call_plugin', 'churn'}

# leak-unwind-lib.c's three sites of one allocating function, called right after the dlopen
# (leak-unwind-dlopen at-once), then again once the test saw the library's table in: every byte
# by its chain from lib_keep up to main
def late_sites(caller):
    tail = ('lib_sites', 'call_plugin', caller, 'main')
    return {
        ('lib_keep', 'lib_site_a') + tail: {'bytes': 3 * 201, 'allocs': 3},
        ('lib_keep', 'lib_site_b') + tail: {'bytes': 5 * 202, 'allocs': 5},
        ('lib_keep', 'lib_site_c') + tail: {'bytes': 7 * 203, 'allocs': 7},
    }


LATE_FIRST = late_sites('leak_at_once')
LATE_AGAIN = late_sites('leak_again')
LATE_TOTAL = {'bytes': 3 * 201 + 5 * 202 + 7 * 203, 'allocs': 3 + 5 + 7}

# the C runtime's own objects (crtbegin.o), built by Debian with frame pointers
CRT_FUNCTIONS = {'__do_global_dtors_aux', 'frame_dummy', 'register_tm_clones', 'deregister_tm_clones'}


def symbols(stack):
    return [f['symbol'] for f in stack['frames']]


def base_name(symbol):
    """A C function's name without gcc's clone suffix (churn.constprop.0 is churn)."""
    return (symbol or '').split('.')[0]


def chain_to_main(stack):
    """The stack's symbols up to main, or all of them when main is not there."""
    chain = symbols(stack)
    return tuple(chain[:chain.index('main') + 1]) if 'main' in chain else tuple(chain)


def totals_by(report, pid, key):
    totals = {}
    for stack in report['stacks']:
        if stack['pid'] != pid:
            continue
        k = key(stack)
        if k is None:
            continue
        t = totals.setdefault(k, {'bytes': 0, 'allocs': 0})
        t['bytes'] += stack['bytes']
        t['allocs'] += stack['allocs']
    return totals


def first_of(names):
    """Key: the first frame whose (base) name is one of names; None for stacks with none."""
    def key(stack):
        for frame in stack['frames']:
            if base_name(frame['symbol']) in names:
                return base_name(frame['symbol'])
        return None
    return key


def site_lines(source, marker):
    with open(source) as f:
        return {n for n, text in enumerate(f, 1) if f'// site: {marker}' in text}


class UnwindChainsTest(harness.DaemonTestCase):

    def assert_no_stack_lost(self, report):
        for counter in NO_LOSS:
            self.assertEqual(report['lost'][counter], 0, report['lost'])

    def assert_walked_to_start(self, stack, text):
        """A walk that ended at the outermost frame: nothing stopped it, nothing cut."""
        self.assertEqual(symbols(stack)[-1], '_start', text)
        self.assertIsNone(stack['unwind_stopped'], stack)
        self.assertEqual(stack['addresses_cut'], 0, stack)
        self.assertFalse(stack['truncated'], stack)

    def leak_cxx(self, *attach_args):
        daemon = self.start_daemon()
        program = self.start_program(CXX)
        daemon.attach(program.pid, *attach_args)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, CXX_NAMES, CXX_EXPECTED)
        self.assert_totals(report, totals, CXX_EXPECTED, CXX)
        # only the leaks are outstanding: churn and slowMemoryLeak's own new/delete left nothing
        self.assertEqual(harness.per_first_frame(report, program.pid), CXX_EXPECTED, harness.format_stacks(report))
        self.assertEqual(report['targets'][0]['outstanding_bytes'], sum(e['bytes'] for e in CXX_EXPECTED.values()))
        self.assert_no_stack_lost(report)
        return daemon, program, report

    def test_seed_cxx_chain_is_complete_for_every_byte(self):
        daemon, program, report = self.leak_cxx()
        text = harness.format_stacks(report)
        # every leaked byte and block under its complete chain, main included
        self.assertEqual(totals_by(report, program.pid, chain_to_main), CXX_CHAINS, text)
        source = os.path.join(os.path.realpath(harness.SOURCE_ROOT), 'tests', 'programs', CXX + '.cpp')
        module = os.path.realpath(program.path)
        for stack in report['stacks']:
            self.assert_walked_to_start(stack, text)
            first = stack['frames'][0]
            self.assertEqual((first['module'], first['file']), (module, source), first)
            marker = 'makeShape' if first['symbol'] == SHAPE else 'slowMemoryLeak'
            self.assertIn(first['line'], site_lines(source, marker), first)
            # libc's start between main and _start: the walk went on past main by libc's table
            self.assertIn('__libc_start_call_main', symbols(stack), text)
        target = [t for t in daemon.status()['targets'] if t['pid'] == program.pid][0]
        self.assertEqual(target['unwind']['mode'], 'auto', target)
        self.assertGreaterEqual(target['unwind']['tables'], 3, target)    # the program, libstdc++, libc...

    def test_seed_cxx_chain_is_cut_by_frame_pointers_alone(self):
        # The same program walked by frame pointers only: its bytes are still exact at the
        # function that called new, but caller and main are gone (what the tables add).
        daemon, program, report = self.leak_cxx('--unwind', 'fp')
        text = harness.format_stacks(report)
        for stack in report['stacks']:
            self.assertIn(stack['frames'][0]['symbol'], (SLOW, SHAPE), text)
            self.assertNotIn('caller()', symbols(stack), text)
            self.assertNotIn('main', symbols(stack), text)
        target = [t for t in daemon.status()['targets'] if t['pid'] == program.pid][0]
        self.assertEqual(target['unwind']['mode'], 'fp', target)

    def test_dlopened_library_is_walked_back_into_the_program(self):
        daemon = self.start_daemon()
        program = self.start_program(DLOPEN)
        daemon.attach(program.pid)

        def target():
            return [t for t in daemon.status()['targets'] if t['pid'] == program.pid][0]

        tables_before = target()['unwind']['tables']
        program.go()
        program.expect('loaded')
        # The snapshot tick (100 ms) rereads the maps and builds the new library's table: leak
        # only once it is in, or lib_leak would be walked by frame pointer.
        seen = {}

        def table_loaded():
            status = daemon.status()
            seen['target'] = [t for t in status['targets'] if t['pid'] == program.pid][0]
            seen['building'] = status['limits']['unwind_tables']['building']
            return seen['target']['unwind']['tables'] > tables_before and seen['building'] == 0

        self.assertTrue(harness.wait_until(table_loaded, 10),
                        f'the dlopened library\'s unwind table was not loaded (tables before the dlopen: '
                        f'{tables_before}; now: {seen})')
        program.run_leaks()

        last = {}

        def leaks_in():
            last['report'] = daemon.report(pid=program.pid)
            last['totals'] = totals_by(last['report'], program.pid, first_of(DLOPEN_NAMES))
            return last['totals'] == DLOPEN_EXPECTED

        harness.wait_until(leaks_in, harness.REPORT_TIMEOUT_S, interval=0.1)
        report = last['report']
        # exact, and neither churn (the program's, the library's) left anything
        self.assert_totals(report, last['totals'], DLOPEN_EXPECTED, DLOPEN)
        self.assert_no_stack_lost(report)
        text = harness.format_stacks(report)
        library = os.path.realpath(os.path.join(harness.PROGRAMS_DIR, LIBRARY))
        executable = os.path.realpath(program.path)
        leaks = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] == 'lib_leak']
        self.assertTrue(leaks, text)
        for stack in leaks:
            chain = symbols(stack)
            self.assertEqual(chain[:3], ['lib_leak', 'call_plugin', 'main'], text)
            self.assertEqual([os.path.realpath(f['module'] or '') for f in stack['frames'][:3]],
                             [library, executable, executable], stack)
            self.assertTrue(stack['frames'][0]['file'].endswith('/tests/programs/leak-unwind-lib.c'), stack)
            self.assert_walked_to_start(stack, text)
        # (the loader's own allocations for the dlopen stay outstanding, on stacks through main)
        self.assertFalse([s for s in report['stacks']
                          if {'churn', 'lib_churn'} & {base_name(n) for n in symbols(s)}], text)

    def late_sites_of(self, report, pid, no_table_allowed):
        """The stacks through lib_keep: each complete up to main on one of the true chains, or
        (no_table_allowed) stopped at a frame of the library with no_table, its frames the start of
        a true chain; never a cut stack that reads as complete. Returns the bytes and blocks per
        complete chain, and those of the no_table stacks."""
        text = harness.format_stacks(report)
        complete, stopped = {}, {'bytes': 0, 'allocs': 0}
        library = os.path.realpath(os.path.join(harness.PROGRAMS_DIR, LIBRARY))
        chains = {**LATE_FIRST, **LATE_AGAIN}
        for stack in report['stacks']:
            chain = tuple(base_name(n) for n in symbols(stack))
            if stack['pid'] != pid or not chain or chain[0] != 'lib_keep':
                continue
            reason = (stack['unwind_stopped'] or {}).get('reason')
            if reason is None:
                key = tuple(base_name(n) for n in chain_to_main(stack))
                self.assertIn(key, chains, f'a stack through lib_keep reads as complete but is not:\n{text}')
                self.assert_walked_to_start(stack, text)
                t = complete.setdefault(key, {'bytes': 0, 'allocs': 0})
            else:
                self.assertTrue(no_table_allowed, f'a stack stopped ({reason}):\n{text}')
                self.assertEqual(reason, 'no_table', text)
                self.assertEqual(stack['addresses_cut'], 0, stack)
                # stopped at a frame of the library, on the way of a true chain
                self.assertEqual(os.path.realpath(stack['unwind_stopped']['module'] or ''), library, stack)
                self.assertTrue(any(c[:len(chain)] == chain for c in chains), text)
                t = stopped
            t['bytes'] += stack['bytes']
            t['allocs'] += stack['allocs']
        return complete, stopped

    def wait_for_late_sites(self, daemon, pid, total, no_table_allowed=True):
        """Poll until the stacks through lib_keep hold total; (report, complete, stopped)."""
        last = {}

        def all_in():
            last['report'] = daemon.report(pid=pid)
            last['complete'], last['stopped'] = self.late_sites_of(last['report'], pid, no_table_allowed)
            got = [last['stopped'][k] + sum(t[k] for t in last['complete'].values()) for k in ('bytes', 'allocs')]
            return got == [total['bytes'], total['allocs']]

        self.assertTrue(harness.wait_until(all_in, harness.REPORT_TIMEOUT_S, interval=0.1),
                        f'{last.get("complete")} {last.get("stopped")}\n{harness.format_stacks(last["report"])}')
        return last['report'], last['complete'], last['stopped']

    def test_library_dlopened_and_called_at_once_is_complete_or_says_no_table(self):
        # The library is dlopen()ed after the attach and its three sites allocate at once, as its
        # table is first loaded: each stack is complete (up to main, on its own site's chain) or
        # says it stopped for want of the table; never cut and read as complete, never the three
        # sites merged into one stack. Every byte is there, the complete ones exact per site. The
        # table is loaded as the library is mapped (BPF says so at once), not at a snapshot tick
        # (none comes here for a minute): the second round's stacks are all complete, exact.
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000})
        program = harness.LeakProgram(DLOPEN, [os.path.join(harness.PROGRAMS_DIR, DLOPEN), 'at-once'])
        self.addCleanup(program.kill)
        program.expect('ready')
        daemon.attach(program.pid)

        def status_of_target():
            status = daemon.status()
            return [t for t in status['targets'] if t['pid'] == program.pid][0], status

        tables_before = status_of_target()[0]['unwind']['tables']
        program.go()
        program.expect('done')
        seen = {}

        def table_loaded():     # status reads no maps: only the mapping's event loads the table
            seen['target'], status = status_of_target()
            seen['building'] = status['limits']['unwind_tables']['building']
            return seen['target']['unwind']['tables'] > tables_before and seen['building'] == 0

        self.assertTrue(harness.wait_until(table_loaded, 5),
                        f'the dlopened library\'s unwind table was not loaded (tables before the dlopen: '
                        f'{tables_before}; now: {seen})')
        report, complete, stopped = self.wait_for_late_sites(daemon, program.pid, LATE_TOTAL)
        text = harness.format_stacks(report)
        for chain, got in complete.items():
            want = LATE_FIRST[chain]
            if stopped['allocs'] == 0:
                self.assertEqual(got, want, text)
            self.assertLessEqual(got['allocs'], want['allocs'], text)
            self.assertEqual(got['bytes'], got['allocs'] * want['bytes'] // want['allocs'], chain)
        if stopped['allocs']:
            self.assertGreaterEqual(daemon.status()['counters']['unwind_stop_no_table'], 1)
        program.run_leaks()
        total = {k: 2 * v for k, v in LATE_TOTAL.items()}
        report, complete_after, stopped_after = self.wait_for_late_sites(daemon, program.pid, total)
        text = harness.format_stacks(report)
        self.assertEqual(stopped_after, stopped, text)
        self.assertEqual({c: t for c, t in complete_after.items() if c in LATE_AGAIN}, LATE_AGAIN, text)
        self.assert_no_stack_lost(report)

    def test_library_dlopened_under_run_is_complete(self):
        # Under memleakctl run the program is held at the exec of a program not planned (sh execs
        # it) and at the mapping of the library, each until its table is in: every stack through
        # the three sites is complete, exact per site.
        daemon = self.start_daemon()
        path = os.path.join(harness.PROGRAMS_DIR, DLOPEN)
        for cmd in ([path, 'at-once-no-wait'], ['/bin/sh', '-c', f'exec {path} at-once-no-wait']):
            with self.subTest(cmd=cmd):
                r, report = self.run_json(daemon, *cmd)
                self.assertEqual(r.returncode, 0, r.stderr)
                pid = report['targets'][0]['pid']
                complete, stopped = self.late_sites_of(report, pid, no_table_allowed=False)
                self.assertEqual(complete, LATE_FIRST, harness.format_stacks(report))
                for stack in report['stacks']:      # the program's own stacks too
                    self.assertIsNone(stack['unwind_stopped'], harness.format_stacks(report))

    def test_programs_are_built_without_frame_pointers_and_the_assembly_has_no_fde(self):
        for name in (CXX, DLOPEN, LIBRARY, 'leak-unwind'):
            path = os.path.join(harness.PROGRAMS_DIR, name)
            disassembly = subprocess.run(['objdump', '-d', '--no-show-raw-insn', path], capture_output=True,
                                         text=True, check=True).stdout
            with_fp, function = set(), None
            for line in disassembly.splitlines():
                m = re.match(r'^[0-9a-f]+ <(.+)>:$', line)
                if m:
                    function = m.group(1)
                elif re.search(r'\bmov\s+%rsp,%rbp\b', line):
                    with_fp.add(function)
            # (leak-unwind's nocfi_frame_leak, in assembly, keeps one on purpose)
            self.assertLessEqual(with_fp - {'nocfi_frame_leak'}, CRT_FUNCTIONS, f'{name} sets up frame pointers')

        # leak-unwind's nocfi_leak and nocfi_frame_leak: no FDE (.eh_frame or .debug_frame) covers any byte of them
        path = os.path.join(harness.PROGRAMS_DIR, 'leak-unwind')
        nm = subprocess.run(['nm', '-S', path], capture_output=True, text=True, check=True).stdout
        sizes = {}
        for line in nm.splitlines():
            fields = line.split()
            if len(fields) == 4:
                sizes[fields[3]] = (int(fields[0], 16), int(fields[1], 16))
        frames = subprocess.run(['readelf', '--debug-dump=frames', path], capture_output=True, text=True,
                                check=True).stdout
        fdes = [(int(a, 16), int(b, 16)) for a, b in re.findall(r'FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)', frames)]

        def covered(name):
            start, size = sizes[name]
            return [f for f in fdes if f[0] < start + size and start < f[1]]

        self.assertEqual(covered('nocfi_leak'), [], 'an FDE covers the assembly function')
        self.assertEqual(covered('nocfi_frame_leak'), [], 'an FDE covers the assembly function')
        self.assertTrue(covered('main') and covered('call_nocfi'), f'the FDEs were not read: {fdes}')


if __name__ == '__main__':
    unittest.main(verbosity=2)
