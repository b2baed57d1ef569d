# SPDX-License-Identifier: MIT
"""Reachability: memleakd reads a stopped process's memory and tells the blocks nothing points to
(definitely lost), those reached only from lost blocks (indirectly lost) and the rest (still
reachable). Under memleakctl run the program is scanned at its exit; report --reachability scans
an attached one live and leaves it running. valgrind's memcheck, run on the same programs, is the
reference for every class."""

import ctypes
import json
import os
import re
import signal
import subprocess
import time
import unittest

import harness

PROGRAM = 'leak-reach'
CXX_PROGRAM = 'leak-reach-cxx'
CLASSES = ('definitely_lost', 'indirectly_lost', 'still_reachable')
# tests/programs/leak-reach.c: what each function's block is at the scan
EXPECTED = {
    'keep_in_global': {'still_reachable': (222, 1)},
    'lose_parent': {'definitely_lost': (48, 1)},
    'make_child': {'indirectly_lost': (333, 1)},
    'lose_overwritten': {'definitely_lost': (444, 1)},
    'keep_on_thread_stack': {'still_reachable': (555, 1)},
    'make_register_block': {'still_reachable': (666, 1)},
    # a pool the program mmap()ed, which the kernel merged with the mapping glibc made for the big
    # block: the pool is the program's memory (a root), the big block's chunk is not
    'keep_in_pool': {'still_reachable': (777, 1)},
    'lose_big': {'definitely_lost': (200000, 1)},
    'make_big_child': {'indirectly_lost': (888, 1)},
    # pointed to from a block allocated before an attach, which memleakd never saw: for a process
    # attached while it ran, the memory between its known blocks is read as roots
    'keep_in_early_block': {'still_reachable': (999, 1)},
}
BIG_BLOCK_NAMES = ('lose_big', 'make_big_child')
# tests/programs/leak-reach-big.c
BIG_PROGRAM = 'leak-reach-big'
BIG_KEEP_BLOCKS, BIG_KEEP_BYTES = 256 * 1024, 1024
BIG_MAX_ALLOCS = 1 << 20        # every block tracked
EXPECTED_BIG = {
    'keep_index': {'still_reachable': (BIG_KEEP_BLOCKS * 8, 1)},
    'keep_block': {'still_reachable': (BIG_KEEP_BLOCKS * BIG_KEEP_BYTES, BIG_KEEP_BLOCKS)},
    'lose_block': {'definitely_lost': (96 * 1000, 1000)},
    'make_lost_child': {'indirectly_lost': (40 * 200, 200)},
}
EXPECTED_NOT_BIG = {k: v for k, v in EXPECTED.items() if k not in BIG_BLOCK_NAMES}
# tests/programs/leak-reach-churn.c: the blocks it made before the scan (those it makes during it
# are not in the scan's copy of the table; holders it frees during it are left out)
CHURN_PROGRAM = 'leak-reach-churn'
CHURN_DATA, CHURN_HOLDERS = 100000, 20000
EXPECTED_CHURN_LOST = {
    'lose_block': {'definitely_lost': (72 * 2000, 2000)},
    'make_lost_child': {'indirectly_lost': (32 * 500, 500)},
}
EXPECTED_CHURN_KEPT = {
    'keep_table': {'still_reachable': (CHURN_HOLDERS * 8, 1)},
    'keep_data': {'still_reachable': (CHURN_DATA * 512, CHURN_DATA)},
    'keep_child': {'still_reachable': (CHURN_DATA * 32, CHURN_DATA)},
}
# tests/programs/leak-reach-stops.c: a list of blocks only a register holds, met in a last stop
STOPS_PROGRAM = 'leak-reach-stops'
STOPS_NODES = 200000
EXPECTED_STOPS = {
    'make_node': {'still_reachable': (32 * STOPS_NODES, STOPS_NODES)},
    'lose_block': {'definitely_lost': (64 * 100, 100)},
    'make_lost_child': {'indirectly_lost': (24 * 100, 100)},
}
# the pause limit the program's scans run with: the list takes many times its budget to follow
# (one read a block, at least 100 ms), the stops after it keep to it with room to spare
STOPS_MAX_PAUSE_MS = 50
STOPS_VFORK_S = 3               # how long the program's vforker waits for its child
# a pause limit shorter than a loaded machine may take to stop a running thread
SMALL_MAX_PAUSE_MS = 10
CONCURRENT_MAX_LAST_STOPS = 4
# a concurrent scan's pauses, as the daemon measures them (its two short stops), and the longest
# stall the program's own thread saw, generous on a loaded 2-core machine (bench/ has the figure)
CONCURRENT_MAX_PAUSE_MS = 50
CONCURRENT_MAX_STALL_US = 200000
# tests/programs/leak-reach-cxx.cpp
EXPECTED_CXX = {
    'lose_ints()': {'definitely_lost': (80, 2)},
    'lose_string()': {'definitely_lost': (64, 1)},
}
LIBSTDCXX_EMERGENCY_POOL = 72704        # libstdc++'s eh_alloc.cc pool, allocated at start-up
VALGRIND_TIMEOUT_S = 120


def program(name):
    return os.path.join(harness.PROGRAMS_DIR, name)


def classes_by_first_frame(report, names=None):
    """{first frame's symbol: {class: (bytes, allocs)}} over the report's scanned stacks, the
    classes with no block left out."""
    found = {}
    for stack in report['stacks']:
        if not stack['frames'] or (names is not None and stack['frames'][0].get('symbol') not in names):
            continue
        reach = stack['reachability']
        if reach is None:
            raise AssertionError(f'a stack without reachability in a scanned report: {stack}')
        per_class = found.setdefault(stack['frames'][0].get('symbol'), {})
        for c in CLASSES:
            if reach[c]['allocs']:
                b, n = per_class.get(c, (0, 0))
                per_class[c] = (b + reach[c]['bytes'], n + reach[c]['allocs'])
    return found


def lost_by_first_frame(report):
    """{first frame's symbol: {class: (bytes, allocs)}} of the lost classes over every scanned
    stack: where an unexpected lost block came from."""
    found = {}
    for stack in report['stacks']:
        reach = stack['reachability']
        if not stack['frames'] or reach is None:
            continue
        for c in ('definitely_lost', 'indirectly_lost'):
            if reach[c]['allocs']:
                per_class = found.setdefault(stack['frames'][0].get('symbol'), {})
                b, n = per_class.get(c, (0, 0))
                per_class[c] = (b + reach[c]['bytes'], n + reach[c]['allocs'])
    return found


