# SPDX-License-Identifier: MIT
"""A library dlopen()ed after the attach is picked up as it is mapped (BPF tells the daemon, which
rereads the target's maps) and logged: a C program loads a C++ plugin, which brings libstdc++ with
it; its operators are probed then, so the plugin's new leaks are reported at the plugin's function
(not at operator new inside libstdc++), and its frames resolve. Where libstdc++'s unwind table is
in already (another target maps it, or it was built as the library was mapped, before its probes
were placed) its operators are left to the malloc and free they call instead, their frames not
shown, with the same report. The loader's own allocations for the dlopen (link
maps, kept while the plugin is loaded) are outstanding too, at their own stacks."""

import os
import unittest

import harness

LEAKS = {
    'plugin_new_leak()': {'bytes': 3 * 32, 'allocs': 3},
    'plugin_c_leak': {'bytes': 2 * 77, 'allocs': 2},
}


def loaded_later(status, pid):
    target = [t for t in status['targets'] if t['pid'] == pid][0]
    return {os.path.basename(o['path']).split('.so')[0]: o for o in target['objects']
            if o['role'] == 'loaded after attach'}


class DlopenTest(harness.DaemonTestCase):

    def test_library_loaded_after_attach_is_probed_and_logged(self):
        self.check_dlopen(table_there=False)

    def test_operators_are_left_to_malloc_where_the_table_is_in_already(self):
        self.check_dlopen(table_there=True)

    def check_dlopen(self, table_there):
        # the table of a file loaded after the attach is queued as the file is mapped, and built
        # on a thread of its own while the probes are placed: its operators are probed, as outer
        # calls, unless the table is in by then (always, when another target has it)
        probed = {(0, 20)} if table_there else {(20, 0), (0, 20)}

        def scenario():
            daemon = self.start_daemon(config={'snapshot_interval_ms': 200})
            if table_there:
                daemon.attach(self.start_program('leak-cxx').pid)
            program = self.start_program('leak-dlopen')
            reply = daemon.attach(program.pid)
            # a C program: nothing of libstdc++ yet
            self.assertNotIn('libstdc++', ' '.join(o['path'] for o in reply['target']['objects']))
            program.go()
            program.expect('loaded')
            later = {}

            def picked_up():
                later.update(loaded_later(daemon.status(), program.pid))
                return 'libstdc++' in later

            harness.wait_until(picked_up, 10)
            self.assertIn((later['libstdc++']['probes'], later['libstdc++']['forwarded']), probed, later)
            # the plugin's unwind table is built on the same tick: wait for it to be in
            harness.wait_until(lambda: daemon.status()['limits']['unwind_tables']['building'] == 0, 10)
            self.assertNotIn('libleak-plugin', later, 'the plugin defines no allocator function')
            program.run_leaks()
            return daemon, program, daemon.report(pid=program.pid), later['libstdc++']['probes']

        daemon, program, report, probes = scenario()
        # (not 'main': the loader's own allocations for the dlopen are walked up to it too)
        totals = harness.per_function(report, set(LEAKS) | {'plugin_leak'}, pid=program.pid)
        self.assert_totals(report, totals, LEAKS, 'leak-dlopen')
        # new's caller is the first frame: operator new was probed as an outer call, or its own
        # frame, on top of malloc's stack, walked through by libstdc++'s table, is not shown. (The other
        # stacks are the loader's own: dlopen keeps the plugin's link map and such.)
        plugin = os.path.realpath(os.path.join(harness.PROGRAMS_DIR, 'libleak-plugin.so'))
        through_plugin = [s for s in report['stacks']
                          if any(f['module'] and os.path.realpath(f['module']) == plugin for f in s['frames'])]
        self.assertEqual({s['frames'][0]['symbol'] for s in through_plugin}, set(LEAKS), harness.format_stacks(report))
        self.assertTrue(all(os.path.realpath(s['frames'][0]['module']) == plugin for s in through_plugin))
        self.assertEqual({k: v for k, v in report['lost'].items() if v}, {})
        # the plugin has no frame pointers: its table walks its frames back into the program (at
        # -O2 plugin_leak tail-calls plugin_c_leak: its frame is gone, as in a debugger)
        for stack in through_plugin:
            symbols = [f['symbol'] for f in stack['frames']]
            self.assertEqual(symbols[-4:], ['main', '__libc_start_call_main', '__libc_start_main@@GLIBC_2.34', '_start'],
                             harness.format_stacks(report))
            self.assertIsNone(stack['unwind_stopped'], stack)
        # the log says what was done, as status did
        self.assertRegex(daemon.log(), r'(?m)pid \d+ mapped \S*libstdc\+\+\S* after the attach: '
                         + (r'probed 0 allocator entry points in it \(20 operators left to the malloc or free they call\)'
                            if probes == 0 else r'probed 20 allocator entry points in it$'))


if __name__ == '__main__':
    unittest.main(verbosity=2)
