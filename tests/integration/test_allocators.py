# SPDX-License-Identifier: MIT
"""The same leaking program linked with glibc, tcmalloc, jemalloc and mimalloc, statically, and with
tcmalloc preloaded, and its C leaks on musl (linked, and static): memleakd finds the allocator that serves the process without --obj, says
which and why, and reports the same functions and bytes (plus each allocator's own API); balanced
churn does not appear and nothing is counted twice. --obj overrides discovery."""

import os
import sys
import time
import unittest

import harness

COMMON = {
    'leak_malloc()': {'bytes': 5 * 100, 'allocs': 5},
    'leak_calloc()': {'bytes': 3 * 200, 'allocs': 3},
    'leak_realloc()': {'bytes': 2 * 256, 'allocs': 2},
    'leak_new()': {'bytes': 4 * 48, 'allocs': 4},
    'leak_new_array()': {'bytes': 2 * 100, 'allocs': 2},
}
EXTENDED = {
    'glibc': None,
    'tcmalloc': {'bytes': 2 * 88, 'allocs': 2},
    'jemalloc': {'bytes': 72 + 80 + 144, 'allocs': 3},   # one grown by rallocx, one by xallocx
    'mimalloc': {'bytes': 3 * 40 + 128, 'allocs': 4},
}
NAMES = set(COMMON) | {'leak_extended()', 'churn()', 'main'}
# tests/programs/leak-musl.c
MUSL = {
    'leak_malloc': {'bytes': 5 * 100, 'allocs': 5},
    'leak_calloc': {'bytes': 3 * 200, 'allocs': 3},
    'leak_realloc': {'bytes': 2 * 256, 'allocs': 2},
    'leak_aligned': {'bytes': 96 + 256 + 48, 'allocs': 3},
}
MUSL_NAMES = set(MUSL) | {'churn', 'main'}
LIBDIR = '/usr/lib/x86_64-linux-gnu'


def expected_for(allocator):
    expected = dict(COMMON)
    if EXTENDED[allocator]:
        expected['leak_extended()'] = EXTENDED[allocator]
    return expected


