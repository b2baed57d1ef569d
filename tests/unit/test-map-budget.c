/* SPDX-License-Identifier: MIT */
/* Tests for map-budget.c (the maps' kernel memory at given sizes, and what a machine may give them)
 * and map-memory.c (what they hold now). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "map-budget.h"
#include "map-memory.h"
#include "test-util.h"

static struct bpf_sizes defaults(void)
{
        return (struct bpf_sizes) {
                .max_targets = CONFIG_MAX_TARGETS_DEFAULT,
                .max_allocs = CONFIG_MAX_ALLOCS_DEFAULT,
                .max_stacks = CONFIG_MAX_STACKS_DEFAULT,
                .max_combined = CONFIG_MAX_STACKS_DEFAULT,
                .max_mmaps = CONFIG_MAP_ENTRIES_DEFAULT,
                .max_stack_depth = CONFIG_MAX_STACK_DEPTH_DEFAULT,
        };
}

static void estimate_matches_what_the_kernel_counts_for_the_defaults(void)
{
        struct bpf_sizes s = defaults();
        /* The "memlock" lines of the maps' fdinfo for the defaults on Linux 6.18, summed, the
         * maps empty (memleakctl status: limits.maps.kernel_bytes). Full, the kernel counts for
         * each entry of a map that allocates as it goes its node (48 bytes), key, value and
         * bpf_mem_alloc's 8-byte header; the estimate counts the block that holds them, up to
         * a quarter more. Empty, alloc_table's 24 MiB and the combined table's 8 MiB are in,
         * set up at load. */
        const uint64_t empty = 49220744;
        const uint64_t counted_full = empty +
                                      (uint64_t)(s.max_allocs - map_budget_alloc_table_slots(s.max_allocs)) *
                                              (8 + 48 + 16 + 32) +
                                      (uint64_t)s.max_mmaps * (8 + 48 + 16 + 32) +
                                      (uint64_t)s.max_stacks * (8 + 48 + 8 + 8 * 120);
        uint64_t e = map_budget_estimate(&s);

        ASSERT_TRUE(e >= counted_full);
        ASSERT_TRUE(e <= counted_full + counted_full / 4);
}

static void estimate_grows_with_every_size(void)
{
        struct bpf_sizes base = defaults(), s;
        uint64_t e = map_budget_estimate(&base);

        s = base; s.max_allocs *= 2; ASSERT_TRUE(map_budget_estimate(&s) > e + 80 * (uint64_t)base.max_allocs);
        s = base; s.max_stacks *= 2; ASSERT_TRUE(map_budget_estimate(&s) > e + 1000 * (uint64_t)base.max_stacks);
        s = base; s.max_stack_depth = 8; ASSERT_TRUE(map_budget_estimate(&s) < e);
        s = base; s.max_combined *= 2; ASSERT_TRUE(map_budget_estimate(&s) > e);
        s = base; s.max_mmaps *= 2; ASSERT_TRUE(map_budget_estimate(&s) > e);
}

static void outstanding_blocks_are_split_between_the_table_and_the_allocs_map(void)
{
        static const uint32_t max_allocs[] = { CONFIG_MAX_ALLOCS_MIN, 1025, 100000, 262143, 262144,
                                               CONFIG_MAX_ALLOCS_DEFAULT, CONFIG_MAX_ALLOCS_MAX };
        static const uint32_t slots[] = { 512, 512, 32768, 65536, 131072, ALLOC_TABLE_SLOTS_MAX,
                                          ALLOC_TABLE_SLOTS_MAX };

        for (size_t i = 0; i < ELEMENTSOF(max_allocs); i++) {
                uint32_t n = map_budget_alloc_table_slots(max_allocs[i]);

                ASSERT_EQ(n, slots[i]);
                ASSERT_EQ(n & (n - 1), 0);              /* a power of two: the window's mask */
                ASSERT_TRUE(n <= max_allocs[i] / 2);    /* the allocs map keeps the other half or more */
        }
}

