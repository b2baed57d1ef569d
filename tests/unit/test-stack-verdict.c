/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/report/stack-verdict.c: at a target's exit, each heap stack of its frozen
 * rows keeps the verdict its ring gives it, its frozen bytes the newest point (a stack that grew
 * until the exit is growing, a cache a plateau; a ring too short leaves them pending, with the
 * snapshots missing); mappings and stacks not captured keep none; a kept verdict reads back as
 * the assessment it was. */
#include <stdlib.h>
#include <string.h>

#include "exit-verdicts.h"
#include "leak-verdict.h"
#include "macro.h"
#include "snapshot.h"
#include "stack-rows.h"
#include "stack-verdict.h"
#include "test-util.h"

#define T0_USEC 1795000000000000ULL
#define GROWING_STACK 5         /* 111 bytes more at each snapshot */
#define CACHE_STACK 9           /* 4440 bytes all along */

/* n snapshots 100 ms apart of the two stacks. */
static struct snapshot_ring *ring_of(uint32_t n)
{
        struct snapshot_ring *ring = NULL;

        ASSERT_EQ(snapshot_ring_new(64, &ring), 0);
        for (uint32_t i = 0; i < n; i++) {
                struct snapshot_row *rows = snapshot_rows_new(2);

                ASSERT_TRUE(rows);
                rows[0] = (struct snapshot_row) { .stack_id = GROWING_STACK, .bytes = 111ULL * (i + 1), .allocs = i + 1 };
                rows[1] = (struct snapshot_row) { .stack_id = CACHE_STACK, .bytes = 4440, .allocs = 20 };
                ASSERT_EQ(snapshot_ring_push(ring, T0_USEC + i * 100000ULL, rows, 2), 0);
        }
        return ring;
}

/* Its frozen rows at its exit (in no order), a mapping and a stack not captured among them. */
static struct stack_row frozen[] = {
        { .pid = 7, .stack_id = CACHE_STACK, .bytes = 4440, .allocs = 20 },
        { .pid = 7, .space = 1, .stack_id = 11, .bytes = 1 << 20, .allocs = 1 },
        { .pid = 7, .stack_id = -14, .bytes = 64, .allocs = 1 },
        { .pid = 7, .stack_id = GROWING_STACK, .bytes = 111 * 31, .allocs = 31 },
};

/* The ring's snapshots as the job copies them (their rows read, not taken). */
static int keep(const struct snapshot_ring *ring, const struct stack_rows *rows, uint64_t exit_usec,
                struct exit_verdicts **ret)
{
        uint32_t n = snapshot_ring_count(ring);
        struct snapshot *history = calloc(n ?: 1, sizeof(*history));
        int r;

        ASSERT_TRUE(history);
        for (uint32_t i = 0; i < n; i++)
                history[i] = *snapshot_ring_get(ring, i);
        r = stack_verdict_keep(history, n, rows, exit_usec, 0, &LEAK_VERDICT_THRESHOLDS_DEFAULT, ret);
        free(history);
        return r;
}

static void stack_verdict_keeps_each_heap_stack_s_verdict_at_the_exit(void)
{
        struct snapshot_ring *ring = ring_of(30);
        struct stack_rows rows = { .rows = frozen, .n = ELEMENTSOF(frozen) };
        struct exit_verdicts *v = NULL;
        const struct exit_verdict *k;
        struct leak_assessment a;

        ASSERT_EQ(keep(ring, &rows, T0_USEC + 3000000ULL, &v), 0);
        ASSERT_TRUE(v);
        ASSERT_EQ(v->n, 2);
        k = exit_verdicts_find(v, GROWING_STACK);
        ASSERT_TRUE(k);
        stack_verdict_from_kept(k, &a);
        ASSERT_EQ(a.verdict, LEAK_VERDICT_GROWING);
        ASSERT_TRUE(a.slope_bytes_per_s > 1000 && a.slope_bytes_per_s < 1200);
        ASSERT_TRUE(a.first_bytes == 111 && a.last_bytes == 111 * 31);
        k = exit_verdicts_find(v, CACHE_STACK);
        ASSERT_TRUE(k);
        stack_verdict_from_kept(k, &a);
        ASSERT_EQ(a.verdict, LEAK_VERDICT_PLATEAU);
        ASSERT_TRUE(!exit_verdicts_find(v, 11));
        ASSERT_TRUE(!exit_verdicts_find(v, -14));
        exit_verdicts_free(v);
        snapshot_ring_free(ring);
}

static void stack_verdict_leaves_a_short_life_pending(void)
{
        struct snapshot_ring *ring = ring_of(2);
        struct stack_rows rows = { .rows = frozen, .n = ELEMENTSOF(frozen) };
        struct exit_verdicts *v = NULL, *copy = NULL;
        struct leak_assessment a;

        /* 2 snapshots and the exit: 3 points of the 6 a verdict needs */
        ASSERT_EQ(keep(ring, &rows, T0_USEC + 250000ULL, &v), 0);
        ASSERT_EQ(v->n, 2);
        for (size_t i = 0; i < v->n; i++) {
                stack_verdict_from_kept(&v->items[i], &a);
                ASSERT_EQ(a.verdict, LEAK_VERDICT_PENDING);
                ASSERT_EQ(a.points_missing, 3);
        }
        /* the report's copy */
        ASSERT_EQ(exit_verdicts_copy(v, &copy), 0);
        ASSERT_EQ(copy->n, 2);
        ASSERT_TRUE(memcmp(copy->items, v->items, 2 * sizeof(*v->items)) == 0);
        exit_verdicts_free(copy);
        exit_verdicts_free(v);
        snapshot_ring_free(ring);

        /* no snapshot at all: the exit's point alone */
        ring = ring_of(0);
        ASSERT_EQ(keep(ring, &rows, T0_USEC, &v), 0);
        stack_verdict_from_kept(exit_verdicts_find(v, GROWING_STACK), &a);
        ASSERT_EQ(a.verdict, LEAK_VERDICT_PENDING);
        ASSERT_EQ(a.points_missing, 5);
        exit_verdicts_free(v);
        /* nothing of its heap with a stack: none kept */
        rows.rows = frozen + 1;
        rows.n = 2;
        ASSERT_EQ(keep(ring, &rows, T0_USEC, &v), 0);
        ASSERT_TRUE(v == NULL);
        snapshot_ring_free(ring);
}

static const struct unit_test tests[] = {
        TEST(stack_verdict_keeps_each_heap_stack_s_verdict_at_the_exit),
        TEST(stack_verdict_leaves_a_short_life_pending),
};

int main(void)
{
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
