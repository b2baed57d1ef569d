/* SPDX-License-Identifier: GPL-2.0-only */
/* Whether a target lost verdict-bearing events within the window its verdicts look at. */
#include <stdint.h>
#include <string.h>
#include "loss-window.h"
#include "macro.h"
#include "test-util.h"

#define POINTS 6

/* Six points a second apart (at 1..6 s), the last one "now"; every counter at 0. */
static uint64_t rows[POINTS][_COUNTER_MAX];
static struct loss_point points[POINTS];

static void setup(void)
{
        memset(rows, 0, sizeof(rows));
        for (size_t i = 0; i < POINTS; i++)
                points[i] = (struct loss_point) { .timestamp_usec = (i + 1) * 1000000, .counters = rows[i] };
}

/* counter c rises by n at point i (and stays risen after). */
static void rise(size_t i, enum memleak_counter c, uint64_t n)
{
        for (size_t k = i; k < POINTS; k++)
                rows[k][c] += n;
}

static void nothing_lost_qualifies_nothing(void)
{
        struct loss_window w;

        setup();
        rise(0, COUNTER_ALLOCS, 1000);
        rise(3, COUNTER_ALLOCS, 1000);
        rise(2, COUNTER_FREE_UNKNOWN, 72);      /* not a loss the verdicts miss */
        rise(4, COUNTER_LOST_FORK_EVENTS, 1);   /* a loss, but no allocation missed */
        loss_window_assess(points, POINTS, &w);
        ASSERT_EQ(w.total, 0);
        ASSERT_EQ(w.since_usec, 0);
        ASSERT_EQ(w.latest_usec, 0);
}

static void loss_before_the_window_is_old(void)
{
        struct loss_window w;

        setup();
        /* lost before the oldest snapshot the ring keeps: every point holds it already */
        rise(0, COUNTER_LOST_ALLOCS_MAP_FULL, 298931);
        loss_window_assess(points, POINTS, &w);
        ASSERT_EQ(w.total, 0);
        ASSERT_EQ(w.lost[COUNTER_LOST_ALLOCS_MAP_FULL], 0);
}

static void loss_within_the_window_says_what_and_from_when(void)
{
        struct loss_window w;

        setup();
        rise(0, COUNTER_LOST_ALLOCS_MAP_FULL, 5);       /* old */
        rise(2, COUNTER_LOST_ALLOCS_MAP_FULL, 10);      /* between 2 s and 3 s */
        rise(4, COUNTER_STACK_TABLE_FULL, 3);           /* between 4 s and 5 s */
        loss_window_assess(points, POINTS, &w);
        ASSERT_EQ(w.lost[COUNTER_LOST_ALLOCS_MAP_FULL], 10);
        ASSERT_EQ(w.lost[COUNTER_STACK_TABLE_FULL], 3);
        ASSERT_EQ(w.total, 13);
        ASSERT_EQ(w.since_usec, 2000000);
        ASSERT_EQ(w.latest_usec, 5000000);
}

static void loss_since_the_newest_snapshot_counts(void)
{
        struct loss_window w;

        setup();
        /* dropped between the newest snapshot (5 s) and now (6 s): being dropped now */
        rise(POINTS - 1, COUNTER_LOST_COMBINED_MAP_FULL, 1);
        loss_window_assess(points, POINTS, &w);
        ASSERT_EQ(w.total, 1);
        ASSERT_EQ(w.since_usec, 5000000);
        ASSERT_EQ(w.latest_usec, 6000000);
}

static void unknown_points_are_skipped(void)
{
        struct loss_window w;

        setup();
        points[0].counters = NULL;      /* pushed before its counters could be read */
        points[3].counters = NULL;
        rise(3, COUNTER_LOST_NO_THREAD_STATE, 7);
        loss_window_assess(points, POINTS, &w);
        ASSERT_EQ(w.total, 7);
        ASSERT_EQ(w.since_usec, 3000000);       /* the known point before the rise */
        ASSERT_EQ(w.latest_usec, 5000000);
}

static void one_point_is_no_window(void)
{
        struct loss_window w;

        setup();
        rise(0, COUNTER_LOST_ALLOCS_MAP_FULL, 9);
        loss_window_assess(points, 1, &w);
        ASSERT_EQ(w.total, 0);
        loss_window_assess(NULL, 0, &w);
        ASSERT_EQ(w.total, 0);
}

static void blinding_counters_are_the_allocation_and_stack_losses(void)
{
        ASSERT_TRUE(loss_window_blinds(COUNTER_LOST_ALLOCS_MAP_FULL));
        ASSERT_TRUE(loss_window_blinds(COUNTER_LOST_COMBINED_MAP_FULL));
        ASSERT_TRUE(loss_window_blinds(COUNTER_LOST_NO_THREAD_STATE));
        ASSERT_TRUE(loss_window_blinds(COUNTER_STACK_TABLE_FULL));
        ASSERT_TRUE(loss_window_blinds(COUNTER_STACK_HASH_CLASH));
        ASSERT_TRUE(loss_window_blinds(COUNTER_STACK_NO_SCRATCH));
        ASSERT_TRUE(loss_window_blinds(COUNTER_LOST_MMAPS_MAP_FULL));
        ASSERT_TRUE(!loss_window_blinds(COUNTER_FREE_UNKNOWN));
        ASSERT_TRUE(!loss_window_blinds(COUNTER_ALLOCS_UNSAMPLED));
        ASSERT_TRUE(!loss_window_blinds(COUNTER_LOST_FORK_EVENTS));
        ASSERT_TRUE(!loss_window_blinds(COUNTER_ALLOCS));
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(nothing_lost_qualifies_nothing),
                TEST(loss_before_the_window_is_old),
                TEST(loss_within_the_window_says_what_and_from_when),
                TEST(loss_since_the_newest_snapshot_counts),
                TEST(unknown_points_are_skipped),
                TEST(one_point_is_no_window),
                TEST(blinding_counters_are_the_allocation_and_stack_losses),
        };
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
