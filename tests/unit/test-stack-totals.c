/* SPDX-License-Identifier: MIT */
/* Unit tests for stack-totals.c: the per-stack totals sorted by pid, space and stack, merged. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "bpf-types.h"
#include "macro.h"
#include "stack-totals.h"
#include "test-util.h"

static int by_key(const void *a, const void *b)
{
        const struct stack_total *x = a, *y = b;

        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        if (x->space != y->space)
                return x->space < y->space ? -1 : 1;
        if (x->stack_id != y->stack_id)
                return x->stack_id < y->stack_id ? -1 : 1;
        return 0;
}

/* What the sort and merge must give: qsort, then sums of equal keys, those without allocations
 * left out (the rows the snapshot tick made before the radix sort). */
static size_t reference(struct stack_total *rows, size_t n)
{
        size_t out = 0;

        qsort(rows, n, sizeof(*rows), by_key);
        for (size_t i = 0; i < n; i++) {
                if (out > 0 && by_key(&rows[out - 1], &rows[i]) == 0) {
                        rows[out - 1].bytes += rows[i].bytes;
                        rows[out - 1].allocs += rows[i].allocs;
                        continue;
                }
                rows[out++] = rows[i];
        }
        n = out;
        out = 0;
        for (size_t i = 0; i < n; i++)
                if (rows[i].allocs != 0)
                        rows[out++] = rows[i];
        return out;
}

static uint64_t next_random(uint64_t *state)
{
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        return *state;
}

static void check_against_qsort(size_t n, uint64_t seed, bool one_target)
{
        static const pid_t pids[] = { 4242, 17, 1 << 22, -1 };
        struct stack_total *rows = calloc(MAX(n, (size_t)1), sizeof(*rows));
        struct stack_total *scratch = calloc(MAX(n, (size_t)1), sizeof(*scratch));
        struct stack_total *expected = calloc(MAX(n, (size_t)1), sizeof(*expected));
        struct stack_total *sorted = rows;
        size_t kept, n_expected;

        ASSERT_TRUE(rows && scratch && expected);
        for (size_t i = 0; i < n; i++) {
                uint64_t r = next_random(&seed);

                rows[i] = (struct stack_total) {
                        .pid = one_target ? 4242 : pids[r % ELEMENTSOF(pids)],
                        .space = (r >> 8) % 5 == 0 ? ALLOC_SPACE_MMAP : 0,
                        /* random 53-bit ids, a few errors, and repeats of earlier rows' keys */
                        .stack_id = (int64_t)(next_random(&seed) & ((1ull << 53) - 1)),
                        .bytes = r % 4096,
                        .allocs = (r >> 16) % 7 == 0 ? 0 : (r >> 16) % 3 + 1,
                };
                if ((r >> 24) % 50 == 0)
                        rows[i].stack_id = -(int64_t)((r >> 32) % 40 + 1);
                if (i > 0 && (r >> 40) % 10 == 0) {
                        const struct stack_total *earlier = &rows[(r >> 44) % i];

                        rows[i].pid = earlier->pid;
                        rows[i].space = earlier->space;
                        rows[i].stack_id = earlier->stack_id;
                }
        }
        memcpy(expected, rows, n * sizeof(*rows));
        n_expected = reference(expected, n);
        kept = stack_totals_sort_merge(&sorted, &scratch, n);
        ASSERT_EQ(kept, n_expected);
        ASSERT_TRUE(n == 0 || memcmp(sorted, expected, kept * sizeof(*sorted)) == 0);
        /* the two buffers are still the two given, one holding the result */
        ASSERT_TRUE(sorted != scratch);
        free(sorted);
        free(scratch);
        free(expected);
}

static void rows_come_out_as_qsort_and_merge_make_them(void)
{
        check_against_qsort(0, 1, false);
        check_against_qsort(1, 2, false);
        check_against_qsort(2, 3, true);
        check_against_qsort(1000, 4, false);
        check_against_qsort(50000, 5, true);
        check_against_qsort(50000, 6, false);
}

static void equal_keys_sum_and_empty_rows_go(void)
{
        struct stack_total rows[] = {
                { .pid = 7, .space = 0, .stack_id = 300, .bytes = 10, .allocs = 1 },
                { .pid = 7, .space = ALLOC_SPACE_MMAP, .stack_id = 300, .bytes = 4096, .allocs = 1 },
                { .pid = 7, .space = 0, .stack_id = -12, .bytes = 5, .allocs = 1 },
                { .pid = 7, .space = 0, .stack_id = 300, .bytes = 30, .allocs = 2 },
                { .pid = 3, .space = 0, .stack_id = 1ll << 52, .bytes = 0, .allocs = 0 },
                { .pid = 3, .space = 0, .stack_id = 9, .bytes = 1, .allocs = 1 },
        };
        struct stack_total scratch[ELEMENTSOF(rows)];
        struct stack_total *r = rows, *s = scratch;
        size_t n = stack_totals_sort_merge(&r, &s, ELEMENTSOF(rows));

        ASSERT_EQ(n, 4);
        ASSERT_EQ(r[0].pid, 3);
        ASSERT_EQ(r[0].stack_id, 9);
        ASSERT_EQ(r[1].pid, 7);
        ASSERT_EQ(r[1].stack_id, -12);
        ASSERT_EQ(r[2].stack_id, 300);
        ASSERT_EQ(r[2].space, 0);
        ASSERT_EQ(r[2].bytes, 40);
        ASSERT_EQ(r[2].allocs, 3);
        ASSERT_EQ(r[3].space, ALLOC_SPACE_MMAP);
        ASSERT_EQ(r[3].bytes, 4096);
}

int main(void)
{
        rows_come_out_as_qsort_and_merge_make_them();
        equal_keys_sum_and_empty_rows_go();
        return 0;
}
