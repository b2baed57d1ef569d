/* SPDX-License-Identifier: MIT */
/* Unit tests for combined-table.c, stack-totals.c's read of the table and mapped-array.c's purge:
 * real BPF arrays, mapped as the daemon maps BPF's tables, written as BPF writes them (needs root,
 * as the daemon). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf-types.h"
#include "combined-table.h"
#include "macro.h"
#include "stack-totals.h"
#include "test-util.h"

#define ROWS 64u

static int make_array(size_t value_size)
{
        LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
        int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_slots", sizeof(__u32), (__u32)value_size, ROWS, &opts);

        ASSERT_TRUE(fd >= 0);
        return fd;
}

static int make_table(void)
{
        return make_array(sizeof(struct combined_row));
}

static void put(struct combined_row *rows, uint32_t i, uint32_t tgid, uint32_t space, uint32_t state,
                int64_t stack_id, int64_t bytes, int64_t allocs)
{
        rows[i] = (struct combined_row) { .word = COMBINED_ROW_WORD(tgid, space, state), .stack_id = stack_id,
                                          .bytes = (uint64_t)bytes, .allocs = (uint64_t)allocs };
}

static void live_rows_are_read_summed_and_purged_by_target(void)
{
        int fd = make_table();
        struct mapped_array table = {};
        struct stack_totals *t = NULL;
        const struct stack_total *got;
        const pid_t both[] = { 7, 9 }, nine[] = { 9 };
        struct combined_row *rows;
        size_t n;

        ASSERT_EQ(mapped_array_open(fd, sizeof(struct combined_row), &table), 0);
        ASSERT_EQ(table.n, ROWS);
        rows = table.values;
        /* a stack with two rows (two CPUs made its row at once): its 100-byte block went to the
         * first, its 50-byte one to the second, whose free took from the first, at no
         * allocation and 50 bytes now */
        put(rows, 0, 7, 0, ALLOC_SLOT_LIVE, 300, 50, 0);
        put(rows, 63, 7, 0, ALLOC_SLOT_LIVE, 300, 50, 1);
        put(rows, 5, 7, ALLOC_SPACE_MMAP, ALLOC_SLOT_LIVE, 300, 8192, 2);
        put(rows, 6, 7, 0, ALLOC_SLOT_LIVE, -14, 12, 3);        /* no stack: -EFAULT */
        put(rows, 7, 7, 0, ALLOC_SLOT_LIVE, 301, 0, 0);         /* all freed */
        put(rows, 8, 7, 0, ALLOC_SLOT_BUSY, 302, 64, 1);        /* being made */
        put(rows, 9, 7, 0, ALLOC_SLOT_FREE, 303, 64, 1);        /* a gone target's */
        put(rows, 10, 9, 0, ALLOC_SLOT_LIVE, 300, 32, 4);
        put(rows, 11, 11, 0, ALLOC_SLOT_LIVE, 400, 32, 4);      /* a target not asked for */
        /* pid 9's stack 300 from two more stripes of CPUs: one key, its rows summed; a block
         * added on one stripe and taken on another would leave them -16 and +16 */
        put(rows, 12, 9, COMBINED_SPACE_STRIPE(0, 3), ALLOC_SLOT_LIVE, 300, 16, 1);
        put(rows, 13, 9, COMBINED_SPACE_STRIPE(0, 7), ALLOC_SLOT_LIVE, 300, 16, 1);

        ASSERT_EQ(stack_totals_new(&t), 0);
        ASSERT_EQ(stack_totals_read(t, fd, both, ELEMENTSOF(both), &got, &n), 0);
        ASSERT_EQ(n, 4);
        ASSERT_EQ(got[0].pid, 7);
        ASSERT_EQ(got[0].stack_id, -14);
        ASSERT_EQ(got[0].bytes, 12);
        ASSERT_EQ(got[0].allocs, 3);
        ASSERT_EQ(got[1].pid, 7);
        ASSERT_EQ(got[1].space, 0);
        ASSERT_EQ(got[1].stack_id, 300);
        ASSERT_EQ(got[1].bytes, 100);
        ASSERT_EQ(got[1].allocs, 1);
        ASSERT_EQ(got[2].space, ALLOC_SPACE_MMAP);
        ASSERT_EQ(got[2].bytes, 8192);
        ASSERT_EQ(got[3].pid, 9);
        ASSERT_EQ(got[3].space, 0);
        ASSERT_EQ(got[3].bytes, 64);
        ASSERT_EQ(got[3].allocs, 6);
        ASSERT_EQ(COMBINED_ROW_STRIPE(rows[13].word), 7);

        /* pid 7 gone: its live rows are free, the others' stay */
        ASSERT_EQ(mapped_array_free_slots(&table, 7), 5);
        ASSERT_EQ(COMBINED_ROW_STATE(rows[0].word), ALLOC_SLOT_FREE);
        ASSERT_EQ(COMBINED_ROW_SPACE(rows[5].word), ALLOC_SPACE_MMAP);
        ASSERT_EQ(COMBINED_ROW_STATE(rows[8].word), ALLOC_SLOT_BUSY);
        ASSERT_EQ(stack_totals_read(t, fd, both, ELEMENTSOF(both), &got, &n), 0);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(got[0].pid, 9);
        ASSERT_EQ(stack_totals_read(t, fd, nine, ELEMENTSOF(nine), &got, &n), 0);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(mapped_array_free_slots(&table, 7), 0);

        stack_totals_free(t);
        mapped_array_close(&table);
        close(fd);
}

static void a_map_of_another_value_size_is_refused(void)
{
        struct mapped_array table = {};
        int fd = make_table();

        ASSERT_EQ(mapped_array_open(fd, sizeof(struct alloc_slot), &table), -EINVAL);
        ASSERT_TRUE(table.values == NULL);
        ASSERT_TRUE(mapped_array_open(-1, sizeof(struct combined_row), &table) < 0);
        close(fd);
}

/* alloc_table's slots are freed by the same purge: their words are the combined table's with no
 * space */
static void alloc_table_slots_are_freed_by_the_same_purge(void)
{
        int fd = make_array(sizeof(struct alloc_slot));
        struct mapped_array table = {};
        struct alloc_slot *slots;

        ASSERT_EQ(mapped_array_open(fd, sizeof(struct alloc_slot), &table), 0);
        slots = table.values;
        slots[3].word = ALLOC_SLOT_WORD(7, ALLOC_SLOT_LIVE);
        slots[4].word = ALLOC_SLOT_WORD(7, ALLOC_SLOT_BUSY);
        slots[5].word = ALLOC_SLOT_WORD(9, ALLOC_SLOT_LIVE);
        slots[63].word = ALLOC_SLOT_WORD(7, ALLOC_SLOT_LIVE);
        ASSERT_EQ(mapped_array_free_slots(&table, 7), 2);
        ASSERT_EQ(slots[3].word, ALLOC_SLOT_WORD(7, ALLOC_SLOT_FREE));
        ASSERT_EQ(slots[4].word, ALLOC_SLOT_WORD(7, ALLOC_SLOT_BUSY));
        ASSERT_EQ(slots[5].word, ALLOC_SLOT_WORD(9, ALLOC_SLOT_LIVE));
        ASSERT_EQ(slots[63].word, ALLOC_SLOT_WORD(7, ALLOC_SLOT_FREE));
        mapped_array_close(&table);
        close(fd);
}

int main(void)
{
        live_rows_are_read_summed_and_purged_by_target();
        a_map_of_another_value_size_is_refused();
        alloc_table_slots_are_freed_by_the_same_purge();
        return 0;
}
