/* SPDX-License-Identifier: MIT */
/* Unit tests for reclaim.c: rows at zero retired, then freed or made live again, and stacks no row
 * names deleted (and put back when a row names them a moment later); on real BPF maps, mapped
 * and written as BPF writes them (needs root, as the daemon). */
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf-types.h"
#include "macro.h"
#include "mapped-array.h"
#include "reclaim.h"
#include "stack-totals.h"
#include "test-util.h"

#define ROWS 64u
#define FRAMES 4u

struct test_stack {
        __u64 frames[FRAMES];
};

static int make_rows(struct mapped_array *table)
{
        LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
        int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_rows", sizeof(__u32), sizeof(struct combined_row), ROWS,
                                &opts);

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(mapped_array_open(fd, sizeof(struct combined_row), table), 0);
        return fd;
}

static int make_stacks(void)
{
        LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
        int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_stacks", sizeof(__u64), sizeof(struct test_stack), 1024,
                                &opts);

        ASSERT_TRUE(fd >= 0);
        return fd;
}

static void put(struct combined_row *rows, uint32_t i, uint32_t tgid, uint32_t state, int64_t stack_id,
                uint64_t bytes, uint64_t allocs)
{
        rows[i] = (struct combined_row) { .word = COMBINED_ROW_WORD(tgid, 0, state), .stack_id = stack_id,
                                          .bytes = bytes, .allocs = allocs };
}

static uint32_t state(const struct combined_row *rows, uint32_t i)
{
        return COMBINED_ROW_STATE(rows[i].word);
}

static void rows_at_zero_are_retired_then_freed_unless_a_block_came_back(void)
{
        struct mapped_array table = {};
        int fd = make_rows(&table);
        struct combined_row *rows = table.values;
        struct reclaim_counts c = {};

        put(rows, 0, 7, ALLOC_SLOT_LIVE, 100, 0, 0);            /* its blocks all freed */
        put(rows, 1, 7, ALLOC_SLOT_LIVE, 101, 64, 1);           /* a block outstanding */
        put(rows, 2, 7, ALLOC_SLOT_BUSY, 102, 0, 0);            /* being made */
        put(rows, 3, 7, ALLOC_SLOT_FREE, 103, 0, 0);
        put(rows, 63, 9, ALLOC_SLOT_LIVE, 100, 0, 0);           /* another target's, at zero */
        reclaim_rows(&table, &c);
        ASSERT_EQ(c.rows_retired, 2);
        ASSERT_EQ(c.rows_freed, 0);
        ASSERT_EQ(state(rows, 0), ALLOC_SLOT_RETIRING);
        ASSERT_EQ(COMBINED_ROW_TGID(rows[0].word), 7);
        ASSERT_EQ(state(rows, 1), ALLOC_SLOT_LIVE);
        ASSERT_EQ(state(rows, 2), ALLOC_SLOT_BUSY);
        ASSERT_EQ(state(rows, 3), ALLOC_SLOT_FREE);
        ASSERT_EQ(state(rows, 63), ALLOC_SLOT_RETIRING);

        /* a retiring row is still its key's: read, and purged with its target */
        {
                struct stack_totals *t = NULL;
                const struct stack_total *got;
                const pid_t seven[] = { 7 };
                size_t n;

                rows[0].bytes = 32;     /* a probe that found it live just before added to it */
                rows[0].allocs = 1;
                ASSERT_EQ(stack_totals_new(&t), 0);
                ASSERT_EQ(stack_totals_read(t, fd, seven, 1, &got, &n), 0);
                ASSERT_EQ(stack_totals_rows_held(t), 3);      /* any target's */
                ASSERT_EQ(n, 2);
                ASSERT_EQ(got[0].stack_id, 100);
                ASSERT_EQ(got[0].bytes, 32);
                stack_totals_free(t);
        }

        /* the next pass: the row a block came back to is live again, the other is freed */
        memset(&c, 0, sizeof(c));
        reclaim_rows(&table, &c);
        ASSERT_EQ(c.rows_revived, 1);
        ASSERT_EQ(c.rows_freed, 1);
        ASSERT_EQ(c.rows_retired, 0);
        ASSERT_EQ(state(rows, 0), ALLOC_SLOT_LIVE);
        ASSERT_EQ(state(rows, 63), ALLOC_SLOT_FREE);
        ASSERT_EQ(COMBINED_ROW_TGID(rows[63].word), 9);

        /* a gone target's retiring rows are freed with its live ones */
        put(rows, 5, 7, ALLOC_SLOT_RETIRING, 104, 0, 0);
        ASSERT_EQ(mapped_array_free_slots(&table, 7), 3);       /* rows 0, 1 and 5 */
        ASSERT_EQ(state(rows, 5), ALLOC_SLOT_FREE);
        mapped_array_close(&table);
        close(fd);
}