VALGRIND_RECORD = re.compile(r'==\d+== ([\d,]+)(?: \(([\d,]+) direct, [\d,]+ indirect\))? bytes in ([\d,]+) '
                             r'blocks are (definitely lost|indirectly lost|possibly lost|still reachable) '
                             r'in loss record')
VALGRIND_FRAME = re.compile(r'==\d+==    (?:at|by) 0x[0-9A-Fa-f]+: (.*) \([^()]*\)$')
# memcheck's "possibly lost" is a block reached only through a pointer into its middle (glibc's
# dtv, pointed to one slot in); LeakSanitizer's rule, which memleakd follows, counts it reachable.
VALGRIND_CLASS = {'definitely lost': 'definitely_lost', 'indirectly lost': 'indirectly_lost',
                  'possibly lost': 'still_reachable', 'still reachable': 'still_reachable'}


def valgrind_classes(log):
    """Parse memcheck's loss records: {first frame above the allocator: {class: (bytes, blocks)}}
    (a definitely lost block's own bytes, its indirect ones being records of their own)."""
    found = {}
    lines = log.splitlines()
    for i, line in enumerate(lines):
        m = VALGRIND_RECORD.match(line)
        if not m:
            continue
        size = int((m.group(2) or m.group(1)).replace(',', ''))
        blocks = int(m.group(3).replace(',', ''))
        frames = [f.group(1) for f in map(VALGRIND_FRAME.match, lines[i + 1:i + 4]) if f]
        if len(frames) < 2:
            raise AssertionError(f'valgrind loss record without a caller:\n' + '\n'.join(lines[i:i + 4]))
        per_class = found.setdefault(frames[1], {})
        c = VALGRIND_CLASS[m.group(4)]
        b, n = per_class.get(c, (0, 0))
        per_class[c] = (b + size, n + blocks)
    return found


def run_valgrind(workdir, cmd, stdin=b''):
    log = os.path.join(workdir, 'valgrind.log')
    r = subprocess.run(['valgrind', '--leak-check=full', '--show-leak-kinds=all',
                        '--soname-synonyms=somalloc=*tcmalloc*', f'--log-file={log}'] + cmd,
                       input=stdin, capture_output=True, timeout=VALGRIND_TIMEOUT_S)
    with open(log) as f:
        text = f.read()
    if r.returncode != 0 or 'LEAK SUMMARY' not in text:
        raise AssertionError(f'valgrind {cmd} failed with status {r.returncode}:\n{text}')
    return text


