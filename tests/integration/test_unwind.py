# SPDX-License-Identifier: MIT
"""Stacks only unwind tables can walk (tests/programs/leak-unwind.c, -O2 -fomit-frame-pointer):
each leak's complete chain, with exact bytes and counts, through glibc's qsort, 40 frames of
recursion, a signal handler and its trampoline, a thread up to clone3; an assembly function
without CFI ends its walk visibly, unless it keeps a frame pointer, which takes the walk on. The same program attached with --unwind fp, and run by
memleakctl run (walked from its first allocation, before the daemon read its maps: its library's
constructor too, whose walk ends complete at ld.so's _dl_start_user: no CFI, but the stack's
start and rbp 0)."""

import json
import os
import subprocess
import time
import unittest

import harness

PROGRAM = 'leak-unwind'
RECURSION_DEPTH = 40

EXPECTED = {
    'leak_in_compare': {'bytes': 5 * 41, 'allocs': 5},
    'leak_at_bottom': {'bytes': 3 * 57, 'allocs': 3},
    'leak_in_handler': {'bytes': 2 * 73, 'allocs': 2},
    'leak_in_thread': {'bytes': 4 * 89, 'allocs': 4},
    'nocfi_leak': {'bytes': 97, 'allocs': 1},
    'nocfi_frame_leak': {'bytes': 101, 'allocs': 1},
}
# (not 'main': pthread_create's own allocations for the thread, kept after the join, reach it)
NAMES = set(EXPECTED) | {'churn', 'keep'}
NO_LOSS = ('stack_table_full', 'stack_hash_clash', 'stack_no_scratch', 'stack_efault', 'stack_other')


def symbols(stack):
    return [f['symbol'] for f in stack['frames']]


def stacks_of(report, first):
    """The stacks whose first frame is first (one per call site and path)."""
    found = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] == first]
    assert found, f'no stack starts at {first}\n{harness.format_stacks(report)}'
    return found


def after(chain, name):
    """The frames above name's first appearance."""
    return chain[chain.index(name) + 1:]