static void named_stacks_are_those_of_live_retiring_and_busy_rows(void)
{
        struct mapped_array table = {};
        int fd = make_rows(&table);
        struct combined_row *rows = table.values;
        _cleanup_free_ int64_t *ids = NULL;
        size_t n;

        put(rows, 0, 7, ALLOC_SLOT_LIVE, 300, 0, 0);
        put(rows, 1, 7, ALLOC_SLOT_RETIRING, 200, 0, 0);
        put(rows, 2, 7, ALLOC_SLOT_BUSY, 100, 0, 0);
        put(rows, 3, 7, ALLOC_SLOT_FREE, 400, 0, 0);
        put(rows, 4, 7, ALLOC_SLOT_LIVE, -14, 8, 1);            /* no stack */
        put(rows, 5, 9, ALLOC_SLOT_LIVE, 300, 8, 1);
        ASSERT_EQ(reclaim_named_stacks(&table, &ids, &n), 0);
        ASSERT_EQ(n, 4);
        ASSERT_EQ(ids[0], 100);
        ASSERT_EQ(ids[1], 200);
        ASSERT_EQ(ids[2], 300);
        ASSERT_EQ(ids[3], 300);
        mapped_array_close(&table);
        close(fd);
}

struct race {
        struct combined_row *rows;
        unsigned purged;
};

/* A probe that took stack 11's id before it went adds its row after: the stack must come back. */
static void a_probe_adds_a_row_meanwhile(void *userdata)
{
        struct race *r = userdata;

        r->purged++;
        put(r->rows, 9, 7, ALLOC_SLOT_LIVE, 11, 16, 1);
}

static void stacks_no_row_names_are_deleted_and_put_back_when_one_does_again(void)
{
        struct mapped_array table = {};
        int fd = make_rows(&table), stacks = make_stacks();
        struct combined_row *rows = table.values;
        struct reclaim_counts c = {};
        struct race race = { .rows = rows };
        struct test_stack s, got;

        for (__u64 id = 10; id < 15; id++) {
                s = (struct test_stack) { .frames = { id, id + 1, id + 2, id + 3 } };
                ASSERT_EQ(bpf_map_update_elem(stacks, &id, &s, BPF_NOEXIST), 0);
        }
        put(rows, 0, 7, ALLOC_SLOT_LIVE, 10, 64, 1);
        put(rows, 1, 7, ALLOC_SLOT_RETIRING, 12, 0, 0);
        /* 11, 13 and 14 are named by no row */
        ASSERT_EQ(reclaim_stacks(stacks, &table, 16, 1, a_probe_adds_a_row_meanwhile, &race, &c), 0);
        ASSERT_EQ(race.purged, 1);
        ASSERT_EQ(c.stacks_deleted, 3);
        ASSERT_EQ(c.stacks_restored, 1);
        for (__u64 id = 10; id < 15; id++) {
                int r = bpf_map_lookup_elem(stacks, &id, &got);

                ASSERT_EQ(r, id <= 12 ? 0 : -ENOENT);   /* named, or put back with its frames */
                if (r == 0)
                        ASSERT_EQ(got.frames[3], id + 3);
        }

        /* at most max a pass; a pass with none to delete does not call purged */
        for (__u64 id = 20; id < 23; id++)
                ASSERT_EQ(bpf_map_update_elem(stacks, &id, &s, BPF_NOEXIST), 0);
        memset(&c, 0, sizeof(c));
        ASSERT_EQ(reclaim_stacks(stacks, &table, 2, 1, NULL, NULL, &c), 0);
        ASSERT_EQ(c.stacks_deleted, 2);
        memset(&c, 0, sizeof(c));
        ASSERT_EQ(reclaim_stacks(stacks, &table, 2, 1, a_probe_adds_a_row_meanwhile, &race, &c), 0);
        ASSERT_EQ(c.stacks_deleted, 1);
        ASSERT_EQ(race.purged, 2);
        memset(&c, 0, sizeof(c));
        ASSERT_EQ(reclaim_stacks(stacks, &table, 2, 1, a_probe_adds_a_row_meanwhile, &race, &c), 0);
        ASSERT_EQ(c.stacks_deleted, 0);
        ASSERT_EQ(race.purged, 2);
        for (__u64 id = 20; id < 23; id++)
                ASSERT_EQ(bpf_map_lookup_elem(stacks, &id, &got), -ENOENT);
        mapped_array_close(&table);
        close(fd);
        close(stacks);
}

