/* SPDX-License-Identifier: MIT */
/* Tests for map-budget.c: the maps' kernel memory at given sizes, and what a machine may give them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "map-budget.h"
#include "test-util.h"

static struct bpf_sizes defaults(void)
{
        return (struct bpf_sizes) {
                .max_targets = CONFIG_MAX_TARGETS_DEFAULT,
                .max_allocs = CONFIG_MAX_ALLOCS_DEFAULT,
                .max_stacks = CONFIG_MAX_STACKS_DEFAULT,
                .max_combined = CONFIG_MAX_STACKS_DEFAULT,
                .max_inflight = CONFIG_MAP_ENTRIES_DEFAULT,
                .max_mmaps = CONFIG_MAP_ENTRIES_DEFAULT,
                .max_stack_depth = CONFIG_MAX_STACK_DEPTH_DEFAULT,
        };
}

static void estimate_matches_what_the_kernel_counts_for_the_defaults(void)
{
        struct bpf_sizes s = defaults();
        /* The "memlock" lines of the maps' fdinfo for the defaults on Linux 6.18, summed, with
         * the stack table empty; then full, each stack a 1,024-byte block from bpf_mem_alloc. */
        const uint64_t measured = 147828328 + (uint64_t)CONFIG_MAX_STACKS_DEFAULT * 1024;
        uint64_t e = map_budget_estimate(&s);

        ASSERT_TRUE(e >= measured - measured / 100);
        ASSERT_TRUE(e <= measured + measured / 100);
}

static void estimate_grows_with_every_size(void)
{
        struct bpf_sizes base = defaults(), s;
        uint64_t e = map_budget_estimate(&base);

        s = base; s.max_allocs *= 2; ASSERT_TRUE(map_budget_estimate(&s) > e + 80 * (uint64_t)base.max_allocs);
        s = base; s.max_stacks *= 2; ASSERT_TRUE(map_budget_estimate(&s) > e + 1000 * (uint64_t)base.max_stacks);
        s = base; s.max_stack_depth = 8; ASSERT_TRUE(map_budget_estimate(&s) < e);
        s = base; s.max_combined *= 2; ASSERT_TRUE(map_budget_estimate(&s) > e);
        s = base; s.max_inflight *= 2; ASSERT_TRUE(map_budget_estimate(&s) > e);
        s = base; s.max_mmaps *= 2; ASSERT_TRUE(map_budget_estimate(&s) > e);
}

static void every_size_at_its_maximum_is_more_than_a_24_gib_machine_holds(void)
{
        struct bpf_sizes s = {
                .max_targets = CONFIG_MAX_TARGETS_MAX,
                .max_allocs = CONFIG_MAX_ALLOCS_MAX,
                .max_stacks = CONFIG_MAP_ENTRIES_MAX,
                .max_combined = CONFIG_MAP_ENTRIES_MAX,
                .max_inflight = CONFIG_MAP_ENTRIES_MAX,
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

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(estimate_matches_what_the_kernel_counts_for_the_defaults),
                TEST(estimate_grows_with_every_size),
                TEST(every_size_at_its_maximum_is_more_than_a_24_gib_machine_holds),
                TEST(allowed_is_the_smallest_of_available_half_the_memory_and_the_cgroup_share),
                TEST(limits_are_read_from_a_meminfo_file),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