class UnwindTest(harness.DaemonTestCase):

    def leak(self, *attach_args):
        daemon = self.start_daemon()
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid, *attach_args)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
        self.assert_totals(report, totals, EXPECTED, PROGRAM)
        return daemon, program, report

    def assert_chains(self, report):
        text = harness.format_stacks(report)
        for counter in NO_LOSS:
            self.assertEqual(report['lost'][counter], 0, report['lost'])

        for stack in stacks_of(report, 'leak_in_compare'):
            chain = symbols(stack)
            self.assertEqual(chain[1], 'compare_leaking', text)
            # qsort's own frames (libc, no frame pointers: msort...), then its caller
            self.assertIn('qsort_r', after(chain, 'compare_leaking'), text)
            self.assertEqual(after(chain, 'qsort_r')[:2], ['sort_things', 'main'], text)

        for stack in stacks_of(report, 'leak_at_bottom'):
            chain = symbols(stack)
            # gcc may rename it (recurse.isra.0): still one frame per level
            self.assertEqual([c.split('.')[0] for c in chain[1:1 + RECURSION_DEPTH]], ['recurse'] * RECURSION_DEPTH, text)
            self.assertEqual(chain[1 + RECURSION_DEPTH], 'main', text)

        for stack in stacks_of(report, 'leak_in_handler'):
            chain = symbols(stack)
            self.assertEqual(chain[1], 'on_signal', text)
            # the trampoline the kernel returns through (libc's __restore_rt), then the
            # interrupted code: raise, called by interrupted(), called by main
            self.assertEqual(chain[2], '__restore_rt', text)
            self.assertIn('libc.so', stack['frames'][2]['module'], text)
            self.assertIn('interrupted', chain, (stack, text))
            self.assertEqual(after(chain, 'interrupted')[:1], ['main'], text)

        for stack in stacks_of(report, 'leak_in_thread'):
            chain = symbols(stack)
            self.assertEqual(chain[1:3], ['thread_main', 'start_thread'], text)
            self.assertIn(chain[-1], ('clone3', '__clone3'), text)

        for name in ('leak_in_compare', 'leak_at_bottom', 'leak_in_handler', 'leak_in_thread'):
            for stack in stacks_of(report, name):
                self.assertIsNone(stack['unwind_stopped'], stack)
                self.assertEqual(stack['addresses_cut'], 0, stack)
                if name != 'leak_in_thread':
                    self.assertEqual(symbols(stack)[-1], '_start', text)

        # The assembly function has no CFI: the walk stops there, and says where.
        [stack] = stacks_of(report, 'nocfi_leak')
        self.assertEqual(symbols(stack), ['nocfi_leak'], text)
        stopped = stack['unwind_stopped']
        self.assertEqual(stopped['reason'], 'no_cfi', stack)
        self.assertEqual(os.path.realpath(stopped['module']),
                         os.path.realpath(os.path.join(harness.PROGRAMS_DIR, PROGRAM)), stack)
        self.assertEqual(stopped['module_offset'], stack['frames'][0]['module_offset'], stack)

        # The one without CFI that keeps a frame pointer is stepped by it to its caller, whose
        # CFI takes the walk to the end.
        [stack] = stacks_of(report, 'nocfi_frame_leak')
        self.assertEqual(symbols(stack)[:3], ['nocfi_frame_leak', 'call_nocfi_frame', 'main'], text)
        self.assertEqual(symbols(stack)[-1], '_start', text)
        self.assertIsNone(stack['unwind_stopped'], stack)
        self.assertEqual(stack['addresses_cut'], 0, stack)

    def test_every_chain_is_complete_with_exact_bytes(self):
        daemon, program, report = self.leak()
        self.assert_chains(report)
        status = daemon.status()
        target = [t for t in status['targets'] if t['pid'] == program.pid][0]
        self.assertEqual(target['unwind']['mode'], 'auto')
        # the program, libc, ld.so at least; each table's rows in kernel memory
        self.assertGreaterEqual(target['unwind']['tables'], 3, target)
        self.assertGreater(target['unwind']['table_bytes'], 0, target)
        self.assertGreaterEqual(status['counters']['unwind_walks'], sum(e['allocs'] for e in EXPECTED.values()))
        self.assertGreaterEqual(status['counters']['unwind_stop_no_cfi'], 1)
        text = daemon.ctl_ok('report', '--pid', program.pid).stdout
        self.assertRegex(text, r'\[unwind stopped: no CFI for \S*leak-unwind\+0x[0-9a-f]+\]')

        # The same stacks folded for flame graphs: the process, then the frames outermost first,
        # each leak's bytes exact at its leaf, the churn nowhere.
        folded = daemon.ctl_ok('report', '--pid', program.pid, '--folded', '--top', harness.UNLIMITED_TOP).stdout
        at_leaf = {}
        for line in folded.splitlines():
            path, value = line.rsplit(' ', 1)
            frames = path.split(';')
            self.assertEqual(frames[0], f'{PROGRAM} (pid {program.pid})', line)
            at_leaf[frames[-1]] = at_leaf.get(frames[-1], 0) + int(value)
            if frames[-1] == 'leak_at_bottom':
                self.assertEqual(frames[1], '_start', line)
        self.assertEqual({name: at_leaf.get(name) for name in EXPECTED},
                         {name: e['bytes'] for name, e in EXPECTED.items()}, folded)
        self.assertNotIn('churn', folded)

    def test_a_walk_repeated_from_the_same_registers_still_tells_the_callers_apart(self):
        # malloc returns to one pc with one stack pointer for leak_from_a and leak_from_b (and
        # for outer_x and outer_y, two frames further up): the thread's walk memo for those
        # registers matches, and only the return addresses it reads again tell them apart.
        expected = {
            'leak_from_a': {'bytes': 40 * 24, 'allocs': 40},
            'leak_from_b': {'bytes': 40 * 40, 'allocs': 40},
            'outer_x': {'bytes': 30 * 56, 'allocs': 30},
            'outer_y': {'bytes': 30 * 72, 'allocs': 30},
        }
        names = set(expected) | {'churn_here', 'churn_from_p', 'churn_from_q', 'churn_from_r',
                                 'churn_under_frame'}
        daemon = self.start_daemon()
        program = self.start_program('leak-same-site')
        daemon.attach(program.pid)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, names, expected)
        self.assert_totals(report, totals, expected, 'leak-same-site')
        text = harness.format_stacks(report)
        for name in ('leak_from_a', 'leak_from_b'):
            for stack in stacks_of(report, 'site'):
                if name in symbols(stack):
                    self.assertEqual(symbols(stack)[1], name, text)
        for name in ('outer_x', 'outer_y'):
            for stack in stacks_of(report, 'site'):
                if name in symbols(stack):
                    self.assertEqual(symbols(stack)[1:3], ['middle', name], text)
        counters = daemon.status()['counters']
        # the second call of each pair (70), churn_here's loops after their first (3 x 199),
        # churn_in_turn's three stacks from one pc and sp after their first (297: three memos side
        # by side, not one replaced at each call), and churn_under_frame's two loops after their
        # first (2 x 199: memos spanning more than 2 KiB of stack, and more than 4 KiB) took a
        # memo's stack
        self.assertGreaterEqual(counters['unwind_repeats'], 70 + 3 * 199 + 297 + 2 * 199, counters)
        self.assertLess(counters['unwind_repeats'], counters['unwind_walks'], counters)

    def test_frame_pointers_alone_cut_the_same_chains(self):
        daemon, program, report = self.leak('--unwind', 'fp')
        stacks = harness.format_stacks(report)
        for stack in stacks_of(report, 'leak_at_bottom'):
            self.assertNotIn('main', symbols(stack), stacks)
        for stack in stacks_of(report, 'leak_in_compare'):
            self.assertNotIn('sort_things', symbols(stack), stacks)
        self.assertEqual(daemon.status()['targets'][0]['unwind']['mode'], 'fp')

    def start_python(self, name):
        """tests/programs/NAME.py run by Debian's CPython (built without frame pointers), ready."""
        python = '/usr/bin/python3.11'
        if not os.path.exists(python):
            python = '/usr/bin/python3'
        program = harness.LeakProgram(name, command=[
            python, os.path.join(harness.SOURCE_ROOT, 'tests', 'programs', f'{name}.py')])
        self.addCleanup(program.kill)
        program.expect('ready')
        return program

    def test_cpython_growing_a_list_is_walked_to_the_interpreter_main(self):
        # Before unwind tables its stacks ended after two frames (list_resize <-
        # _PyList_AppendTakeRefListResize): nobody could tell who was leaking.
        daemon = self.start_daemon()
        program = self.start_python('grow-list')
        daemon.attach(program.pid)
        program.run_leaks()
        report = daemon.report(pid=program.pid)
        biggest = max(report['stacks'], key=lambda s: s['bytes'])
        chain = symbols(biggest)
        # the list's buffer: 200,000 pointers at least
        self.assertGreaterEqual(biggest['bytes'], 200000 * 8, harness.format_stacks(report))
        self.assertIn('_PyEval_EvalFrameDefault', chain, harness.format_stacks(report))
        self.assertIn('Py_BytesMain', chain, harness.format_stacks(report))
        self.assertEqual(chain[-1], '_start', harness.format_stacks(report))
        self.assertIsNone(biggest['unwind_stopped'], biggest)
        for counter in NO_LOSS:
            self.assertEqual(report['lost'][counter], 0, report['lost'])

    def test_a_process_leaking_as_it_is_attached_has_every_stack_walked_by_tables(self):
        # Recorded from its probes on, before its tables were built, its first stacks were walked
        # by frame pointers: one frame each in an interpreter built without them, no reason given.
        daemon = self.start_daemon()
        program = self.start_python('leak-steadily')
        daemon.attach(program.pid)
        time.sleep(0.5)
        program.run_leaks()
        report = daemon.report(pid=program.pid, top=harness.UNLIMITED_TOP)
        self.assertGreater(report['targets'][0]['outstanding_allocs'], 100, harness.format_stacks(report))
        for stack in report['stacks']:
            chain = symbols(stack)
            self.assertEqual(chain[-1], '_start', harness.format_stacks(report))
            self.assertIsNone(stack['unwind_stopped'], stack)

    def test_a_busy_process_is_walked_by_tables_from_its_first_recorded_allocation(self):
        # Attached as it allocates thousands of times a millisecond: its recording starts once
        # its tables are in, and its first walks must find them. BPF began recording it with the
        # mapping list written at the attach still in place (every file pending) for the 0.3 ms
        # until the maps were read again: the walks of that moment stopped at their first frame
        # (no_table; counted even for blocks freed since), 1 attach of 8 of this program here
        # and 3 of 45 of the python above once tables came in one batch.
        expected = {
            'busy_leak_small': {'bytes': 3 * 48, 'allocs': 3},
            'busy_leak_medium': {'bytes': 5 * 80, 'allocs': 5},
            'busy_leak_large': {'bytes': 7 * 112, 'allocs': 7},
        }
        daemon = self.start_daemon()
        program = self.start_program('churn-attached')
        daemon.attach(program.pid)
        time.sleep(0.3)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, set(expected), expected)
        self.assert_totals(report, totals, expected, 'churn-attached')
        [target] = daemon.status()['targets']
        self.assertGreater(target['counters']['unwind_walks'], 1000, target['counters'])
        self.assertEqual(target['counters']['unwind_stop_no_table'], 0, target['counters'])
        for stack in report['stacks']:
            self.assertIsNone(stack['unwind_stopped'], stack)
            self.assertEqual(symbols(stack)[-1], '_start', harness.format_stacks(report))
        # each leak's stacks (one per call site: gcc unrolls a loop) go on to main
        for name in expected:
            for stack in [s for s in report['stacks'] if name in symbols(s)]:
                self.assertEqual(after(symbols(stack), name)[:1], ['main'], harness.format_stacks(report))

    def test_run_walks_the_program_from_its_first_allocation(self):
        daemon = self.start_daemon()
        out = os.path.join(self.workdir, 'report.json')
        r = subprocess.run([harness.MEMLEAKCTL, '--socket', daemon.socket_path, 'run', '--json', '--top',
                            str(harness.UNLIMITED_TOP), '--output', out, '--',
                            os.path.join(harness.PROGRAMS_DIR, PROGRAM)],
                           input=b'go\n\n', capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            report = harness.load_json_file(f)
        totals = harness.per_function(report, NAMES)
        self.assert_totals(report, totals, EXPECTED, f'memleakctl run {PROGRAM}')
        self.assert_chains(report)
        # Its library's constructor leaked before main, run by ld.so's _dl_start_user: no CFI
        # there, but its stack pointer is where the stack began and rbp is 0, which marks the
        # deepest frame: a complete stack, not a cut one.
        [stack] = stacks_of(report, 'ctor_leak')
        self.assertEqual((stack['bytes'], stack['allocs']), (113, 1), stack)
        chain = symbols(stack)
        self.assertEqual(chain[-2:], ['_dl_init', '_dl_start_user'], chain)
        self.assertIn('ld-linux', stack['frames'][-1]['module'], stack)
        self.assertIsNone(stack['unwind_stopped'], stack)


if __name__ == '__main__':
    unittest.main(verbosity=2)
