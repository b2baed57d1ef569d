# SPDX-License-Identifier: MIT
"""The kernel memory of memleakd's BPF maps: small at the default sizes (the big maps take memory
for the entries they hold, not for their limits; the table of outstanding heap blocks and the
per-stack totals, a few MiB each, are set up at start), shown in status as it is now and at its most, and growing with what targets
leave outstanding; and the snapshot tick's cost in status."""

import os
import unittest

import harness

# memleakd.conf's defaults for the map sizes (the harness's own config lowers them)
DEFAULT_SIZES = {'max_targets': 64, 'max_allocs': 1048576, 'max_stacks': 131072, 'max_combined': 131072,
                 'max_mmaps': 65536}
BLOCKS = 4 * 32721                     # tests/programs/leak-sample.c: four leaks of 32,721 blocks
KERNEL_BYTES_PER_BLOCK = 8 + 48 + 16 + 32   # the kernel's count per allocs entry: header, node, key, value
# alloc_table at the default max_allocs: 524,288 slots of 48 bytes, set up at start (bpf/alloc-table.h);
# the blocks that find no room there are the allocs map's, taking memory as they come
TABLE_BYTES = 524288 * 48
# a max_allocs whose table (131,072 slots, at most half of it) the two programs below overflow
GROWTH_SIZES = dict(DEFAULT_SIZES, max_allocs=393216)
GROWTH_TABLE_SLOTS = 131072
# the per-stack totals at the default max_combined: 262,144 rows of 32 bytes (bpf/combined-table.h)
COMBINED_BYTES = 262144 * 32


# what the daemon may keep resident past its size at start once every target is gone (glibc's
# malloc trimmed; ASan's allocator, tests/run.sh's second round, keeps caches and shadow of its own)
RSS_SLACK_KB = 8192 if os.environ.get('ASAN_OPTIONS') else 4096
ASAN_GIVES_BACK = {'ASAN_OPTIONS': ':'.join(filter(None, [os.environ.get('ASAN_OPTIONS'), 'quarantine_size_mb=0',
                                                          'allocator_release_to_os_interval_ms=0']))}


def rss_kb(pid):
    with open(f'/proc/{pid}/status') as f:
        return next(int(line.split()[1]) for line in f if line.startswith('VmRSS:'))


class MapMemoryTest(harness.DaemonTestCase):

    def maps(self, daemon):
        return daemon.status()['limits']['maps']

    def test_default_sizes_stay_small(self):
        idle = self.maps(self.start_daemon(config=DEFAULT_SIZES))
        self.assertLess(idle['kernel_bytes'], 64 << 20, idle)
        self.assertGreater(idle['kernel_bytes'], TABLE_BYTES + COMBINED_BYTES, idle)
        self.assertGreater(idle['max_bytes'], 200 << 20, idle)      # every map full

    def test_maps_grow_with_what_is_tracked(self):
        # under ASan (tests/run.sh's second round), its allocator stands in for glibc's: no
        # quarantine, and free memory given back to the system at once, as malloc_trim does
        daemon = self.start_daemon(config=GROWTH_SIZES, env=ASAN_GIVES_BACK)
        idle = self.maps(daemon)
        idle_rss = rss_kb(daemon.proc.pid)

        # two targets leaking 2 * BLOCKS blocks: more than the table holds, so at least the rest
        # are entries of the allocs map, each counted as it comes
        programs = [self.start_program('leak-sample') for _ in range(2)]
        for p in programs:
            daemon.attach(p.pid)
        for p in programs:
            p.run_leaks()
        busy = self.maps(daemon)
        self.assertGreaterEqual(busy['kernel_bytes'] - idle['kernel_bytes'],
                                (2 * BLOCKS - GROWTH_TABLE_SLOTS) * KERNEL_BYTES_PER_BLOCK, busy)
        self.assertLess(busy['kernel_bytes'], busy['max_bytes'], busy)
        self.assertFalse(any(daemon.status()['lost'].values()))
        # status says how full the tables are: every block the two hold is in the allocation table,
        # each within its share (half of max_allocs: two targets traced)
        tables = daemon.status()['limits']['tables']
        self.assertEqual((tables['allocs']['max'], tables['allocs']['share']), (393216, 196608), tables)
        self.assertGreaterEqual(tables['allocs']['held'], 2 * BLOCKS, tables)
        self.assertLess(tables['allocs']['held'], 2 * BLOCKS + 1000, tables)
        self.assertEqual(tables['stacks']['max'], 131072, tables)
        self.assertGreater(tables['stacks']['held'], 0, tables)
        self.assertEqual(tables['per_stack_rows']['max'], 262144, tables)
        self.assertIn('Tables: heap blocks ', daemon.ctl_ok('status').stdout)

        # the snapshot tick says what it cost: its time on the event loop, the rows it read
        cost = harness.wait_until(lambda: (lambda c: c if c['last_rows'] >= 8 else None)(
            daemon.status()['snapshot_cost']), harness.REPORT_TIMEOUT_S)
        self.assertTrue(cost, daemon.status()['snapshot_cost'])
        self.assertGreater(cost['last_ms'], 0, cost)
        self.assertGreaterEqual(cost['max_ms'], cost['last_ms'], cost)
        self.assertEqual(len(daemon.report()['targets']), 2)
        busy_rss = rss_kb(daemon.proc.pid)

        # what the targets held goes with them (memleakd purges the maps off its event loop)
        for p in programs:
            daemon.ctl_ok('detach', '--pid', p.pid)
        after = harness.wait_until(lambda: (lambda m: m if m['kernel_bytes'] < idle['kernel_bytes'] + (1 << 20) else None)(
            self.maps(daemon)), harness.REPORT_TIMEOUT_S)
        self.assertTrue(after, f'the maps still hold {self.maps(daemon)} after the detaches, {idle} before the attaches')
        self.assertEqual(daemon.status()['limits']['tables']['allocs']['held'], 0)
        # and the stacks only they used
        self.assertEqual(daemon.status()['reclaim']['stacks_held'], 0, daemon.status()['reclaim'])
        # and the daemon's own memory: back near its size at start (the tick's mapping of the
        # per-stack totals and its buffers let go, the worker threads' arenas trimmed)
        back = harness.wait_until(lambda: rss_kb(daemon.proc.pid) <= idle_rss + RSS_SLACK_KB, harness.REPORT_TIMEOUT_S)
        self.assertTrue(back, f'RSS {rss_kb(daemon.proc.pid)} kB after the detaches, {busy_rss} kB while tracing, '
                              f'{idle_rss} kB at start')


if __name__ == '__main__':
    unittest.main(verbosity=2)
