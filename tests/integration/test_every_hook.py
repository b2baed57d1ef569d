# SPDX-License-Identifier: MIT
"""leak-every-hook under a real memleakd: every allocator entry point, exact ground truth."""

import os
import unittest

import harness

PROGRAM = 'leak-every-hook'

# (bytes per block, blocks) leaked by each function of tests/programs/leak-every-hook.c.
LEAKS = {
    'leak_malloc': (1001, 5),
    'leak_calloc': (7 * 149, 3),
    'leak_realloc_grow': (1207, 1),             # 101 -> 303 -> 505 -> 1207 in place or not: once
    'leak_realloc_chain_moved': (4011, 1),      # 211 -> 2011 -> 3011 -> 4011, every step moved
    'leak_realloc_shrink': (1825, 1),           # 3001 shrunk to 1825
    'leak_reallocarray': (11 * 93, 2),
    'leak_posix_memalign': (1111, 3),
    'leak_aligned_alloc': (1213, 2),
    'leak_memalign': (1315, 2),
    'leak_valloc': (1417, 2),
    'leak_pvalloc': (1519, 2),                  # the request, not the page pvalloc hands out
    'leak_before_failed_realloc': (1621, 1),    # its realloc(p, SIZE_MAX) failed: p keeps this
}

# Functions that allocate but leave nothing outstanding, or whose calls fail; main allocates
# nothing after attach, so a stack landing on it means a frame was misattributed.
MUST_NOT_APPEAR = [
    'realloc_to_zero_frees', 'failed_malloc', 'failed_calloc', 'failed_posix_memalign',
    'failed_realloc', 'churn_balanced', 'alloc_before_attach', 'free_pre_attach', 'main',
]

NAMES = set(LEAKS) | set(MUST_NOT_APPEAR)

PRE_ATTACH_BLOCKS = 41          # allocated before "ready", freed after "go"
FAILED_CALLS = 4                # failed_malloc, failed_calloc, failed_posix_memalign, failed_realloc


def expected_totals(leaks):
    return {name: {'bytes': size * count, 'allocs': count} for name, (size, count) in leaks.items()}


EXPECTED = expected_totals(LEAKS)


