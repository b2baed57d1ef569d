/* SPDX-License-Identifier: MIT */
/* A process whose allocations come from ever new stacks, then leak: memleakd must give back the
 * stacks and per-stack rows the churn no longer uses, so that the leaks that come later still
 * find room for theirs (tests/integration/test_reclaim.py keeps the same numbers).
 *
 * Ground truth: first, for every 0 <= i < OUTER and 0 <= j < INNER, descend_outer(i) ->
 * descend_inner(j) -> malloc(CHURN_SIZE), freed at once: OUTER * INNER distinct stacks, nothing
 * outstanding. Then leak_first() leaks FIRST_BLOCKS blocks of FIRST_SIZE bytes and leak_second()
 * SECOND_BLOCKS blocks of SECOND_SIZE, from stacks the churn never took.
 *
 * Protocol: print "ready"; on a line, churn and print "churned"; on the next, leak and print
 * "done"; wait for EOF. */
#include <stdlib.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define OUTER 41
#define INNER 53
#define CHURN_SIZE 77u
#define FIRST_BLOCKS 7
#define FIRST_SIZE 1000u
#define SECOND_BLOCKS 3
#define SECOND_SIZE 333u

static void *kept[FIRST_BLOCKS + SECOND_BLOCKS];
static unsigned n_kept;

static noinline void descend_inner(int depth)
{
        if (depth > 0) {
                descend_inner(depth - 1);
                __asm__ volatile("" ::: "memory");      /* not a tail call: keep the frame */
                return;
        }
        void *p = malloc(CHURN_SIZE);

        require(p);
        __asm__ volatile("" : : "r"(p) : "memory");
        free(p);
}

static noinline void descend_outer(int depth, int inner)
{
        if (depth > 0) {
                descend_outer(depth - 1, inner);
                __asm__ volatile("" ::: "memory");
                return;
        }
        descend_inner(inner);
}

static noinline void leak_first(void)
{
        for (int i = 0; i < FIRST_BLOCKS; i++) {
                kept[n_kept] = malloc(FIRST_SIZE);
                require(kept[n_kept]);
                n_kept++;
        }
}

static noinline void leak_second(void)
{
        for (int i = 0; i < SECOND_BLOCKS; i++) {
                kept[n_kept] = malloc(SECOND_SIZE);
                require(kept[n_kept]);
                n_kept++;
        }
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        for (int i = 0; i < OUTER; i++)
                for (int j = 0; j < INNER; j++)
                        descend_outer(i, j);
        say("churned");
        if (wait_line() < 0)
                return 1;
        leak_first();
        leak_second();
        say("done");
        wait_line();
        return 0;
}
