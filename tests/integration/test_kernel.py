# SPDX-License-Identifier: MIT
"""The kernel target under a real memleakd: kernel objects a helper makes, holds and releases.

tests/programs/kernel-objects makes the kernel allocate on command. Filtered by its pid, the
kernel target sees exactly what it caused: per eventfd one kmalloc'd eventfd_ctx and one struct
file from the filp cache, one page per pipe write, one percpu allocation per entry of a BPF
per-CPU array. Each lands on one stack, with that exact count; once the helper closes them, the
kernel frees them (struct file after an RCU grace period, the percpu array from a workqueue)
and the stacks go.
"""

import glob
import json
import os
import struct
import subprocess
import unittest

import harness

PROGRAM = 'kernel-objects'
KERNEL_PID = 0
TRACEPOINTS = ['kmem:kmalloc', 'kmem:kfree', 'kmem:kmem_cache_alloc', 'kmem:kmem_cache_free',
               'kmem:mm_page_alloc', 'kmem:mm_page_free', 'percpu:percpu_alloc_percpu',
               'percpu:percpu_free_percpu']
PROGRAMS = {'tp_kmalloc', 'tp_kfree', 'tp_cache_alloc', 'tp_cache_free', 'tp_page_alloc',
            'tp_page_free', 'tp_percpu_alloc', 'tp_percpu_free'}
PAGE_SIZE = 4096
PIPE_WRITERS = {'anon_pipe_write', 'pipe_write'}      # 6.14 renamed pipe_write for anonymous pipes
FREE_TIMEOUT_S = 20                                   # RCU grace periods and workqueues


def running_kernel_build_id():
    """The GNU build ID among the running kernel's ELF notes (/sys/kernel/notes), as hex."""
    with open('/sys/kernel/notes', 'rb') as f:
        notes = f.read()
    at = 0
    while at + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from('=III', notes, at)
        name = notes[at + 12:at + 12 + namesz]
        desc_at = at + 12 + (namesz + 3) // 4 * 4
        if kind == 3 and name == b'GNU\0':     # NT_GNU_BUILD_ID
            return notes[desc_at:desc_at + descsz].hex()
        at = desc_at + (descsz + 3) // 4 * 4
    raise AssertionError('no build ID among the kernel\'s notes')


def symbols(stack):
    return [f.get('symbol') for f in stack['frames']]


def called_from(stack, caller, allocator_prefixes):
    """Whether stack is an allocator (its first frame starts with one of allocator_prefixes)
    called by caller: the first frame that is not the allocator's own is caller."""
    names = symbols(stack)
    if not names or not names[0] or not names[0].startswith(allocator_prefixes):
        return False
    for name in names:
        if name and name.startswith(allocator_prefixes + ('alloc_pages', '__alloc_pages', 'alloc_frozen',
                                                          '__alloc_frozen', 'folio_alloc')):
            continue
        return name == caller or (isinstance(caller, (set, frozenset)) and name in caller)
    return False


def eventfd_objects(report):
    """Stacks of what eventfd() allocated. A slab page a cache grew by on the way (allocate_slab)
    is not among them: the cache keeps it when its objects are freed."""
    return [s for s in report['stacks'] if 'do_eventfd' in symbols(s) and 'allocate_slab' not in symbols(s)]


def kmalloc_sizes():
    """The kmalloc size classes of this kernel (SLUB's sysfs names its caches kmalloc-N)."""
    sizes = set()
    for path in glob.glob('/sys/kernel/slab/kmalloc-*'):
        suffix = os.path.basename(path).rsplit('-', 1)[1]
        if suffix.endswith('k') and suffix[:-1].isdigit():
            sizes.add(int(suffix[:-1]) * 1024)
        elif suffix.isdigit():
            sizes.add(int(suffix))
    return sizes


def slab_size(cache):
    with open(f'/sys/kernel/slab/{cache}/slab_size') as f:
        return int(f.read())


def bpf_ids_held_by(pid, key):
    """The BPF object ids (key 'prog_id' or 'link_id') whose fds process pid holds."""
    ids = set()
    for path in glob.glob(f'/proc/{pid}/fdinfo/*'):
        try:
            with open(path) as f:
                fields = dict(line.rstrip('\n').split(':\t', 1) for line in f if ':\t' in line)
        except (FileNotFoundError, ProcessLookupError):
            continue
        if key in fields and (key != 'prog_id' or 'link_id' not in fields):
            ids.add(int(fields[key]))
    return ids


