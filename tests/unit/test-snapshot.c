/* Unit tests for the snapshot ring: order, sums, the oldest dropped when full. */
#include <stdlib.h>
#include "macro.h"
#include "snapshot.h"
#include "test-util.h"

static struct snapshot_row *rows_of(uint64_t bytes, uint64_t allocs, size_t n)
{
        struct snapshot_row *r = snapshot_rows_new(n);

        for (size_t i = 0; i < n; i++)
                r[i] = (struct snapshot_row) { .stack_id = (int64_t)i, .bytes = bytes, .allocs = allocs };
        return r;
}

static void ring_keeps_snapshots_oldest_first_with_sums(void)
{
        struct snapshot_ring *r = NULL;

        ASSERT_EQ(snapshot_ring_new(3, &r), 0);
        ASSERT_TRUE(snapshot_ring_get(r, 0) == NULL);
        ASSERT_TRUE(snapshot_ring_newest(r) == NULL);
        snapshot_ring_push(r, 100, rows_of(10, 1, 2), 2);
        snapshot_ring_push(r, 200, rows_of(20, 2, 3), 3);
        ASSERT_EQ(snapshot_ring_count(r), 2);
        ASSERT_EQ(snapshot_ring_get(r, 0)->timestamp_usec, 100);
        ASSERT_EQ(snapshot_ring_get(r, 0)->bytes, 20);
        ASSERT_EQ(snapshot_ring_get(r, 0)->allocs, 2);
        ASSERT_EQ(snapshot_ring_newest(r)->bytes, 60);
        ASSERT_EQ(snapshot_ring_newest(r)->n_rows, 3);
        ASSERT_TRUE(snapshot_ring_get(r, 2) == NULL);
        snapshot_ring_free(r);
}

static void ring_drops_the_oldest_when_full(void)
{
        struct snapshot_ring *r = NULL;

        ASSERT_EQ(snapshot_ring_new(2, &r), 0);
        for (uint64_t t = 1; t <= 5; t++)
                snapshot_ring_push(r, t, rows_of(t, 1, 1), 1);
        ASSERT_EQ(snapshot_ring_count(r), 2);
        ASSERT_EQ(snapshot_ring_depth(r), 2);
        ASSERT_EQ(snapshot_ring_get(r, 0)->timestamp_usec, 4);
        ASSERT_EQ(snapshot_ring_get(r, 1)->timestamp_usec, 5);
        ASSERT_EQ(snapshot_ring_newest(r)->bytes, 5);
        snapshot_ring_free(r);
}

static void ring_of_depth_zero_is_refused(void)
{
        struct snapshot_ring *r = NULL;

        ASSERT_EQ(snapshot_ring_new(0, &r), -EINVAL);
        ASSERT_TRUE(snapshot_ring_free(NULL) == NULL);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(ring_keeps_snapshots_oldest_first_with_sums),
                TEST(ring_drops_the_oldest_when_full),
                TEST(ring_of_depth_zero_is_refused),
        };
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
