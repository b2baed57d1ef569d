/* SPDX-License-Identifier: MIT */
/* Unit tests for stack-rows.c: stacks cut where the frame-pointer chain broke, and merged. */
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "stack-rows.h"
#include "test-util.h"

/* Code lives at [0x1000, 0x2000) for every pid; anything else is data. */
static bool fake_is_code(void *userdata, pid_t pid, uint64_t addr)
{
        int *calls = userdata;

        (*calls)++;
        return addr >= 0x1000 && addr < 0x2000;
}

static struct stack_row row(pid_t pid, int64_t id, uint64_t bytes, size_t n, const uint64_t *ips)
{
        struct stack_row r = { .pid = pid, .stack_id = id, .bytes = bytes, .allocs = 1 };

        if (ips) {
                r.ips = malloc(n * sizeof(*ips));
                ASSERT_TRUE(r.ips);
                memcpy(r.ips, ips, n * sizeof(*ips));
                r.n_ips = n;
        }
        return r;
}

static void junk_after_the_first_frame_is_cut_and_the_stacks_merge(void)
{
        /* the same leak site under three different runs of junk, as without frame pointers */
        static const uint64_t a[] = { 0x1100, 0x7ffd0000, 0x3 };
        static const uint64_t b[] = { 0x1100, 0x55550000 };
        static const uint64_t c[] = { 0x1100 };
        /* a good chain stays whole; another pid and another space never merge with it */
        static const uint64_t d[] = { 0x1100, 0x1200, 0x1300 };
        struct stack_rows rows = { .rows = calloc(6, sizeof(struct stack_row)), .n = 6 };
        int calls = 0;

        rows.rows[0] = row(10, 5, 40, ELEMENTSOF(a), a);
        rows.rows[1] = row(10, 3, 40, ELEMENTSOF(b), b);
        rows.rows[2] = row(10, 9, 40, ELEMENTSOF(c), c);
        rows.rows[3] = row(10, 7, 8, ELEMENTSOF(d), d);
        rows.rows[4] = row(11, 4, 40, ELEMENTSOF(c), c);
        rows.rows[5] = row(10, -14, 99, 0, NULL);       /* unavailable (EFAULT): left as it is */
        rows.rows[4].space = 0;

        stack_rows_cut_broken_chains(&rows, fake_is_code, &calls);
        ASSERT_EQ(rows.n, 4);
        for (size_t i = 0; i < rows.n; i++) {
                struct stack_row *r = &rows.rows[i];

                if (r->pid == 10 && r->stack_id == 3) {         /* a, b and c merged */
                        ASSERT_EQ(r->n_ips, 1);
                        ASSERT_EQ(r->ips[0], 0x1100);
                        ASSERT_EQ(r->bytes, 120);
                        ASSERT_EQ(r->allocs, 3);
                        ASSERT_EQ(r->n_cut, 2);                 /* the most any of them lost */
                } else if (r->pid == 10 && r->stack_id == 7) {
                        ASSERT_EQ(r->n_ips, 3);
                        ASSERT_EQ(r->n_cut, 0);
                } else if (r->pid == 11) {
                        ASSERT_EQ(r->n_ips, 1);
                        ASSERT_EQ(r->bytes, 40);
                } else {
                        ASSERT_EQ(r->stack_id, -14);
                        ASSERT_TRUE(!r->ips);
                        ASSERT_EQ(r->bytes, 99);
                }
        }
        /* the first frame is never questioned: it is where the probe took the stack */
        ASSERT_EQ(calls, 1 + 1 + 0 + 2 + 0 + 0);      /* each walk stops at its first junk */
        stack_rows_done(&rows);
}

static void nothing_cut_leaves_rows_as_they_are(void)
{
        static const uint64_t d[] = { 0x1100, 0x1200 };
        struct stack_rows rows = { .rows = calloc(2, sizeof(struct stack_row)), .n = 2 };
        int calls = 0;

        rows.rows[0] = row(10, 2, 8, ELEMENTSOF(d), d);
        rows.rows[1] = row(10, 1, 8, ELEMENTSOF(d), d);         /* same frames, other stack id */
        stack_rows_cut_broken_chains(&rows, fake_is_code, &calls);
        ASSERT_EQ(rows.n, 2);
        ASSERT_EQ(rows.rows[0].stack_id, 2);
        stack_rows_done(&rows);

        rows = (struct stack_rows) {};
        stack_rows_cut_broken_chains(&rows, fake_is_code, &calls);
        ASSERT_EQ(rows.n, 0);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(junk_after_the_first_frame_is_cut_and_the_stacks_merge),
                TEST(nothing_cut_leaves_rows_as_they_are),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
