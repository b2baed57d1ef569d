/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/targets/snapshot-file.c: a ring survives an encode and a decode, and
 * bytes it did not write (cut, altered, rows out of order) change nothing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "snapshot-file.h"
#include "test-util.h"

static struct snapshot_ring *sample(uint32_t depth, uint32_t pushes)
{
        struct snapshot_ring *r = NULL;

        ASSERT_EQ(snapshot_ring_new(depth, &r), 0);
        for (uint32_t i = 0; i < pushes; i++) {
                struct snapshot_row *rows = snapshot_rows_new(i % 3);
                uint64_t counters[_COUNTER_MAX];

                ASSERT_TRUE(rows);
                for (uint32_t k = 0; k < i % 3; k++)
                        rows[k] = (struct snapshot_row) { .stack_id = (int64_t)k * 1000 - 5, .bytes = 100 * i + k,
                                                          .allocs = i + k };
                ASSERT_EQ(snapshot_ring_push(r, 1795000000000000ULL + i * 100000, rows, i % 3), 0);
                for (size_t c = 0; c < _COUNTER_MAX; c++)
                        counters[c] = UINT64_MAX - i - c;
                if (i % 2)
                        snapshot_ring_set_counters(r, counters);
        }
        return r;
}

static void assert_same(const struct snapshot_ring *a, const struct snapshot_ring *b)
{
        ASSERT_EQ(snapshot_ring_count(a), snapshot_ring_count(b));
        for (uint32_t i = 0; i < snapshot_ring_count(a); i++) {
                const struct snapshot *x = snapshot_ring_get(a, i), *y = snapshot_ring_get(b, i);

                ASSERT_EQ(x->timestamp_usec, y->timestamp_usec);
                ASSERT_EQ(x->bytes, y->bytes);
                ASSERT_EQ(x->allocs, y->allocs);
                ASSERT_EQ(x->has_counters, y->has_counters);
                if (x->has_counters)
                        ASSERT_TRUE(memcmp(x->counters, y->counters, sizeof(x->counters)) == 0);
                ASSERT_EQ(x->n_rows, y->n_rows);
                ASSERT_TRUE(x->n_rows == 0 || memcmp(x->rows, y->rows, x->n_rows * sizeof(*x->rows)) == 0);
        }
}

static void snapshot_file_round_trips_a_ring(void)
{
        struct snapshot_ring *r = sample(8, 11), *back = NULL;   /* wrapped: the oldest 3 dropped */
        void *data = NULL;
        size_t n = 0;

        ASSERT_EQ(snapshot_file_encode(r, &data, &n), 0);
        ASSERT_EQ(snapshot_ring_new(8, &back), 0);
        ASSERT_EQ(snapshot_file_decode(data, n, back), 0);
        assert_same(r, back);
        snapshot_ring_free(back);
        /* a smaller ring keeps the newest */
        ASSERT_EQ(snapshot_ring_new(2, &back), 0);
        ASSERT_EQ(snapshot_file_decode(data, n, back), 0);
        ASSERT_EQ(snapshot_ring_count(back), 2);
        ASSERT_EQ(snapshot_ring_get(back, 1)->timestamp_usec, snapshot_ring_newest(r)->timestamp_usec);
        snapshot_ring_free(back);
        free(data);
        snapshot_ring_free(r);
}

static void snapshot_file_refuses_what_it_did_not_write(void)
{
        struct snapshot_ring *r = sample(8, 8), *back = NULL;
        unsigned char *data = NULL;
        size_t n = 0;

        ASSERT_EQ(snapshot_file_encode(r, (void **)&data, &n), 0);
        ASSERT_EQ(snapshot_ring_new(8, &back), 0);
        for (size_t cut = 0; cut < n; cut++)
                ASSERT_EQ(snapshot_file_decode(data, cut, back), -EBADMSG);
        for (size_t i = 0; i < n; i += 7) {
                data[i] ^= 0x40;
                ASSERT_EQ(snapshot_file_decode(data, n, back), -EBADMSG);
                data[i] ^= 0x40;
        }
        ASSERT_EQ(snapshot_ring_count(back), 0);        /* nothing half taken */
        ASSERT_EQ(snapshot_file_decode(data, n, back), 0);
        snapshot_ring_free(back);
        free(data);
        snapshot_ring_free(r);
}

static const struct unit_test tests[] = {
        TEST(snapshot_file_round_trips_a_ring),
        TEST(snapshot_file_refuses_what_it_did_not_write),
};

int main(void)
{
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
