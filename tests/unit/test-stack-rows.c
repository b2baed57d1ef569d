/* SPDX-License-Identifier: MIT */
/* Unit tests for stack-rows.c: stacks cut where the frame-pointer chain broke, the allocator's
 * frames dropped from their tops, and merged. */
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

/* An operator new lives at [0x5000, 0x5100) of pid 10. */
static bool fake_is_operator_new(void *userdata, pid_t pid, uint64_t addr)
{
        return pid == 10 && addr >= 0x5000 && addr < 0x5100;
}

static void operator_frames_on_top_are_dropped_and_the_stacks_merge(void)
{
        /* new -> caller, nothrow new -> new -> caller, and the caller's own malloc: one site */
        static const uint64_t a[] = { 0x5010, 0x1100, 0x1200 };
        static const uint64_t b[] = { 0x5010, 0x5080, 0x1100, 0x1200 };
        static const uint64_t c[] = { 0x1100, 0x1200 };
        /* an operator frame under the top stays, as does one in another pid, and a stack of
         * nothing but the operator keeps its last frame */
        static const uint64_t d[] = { 0x1300, 0x5010, 0x1200 };
        static const uint64_t e[] = { 0x5010 };
        struct stack_rows rows = { .rows = calloc(6, sizeof(struct stack_row)), .n = 6 };

        rows.rows[0] = row(10, 5, 40, ELEMENTSOF(a), a);
        rows.rows[1] = row(10, 3, 40, ELEMENTSOF(b), b);
        rows.rows[2] = row(10, 9, 40, ELEMENTSOF(c), c);
        rows.rows[3] = row(10, 7, 8, ELEMENTSOF(d), d);
        rows.rows[4] = row(11, 4, 16, ELEMENTSOF(a), a);
        rows.rows[5] = row(10, 6, 2, ELEMENTSOF(e), e);

        stack_rows_drop_allocator_frames(&rows, fake_is_operator_new, NULL);
        ASSERT_EQ(rows.n, 4);
        for (size_t i = 0; i < rows.n; i++) {
                struct stack_row *r = &rows.rows[i];

                if (r->pid == 10 && r->stack_id == 3) {         /* a, b and c merged */
                        ASSERT_EQ(r->n_ips, 2);
                        ASSERT_EQ(r->ips[0], 0x1100);
                        ASSERT_EQ(r->bytes, 120);
                        ASSERT_EQ(r->allocs, 3);
                        ASSERT_EQ(r->n_allocator, 2);           /* the most any of them lost */
                } else if (r->pid == 10 && r->stack_id == 7) {
                        ASSERT_EQ(r->n_ips, 3);
                        ASSERT_EQ(r->n_allocator, 0);
                } else if (r->pid == 10) {
                        ASSERT_EQ(r->stack_id, 6);
                        ASSERT_EQ(r->n_ips, 1);
                        ASSERT_EQ(r->ips[0], 0x5010);
                } else {
                        ASSERT_EQ(r->pid, 11);
                        ASSERT_EQ(r->n_ips, 3);
                        ASSERT_EQ(r->bytes, 16);
                }
        }
        stack_rows_done(&rows);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(junk_after_the_first_frame_is_cut_and_the_stacks_merge),
                TEST(nothing_cut_leaves_rows_as_they_are),
                TEST(operator_frames_on_top_are_dropped_and_the_stacks_merge),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
