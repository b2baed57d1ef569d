/* SPDX-License-Identifier: MIT */
/* Allocations from one call site at one stack depth, reached from different callers: malloc
 * returns to the same pc with the same stack pointer each time, and only the return addresses
 * further up tell the callers apart. Built -O2 without frame pointers: walked by the unwind
 * tables, whose per-thread memo of the last walk must tell them apart too.
 *
 * Ground truth (tests/integration/test_unwind.py keeps the same numbers):
 *   leak_from_a   40 x 24 bytes  <- site <- leak_from_a <- twice <- main  (a's and b's frames alike)
 *   leak_from_b   40 x 40 bytes  <- site <- leak_from_b <- twice <- main
 *   outer_x       30 x 56 bytes  <- site <- middle <- outer_x <- twice <- main  (the difference
 *   outer_y       30 x 72 bytes  <- site <- middle <- outer_y <- twice <- main   two frames up)
 * each called twice in a row from one call site (a a b b ...: a walk repeated, then one from the
 * same registers that is not), while churn_here() leaves nothing outstanding, nor does
 * churn_in_turn(): 100 rounds of churn_from_p, churn_from_q and churn_from_r in turn, three stacks
 * from the same registers (a server's request path through an allocation wrapper), which the
 * thread's memos keep side by side; nor do churn_under_frame(2600) and churn_under_frame(6000),
 * whose frames put more than 2 KiB of stack between malloc's return and _start (as python3's
 * interpreter frames do), and more than the 4 KiB memleakd reads in one go (sqlite3's VDBE), which
 * a memo holds too.
 *
 * Protocol: print "ready", wait for a line, leak, print "done", wait for a line or EOF. */
#include <stdlib.h>

#include "leak-util.h"

#define noinline __attribute__((noinline, noclone))

static void *kept[256];
static int n_kept;
static volatile size_t sizes[4] = { 24, 40, 56, 72 };
static volatile int calls = 2;

static noinline void keep(void *p)
{
        require(p);
        require(n_kept < (int)(sizeof(kept) / sizeof(kept[0])));
        kept[n_kept++] = p;
}

static noinline void *site(size_t n)
{
        void *p = malloc(n);

        __asm__ volatile("" : : "r"(p) : "memory");
        return p;
}

static noinline void *middle(size_t n)
{
        void *p = site(n);

        __asm__ volatile("" : : "r"(p) : "memory");
        return p;
}

static noinline void leak_from_a(void)
{
        keep(site(sizes[0]));
        __asm__ volatile("" ::: "memory");
}

static noinline void leak_from_b(void)
{
        keep(site(sizes[1]));
        __asm__ volatile("" ::: "memory");
}

static noinline void outer_x(void)
{
        keep(middle(sizes[2]));
        __asm__ volatile("" ::: "memory");
}

static noinline void outer_y(void)
{
        keep(middle(sizes[3]));
        __asm__ volatile("" ::: "memory");
}

/* Calls f twice from one call site: the second call's stack is the first's. */
static noinline void twice(void (*f)(void))
{
        for (int i = 0; i < calls; i++)
                f();
        __asm__ volatile("" ::: "memory");
}

static noinline void churn_here(int n)
{
        for (int i = 0; i < n; i++)
                free(site(16 + (size_t)i % 100));
}

static noinline void churn_from_p(void)
{
        free(site(8));
        __asm__ volatile("" ::: "memory");
}

static noinline void churn_from_q(void)
{
        free(site(8));
        __asm__ volatile("" ::: "memory");
}

static noinline void churn_from_r(void)
{
        free(site(8));
        __asm__ volatile("" ::: "memory");
}

static noinline void churn_in_turn(int rounds)
{
        static void (*const in_turn[])(void) = { churn_from_p, churn_from_q, churn_from_r };

        for (int i = 0; i < 3 * rounds; i++)
                in_turn[i % 3]();
}

/* A frame of about bytes (a variable-length array) above churn_here(n)'s. */
static noinline void churn_under_frame(size_t bytes, int n)
{
        volatile char frame[bytes];

        frame[0] = 1;
        churn_here(n);
        frame[bytes - 1] = frame[0];
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        churn_here(200);
        for (int i = 0; i < 20; i++) {
                twice(leak_from_a);
                twice(leak_from_b);
        }
        churn_here(200);
        for (int i = 0; i < 15; i++) {
                twice(outer_x);
                twice(outer_y);
        }
        churn_here(200);
        churn_in_turn(100);
        churn_under_frame(2600, 200);
        churn_under_frame(6000, 200);
        say("done");
        wait_line();
        return 0;
}
