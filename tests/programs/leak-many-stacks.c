/* SPDX-License-Identifier: MIT */
/* Leaks one block from each of many distinct stacks: more than small per-stack totals hold.
 *
 * Ground truth (tests/integration/test_threads.py keeps the same numbers): for every
 * 0 <= i < OUTER and 0 <= j < INNER, descend_outer(i) -> descend_inner(j) -> malloc(BLOCK_SIZE),
 * so OUTER * INNER blocks from OUTER * INNER different stacks.
 *
 * Protocol: print "ready", wait for a line ("go"), leak, print "done", wait for EOF. */
#include <stdlib.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define OUTER 41
#define INNER 53
#define BLOCK_SIZE 77u

static void *kept[OUTER * INNER];
static unsigned n_kept;

static noinline void descend_inner(int depth)
{
        if (depth > 0) {
                descend_inner(depth - 1);
                __asm__ volatile("" ::: "memory");      /* not a tail call: keep the frame */
                return;
        }
        kept[n_kept] = malloc(BLOCK_SIZE);
        require(kept[n_kept]);
        n_kept++;
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

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        for (int i = 0; i < OUTER; i++)
                for (int j = 0; j < INNER; j++)
                        descend_outer(i, j);
        say("done");
        wait_line();
        return 0;
}