class ReachabilityTest(harness.DaemonTestCase):

    def assert_classes(self, report, expected, what):
        found = classes_by_first_frame(report, set(expected) | {'free_block'})
        self.assertEqual(found, expected, f'{what}:\n{harness.format_stacks(report)}')

    def assert_lost_first(self, report):
        """The stacks holding lost blocks lead the report, most lost bytes first."""
        lost = [s['reachability']['definitely_lost']['bytes'] + s['reachability']['indirectly_lost']['bytes']
                for s in report['stacks']]
        self.assertEqual(lost, sorted(lost, reverse=True), harness.format_stacks(report))

    def test_run_scans_at_exit_and_agrees_with_valgrind(self):
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000})
        r, report = self.run_json(daemon, program(PROGRAM), 'exit', input=b'go\n')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b'ready\nmade\n')
        [target] = report['targets']
        reach = target['reachability']
        self.assertIsNotNone(reach, target)
        self.assertIsNone(reach['error'], reach)
        self.assertTrue(reach['at_exit'], reach)
        # the main thread and the two blocked ones, all stopped at their exit
        self.assertEqual(reach['threads'], 3, reach)
        self.assertGreater(reach['bytes_scanned'], 0, reach)
        self.assertEqual((reach['bytes_unreadable'], reach['blocks_overlapping']), (0, 0), reach)
        self.assert_classes(report, EXPECTED, 'leak-reach scanned at its exit')
        self.assert_lost_first(report)
        self.assertEqual(report['stacks'][0]['frames'][0]['symbol'], 'lose_big')
        # the target's totals are the sums over its stacks, and cover every outstanding block
        for c in CLASSES:
            self.assertEqual(reach[c]['bytes'], sum(s['reachability'][c]['bytes'] for s in report['stacks']), c)
        self.assertEqual(sum(reach[c]['bytes'] for c in CLASSES), target['outstanding_bytes'], reach)

        # valgrind's memcheck on the same program: every loss record, each class the same. Not the
        # big block and its child: under valgrind it is an ordinary heap block, and once in a full
        # test run valgrind found it still reachable (a stale copy of its address somewhere), which
        # says nothing of memleakd's rule for merged mappings that the block is there to test.
        reference = valgrind_classes(run_valgrind(self.workdir, [program(PROGRAM), 'exit'], b'go\n'))
        for name in BIG_BLOCK_NAMES:
            reference.pop(name, None)
        self.assertEqual({k: v for k, v in reference.items() if k in EXPECTED}, EXPECTED_NOT_BIG, reference)
        self.assertEqual(classes_by_first_frame(report, set(reference)), reference,
                         harness.format_stacks(report))

        # the text report leads with the lost blocks, each class spelt out
        r = self.run_ctl(daemon.socket_path, '--top', '20', '--', program(PROGRAM), 'exit', input=b'go\n')
        self.assertEqual(r.returncode, 0, r.stderr)
        text = r.stderr.decode()
        self.assertRegex(text, r'Reachability \(scanned at its exit, 3 threads stopped for [\d.]+ ms, '
                               r'[\d.]+ MiB read at \d+ MiB/s\): definitely lost: 200492 bytes in 3 blocks, indirectly lost: '
                               r'1221 bytes in 2 blocks, still reachable: \d+ bytes in \d+ blocks')
        self.assertIn('definitely lost: 444 bytes in 1 block', text)
        self.assertLess(text.index('lose_overwritten'), text.index('keep_in_global'), text)

    def test_cxx_on_tcmalloc_leads_with_its_leaks_and_keeps_runtime_buffers_reachable(self):
        daemon = self.start_daemon()
        r, report = self.run_json(daemon, program(CXX_PROGRAM))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, b'hello from C++\n')
        self.assertIsNone(report['targets'][0]['reachability']['error'], report['targets'])
        self.assert_lost_first(report)
        leading = [s['frames'][0]['symbol'] for s in report['stacks'][:2]]
        self.assertEqual(sorted(leading), sorted(EXPECTED_CXX), harness.format_stacks(report))
        self.assertEqual(classes_by_first_frame(report, set(EXPECTED_CXX)), EXPECTED_CXX)
        # what libstdc++ and stdio allocate for good: still reachable, not leaks
        pool = [s for s in report['stacks'] if s['bytes'] == LIBSTDCXX_EMERGENCY_POOL
                and any('libstdc++' in (f.get('module') or '') for f in s['frames'])]
        stdio = [s for s in report['stacks'] if any(f.get('symbol') == '_IO_file_doallocate' for f in s['frames'])]
        for what, stacks in (('the emergency exception pool', pool), ('stdout\'s buffer', stdio)):
            self.assertEqual(len(stacks), 1, f'{what}:\n{harness.format_stacks(report)}')
            self.assertEqual(stacks[0]['reachability']['still_reachable']['bytes'], stacks[0]['bytes'], what)
        # valgrind (tcmalloc's allocator replaced by its own) agrees on every record it shows;
        # it frees libstdc++'s pool and stdio's buffers at exit (__libc_freeres), so lists neither
        reference = valgrind_classes(run_valgrind(self.workdir, [program(CXX_PROGRAM)]))
        self.assertEqual({k: v for k, v in reference.items() if k in EXPECTED_CXX}, EXPECTED_CXX, reference)
        self.assertEqual(classes_by_first_frame(report, set(reference)), reference,
                         harness.format_stacks(report))

    def start_reach_program(self, daemon):
        p = self.start_program(PROGRAM)
        daemon.attach(p.pid)
        p.go()
        p.expect('made')
        return p

    def assert_alive(self, p):
        p.proc.stdin.write(b'still there?\n')
        p.proc.stdin.flush()
        p.expect('alive')

    def test_report_reachability_scans_a_live_process_that_runs_on(self):
        daemon = self.start_daemon(config={'snapshot_interval_ms': 200})
        p = self.start_reach_program(daemon)
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        [target] = report['targets']
        reach = target['reachability']
        self.assertIsNone(reach['error'], reach)
        self.assertFalse(reach['at_exit'], reach)
        self.assertEqual(reach['threads'], 3, reach)
        self.assertGreater(reach['paused_ms'], 0, reach)
        self.assertLess(reach['paused_ms'], 5000, reach)
        self.assert_classes(report, EXPECTED, 'leak-reach scanned live')
        self.assert_lost_first(report)
        # it runs on, and answers again
        self.assert_alive(p)
        self.assertIsNone(p.proc.poll())
        with open(f'/proc/{p.pid}/status') as f:
            self.assertIn('TracerPid:\t0\n', f.read())
        # a scan again gives the same answer: nothing moved
        again = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        self.assert_classes(again, EXPECTED, 'leak-reach scanned live, twice')
        self.assert_alive(p)
        # without --reachability: no scan, no classes
        plain = daemon.report(pid=p.pid)
        self.assertIsNone(plain['targets'][0]['reachability'])
        self.assertTrue(all(s['reachability'] is None for s in plain['stacks']))

        text = daemon.ctl_ok('report', '--pid', p.pid, '--reachability').stdout
        self.assertRegex(text, r'Reachability \(scanned live, 3 threads stopped for [\d.]+ ms')
        self.assertIn('definitely lost: 444 bytes in 1 block', text)

        # leaks: both kinds of evidence; the definitely lost stacks are the suspects, worst first
        leaks = daemon.ctl_json('leaks', '--pid', p.pid, '--reachability')
        names = [s['frames'][0]['symbol'] for s in leaks['suspects']]
        self.assertEqual(names, ['lose_big', 'lose_overwritten', 'lose_parent'], leaks)
        first = leaks['suspects'][0]
        self.assertEqual(first['reachability']['definitely_lost'], {'bytes': 200000, 'allocs': 1}, first)
        text = daemon.ctl_ok('leaks', '--pid', p.pid, '--reachability').stdout
        self.assertIn('lose_overwritten', text)
        self.assertNotIn('keep_in_global', text)
        self.assert_alive(p)
        self.assertEqual(p.finish(), 0)

    def test_a_process_another_tracer_holds_is_not_scanned_and_says_why(self):
        daemon = self.start_daemon()
        p = self.start_reach_program(daemon)
        # a debugger of its own: seize it from a child that holds it until told to stop
        holder = subprocess.Popen(['python3', '-c', SEIZE_AND_HOLD, str(p.pid)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.addCleanup(lambda: holder.poll() is None and holder.kill())
        self.assertEqual(holder.stdout.readline(), b'seized\n')
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability')
        reach = report['targets'][0]['reachability']
        self.assertRegex(reach['error'] or '', rf'traced by pid {holder.pid}', reach)
        self.assertTrue(all(s['reachability'] is None for s in report['stacks']), report['stacks'])
        # the rows are there all the same
        self.assertEqual(report['targets'][0]['outstanding_bytes'],
                         222 + 48 + 333 + 444 + 555 + 666 + 777 + 200000 + 888 + 999 + 2 * 272)
        holder.stdin.close()
        holder.wait(10)
        self.assert_alive(p)
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        self.assert_classes(report, EXPECTED, 'leak-reach scanned once its debugger let go')

    def test_a_snapshot_scan_is_not_bound_by_the_pause_limit(self):
        # 256 MiB to read, a pause limit of 10 ms: the process is stopped only while its copy is
        # made, and the copy is scanned whole
        daemon = self.start_daemon(config={'reachability_max_pause_ms': 10, 'reachability_concurrent': 0})
        p = harness.LeakProgram(PROGRAM, command=[program(PROGRAM), 'big'])
        self.addCleanup(p.kill)
        p.expect('ready')
        daemon.attach(p.pid)
        p.go()
        p.expect('made')
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        reach = report['targets'][0]['reachability']
        self.assertEqual((reach['method'], reach['error'], reach['partial']), ('snapshot', None, None), reach)
        self.assertGreater(reach['bytes_scanned'], 256 << 20, reach)
        self.assert_classes(report, EXPECTED, 'leak-reach big, scanned from a snapshot')
        self.assert_alive(p)

    def big_program(self, daemon, *args, attach_options=()):
        p = harness.LeakProgram(BIG_PROGRAM, command=[program(BIG_PROGRAM), *args])
        self.addCleanup(p.kill)
        p.expect('ready')
        daemon.attach(p.pid, *attach_options)
        p.go()
        p.expect('made', timeout=120)
        return p

    def copies_of(self, pid):
        """The children of pid (the copies snapshots made): {pid: state letter}."""
        found = {}
        for tid in os.listdir(f'/proc/{pid}/task'):
            with open(f'/proc/{pid}/task/{tid}/children') as f:
                for child in f.read().split():
                    try:
                        with open(f'/proc/{child}/stat') as st:
                            found[int(child)] = st.read().rsplit(')', 1)[1].split()[0]
                    except FileNotFoundError:
                        pass
        return found

    def test_a_big_heap_is_scanned_from_a_snapshot_and_classified_exactly(self):
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS,
                                           'reachability_concurrent': 0})
        # its forks followed: the copy a snapshot makes is not one of them
        p = self.big_program(daemon, attach_options=('--follow-forks',))
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        [target] = report['targets']
        reach = target['reachability']
        self.assertEqual((reach['method'], reach['error'], reach['partial'], reach['no_snapshot']),
                         ('snapshot', None, None, None), reach)
        self.assertEqual(reach['no_concurrent'], 'turned off (reachability_concurrent in memleakd.conf)', reach)
        self.assertEqual(reach['threads'], 2, reach)
        self.assertEqual((reach['bytes_unreadable'], reach['blocks_unreadable'], reach['blocks_overlapping'],
                          reach['blocks_after_snapshot']), (0, 0, 0, 0), reach)
        self.assertGreater(reach['scan_mib_per_s'], 0, reach)
        self.assertGreaterEqual(reach['bytes_scanned'], BIG_KEEP_BLOCKS * BIG_KEEP_BYTES, reach)
        self.assertEqual(classes_by_first_frame(report, set(EXPECTED_BIG)), EXPECTED_BIG,
                         harness.format_stacks(report))
        for c, (b, n) in (('definitely_lost', EXPECTED_BIG['lose_block']['definitely_lost']),
                          ('indirectly_lost', EXPECTED_BIG['make_lost_child']['indirectly_lost'])):
            self.assertEqual((reach[c]['bytes'], reach[c]['allocs']), (b, n), reach)
        self.assertEqual(reach['undecided'], {'bytes': 0, 'allocs': 0}, reach)
        # the copy is gone, the program made to wait for it (no zombie left to it); the program
        # runs on, untraced, and the daemon counted no child of it
        self.assertTrue(reach['copy_reaped'], reach)
        self.assertEqual(self.copies_of(p.pid), {})
        self.assert_alive(p)
        with open(f'/proc/{p.pid}/status') as f:
            self.assertIn('TracerPid:\t0\n', f.read())
        [listed] = daemon.status()['targets']
        self.assertEqual((listed['pid'], listed['follow_forks'], listed['children_forked'], listed['children_followed']),
                         (p.pid, True, 0, 0), listed)
        # and again: the same classes
        again = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        self.assertEqual(classes_by_first_frame(again, set(EXPECTED_BIG)), EXPECTED_BIG)
        text = daemon.ctl_ok('report', '--pid', p.pid, '--reachability').stdout
        self.assertRegex(text, r'Reachability \(scanned live, 2 threads stopped for [\d.]+ ms, [\d.]+ MiB read '
                               r'at \d+ MiB/s, from a snapshot\): definitely lost: 96000 bytes in 1000 blocks, '
                               r'indirectly lost: 8000 bytes in 200 blocks, still reachable: ')
        self.assert_alive(p)

    def stall_us(self, p):
        p.proc.stdin.write(b'stall\n')
        p.proc.stdin.flush()
        line = p.proc.stdout.readline().decode().split()
        self.assertEqual(line[0], 'stall', line)
        return int(line[1])

    def assert_nothing_left_in(self, pid):
        """No userfaultfd of ours left in the process, no page of it write-protected, no tracer."""
        for fd in os.listdir(f'/proc/{pid}/fd'):
            try:
                self.assertNotIn('userfaultfd', os.readlink(f'/proc/{pid}/fd/{fd}'))
            except FileNotFoundError:
                pass
        with open(f'/proc/{pid}/smaps') as f:
            flags = [line.split()[1:] for line in f if line.startswith('VmFlags:')]
        self.assertFalse([f for f in flags if 'uw' in f], flags)
        with open(f'/proc/{pid}/status') as f:
            self.assertIn('TracerPid:\t0\n', f.read())

    def assert_concurrent(self, reach):
        """The scan was concurrent: where memleakd may take the userfaultfd it made the process
        create, and where it may not (a container's seccomp refuses pidfd_getfd: CI's
        systemd-nspawn, harness.under_no_take_fds) and holds it in the process."""
        self.assertEqual((reach['method'], reach['no_concurrent']), ('concurrent', None), reach)

    def test_a_big_heap_is_scanned_concurrently_with_short_pauses(self):
        # the test: 256 MiB of reachable blocks, 1,000 definitely lost ones; the process is
        # read while it runs, stopped briefly, and every class is exact
        self.check_big_heap_scanned_concurrently(held=not harness.CAN_TAKE_FDS)

    def test_a_big_heap_is_scanned_concurrently_where_memleakd_may_not_take_fds(self):
        # in a container whose seccomp filter refuses pidfd_getfd to memleakd (systemd-nspawn's):
        # the userfaultfd stays in the process, its ioctls and its close made by one of its
        # threads in the stops; the same exact classes, short pauses, nothing left after
        self.check_big_heap_scanned_concurrently(held=True, command=harness.under_no_take_fds)

    def check_big_heap_scanned_concurrently(self, held, **daemon_options):
        """held: memleakd may not take the userfaultfd. Its close is then made in the process, in
        stops of about 10 ms each (unregistering 256 MiB takes some 11 ms), each with the cost of
        stopping and letting go the threads (large under ASan on a loaded machine: 166 ms in all
        once at load 8): every stop stays short, their sum is bounded more loosely."""
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS},
                                   **daemon_options)
        p = self.big_program(daemon)
        self.stall_us(p)        # from here on
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        stall = self.stall_us(p)
        [target] = report['targets']
        reach = target['reachability']
        self.assertEqual((reach['error'], reach['partial'], reach['no_snapshot']), (None, None, None), reach)
        self.assert_concurrent(reach)
        self.assertEqual(classes_by_first_frame(report, set(EXPECTED_BIG)), EXPECTED_BIG,
                         harness.format_stacks(report))
        for c, (b, n) in (('definitely_lost', EXPECTED_BIG['lose_block']['definitely_lost']),
                          ('indirectly_lost', EXPECTED_BIG['make_lost_child']['indirectly_lost'])):
            self.assertEqual((reach[c]['bytes'], reach[c]['allocs']), (b, n), reach)
        self.assertEqual(reach['undecided'], {'bytes': 0, 'allocs': 0}, reach)
        self.assertEqual(reach['threads'], 2, reach)
        self.assertGreaterEqual(reach['bytes_scanned'], BIG_KEEP_BLOCKS * BIG_KEEP_BYTES, reach)
        self.assertGreater(reach['paused_ms'], 0, reach)
        self.assertLess(reach['longest_pause_ms'], CONCURRENT_MAX_PAUSE_MS, reach)
        self.assertLess(reach['paused_ms'], CONCURRENT_MAX_PAUSE_MS * (5 if held else 1), reach)
        self.assertLess(stall, CONCURRENT_MAX_STALL_US, reach)
        self.assert_nothing_left_in(p.pid)
        self.assertEqual(self.copies_of(p.pid), {})
        self.assertIsNone(reach['copy_reaped'], reach)
        self.assertGreaterEqual(reach['rounds'], 2, reach)
        text = daemon.ctl_ok('report', '--pid', p.pid, '--reachability').stdout
        self.assertRegex(text, r'Reachability \(scanned live, 2 threads stopped for [\d.]+ ms, [\d.]+ MiB read '
                               r'at \d+ MiB/s, concurrently: \d+ passes over [\d.]+ MiB written meanwhile\): '
                               r'definitely lost: 96000 bytes in 1000 blocks, indirectly lost: 8000 bytes in 200 '
                               r'blocks, still reachable: ')
        self.assert_alive(p)

    def test_a_concurrent_scan_of_a_process_that_moves_its_pointers_calls_no_reachable_block_lost(self):
        # it moves pointers between holders, replaces holders, maps and unmaps memory all along
        # the scan: every block it holds is still reachable, the lost ones exactly those it lost
        self.check_churn_scanned_concurrently(attempts=2)

    def test_a_concurrent_scan_holding_its_userfaultfd_in_a_process_that_maps_memory_all_along(self):
        # the same where memleakd may not take the userfaultfd (a container's): each mapping made
        # during the scan is registered by one of the process's threads in a short stop
        self.check_churn_scanned_concurrently(attempts=1, command=harness.under_no_take_fds)

    def check_churn_scanned_concurrently(self, attempts, **daemon_options):
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS},
                                   **daemon_options)
        for attempt in range(attempts):
            p = harness.LeakProgram(CHURN_PROGRAM, command=[program(CHURN_PROGRAM)])
            self.addCleanup(p.kill)
            p.expect('ready')
            daemon.attach(p.pid)
            p.go()
            p.expect('made', timeout=120)
            report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
            reach = report['targets'][0]['reachability']
            self.assertEqual((reach['error'], reach['partial']), (None, None), reach)
            self.assert_concurrent(reach)
            self.assertGreater(reach['written_bytes'], 0, reach)
            # the holders it freed during the scan are left out, not called lost
            self.assertGreater(reach['blocks_freed'], 0, reach)
            found = classes_by_first_frame(report, set(EXPECTED_CHURN_LOST) | set(EXPECTED_CHURN_KEPT)
                                           | {'make_holder'})
            holders = found.pop('make_holder', {'still_reachable': None})
            self.assertEqual(set(holders), {'still_reachable'}, holders)
            self.assertEqual(found, {**EXPECTED_CHURN_LOST, **EXPECTED_CHURN_KEPT}, harness.format_stacks(report))
            self.assertEqual((reach['definitely_lost']['allocs'], reach['indirectly_lost']['allocs'],
                              reach['undecided']['allocs']), (2000, 500, 0),
                             (reach, lost_by_first_frame(report)))
            self.assert_nothing_left_in(p.pid)
            self.assert_alive(p)
            p.kill()

    def stops_program(self, daemon):
        p = harness.LeakProgram(STOPS_PROGRAM, command=[program(STOPS_PROGRAM)])
        self.addCleanup(p.kill)
        p.expect('ready')
        daemon.attach(p.pid)
        p.go()
        p.expect('made', timeout=120)
        return p

    def assert_exact_stops_classes(self, report):
        reach = report['targets'][0]['reachability']
        self.assertEqual(classes_by_first_frame(report, set(EXPECTED_STOPS)), EXPECTED_STOPS,
                         harness.format_stacks(report))
        self.assertEqual((reach['definitely_lost']['allocs'], reach['indirectly_lost']['allocs'],
                          reach['undecided']['allocs']), (100, 100, 0), (reach, lost_by_first_frame(report)))

    def test_a_last_stop_past_its_budget_lets_the_process_go_and_stops_again(self):
        # the program's 200,000-block list is held by a register only: a concurrent scan meets it
        # in its first last stop, which cannot follow it within its budget (one read a block); it
        # lets the process go with the list's walk kept, the walk ends while the process runs, and
        # a later stop, with nothing left to follow, gives the whole verdict
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS,
                                           'reachability_concurrent_max_stop_ms': STOPS_MAX_PAUSE_MS})
        p = self.stops_program(daemon)
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        reach = report['targets'][0]['reachability']
        self.assertEqual((reach['error'], reach['partial']), (None, None), reach)
        self.assert_concurrent(reach)
        self.assertGreaterEqual(reach['last_stops'], 2, reach)
        self.assertLessEqual(reach['last_stops'], CONCURRENT_MAX_LAST_STOPS, reach)
        self.assertEqual(reach['threads'], 3, reach)
        self.assert_exact_stops_classes(report)
        self.assert_nothing_left_in(p.pid)
        self.assert_alive(p)

    def test_a_thread_that_does_not_stop_in_time_is_let_go(self):
        # a thread waiting for its vfork child is in the kernel, where a stop does not reach it:
        # the scan gives up at its limit and says so; the thread, asked to stop, would stop on its
        # way back (ptrace cannot let go of a thread before it stops): it must not stay stopped,
        # and the program must run on and be scanned again
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS,
                                           'reachability_concurrent_max_stop_ms': STOPS_MAX_PAUSE_MS})
        p = self.stops_program(daemon)
        p.proc.stdin.write(b'vfork\n')
        p.proc.stdin.flush()
        p.expect('vforking')
        self.assertTrue(harness.wait_until(lambda: 'D' in self.thread_states(p.pid).values(), 10, interval=0.01),
                        self.thread_states(p.pid))
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability')
        reach = report['targets'][0]['reachability']
        self.assertRegex(reach['error'] or '', rf'^cannot stop pid {p.pid}: thread \d+ of pid {p.pid} did not stop '
                                               r'in time \(state D', reach)
        self.assertTrue(all(s['reachability'] is None for s in report['stacks']), report['stacks'])
        # its child gone, the vforker is back and says so: not stopped, not traced
        p.expect('back', timeout=STOPS_VFORK_S + 30)
        self.assert_alive(p)
        self.assertEqual(self.tracers(p.pid), {0})
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        self.assertEqual((report['targets'][0]['reachability']['error'],
                          report['targets'][0]['reachability']['partial']), (None, None), report['targets'])
        self.assert_exact_stops_classes(report)
        self.assert_nothing_left_in(p.pid)
        self.assert_alive(p)

    def thread_states(self, pid):
        """{tid: state letter} of pid's threads."""
        found = {}
        for tid in os.listdir(f'/proc/{pid}/task'):
            try:
                with open(f'/proc/{pid}/task/{tid}/stat') as f:
                    found[int(tid)] = f.read().rsplit(')', 1)[1].split()[0]
            except FileNotFoundError:
                pass
        return found

    def tracers(self, pid):
        """The TracerPid of each of pid's threads."""
        found = set()
        for tid in os.listdir(f'/proc/{pid}/task'):
            with open(f'/proc/{pid}/task/{tid}/status') as f:
                found |= {int(line.split()[1]) for line in f if line.startswith('TracerPid:')}
        return found

    def test_a_churning_process_under_a_small_pause_limit_gets_an_answer(self):
        # a pause limit a loaded machine may not even stop the process within: whatever the
        # timing, the scan answers, lets the process go, and calls nothing reachable lost
        self.check_small_pause_limit()

    def test_a_small_pause_limit_leaves_no_userfaultfd_where_memleakd_may_not_take_fds(self):
        # the userfaultfd held in the process (CI's systemd-nspawn): closed there even when the
        # first stops for it fail
        self.check_small_pause_limit(command=harness.under_no_take_fds)

    def check_small_pause_limit(self, **daemon_options):
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS,
                                           'reachability_concurrent_max_stop_ms': SMALL_MAX_PAUSE_MS},
                                   **daemon_options)
        p = harness.LeakProgram(CHURN_PROGRAM, command=[program(CHURN_PROGRAM)])
        self.addCleanup(p.kill)
        p.expect('ready')
        daemon.attach(p.pid)
        p.go()
        p.expect('made', timeout=120)
        for attempt in range(2):
            report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
            reach = report['targets'][0]['reachability']
            if reach['error'] is not None:
                # the only failure a busy machine may cause: a thread not run in time to stop
                self.assertRegex(reach['error'], rf"^cannot stop pid {p.pid}( for the scan's last pass)?: thread "
                                                 rf'\d+ of pid {p.pid} did not stop in time', reach)
            else:
                self.assert_concurrent(reach)
                self.assertGreaterEqual(reach['last_stops'], 1, reach)
                self.assertLessEqual(reach['last_stops'], CONCURRENT_MAX_LAST_STOPS, reach)
            if reach['error'] is None and reach['partial'] is None:
                found = classes_by_first_frame(report, set(EXPECTED_CHURN_LOST) | set(EXPECTED_CHURN_KEPT))
                self.assertEqual(found, {**EXPECTED_CHURN_LOST, **EXPECTED_CHURN_KEPT}, harness.format_stacks(report))
                self.assertEqual((reach['definitely_lost']['allocs'], reach['indirectly_lost']['allocs'],
                                  reach['undecided']['allocs']), (2000, 500, 0), (reach, lost_by_first_frame(report)))
            elif reach['error'] is None:
                # partial: cut at its last stop, which it names; nothing called lost
                self.assertRegex(reach['partial'], rf'\b{reach["last_stops"]} last stops? with the process '
                                                   r'stopped', reach)
                self.assertEqual(reach['definitely_lost']['allocs'] + reach['indirectly_lost']['allocs'], 0, reach)
            # let go every time: no tracer, nothing of the scan left, and it runs on
            self.assert_nothing_left_in(p.pid)
            self.assertEqual(self.tracers(p.pid), {0})
            self.assert_alive(p)

    def test_a_process_that_uses_userfaultfd_itself_is_snapshot_and_says_why(self):
        self.check_own_userfaultfd_snapshot()

    def test_a_process_that_uses_userfaultfd_itself_is_snapshot_where_memleakd_may_not_take_fds(self):
        # the registration its thread makes fails (EBUSY): ours closed there, in the same stop
        self.check_own_userfaultfd_snapshot(command=harness.under_no_take_fds)

    def check_own_userfaultfd_snapshot(self, **daemon_options):
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS},
                                   **daemon_options)
        p = self.big_program(daemon, 'uffd')
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        reach = report['targets'][0]['reachability']
        self.assertEqual((reach['method'], reach['error'], reach['partial'], reach['rounds']),
                         ('snapshot', None, None, None), reach)
        self.assertRegex(reach['no_concurrent'] or '', rf'^pid {p.pid} uses userfaultfd itself \(on its mapping '
                                                       r'at 0x[0-9a-f]+\)$', reach)
        self.assertEqual(classes_by_first_frame(report, set(EXPECTED_BIG)), EXPECTED_BIG,
                         harness.format_stacks(report))
        # its own userfaultfd is still there, ours is not; none of its pages write-protected
        fds = [os.readlink(f'/proc/{p.pid}/fd/{fd}') for fd in os.listdir(f'/proc/{p.pid}/fd')]
        self.assertEqual(len([f for f in fds if 'userfaultfd' in f]), 1, fds)
        with open(f'/proc/{p.pid}/smaps') as f:
            self.assertNotIn(' uw', ''.join(line for line in f if line.startswith('VmFlags:')))
        self.assert_alive(p)

    def watched(self, pid):
        with open(f'/proc/{pid}/smaps') as f:
            return any(line.startswith('VmFlags:') and ' uw' in line for line in f)

    def test_a_process_that_exits_during_a_concurrent_scan(self):
        # the scan reads 256 MiB while it runs; the program is killed right after the first stop:
        # the scan says it could not end, and the daemon serves the next request
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS})
        p = self.big_program(daemon)
        scan = subprocess.Popen([harness.MEMLEAKCTL, '--socket', daemon.socket_path, 'report', '--json', '--pid',
                                 str(p.pid), '--reachability'], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        self.addCleanup(lambda: scan.poll() is None and scan.kill())
        # its memory watched (write-protect): past the first stop, the mark runs
        self.assertTrue(harness.wait_until(lambda: self.watched(p.pid), 10, interval=0.01))
        time.sleep(0.3)         # its blocks read from BPF meanwhile (most often)
        os.kill(p.pid, signal.SIGKILL)
        p.proc.wait(10)
        out, err = scan.communicate(timeout=60)
        self.assertEqual(scan.returncode, 0, err)
        reach = harness.load_json(out)['targets'][0]['reachability']
        self.assertEqual(reach['method'], 'concurrent', reach)
        # no verdict, and why: it could not be read, or stopped for the last pass
        self.assertRegex(reach['error'] or '', rf'pid {p.pid}', reach)
        self.assertEqual(len(daemon.status()['targets']), 1)
        # the daemon goes on: another program is scanned
        q = self.start_reach_program(daemon)
        report = daemon.ctl_json('report', '--pid', q.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        self.assert_classes(report, EXPECTED, 'leak-reach scanned after another target died mid-scan')

    def test_a_process_that_replaces_the_userfaultfd_it_holds_keeps_what_it_put_there(self):
        # memleakd may not take the userfaultfd (a container's): it stays in the process, which
        # puts /dev/null under its number during the scan, as a program closing its descriptors
        # and opening others does. memleakd sees that the number names another file: it makes no
        # call on it (nor closes it), and says why the scan could not end
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS},
                                   command=harness.under_no_take_fds)
        p = self.big_program(daemon)
        scan = subprocess.Popen([harness.MEMLEAKCTL, '--socket', daemon.socket_path, 'report', '--json', '--pid',
                                 str(p.pid), '--reachability'], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        self.addCleanup(lambda: scan.poll() is None and scan.kill())
        self.assertTrue(harness.wait_until(lambda: self.watched(p.pid), 10, interval=0.01))
        p.proc.stdin.write(b'replace-uffd\n')
        p.proc.stdin.flush()
        word, fd = p.line('replaced FD').split()
        self.assertEqual(word, 'replaced')
        self.assertGreaterEqual(int(fd), 0)
        out, err = scan.communicate(timeout=120)
        self.assertEqual(scan.returncode, 0, err)
        reach = harness.load_json(out)['targets'][0]['reachability']
        self.assertEqual(reach['method'], 'concurrent', reach)
        self.assertEqual(reach['error'], f'pid {p.pid} closed the userfaultfd the scan had it make (held there: '
                                         'memleakd may not take it)', reach)
        self.assertEqual(os.readlink(f'/proc/{p.pid}/fd/{fd}'), '/dev/null')
        self.assert_nothing_left_in(p.pid)
        self.assert_alive(p)
        # and the next scan is whole
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        self.assert_concurrent(report['targets'][0]['reachability'])
        self.assertEqual(classes_by_first_frame(report, set(EXPECTED_BIG)), EXPECTED_BIG,
                         harness.format_stacks(report))
        self.assertEqual(os.readlink(f'/proc/{p.pid}/fd/{fd}'), '/dev/null')
        self.assert_nothing_left_in(p.pid)

    def daemon_under_seccomp(self, daemon):
        """Whether memleakd itself runs under seccomp (a container's filter: CI's systemd-nspawn):
        then the kernel shows it no process's filters."""
        with open(f'/proc/{daemon.proc.pid}/status') as f:
            return 'Seccomp:\t0\n' not in f.read()

    def assert_filters_unreadable(self, reach):
        # under a container's seccomp, a process with a filter beyond those everyone there
        # inherits: neither kind of snapshot is tried, it is stopped for the scan and says why
        self.assertEqual(reach['method'], 'stopped', reach)
        self.assertRegex(reach['no_concurrent'] or '', r'its filters cannot be read', reach)
        self.assertRegex(reach['no_snapshot'] or '', r'its filters cannot be read', reach)

    def test_a_process_under_a_seccomp_filter_that_lets_clone_through_is_snapshot(self):
        # a service under SystemCallFilter=, or any process in a systemd-nspawn container, runs
        # under a seccomp filter: memleakd has the kernel try the filter on a clone (a probe of its
        # own that installs it), and makes the copy when it goes through
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS,
                                           'reachability_concurrent': 0})
        p = self.big_program(daemon, 'filtered')
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        reach = report['targets'][0]['reachability']
        if self.daemon_under_seccomp(daemon):
            self.assertEqual(reach['method'], 'stopped', reach)
            self.assertRegex(reach['no_snapshot'] or '', r'its filters cannot be read', reach)
        else:
            self.assertEqual((reach['method'], reach['error'], reach['partial'], reach['no_snapshot']),
                             ('snapshot', None, None, None), reach)
            self.assertEqual(classes_by_first_frame(report, set(EXPECTED_BIG)), EXPECTED_BIG,
                             harness.format_stacks(report))
        self.assertEqual(self.copies_of(p.pid), {})
        self.assert_alive(p)

    def test_a_process_under_a_seccomp_filter_that_lets_userfaultfd_through_is_scanned_concurrently(self):
        # the same probe asks the filter about userfaultfd: let through, the scan is concurrent
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS})
        p = self.big_program(daemon, 'filtered')
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        reach = report['targets'][0]['reachability']
        if self.daemon_under_seccomp(daemon):
            self.assert_filters_unreadable(reach)
        else:
            self.assertEqual((reach['error'], reach['partial']), (None, None), reach)
            self.assert_concurrent(reach)
            self.assertEqual(classes_by_first_frame(report, set(EXPECTED_BIG)), EXPECTED_BIG,
                             harness.format_stacks(report))
        self.assert_nothing_left_in(p.pid)
        self.assert_alive(p)

    def test_a_process_whose_filter_refuses_userfaultfd_is_snapshot_and_says_why(self):
        # a filter that refuses userfaultfd (an error here; a kill elsewhere would end the
        # service): the call is never made, the snapshot is taken instead
        daemon = self.start_daemon(config={'snapshot_interval_ms': 60000, 'max_allocs': BIG_MAX_ALLOCS})
        p = self.big_program(daemon, 'nouffd')
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        reach = report['targets'][0]['reachability']
        if self.daemon_under_seccomp(daemon):
            self.assert_filters_unreadable(reach)
        else:
            self.assertEqual((reach['method'], reach['error'], reach['partial'], reach['no_snapshot']),
                             ('snapshot', None, None, None), reach)
            self.assertEqual(reach['no_concurrent'],
                             f'pid {p.pid} runs under seccomp whose filters do not let a userfaultfd through', reach)
            self.assertEqual(classes_by_first_frame(report, set(EXPECTED_BIG)), EXPECTED_BIG,
                             harness.format_stacks(report))
        self.assert_nothing_left_in(p.pid)
        self.assertEqual(self.copies_of(p.pid), {})
        self.assert_alive(p)

    def test_without_a_snapshot_a_stopped_scan_gives_a_partial_verdict_at_its_limit(self):
        # the program forbids itself clone (seccomp): no copy can be made, so the scan stops it
        # all along, for at most its pause limit, and says what it decided
        daemon = self.start_daemon(config={'reachability_max_pause_ms': 20, 'max_allocs': BIG_MAX_ALLOCS})
        p = self.big_program(daemon, 'noclone')
        report = daemon.ctl_json('report', '--pid', p.pid, '--reachability', '--top', harness.UNLIMITED_TOP)
        [target] = report['targets']
        reach = target['reachability']
        self.assertEqual((reach['method'], reach['error'], reach['copy_reaped']), ('stopped', None, None), reach)
        self.assertRegex(reach['no_snapshot'] or '', r'seccomp', reach)
        self.assertRegex(reach['partial'] or '', r'stopped at its limit of 20 ms with the process stopped', reach)
        self.assertEqual(self.copies_of(p.pid), {})
        # nothing is called lost on a partial scan; what it reached is reachable, the rest undecided
        self.assertEqual(reach['definitely_lost']['allocs'] + reach['indirectly_lost']['allocs'], 0, reach)
        self.assertGreater(reach['undecided']['allocs'], 0, reach)
        self.assertEqual(reach['still_reachable']['bytes'] + reach['undecided']['bytes'], target['outstanding_bytes'],
                         reach)
        self.assertEqual(reach['still_reachable']['allocs'] + reach['undecided']['allocs'],
                         target['outstanding_allocs'], reach)
        self.assertLess(reach['bytes_scanned'], reach['roots_bytes'] + reach['blocks_bytes'], reach)
        text = daemon.ctl_ok('report', '--pid', p.pid, '--reachability').stdout
        self.assertRegex(text, r'stopped all along: pid \d+ runs under seccomp .*\): partial verdict \(the scan '
                               r'stopped at its limit of 20 ms')
        self.assertIn('undecided: ', text)
        self.assert_alive(p)

    def test_leaks_lists_a_growing_cache_apart_from_the_leak(self):
        # leak-table-fill grows a list it keeps (grow_cache) while leak_steadily() drops a block
        # each time: both grow; by default leaks scans the process concurrently and tells them
        # apart, the leak first, the cache listed as still reachable
        daemon = self.start_daemon()
        p = self.start_program('leak-table-fill')
        daemon.attach(p.pid)
        p.go()
        p.expect('kept')
        p.go()

        def both_growing():
            leaks = daemon.ctl_json('leaks', '--pid', p.pid)
            suspects = {s['frames'][0]['symbol'] for s in leaks['suspects'] if s['frames']}
            caches = {s['frames'][0]['symbol'] for s in leaks['growing_caches'] if s['frames']}
            return leaks if 'leak_steadily' in suspects and 'grow_cache' in caches else None

        leaks = harness.wait_until(both_growing, harness.REPORT_TIMEOUT_S, interval=0.5)
        self.assertTrue(leaks, daemon.ctl_json('leaks', '--pid', p.pid))
        [target] = leaks['targets']
        self.assertIsNone(target['reachability']['error'], target['reachability'])
        self.assert_concurrent(target['reachability'])
        leak = leaks['suspects'][0]
        self.assertEqual((leak['frames'][0]['symbol'], leak['verdict']), ('leak_steadily', 'growing'), leaks['suspects'])
        self.assertGreater(leak['reachability']['definitely_lost']['allocs'], 0, leak)
        [cache] = [s for s in leaks['growing_caches'] if s['frames'] and s['frames'][0]['symbol'] == 'grow_cache']
        self.assertEqual(cache['verdict'], 'growing', cache)
        self.assertEqual(cache['reachability']['still_reachable']['bytes'], cache['reachability']['still_reachable']
                         ['allocs'] * 48, cache)
        for cls in ('definitely_lost', 'indirectly_lost', 'undecided'):
            self.assertEqual(cache['reachability'][cls]['allocs'], 0, cache)
        # the kept blocks grow no more: neither list has them
        self.assertNotIn('keep_early', {s['frames'][0]['symbol'] for s in leaks['suspects'] + leaks['growing_caches']
                                        if s['frames']})
        text = daemon.ctl_ok('leaks', '--pid', p.pid).stdout
        self.assertRegex(text, r'(?s)growing or holding lost blocks, the strongest suspects first:\n.*leak_steadily')
        self.assertRegex(text, r'growing whose every block is still reachable \(a growing cache, not a leak')
        self.assertLess(text.index('leak_steadily'), text.index('grow_cache'), text)
        # --no-reachability: growth alone, both are suspects
        plain = daemon.ctl_json('leaks', '--pid', p.pid, '--no-reachability')
        self.assertIsNone(plain['targets'][0]['reachability'], plain['targets'])
        self.assertEqual(plain['growing_caches'], [])
        self.assertLessEqual({'leak_steadily', 'grow_cache'},
                             {s['frames'][0]['symbol'] for s in plain['suspects'] if s['frames']})
        # it ran on through every scan
        p.go()
        p.expect('done')

    def test_leaks_does_not_stop_a_process_it_cannot_snapshot(self):
        # the program forbids itself clone: leaks (no --reachability) does not stop it for a whole
        # scan, and says why it judged it by growth alone
        daemon = self.start_daemon(config={'max_allocs': BIG_MAX_ALLOCS})
        p = self.big_program(daemon, 'noclone')
        leaks = daemon.ctl_json('leaks', '--pid', p.pid)
        reach = leaks['targets'][0]['reachability']
        self.assertRegex(reach['error'] or '', r'no snapshot of pid \d+ could be taken \(.*seccomp.*\), and it is '
                                               r'not stopped for a whole scan unless asked', reach)
        self.assertEqual(leaks['growing_caches'], [])
        self.assertIn('not stopped for a whole scan unless asked', daemon.ctl_ok('leaks', '--pid', p.pid).stdout)
        self.assert_alive(p)

    def test_requests_that_cannot_be_met(self):
        daemon = self.start_daemon()
        p = self.start_program(PROGRAM)
        # reachability at exit needs memleakctl run: an attach cannot hold a process it did not start
        reply = daemon.request({'v': 1, 'id': 1, 'cmd': 'attach', 'pid': p.pid, 'reachability': True})
        self.assertFalse(reply['ok'], reply)
        self.assertEqual(reply['error']['code'], 'EINVAL', reply)
        self.assertIn('reachability', reply['error']['message'])
        # a run with --no-reachability exits unscanned: a later report says why there are no classes
        r, report = self.run_json(daemon, program(PROGRAM), 'exit', input=b'go\n', options=('--no-reachability',))
        self.assertEqual(r.returncode, 0, r.stderr)
        pid = report['targets'][0]['pid']
        self.assertIsNone(report['targets'][0]['reachability'])
        report = daemon.ctl_json('report', '--pid', pid, '--reachability')
        self.assertIn('exited', report['targets'][0]['reachability']['error'])
        r = daemon.ctl('report', '--pid', 1, '--reachability')
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('Not attached', r.stderr)


SEIZE_AND_HOLD = '''
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, int(sys.argv[1]), None, None) != 0:   # PTRACE_SEIZE
    sys.exit('PTRACE_SEIZE: errno %d' % ctypes.get_errno())
print('seized', flush=True)
sys.stdin.read()
'''

if __name__ == '__main__':
    unittest.main(verbosity=2)