class AllocatorsTest(harness.DaemonTestCase):

    def trace(self, program_name, *attach_args, command=None, daemon_env=None, names=NAMES):
        """Attach to the program, let it leak; return (attach reply, report)."""
        def scenario():
            daemon = self.start_daemon(env=daemon_env)
            if command:
                program = harness.LeakProgram(program_name, command=command)
                self.addCleanup(program.kill)
                program.expect('ready')
            else:
                program = self.start_program(program_name)
            reply = daemon.attach(program.pid, *attach_args)
            program.run_leaks()
            report = daemon.report(pid=program.pid)
            totals = harness.per_function(report, names, pid=program.pid)
            return reply['target'], report, totals

        return scenario()

    def check(self, program_name, allocator, *attach_args, command=None, expected=None, daemon_env=None,
              names=NAMES):
        expected = expected or expected_for(allocator)
        target, report, totals = self.trace(program_name, *attach_args, command=command, daemon_env=daemon_env,
                                            names=names)
        self.assert_totals(report, totals, expected, program_name)
        # every outstanding byte is one of the leaks: the allocator's own pools do not show
        self.assertEqual(report['targets'][0]['outstanding_bytes'],
                         sum(t['bytes'] for t in expected.values()), harness.format_stacks(report))
        self.assertEqual({k: v for k, v in report['lost'].items() if v}, {}, 'nothing lost, nothing counted twice')
        self.assertEqual(target['allocator'], allocator, target)
        return target

    def allocator_object(self, target):
        chosen = [o for o in target['objects'] if o['role'] == 'allocator']
        self.assertEqual(len(chosen), 1, target)
        return chosen[0]

    def test_glibc(self):
        target = self.check('leak-alloc-glibc', 'glibc')
        self.assertEqual(self.allocator_object(target)['path'], f'{LIBDIR}/libc.so.6')
        self.assertIn('lookup order', target['allocator_reason'])
        # libstdc++'s operators are listed, left to the malloc and free they call
        self.assertIn(os.path.realpath(f'{LIBDIR}/libstdc++.so.6'),
                      [os.path.realpath(o['path']) for o in target['objects'] if o['role'] == 'c++ operators'])

    def test_tcmalloc_without_obj(self):
        target = self.check('leak-alloc-tcmalloc', 'tcmalloc')
        tc = self.allocator_object(target)
        self.assertEqual(os.path.realpath(tc['path']), os.path.realpath(f'{LIBDIR}/libtcmalloc.so.4'))
        self.assertRegex(target['allocator_reason'], r'/libtcmalloc\.so\.4[.0-9]* is the first object defining malloc')
        # glibc's malloc is probed too (a direct call would count), but serves nothing here
        roles = {os.path.basename(o['path']): o['role'] for o in target['objects']}
        self.assertEqual(roles.get('libc.so.6'), 'other allocator', target)

    def test_jemalloc_without_obj(self):
        target = self.check('leak-alloc-jemalloc', 'jemalloc')
        self.assertIn('libjemalloc.so.2', self.allocator_object(target)['path'])

    def test_mimalloc_without_obj(self):
        target = self.check('leak-alloc-mimalloc', 'mimalloc')
        self.assertIn('libmimalloc.so.2', self.allocator_object(target)['path'])

    def test_tcmalloc_with_obj(self):
        target = self.check('leak-alloc-tcmalloc', 'tcmalloc', '--obj', f'{LIBDIR}/libtcmalloc.so.4',
                            '--obj', f'{LIBDIR}/libstdc++.so.6')
        self.assertEqual([o['role'] for o in target['objects']], ['named', 'named'])
        self.assertEqual(target['allocator_reason'], 'named with --obj')
        # a named libstdc++ has every operator probed: the malloc they call may be in no object
        # named (here tcmalloc's own operators serve the program)
        self.assertEqual([(o['probes'], o['forwarded']) for o in target['objects']][1], (20, 0), target)
        # --obj overrides discovery for good: the snapshot ticks since (every 100 ms) probed
        # nothing else the process maps
        now = self.daemons[-1].status()['targets'][0]
        self.assertEqual([o['role'] for o in now['objects']], ['named', 'named'], now)

    def test_jemalloc_with_obj(self):
        target = self.check('leak-alloc-jemalloc', 'jemalloc', '--obj', f'{LIBDIR}/libjemalloc.so.2')
        self.assertEqual([o['role'] for o in target['objects']], ['named'])

    def test_mimalloc_with_obj(self):
        # libmimalloc defines operator new/delete itself: one object is enough
        target = self.check('leak-alloc-mimalloc', 'mimalloc', '--obj', f'{LIBDIR}/libmimalloc.so.2')
        self.assertEqual([o['role'] for o in target['objects']], ['named'])

    def test_obj_not_mapped_or_without_allocator_is_a_clear_error_and_leaves_nothing(self):
        daemon = self.start_daemon()
        program = self.start_program('leak-alloc-glibc')
        for obj, message in ((f'{LIBDIR}/libtcmalloc.so.4', 'is not mapped by pid'),
                             (f'{LIBDIR}/libm.so.6', 'defines none of the allocator functions')):
            reply = daemon.request({'v': 1, 'cmd': 'attach', 'pid': program.pid, 'objs': [obj]})
            self.assertFalse(reply['ok'], reply)
            self.assertEqual(reply['error']['code'], 'EINVAL', reply)
            self.assertIn(message, reply['error']['message'])
            r = daemon.ctl('attach', '--pid', program.pid, '--obj', obj)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(message, r.stderr)
        self.assertEqual(daemon.status()['targets'], [], 'a refused attach leaves no target behind')
        # and the process can still be attached properly
        self.assertEqual(daemon.attach(program.pid)['target']['allocator'], 'glibc')

    def test_kernels_without_uprobe_multi_get_one_uprobe_per_site(self):
        # MEMLEAKD_UPROBE_MULTI=0 makes the daemon behave as on Linux < 6.6
        self.check('leak-alloc-glibc', 'glibc', daemon_env={'MEMLEAKD_UPROBE_MULTI': '0'})
        self.assertIn('No uprobe_multi links on this kernel', self.daemons[-1].log())
        self.assertEqual(self.daemons[-1].status()['probes'], {'uprobe_multi': False, 'alloc_sessions': False})
        self.daemons[-1].stop()
        # and the real kernel has them: the other tests run with uprobe_multi links
        daemon = self.start_daemon()
        self.assertNotIn('No uprobe_multi links', daemon.log())

    def test_moved_arguments_are_found_with_either_kind_of_link(self):
        # mimalloc's malloc, calloc and realloc are probed past instructions that move their
        # arguments to other registers (the attach cookie says which): perf-event uprobes carry
        # the cookie as uprobe_multi links do
        self.check('leak-alloc-mimalloc', 'mimalloc', daemon_env={'MEMLEAKD_UPROBE_MULTI': '0'})
        self.assertIn('No uprobe_multi links on this kernel', self.daemons[-1].log())
        # removing some hundred perf-event uprobes one by one takes a while
        started = time.monotonic()
        self.assertEqual(self.daemons[-1].stop(timeout=120), 0)
        print(f'stopped in {time.monotonic() - started:.1f} s', file=sys.stderr)

    def test_static_executable(self):
        target = self.check('leak-alloc-static', 'glibc')
        exe = os.path.join(harness.PROGRAMS_DIR, 'leak-alloc-static')
        self.assertEqual(os.path.realpath(self.allocator_object(target)['path']), os.path.realpath(exe))
        self.assertIn('defines malloc itself', target['allocator_reason'])
        self.assertEqual(len(target['objects']), 1, target)

    def test_jemalloc_linked_statically_into_a_dynamic_executable(self):
        target = self.check('leak-alloc-jemalloc-static', 'jemalloc')
        self.assertIn('defines malloc itself (jemalloc linked in statically)', target['allocator_reason'])

    def assert_musl_stacks_end_at_its_start_code(self, last_frame):
        # musl's start code has no CFI and keeps argc in rbp when it calls main: a walk that
        # reaches it, a few dozen bytes from the stack's start, is complete, not cut
        report = self.daemons[-1].report()
        leaks = [s for s in report['stacks'] if s['frames'] and s['frames'][0]['symbol'] in MUSL]
        self.assertEqual({s['frames'][0]['symbol'] for s in leaks}, set(MUSL), harness.format_stacks(report))
        for stack in leaks:
            self.assertIsNone(stack['unwind_stopped'], stack)
            self.assertEqual(stack['frames'][-2]['symbol'], 'main', stack)
            self.assertEqual(stack['frames'][-1]['symbol'], last_frame, stack)

    def test_musl(self):
        target = self.check('leak-musl', 'musl', expected=MUSL, names=MUSL_NAMES)
        self.assertIn('musl', self.allocator_object(target)['path'])
        self.assertIn('first object defining malloc', target['allocator_reason'])
        self.assert_musl_stacks_end_at_its_start_code(None)    # Debian's libc.so: no symbols

    def test_musl_static(self):
        target = self.check('leak-musl-static', 'musl', expected=MUSL, names=MUSL_NAMES)
        self.assertIn('defines malloc itself (musl linked in statically)', target['allocator_reason'])
        self.assertEqual(len(target['objects']), 1, target)
        self.assert_musl_stacks_end_at_its_start_code('libc_start_main_stage2')

    def test_tcmalloc_preloaded_into_a_glibc_program(self):
        path = os.path.join(harness.PROGRAMS_DIR, 'leak-alloc-glibc')
        target = self.check('leak-alloc-glibc', 'tcmalloc',
                            command=['env', f'LD_PRELOAD={LIBDIR}/libtcmalloc.so.4', path],
                            expected=COMMON)   # the glibc build does not call tc_malloc itself
        self.assertIn('libtcmalloc.so.4', self.allocator_object(target)['path'])


if __name__ == '__main__':
    unittest.main(verbosity=2)
