/* SPDX-License-Identifier: MIT */
/* Leaks one block from each of 65,536 distinct call stacks of 20 frames: a report too large to
 * send or print with every frame spelt out in every stack.
 *
 * Ground truth (tests/integration/test_big_report.py keeps the same numbers): for each n below
 * 2^LEVELS, a chain of LEVELS calls, the one at depth d to step_a when bit d of n is set and to
 * step_b otherwise, and the last one mallocs BLOCK_SIZE bytes: 2^LEVELS blocks, each from a stack
 * of its own (its return addresses spell n), innermost step_a or step_b, then LEVELS - 1 more of
 * them, then main.
 *
 * Protocol: print "ready", wait for a line ("go"), leak, print "done", wait for EOF. */
#include <stdlib.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#ifndef LEVELS
#define LEVELS 16       /* bench/big-report.py builds it with 17 */
#endif
#define BLOCK_SIZE 24u

static void *kept[1u << LEVELS];
static unsigned n_kept;
/* the two steps do something different, so that no compiler folds them into one */
static volatile unsigned steps_a, steps_b;

static void *step_a(int depth, unsigned n);
static void *step_b(int depth, unsigned n);

/* the next step of n's chain: bit depth of n chooses it (the call sites differ in each step) */
#define NEXT(depth, n) ((n) & (1u << (depth)) ? step_a((depth), (n)) : step_b((depth), (n)))

static noinline void *step_a(int depth, unsigned n)
{
        void *p;

        steps_a++;
        p = depth + 1 < LEVELS ? NEXT(depth + 1, n) : malloc(BLOCK_SIZE);
        __asm__ volatile("" : : "r"(p) : "memory");     /* not a tail call: keep the frame */
        return p;
}

static noinline void *step_b(int depth, unsigned n)
{
        void *p;

        steps_b += 2;
        p = depth + 1 < LEVELS ? NEXT(depth + 1, n) : malloc(BLOCK_SIZE);
        __asm__ volatile("" : : "r"(p) : "memory");
        return p;
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        for (unsigned n = 0; n < 1u << LEVELS; n++) {
                kept[n_kept] = NEXT(0, n);
                require(kept[n_kept]);
                n_kept++;
        }
        say("done");
        wait_line();
        return 0;
}