static void every_size_at_its_maximum_is_more_than_a_24_gib_machine_holds(void)
{
        struct bpf_sizes s = {
                .max_targets = CONFIG_MAX_TARGETS_MAX,
                .max_allocs = CONFIG_MAX_ALLOCS_MAX,
                .max_stacks = CONFIG_MAP_ENTRIES_MAX,
                .max_combined = CONFIG_MAP_ENTRIES_MAX,
                .max_mmaps = CONFIG_MAP_ENTRIES_MAX,
                .max_stack_depth = CONFIG_MAX_STACK_DEPTH_MAX,
        };
        struct memory_limits machine = { .mem_total = 24ULL << 30, .mem_available = 22ULL << 30,
                                         .cgroup_max = UINT64_MAX };

        ASSERT_TRUE(map_budget_estimate(&s) > (24ULL << 30));
        ASSERT_TRUE(map_budget_estimate(&s) > map_budget_allowed(&machine));
        s = defaults();
        ASSERT_TRUE(map_budget_estimate(&s) < map_budget_allowed(&machine));
}

static void allowed_is_the_smallest_of_available_half_the_memory_and_the_cgroup_share(void)
{
        ASSERT_EQ(map_budget_allowed(&(struct memory_limits) { 1000, 800, UINT64_MAX }), 500);
        ASSERT_EQ(map_budget_allowed(&(struct memory_limits) { 1000, 300, UINT64_MAX }), 300);
        ASSERT_EQ(map_budget_allowed(&(struct memory_limits) { 1000, 800, 400 }), 300);
}

static void limits_are_read_from_a_meminfo_file(void)
{
        char path[] = "/tmp/test-map-budget.XXXXXX";
        int fd = mkstemp(path);
        struct memory_limits l;
        FILE *f;

        ASSERT_TRUE(fd >= 0);
        f = fdopen(fd, "w");
        ASSERT_TRUE(f);
        fputs("MemTotal:       24594512 kB\nMemFree:        20000000 kB\nMemAvailable:   22000000 kB\n", f);
        fclose(f);
        ASSERT_EQ(map_budget_read_limits(path, &l), 0);
        ASSERT_EQ(l.mem_total, 24594512ULL * 1024);
        ASSERT_EQ(l.mem_available, 22000000ULL * 1024);
        unlink(path);
        ASSERT_EQ(map_budget_read_limits("/nonexistent/meminfo", &l), -2);
}

static void memlock_is_read_from_a_maps_fdinfo(void)
{
        uint64_t v = 0;

        ASSERT_EQ(map_memory_parse_fdinfo("pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t2068\n"
                                          "map_type:\t1\nkey_size:\t16\nvalue_size:\t32\n"
                                          "max_entries:\t1000000\nmap_flags:\t0x1\nmap_extra:\t0x0\n"
                                          "memlock:\t16787872\nmap_id:\t52\nfrozen:\t0\n", &v), 0);
        ASSERT_EQ(v, 16787872);
        ASSERT_EQ(map_memory_parse_fdinfo("memlock:\t42", &v), 0);
        ASSERT_EQ(v, 42);
        ASSERT_EQ(map_memory_parse_fdinfo("pos:\t0\nflags:\t02\n", &v), -ENOENT);
        ASSERT_EQ(map_memory_parse_fdinfo("memlock:\tmany\n", &v), -EINVAL);
        ASSERT_EQ(map_memory_parse_fdinfo("", &v), -ENOENT);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(estimate_matches_what_the_kernel_counts_for_the_defaults),
                TEST(estimate_grows_with_every_size),
                TEST(outstanding_blocks_are_split_between_the_table_and_the_allocs_map),
                TEST(every_size_at_its_maximum_is_more_than_a_24_gib_machine_holds),
                TEST(allowed_is_the_smallest_of_available_half_the_memory_and_the_cgroup_share),
                TEST(limits_are_read_from_a_meminfo_file),
                TEST(memlock_is_read_from_a_maps_fdinfo),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