class EveryHookTest(harness.DaemonTestCase):

    def run_program(self, attach_args=(), expected=EXPECTED):
        """Daemon + leak-every-hook attached with attach_args, run to "done", report polled until it
        matches expected (or time runs out). Returns (daemon, program, report, totals)."""

        def scenario():
            daemon = self.start_daemon()
            program = self.start_program(PROGRAM)
            reply = daemon.attach(program.pid, *attach_args)
            self.assertEqual(reply['target']['pid'], program.pid, f'attach reply: {reply}')
            self.assertIs(reply['target']['exited'], False, f'attach reply: {reply}')
            program.run_leaks()
            report, totals = self.wait_for_totals(daemon, program.pid, NAMES, expected)
            self.assert_totals(report, totals, expected, f'{PROGRAM} attached with {list(attach_args)}')
            return daemon, program, report, totals

        return scenario()

    def test_report_matches_ground_truth_for_every_hook(self):
        daemon, program, report, totals = self.run_program()
        # After attach the program allocates only through its leak functions, so the target's
        # own totals are exactly the ground truth too.
        targets = [t for t in report['targets'] if t['pid'] == program.pid]
        self.assertEqual(len(targets), 1, f'report targets: {report["targets"]}')
        self.assertEqual((targets[0]['outstanding_bytes'], targets[0]['outstanding_allocs']),
                         (sum(t['bytes'] for t in EXPECTED.values()),
                          sum(t['allocs'] for t in EXPECTED.values())),
                         f'target totals; stacks:\n{harness.format_stacks(report)}')
        self.assertIs(targets[0]['exited'], False)
        self.assertTrue(all(s['pid'] == program.pid for s in report['stacks']))

    def test_churn_and_failed_calls_do_not_appear(self):
        daemon, program, report, totals = self.run_program()
        for name in MUST_NOT_APPEAR:
            self.assertNotIn(name, totals, f'{name} must leave nothing outstanding; stacks:\n'
                                           f'{harness.format_stacks(report)}')
        status = daemon.status()
        self.assertGreaterEqual(status['counters']['allocs_failed'], FAILED_CALLS,
                                f'status counters: {status["counters"]}')

    def test_realloc_chain_counted_once_with_final_size(self):
        daemon, program, report, totals = self.run_program()
        for name in ('leak_realloc_grow', 'leak_realloc_chain_moved', 'leak_realloc_shrink'):
            size, count = LEAKS[name]
            self.assertEqual(totals.get(name), {'bytes': size, 'allocs': 1}, name)
            stacks = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] == name]
            self.assertEqual([(s['bytes'], s['allocs']) for s in stacks], [(size, 1)],
                             f'{name}: one stack with the final size; stacks:\n{harness.format_stacks(report)}')

    def test_frees_of_pre_attach_memory_are_ignored(self):
        daemon, program, report, totals = self.run_program()
        # The ground truth above already shows that nothing was subtracted; the frees are counted.
        self.assertGreaterEqual(report['lost']['free_unknown'], PRE_ATTACH_BLOCKS, f'lost: {report["lost"]}')
        status = daemon.status()
        self.assertGreaterEqual(status['lost']['free_unknown'], PRE_ATTACH_BLOCKS, f'lost: {status["lost"]}')

    def test_a_clean_run_counts_no_lost_events(self):
        # No map fills up, no stack is unreadable, every call returns: the only "lost" events are
        # the frees of pre-attach memory.
        daemon, program, report, totals = self.run_program()
        lost = dict(report['lost'])
        self.assertGreaterEqual(lost.pop('free_unknown'), PRE_ATTACH_BLOCKS)
        self.assertEqual({k: v for k, v in lost.items() if v}, {}, f'lost counters: {report["lost"]}')

    def test_frames_name_function_module_file_and_line_of_each_call_site(self):
        daemon, program, report, totals = self.run_program()
        sites = harness.call_sites(PROGRAM)
        module = os.path.realpath(program.path)
        seen = set()
        for stack in report['stacks']:
            frames = stack['frames']
            if not frames or frames[0]['symbol'] not in LEAKS:
                continue
            name = frames[0]['symbol']
            seen.add(name)
            top = frames[0]
            with self.subTest(function=name):
                self.assertIsNone(stack['stack_error'])
                self.assertEqual(top['module'], module, top)
                # an absolute path users can open, not the compiler's relative one
                self.assertEqual(top['file'], os.path.join(os.path.realpath(harness.SOURCE_ROOT),
                                                           'tests', 'programs', PROGRAM + '.c'), top)
                self.assertIn(top['line'], sites[name], f'{top}: call sites of {name} are lines {sites[name]}')
                self.assertRegex(top['addr'], r'^0x[0-9a-f]+$')
                self.assertIsInstance(top['offset'], int)
                self.assertGreater(top['offset'], 0)
                # Every leak function is called straight from main.
                self.assertGreaterEqual(len(frames), 2, stack)
                self.assertEqual(frames[1]['symbol'], 'main', stack)
                self.assertEqual(frames[1]['module'], module, stack)
        self.assertEqual(seen, set(LEAKS))

    def test_top_folds_the_rest_into_other(self):
        daemon, program, full, totals = self.run_program()
        stacks = full['stacks']
        self.assertEqual(full['other'], {'stacks': 0, 'bytes': 0, 'allocs': 0})
        self.assertEqual([s['bytes'] for s in stacks], sorted((s['bytes'] for s in stacks), reverse=True),
                         'stacks sorted by bytes, largest first')
        self.assertGreater(len(stacks), 2)

        top1 = daemon.report(pid=program.pid, top=1)
        self.assertEqual(len(top1['stacks']), 1, harness.format_stacks(top1))
        # leak_malloc's 5 x 1001 bytes is the largest stack.
        self.assertEqual(top1['stacks'][0]['frames'][0]['symbol'], 'leak_malloc')
        self.assertEqual((top1['stacks'][0]['bytes'], top1['stacks'][0]['allocs']),
                         (stacks[0]['bytes'], stacks[0]['allocs']))
        self.assertEqual(top1['other'], {'stacks': len(stacks) - 1,
                                         'bytes': sum(s['bytes'] for s in stacks[1:]),
                                         'allocs': sum(s['allocs'] for s in stacks[1:])})

        top0 = daemon.report(pid=program.pid, top=0)
        self.assertEqual(top0['stacks'], [])
        self.assertEqual(top0['other'], {'stacks': len(stacks),
                                         'bytes': sum(s['bytes'] for s in stacks),
                                         'allocs': sum(s['allocs'] for s in stacks)})

    def test_text_report_names_leaking_functions(self):
        daemon, program, report, totals = self.run_program()
        text = daemon.ctl_ok('report', '--pid', program.pid, '--top', 100).stdout
        self.assertRegex(text, r'\d+ bytes in \d+', text)
        for name in LEAKS:
            self.assertRegex(text, rf'\b{name}\b', f'text report lacks {name}:\n{text}')
        for name in MUST_NOT_APPEAR:
            if name != 'main':
                self.assertNotRegex(text, rf'\b{name}\b', f'text report names {name}:\n{text}')
        # Each leak's byte count is there as a number, e.g. "5005 bytes in 5".
        for name, (size, count) in LEAKS.items():
            self.assertRegex(text, rf'\b{size * count} bytes in {count}\b', f'{name}:\n{text}')

    def test_min_age_hides_allocations_younger_than_it(self):
        daemon, program, report, totals = self.run_program()
        young = daemon.report(pid=program.pid, min_age_s=3600)
        self.assertEqual(young['min_age_s'], 3600)
        self.assertEqual(young['stacks'], [], harness.format_stacks(young))
        self.assertEqual(young['other'], {'stacks': 0, 'bytes': 0, 'allocs': 0})

        # Once they are older than a second, a one-second floor shows them all again.
        harness.wait_until(lambda: False, 1.2)
        aged = daemon.report(pid=program.pid, min_age_s=1)
        self.assertEqual(aged['min_age_s'], 1)
        self.assert_totals(aged, harness.per_function(aged, NAMES), EXPECTED, 'report --min-age 1')

    def test_obj_naming_the_targets_libc_gives_the_same_ground_truth(self):
        libc = None

        def find_libc(pid):
            with open(f'/proc/{pid}/maps') as f:
                paths = {line.split()[-1] for line in f if len(line.split()) >= 6}
            found = [p for p in paths if os.path.basename(p).startswith('libc.so')]
            self.assertEqual(len(found), 1, f'libc among the mappings of {pid}: {sorted(paths)}')
            return found[0]

        def scenario():
            nonlocal libc
            daemon = self.start_daemon()
            program = self.start_program(PROGRAM)
            libc = find_libc(program.pid)
            reply = daemon.attach(program.pid, '--obj', libc)
            self.assertEqual([o['path'] for o in reply['target']['objects']], [libc], reply)
            self.assertGreaterEqual(reply['target']['objects'][0]['probes'], 9, reply)   # 10 names, 1 alias
            program.run_leaks()
            report, totals = self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
            self.assert_totals(report, totals, EXPECTED, f'{PROGRAM} attached with --obj {libc}')

        scenario()

    def test_size_filter_records_only_allocations_in_range(self):
        # Bounds are inclusive and fall exactly on leak_realloc_grow's and
        # leak_before_failed_realloc's sizes.
        low, high = 1207, 1621
        in_range = {name: (size, count) for name, (size, count) in LEAKS.items() if low <= size <= high}
        self.assertEqual(sorted(in_range), sorted(['leak_realloc_grow', 'leak_aligned_alloc', 'leak_memalign',
                                                   'leak_valloc', 'leak_pvalloc', 'leak_before_failed_realloc']))
        daemon, program, report, totals = self.run_program(
            attach_args=('--min-size', low, '--max-size', high), expected=expected_totals(in_range))
        status = daemon.status()
        self.assertGreater(status['counters']['allocs_filtered'], 0, f'status counters: {status["counters"]}')

    def test_max_stack_depth_cuts_stacks_and_counts_them(self):
        # leak_* <- main <- __libc_start_call_main <- ...: with 2 frames kept, every stack is cut,
        # marked so, counted, and the leaking function is still its first frame.
        daemon = self.start_daemon(config={'max_stack_depth': 2})
        program = self.start_program(PROGRAM)
        daemon.attach(program.pid)
        program.run_leaks()
        report, totals = self.wait_for_totals(daemon, program.pid, NAMES, EXPECTED)
        self.assert_totals(report, totals, EXPECTED, 'with max_stack_depth = 2')
        for stack in report['stacks']:
            self.assertLessEqual(len(stack['frames']), 2, stack)
        leaking = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] in LEAKS]
        for stack in leaking:
            self.assertIs(stack['truncated'], True, stack)
            self.assertEqual(stack['frames'][1]['symbol'], 'main', stack)
        # every stack is listed (no --top), so the counter is the number of cut stacks shown
        self.assertEqual(report['lost']['stacks_truncated'], len([s for s in report['stacks'] if s['truncated']]))
        self.assertGreaterEqual(report['lost']['stacks_truncated'], len(LEAKS))


if __name__ == '__main__':
    unittest.main(verbosity=2)
