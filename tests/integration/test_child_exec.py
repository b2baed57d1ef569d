# SPDX-License-Identifier: MIT
"""memleakctl run --follow-forks holds a followed child at its exec, and at each library it maps
after (dlopen), until the unwind tables of its new code are in: the stacks of a child that leaks
from its first instructions are complete, under its own name, exact per call site.

- tests/programs/leak-child-exec.c, run by sh as a child (sh -c 'PROG; true': not the last
  command, so sh forks it), leaks at once through three sites of one allocating function that
  only their callers tell apart: a walk cut at the new program would merge them;
- tests/programs/leak-unwind-dlopen.c (at-once-no-wait), run the same way, dlopens a library and
  leaks through it at once: the child is held at the library's mapping too.
Both are built -O2 without frame pointers: only their unwind tables walk their frames."""

import os
import re
import subprocess
import unittest

import harness

CHILD = 'leak-child-exec'
# leak-child-exec.c's ground truth: every byte by its chain from child_keep up to main
CHILD_CHAINS = {
    ('child_keep', 'child_site_a', 'leak_at_start', 'main'): {'bytes': 3 * 301, 'allocs': 3},
    ('child_keep', 'child_site_b', 'leak_at_start', 'main'): {'bytes': 5 * 302, 'allocs': 5},
    ('child_keep', 'child_site_c', 'leak_at_start', 'main'): {'bytes': 7 * 303, 'allocs': 7},
}

# leak-unwind-dlopen.c at-once-no-wait, through leak-unwind-lib.c's three sites
DLOPEN = 'leak-unwind-dlopen'
DLOPEN_CHAINS = {
    ('lib_keep', 'lib_site_a', 'lib_sites', 'call_plugin', 'leak_at_once', 'main'): {'bytes': 3 * 201, 'allocs': 3},
    ('lib_keep', 'lib_site_b', 'lib_sites', 'call_plugin', 'leak_at_once', 'main'): {'bytes': 5 * 202, 'allocs': 5},
    ('lib_keep', 'lib_site_c', 'lib_sites', 'call_plugin', 'leak_at_once', 'main'): {'bytes': 7 * 203, 'allocs': 7},
}

NO_LOSS = ('stack_table_full', 'stack_hash_clash', 'stack_no_scratch', 'stack_efault', 'stack_other')


def base_name(symbol):
    """A C function's name without gcc's clone suffix (child_site_a.constprop.0 is child_site_a)."""
    return (symbol or '').split('.')[0]


def chain_to_main(stack):
    chain = [base_name(f['symbol']) for f in stack['frames']]
    return tuple(chain[:chain.index('main') + 1]) if 'main' in chain else tuple(chain)


class ChildExecTest(harness.DaemonTestCase):

    def run_child(self, program, *args):
        """memleakctl run --follow-forks -- sh -c 'PROGRAM ARGS; true' on a daemon of its own (no
        table of the program loaded or cached before); returns (report, the child's target)."""
        daemon = self.start_daemon()
        path = os.path.join(harness.PROGRAMS_DIR, program)
        r, report = self.run_json(daemon, '/bin/sh', '-c', ' '.join([path, *args, '; true']),
                                  options=('--follow-forks',))
        self.assertEqual(r.returncode, 0, r.stderr)
        [parent] = [t for t in report['targets'] if t['forked_from'] is None]
        self.assertEqual(parent['comm'], 'sh', parent)
        children = [t for t in report['targets'] if t['forked_from'] == parent['pid']]
        self.assertEqual(len(children), 1, report['targets'])
        # the child was held at its new code (its exec at least), each hold answered in time
        [status] = [t for t in daemon.status()['targets'] if t['pid'] == children[0]['pid']]
        held = status['unwind']['held_at_new_code']
        self.assertGreaterEqual(held['holds'], 1, status)
        self.assertEqual(held['past_limit'], 0, status)
        return report, children[0]

    def assert_complete(self, report, child, chains, first):
        """Every stack of the child is walked to its start (nothing stopped, nothing cut), and
        those through first hold exactly chains."""
        text = harness.format_stacks(report)
        found = {}
        for stack in report['stacks']:
            if stack['pid'] != child['pid']:
                continue
            self.assertIsNone(stack['unwind_stopped'], f'{stack}\n{text}')
            self.assertEqual(stack['addresses_cut'], 0, stack)
            self.assertFalse(stack['truncated'], stack)
            self.assertEqual(stack['frames'][-1]['symbol'], '_start', text)
            if base_name(stack['frames'][0]['symbol']) != first:
                continue
            t = found.setdefault(chain_to_main(stack), {'bytes': 0, 'allocs': 0})
            t['bytes'] += stack['bytes']
            t['allocs'] += stack['allocs']
        self.assertEqual(found, chains, text)
        for counter in NO_LOSS:
            self.assertEqual(report['lost'][counter], 0, report['lost'])

    def test_a_child_that_execs_leaks_on_complete_stacks_under_its_own_name(self):
        report, child = self.run_child(CHILD)
        self.assertEqual(child['comm'], CHILD, child)
        self.assert_complete(report, child, CHILD_CHAINS, 'child_keep')
        self.assertEqual(child['outstanding_bytes'], sum(t['bytes'] for t in CHILD_CHAINS.values()), child)
        self.assertEqual(child['outstanding_allocs'], sum(t['allocs'] for t in CHILD_CHAINS.values()), child)

    def test_a_child_that_execs_then_dlopens_leaks_on_complete_stacks(self):
        report, child = self.run_child(DLOPEN, 'at-once-no-wait')
        self.assertEqual(child['comm'], DLOPEN[:15], child)      # (comm: 15 bytes)
        self.assert_complete(report, child, DLOPEN_CHAINS, 'lib_keep')

    def test_the_program_is_built_without_frame_pointers(self):
        # gcc -fomit-frame-pointer: none of its own functions sets up rbp as a frame pointer, so
        # only its unwind table walks their frames (the DLOPEN pair: test_unwind_chains.py)
        path = os.path.join(harness.PROGRAMS_DIR, CHILD)
        disassembly = subprocess.run(['objdump', '-d', '--no-show-raw-insn', path], capture_output=True,
                                     text=True, check=True).stdout
        functions, function = {}, None
        for line in disassembly.splitlines():
            m = re.match(r'^[0-9a-f]+ <(.+)>:$', line)
            if m:
                function = base_name(m.group(1))
                functions.setdefault(function, False)
            elif function and re.search(r'\bmov\s+%rsp,%rbp\b', line):
                functions[function] = True
        own = {name for chain in CHILD_CHAINS for name in chain}
        self.assertEqual({name: functions.get(name) for name in own}, {name: False for name in own})

if __name__ == '__main__':
    unittest.main()
