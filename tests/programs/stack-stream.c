/* SPDX-License-Identifier: MIT */
/* A process that allocates from a new call stack all the time, at a steady rate, each block freed
 * at once: memleakd's reclaim must keep pace with it, so that no stack is lost to a full stack
 * table (tests/integration/test_reclaim.py).
 *
 * Ground truth: for SECONDS seconds, RATE stacks a second, descend_a(i) -> descend_b(j) ->
 * descend_c(k) -> malloc(STREAM_SIZE), freed at once, each (i, j, k) with 0 <= i, j, k < FANOUT
 * once: FANOUT^3 distinct stacks at most, none deeper than 3 * FANOUT + 4 frames. Then
 * leak_after() leaks LEAK_BLOCKS blocks of LEAK_SIZE bytes.
 *
 * Usage: stack-stream SECONDS RATE. Protocol: print "ready"; on a line, stream and print
 * "streamed"; then leak and print "done"; wait for EOF. */
#include <stdlib.h>
#include <time.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define FANOUT 37
#define STREAM_SIZE 48u
#define LEAK_BLOCKS 5
#define LEAK_SIZE 4321u
#define TICKS_PER_SECOND 100

static void *kept[LEAK_BLOCKS];

static noinline void descend_c(int depth)
{
        if (depth > 0) {
                descend_c(depth - 1);
                __asm__ volatile("" ::: "memory");      /* not a tail call: keep the frame */
                return;
        }
        void *p = malloc(STREAM_SIZE);

        require(p);
        __asm__ volatile("" : : "r"(p) : "memory");
        free(p);
}

static noinline void descend_b(int depth, int k)
{
        if (depth > 0) {
                descend_b(depth - 1, k);
                __asm__ volatile("" ::: "memory");
                return;
        }
        descend_c(k);
}

static noinline void descend_a(int depth, int j, int k)
{
        if (depth > 0) {
                descend_a(depth - 1, j, k);
                __asm__ volatile("" ::: "memory");
                return;
        }
        descend_b(j, k);
}

static noinline void leak_after(void)
{
        for (int i = 0; i < LEAK_BLOCKS; i++) {
                kept[i] = malloc(LEAK_SIZE);
                require(kept[i]);
        }
}

static void add_ns(struct timespec *t, long ns)
{
        t->tv_nsec += ns;
        while (t->tv_nsec >= 1000000000L) {
                t->tv_nsec -= 1000000000L;
                t->tv_sec++;
        }
}

int main(int argc, char **argv)
{
        long seconds, rate, stack = 0, total;
        struct timespec next;

        setup_stdio();
        require(argc == 3);
        seconds = atol(argv[1]);
        rate = atol(argv[2]);
        total = seconds * rate;
        require(seconds > 0 && rate >= TICKS_PER_SECOND && total <= (long)FANOUT * FANOUT * FANOUT);
        say("ready");
        if (wait_line() < 0)
                return 1;
        clock_gettime(CLOCK_MONOTONIC, &next);
        for (long tick = 0; tick < seconds * TICKS_PER_SECOND; tick++) {
                for (long n = 0; n < rate / TICKS_PER_SECOND; n++, stack++)
                        descend_a((int)(stack / (FANOUT * FANOUT)), (int)(stack / FANOUT % FANOUT),
                                  (int)(stack % FANOUT));
                add_ns(&next, 1000000000L / TICKS_PER_SECOND);
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
                        ;
        }
        say("streamed");
        leak_after();
        say("done");
        wait_line();
        return 0;
}