def kernel_links_of(prog_ids):
    """Links anywhere on the system that run one of prog_ids on an event, from bpftool (not the
    iterator the snapshot tick reads the per-stack totals through, which the daemon always has)."""
    out = subprocess.run(['bpftool', 'link', 'list', '-j'], capture_output=True, text=True, check=True).stdout
    return [link for link in harness.load_json(out or '[]')
            if link.get('prog_id') in prog_ids and link.get('type') != 'iter']


class KernelObjects:
    """The helper, driven line by line."""

    def __init__(self, test):
        self.program = test.start_program(PROGRAM)
        self.pid = self.program.pid

    def do(self, command):
        self.program.proc.stdin.write(command.encode() + b'\n')
        self.program.proc.stdin.flush()
        self.program.expect('done')


class KernelTargetTest(harness.DaemonTestCase):

    def attach_kernel(self, daemon, *filters):
        args = ['attach', '--kernel']
        for f in filters:
            args += ['--kernel-filter', f]
        reply = daemon.ctl_json(*args)
        target = reply['target']
        self.assertEqual((target['pid'], target['comm'], target['exited'], target['allocator']),
                         (KERNEL_PID, '[kernel]', False, 'kernel'), reply)
        self.assertEqual([o['path'] for o in target['objects']], TRACEPOINTS, reply)
        self.assertEqual({o['probes'] for o in target['objects']}, {1}, reply)
        self.assertEqual({o['role'] for o in target['objects']}, {'tracepoint'}, reply)
        return target

    def kernel_report(self, daemon):
        return daemon.ctl_json('report', '--kernel', '--top', harness.UNLIMITED_TOP)

    def wait_for_stacks(self, daemon, want, timeout=harness.REPORT_TIMEOUT_S):
        """Poll the kernel report until want(report) is true; return the last report."""
        last = {}

        def check():
            last['report'] = self.kernel_report(daemon)
            return want(last['report'])

        harness.wait_until(check, timeout, interval=0.1)
        return last['report']

    def matching(self, report, caller, allocators):
        return [s for s in report['stacks'] if called_from(s, caller, allocators)]

    def assert_one_stack(self, report, caller, allocators, allocs, what):
        stacks = self.matching(report, caller, allocators)
        self.assertEqual([s['allocs'] for s in stacks], [allocs],
                         f'{what}: one stack of {allocs} allocations from {allocators} called by {caller}; '
                         f'lost: {report["lost"]}; stacks:\n{harness.format_stacks(report)}')
        self.assertIsNone(stacks[0]['stack_error'])
        self.assertEqual(stacks[0]['pid'], KERNEL_PID)
        return stacks[0]

    def test_eventfds_appear_with_exact_counts_then_their_bytes_fall(self):
        n = 37

        def scenario():
            daemon = self.start_daemon()
            helper = KernelObjects(self)
            self.attach_kernel(daemon, f'pid={helper.pid}')
            helper.do(f'eventfds {n}')

            def complete(report):
                return (len(self.matching(report, 'do_eventfd', ('__kmalloc', 'kmalloc'))) == 1 and
                        [s['allocs'] for s in self.matching(report, 'do_eventfd', ('__kmalloc', 'kmalloc'))] == [n] and
                        [s['allocs'] for s in self.matching(report, 'alloc_empty_file', ('kmem_cache_alloc',))] == [n])

            report = self.wait_for_stacks(daemon, complete)
            ctx = self.assert_one_stack(report, 'do_eventfd', ('__kmalloc', 'kmalloc'), n, 'eventfd_ctx')
            self.assertEqual(ctx['bytes'] % n, 0, ctx)
            self.assertIn(ctx['bytes'] // n, kmalloc_sizes(), f'{ctx["bytes"]} bytes for {n} kmalloc objects')
            files = self.assert_one_stack(report, 'alloc_empty_file', ('kmem_cache_alloc',), n, 'struct file')
            self.assertEqual(files['bytes'], n * slab_size('filp'), files)
            self.assertIn('do_eventfd', symbols(files), files)
            return daemon, helper, report

        daemon, helper, report = scenario()
        target = [t for t in report['targets'] if t['pid'] == KERNEL_PID]
        self.assertEqual(len(target), 1, report['targets'])
        self.assertEqual(target[0]['outstanding_bytes'], sum(s['bytes'] for s in report['stacks']))
        self.assertEqual(target[0]['outstanding_allocs'], sum(s['allocs'] for s in report['stacks']))

        helper.do('close')
        after = self.wait_for_stacks(daemon, lambda r: not eventfd_objects(r), timeout=FREE_TIMEOUT_S)
        self.assertEqual(eventfd_objects(after), [],
                         f'eventfd stacks left after close:\n{harness.format_stacks(after)}')
        fallen = [t for t in after['targets'] if t['pid'] == KERNEL_PID][0]
        self.assertLessEqual(fallen['outstanding_bytes'],
                             target[0]['outstanding_bytes'] - n * slab_size('filp'), after['targets'])

    def test_pipe_pages_are_whole_pages_and_go_when_the_pipe_closes(self):
        pages = 11

        def scenario():
            daemon = self.start_daemon()
            helper = KernelObjects(self)
            self.attach_kernel(daemon, f'pid={helper.pid}')
            helper.do(f'pipe-pages {pages}')
            report = self.wait_for_stacks(
                daemon, lambda r: [s['allocs'] for s in self.matching(r, PIPE_WRITERS, ('__alloc_', 'alloc_'))] == [pages])
            stack = self.assert_one_stack(report, PIPE_WRITERS, ('__alloc_', 'alloc_'), pages, 'pipe pages')
            self.assertEqual(stack['bytes'], pages * PAGE_SIZE, stack)
            return daemon, helper

        daemon, helper = scenario()
        helper.do('close')
        after = self.wait_for_stacks(
            daemon, lambda r: not self.matching(r, PIPE_WRITERS, ('__alloc_', 'alloc_')), timeout=FREE_TIMEOUT_S)
        self.assertEqual(self.matching(after, PIPE_WRITERS, ('__alloc_', 'alloc_')), [],
                         harness.format_stacks(after))

    def test_percpu_array_entries_are_percpu_allocations_freed_with_the_map(self):
        entries = 7

        def scenario():
            daemon = self.start_daemon()
            helper = KernelObjects(self)
            self.attach_kernel(daemon, f'pid={helper.pid}')
            helper.do(f'percpu {entries}')
            report = self.wait_for_stacks(
                daemon, lambda r: [s['allocs'] for s in self.matching(r, 'bpf_map_alloc_percpu', ('pcpu_alloc',))] == [entries])
            stack = self.assert_one_stack(report, 'bpf_map_alloc_percpu', ('pcpu_alloc',), entries, 'percpu')
            with open('/sys/devices/system/cpu/possible') as f:
                ranges = [r.split('-') for r in f.read().strip().split(',')]
            possible = sum(int(r[-1]) - int(r[0]) + 1 for r in ranges)
            # 24 bytes per CPU (the map's value size), plus what memcg keeps per object when it
            # accounts percpu memory: the same for each entry.
            self.assertEqual(stack['bytes'] % entries, 0, stack)
            self.assertGreaterEqual(stack['bytes'] // entries, 24 * possible, stack)
            self.assertIn('array_map_alloc', symbols(stack), stack)
            return daemon, helper

        daemon, helper = scenario()
        helper.do('close')
        after = self.wait_for_stacks(
            daemon, lambda r: not self.matching(r, 'bpf_map_alloc_percpu', ('pcpu_alloc',)), timeout=FREE_TIMEOUT_S)
        self.assertEqual(self.matching(after, 'bpf_map_alloc_percpu', ('pcpu_alloc',)), [],
                         harness.format_stacks(after))

    def test_pid_filter_leaves_other_processes_out_and_comm_filter_takes_them_in(self):
        def scenario(filters, expected):
            daemon = self.start_daemon()
            first, second = KernelObjects(self), KernelObjects(self)
            self.attach_kernel(daemon, *[f.format(pid=first.pid) for f in filters])
            first.do('eventfds 5')
            second.do('eventfds 8')
            report = self.wait_for_stacks(
                daemon, lambda r: [s['allocs'] for s in self.matching(r, 'do_eventfd', ('__kmalloc', 'kmalloc'))] == [expected])
            self.assert_one_stack(report, 'do_eventfd', ('__kmalloc', 'kmalloc'), expected, f'filters {filters}')
            return daemon

        daemon = scenario(['pid={pid}'], 5)
        self.assertRegex(daemon.status()['targets'][0]['allocator_reason'], r'allocations by pid \d+')
        # kernel-objects is both helpers' comm; the pid narrows it to the first again.
        scenario([f'comm={PROGRAM}'], 13)
        scenario([f'comm={PROGRAM}', 'pid={pid}'], 5)

    def test_unfiltered_kernel_target_sees_the_helpers_objects_too(self):
        n = 23
        # Every task's allocations land in the maps: room for what the rest of the system does meanwhile.
        daemon = self.start_daemon(config={'max_allocs': 1000000, 'max_combined': 65536})
        helper = KernelObjects(self)
        self.attach_kernel(daemon)
        self.assertRegex(daemon.status()['targets'][0]['allocator_reason'], r'every task but memleakd')
        helper.do(f'eventfds {n}')
        # Other processes may make eventfds meanwhile: at least the helper's.
        report = self.wait_for_stacks(
            daemon, lambda r: sum(s['allocs'] for s in self.matching(r, 'do_eventfd', ('__kmalloc', 'kmalloc'))) >= n)
        before = sum(s['allocs'] for s in self.matching(report, 'do_eventfd', ('__kmalloc', 'kmalloc')))
        self.assertGreaterEqual(before, n, harness.format_stacks(report))
        helper.do('close')
        after = self.wait_for_stacks(
            daemon, lambda r: sum(s['allocs'] for s in self.matching(r, 'do_eventfd', ('__kmalloc', 'kmalloc'))) <= before - n,
            timeout=FREE_TIMEOUT_S)
        self.assertLessEqual(sum(s['allocs'] for s in self.matching(after, 'do_eventfd', ('__kmalloc', 'kmalloc'))),
                             before - n, harness.format_stacks(after))

    def test_memleakds_own_allocations_are_left_out(self):
        daemon = self.start_daemon()
        self.attach_kernel(daemon, f'pid={daemon.proc.pid}')
        # Reports read every map and write large replies: plenty of kernel allocations by memleakd.
        for _ in range(5):
            report = self.kernel_report(daemon)
        self.assertEqual(report['stacks'], [], harness.format_stacks(report))
        self.assertEqual(daemon.status()['counters']['allocs'], 0)

    def test_kernel_frames_show_symbol_offset_and_module(self):
        daemon = self.start_daemon()
        helper = KernelObjects(self)
        self.attach_kernel(daemon, f'pid={helper.pid}')
        helper.do('eventfds 3')
        report = self.wait_for_stacks(daemon, lambda r: self.matching(r, 'do_eventfd', ('__kmalloc', 'kmalloc')))
        stacks = self.matching(report, 'do_eventfd', ('__kmalloc', 'kmalloc'))
        self.assertTrue(stacks, f'no stack starts at kmalloc called by do_eventfd:\n{harness.format_stacks(report)}')
        stack = stacks[0]
        self.assertGreaterEqual(len(stack['frames']), 3, stack)
        for frame in stack['frames']:
            self.assertRegex(frame['addr'], r'^0xffff[0-9a-f]{12}$', frame)
            self.assertRegex(frame['symbol'], r'^\w+(\.\w+)*$', frame)
            self.assertIsInstance(frame['offset'], int, frame)
            self.assertGreater(frame['offset'], 0, frame)       # return addresses: past the call
            self.assertEqual(frame['module'], '[kernel]', frame)
            self.assertEqual(frame['build_id'], running_kernel_build_id(), frame)
            self.assertIsNone(frame['file'], frame)
        # memleakd's own probe frames (its program, bpf_trace_run*, __traceiter_*) are not shown.
        names = symbols(stack)
        self.assertFalse([n for n in names if n.startswith(('bpf_prog_', 'bpf_trace_run', '__traceiter_'))], names)
        text = daemon.ctl_ok('report', '--kernel', '--top', harness.UNLIMITED_TOP).stdout
        self.assertRegex(text, r'\n\t\tdo_eventfd\+0x[0-9a-f]+ \[kernel\]\n', text)
        self.assertRegex(text, r'pid 0 \(\[kernel\]\): \d+ bytes in \d+ allocations? outstanding', text)
        self.assertNotIn('[[kernel]]', text)

    def test_detach_leaves_no_tracepoint_attached(self):
        daemon = self.start_daemon()
        programs = bpf_ids_held_by(daemon.proc.pid, 'prog_id')
        self.assertTrue(programs, f'memleakd {daemon.proc.pid} holds no BPF program fds')
        self.assertEqual(kernel_links_of(programs), [], 'links before any attach')
        for round_ in range(2):         # and again: the kernel target can come back
            self.attach_kernel(daemon)
            links = kernel_links_of(programs)
            self.assertEqual(sorted(link['tp_name'] for link in links),
                             sorted(tp.split(':')[1] for tp in TRACEPOINTS), links)
            self.assertEqual({link['type'] for link in links}, {'raw_tracepoint'}, links)
            reply = daemon.ctl_json('detach', '--kernel')
            self.assertEqual(reply['target']['pid'], KERNEL_PID)
            left = harness.wait_until(lambda: not kernel_links_of(programs), harness.REPORT_TIMEOUT_S)
            self.assertTrue(left, f'round {round_}: links left after detach: {kernel_links_of(programs)}')
            self.assertEqual(daemon.status()['targets'], [])

    def test_a_restart_adopts_the_kernel_target_with_what_it_recorded_meanwhile(self):
        # memleakd SIGKILLed: the tracepoint links stay pinned and record; the next memleakd
        # takes the kernel target back, the objects made before and while it was down exact
        daemon = self.start_daemon()
        helper = KernelObjects(self)
        self.attach_kernel(daemon, f'pid={helper.pid}')
        helper.do('eventfds 30')
        self.wait_for_stacks(daemon, lambda r: [s['allocs'] for s in self.matching(
            r, 'do_eventfd', ('__kmalloc', 'kmalloc'))] == [30])
        state = os.path.join(daemon.state_directory, 'targets.json')

        def listed():
            try:
                with open(state) as f:
                    return '"kernel":true' in f.read()
            except FileNotFoundError:
                return False

        self.assertTrue(harness.wait_until(listed, 5), f'{state} does not list the kernel target')
        daemon.stopped_on_purpose = True
        daemon.proc.kill()
        daemon.proc.wait(15)
        helper.do('eventfds 12')
        again = harness.Daemon(daemon.workdir)
        self.daemons.append(again)
        self.addCleanup(self._stop_daemon_at_cleanup, again)
        again.start()
        [target] = again.status()['targets']
        self.assertEqual((target['pid'], target['adopted'], target['phase']), (KERNEL_PID, True, 'recording'), target)
        self.assertIn('Adopted the kernel target', again.log())
        report = self.wait_for_stacks(again, lambda r: [s['allocs'] for s in self.matching(
            r, 'do_eventfd', ('__kmalloc', 'kmalloc'))] == [42])
        self.assert_one_stack(report, 'do_eventfd', ('__kmalloc', 'kmalloc'), 42, 'eventfd_ctx after the restart')
        self.assert_one_stack(report, 'alloc_empty_file', ('kmem_cache_alloc',), 42, 'struct file after the restart')
        # its links go on recording, frees too; a detach leaves none pinned
        helper.do('close')
        after = self.wait_for_stacks(again, lambda r: not eventfd_objects(r), timeout=FREE_TIMEOUT_S)
        self.assertEqual(eventfd_objects(after), [], harness.format_stacks(after))
        again.ctl_json('detach', '--kernel')
        links = os.path.join(again.pin_directory, 'links')
        self.assertTrue(harness.wait_until(lambda: not [n for n in os.listdir(links) if n.startswith('s')], 5),
                        os.listdir(links))

    def test_kernel_target_errors(self):
        daemon = self.start_daemon()
        r = daemon.ctl('--json', 'detach', '--kernel')
        self.assertEqual((r.returncode, harness.load_json(r.stdout)['error']['code']), (1, 'ESRCH'), r)
        r = daemon.ctl('--json', 'report', '--kernel')
        self.assertEqual((r.returncode, harness.load_json(r.stdout)['error']['code']), (1, 'ESRCH'), r)
        self.attach_kernel(daemon)
        r = daemon.ctl('--json', 'attach', '--kernel')
        self.assertEqual((r.returncode, harness.load_json(r.stdout)['error']['code']), (1, 'EEXIST'), r)
        for bad in (['attach', '--kernel', '--pid', '1'], ['attach', '--kernel-filter', 'pid=1', '--pid', '1'],
                    ['attach', '--kernel', '--kernel-filter', 'uid=0'],
                    ['attach', '--kernel', '--kernel-filter', 'comm=0123456789abcdef'],
                    ['report', '--kernel', '--pid', '1'], ['detach']):
            r = daemon.ctl(*bad)
            self.assertEqual(r.returncode, 2, f'memleakctl {bad}: {r}')

    def test_a_full_allocations_map_counts_what_it_could_not_keep(self):
        n = 900         # 4 kernel objects each (eventfd_ctx, file, dentry, LSM blob): past 1024
        daemon = self.start_daemon(config={'max_allocs': 1024})
        helper = KernelObjects(self)
        self.attach_kernel(daemon, f'pid={helper.pid}')
        helper.do(f'eventfds {n}')
        report = self.kernel_report(daemon)
        target = [t for t in report['targets'] if t['pid'] == KERNEL_PID][0]
        self.assertLessEqual(target['outstanding_allocs'], 1024, report['targets'])
        self.assertGreaterEqual(report['lost']['allocs_map_full'], 3 * n - 1024, report['lost'])


if __name__ == '__main__':
    unittest.main(verbosity=2)