/* A gone target's stacks, its rows freed: those another row names stay. */
static void a_gone_targets_stacks_go_unless_another_row_names_them(void)
{
        struct mapped_array table = {};
        int fd = make_rows(&table), stacks = make_stacks();
        struct combined_row *rows = table.values;
        const int64_t gone[] = { 30, 31, 31, 32, 33 };
        struct test_stack s = {}, got;

        for (__u64 id = 30; id < 34; id++)
                ASSERT_EQ(bpf_map_update_elem(stacks, &id, &s, BPF_NOEXIST), 0);
        put(rows, 0, 9, ALLOC_SLOT_LIVE, 31, 8, 1);             /* another target's */
        put(rows, 1, 9, ALLOC_SLOT_RETIRING, 32, 0, 0);
        put(rows, 2, 7, ALLOC_SLOT_FREE, 33, 0, 0);             /* the gone target's, freed */
        ASSERT_EQ(reclaim_unnamed_stacks(stacks, &table, gone, ELEMENTSOF(gone)), 2);
        for (__u64 id = 30; id < 34; id++)
                ASSERT_EQ(bpf_map_lookup_elem(stacks, &id, &got), id == 31 || id == 32 ? 0 : -ENOENT);
        mapped_array_close(&table);
        close(fd);
        close(stacks);
}

static void a_pass_that_gave_nothing_back_doubles_the_wait(void)
{
        struct reclaim_counts none = {}, some = { .rows_retired = 1 };
        unsigned wait = 0;

        wait = reclaim_next_wait(wait, &none, 10, 640);
        ASSERT_EQ(wait, 20);
        wait = reclaim_next_wait(wait, &none, 10, 640);
        ASSERT_EQ(wait, 40);
        for (int i = 0; i < 8; i++)
                wait = reclaim_next_wait(wait, &none, 10, 640);
        ASSERT_EQ(wait, 640);
        ASSERT_EQ(reclaim_next_wait(wait, &some, 10, 640), 10);
        some = (struct reclaim_counts) { .stacks_deleted = 1 };
        ASSERT_EQ(reclaim_next_wait(640, &some, 10, 640), 10);
        some = (struct reclaim_counts) { .rows_revived = 1, .stacks_restored = 1 };    /* nothing given back */
        ASSERT_EQ(reclaim_next_wait(10, &some, 10, 640), 20);
}

static void a_table_past_three_quarters_is_reclaimed_every_tick_while_passes_give_back(void)
{
        struct reclaim_fill f = { .rows_max = 1000, .stacks_max = 16384, .ticks = 1, .wait = 10, .least = 10 };
        struct reclaim_plan plan;

        /* under half full: nothing, however long since the last pass */
        f.stacks_held = 8192;
        f.ticks = 1000;
        ASSERT_TRUE(!reclaim_plan_pass(&f, 4096, &plan));
        /* past half: once the wait is over */
        f.stacks_held = 9000;
        f.ticks = 9;
        ASSERT_TRUE(!reclaim_plan_pass(&f, 4096, &plan));
        f.ticks = 10;
        ASSERT_TRUE(reclaim_plan_pass(&f, 4096, &plan));
        ASSERT_TRUE(plan.stacks);
        ASSERT_EQ(plan.stacks_max, 9000 - 4096);        /* down to a quarter */
        /* past three quarters: at the next tick already, and down to a quarter */
        f.stacks_held = 13000;
        f.ticks = 1;
        ASSERT_TRUE(reclaim_plan_pass(&f, 4096, &plan));
        ASSERT_EQ(plan.stacks_max, 13000 - 4096);
        /* ... unless the last pass gave nothing back: then the wait holds */
        f.wait = 20;
        ASSERT_TRUE(!reclaim_plan_pass(&f, 4096, &plan));
        f.ticks = 20;
        ASSERT_TRUE(reclaim_plan_pass(&f, 4096, &plan));
        /* at least per_pass stacks */
        f.stacks_held = 9000;
        ASSERT_TRUE(reclaim_plan_pass(&f, 16384, &plan));
        ASSERT_EQ(plan.stacks_max, 16384);
        /* rows alone: past max_combined / 2 once the wait is over, past max_combined at once; the
         * stacks are left alone while their table is under half full */
        f = (struct reclaim_fill) { .rows_held = 600, .rows_max = 1000, .stacks_held = 10, .stacks_max = 16384,
                                    .ticks = 1, .wait = 10, .least = 10 };
        ASSERT_TRUE(!reclaim_plan_pass(&f, 4096, &plan));
        f.rows_held = 1001;
        ASSERT_TRUE(reclaim_plan_pass(&f, 4096, &plan));
        ASSERT_TRUE(!plan.stacks);
}

int main(void)
{
        a_table_past_three_quarters_is_reclaimed_every_tick_while_passes_give_back();
        a_pass_that_gave_nothing_back_doubles_the_wait();
        a_gone_targets_stacks_go_unless_another_row_names_them();
        rows_at_zero_are_retired_then_freed_unless_a_block_came_back();
        named_stacks_are_those_of_live_retiring_and_busy_rows();
        stacks_no_row_names_are_deleted_and_put_back_when_one_does_again();
        return 0;
}
