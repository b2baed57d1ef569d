/* SPDX-License-Identifier: MIT */
/* A busy program attached as it allocates (-O2 without frame pointers: only unwind tables walk
 * its stacks): two threads malloc and free without pause, thousands of times a millisecond, from
 * before the attach until a line comes, so some of its allocations fall into every moment of the attach,
 * the one where BPF starts recording it included; then three functions leak a known amount.
 * tests/integration/test_unwind.py: no walk of it stops (no_table counted 0), every stack exact.
 * Protocol: print "ready", churn until a line comes (looked for every 1,024 rounds), leak, print
 * "done", wait for a line or EOF. */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "leak-util.h"

static void *volatile sink;     /* the compiler may not drop a malloc whose block is never used */

/* After a function's last call: that call is not made a jump (its caller's frame would be gone). */
#define NO_TAIL_CALL() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) static void churn_once(size_t bytes)
{
        void *p = malloc(bytes);

        require(p);
        sink = p;
        free(p);
}

__attribute__((noinline)) static void churn(void)
{
        for (int i = 0; i < 1024; i++)
                churn_once(16 + (size_t)(i & 63));
}

__attribute__((noinline)) static void keep(size_t bytes)
{
        sink = malloc(bytes);
        require(sink);
}

__attribute__((noinline)) static void busy_leak_small(void)
{
        for (int i = 0; i < 3; i++)
                keep(48);
        NO_TAIL_CALL();
}

__attribute__((noinline)) static void busy_leak_medium(void)
{
        for (int i = 0; i < 5; i++) {
                void *p = malloc(80);

                require(p);
                sink = p;
        }
}

__attribute__((noinline)) static void busy_leak_large(void)
{
        for (int i = 0; i < 7; i++)
                keep(112);
        NO_TAIL_CALL();
}

static atomic_int stop;

/* A second churner: one of the two is on a CPU more often while the daemon works on the other. */
static void *churn_thread(void *arg)
{
        while (!atomic_load(&stop))
                churn();
        return arg;
}

static int line_waiting(void)
{
        struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };

        return poll(&p, 1, 0) > 0;
}

int main(void)
{
        pthread_t thread;

        setup_stdio();
        require(pthread_create(&thread, NULL, churn_thread, NULL) == 0);
        say("ready");
        while (!line_waiting())
                churn();
        atomic_store(&stop, 1);
        require(pthread_join(thread, NULL) == 0);
        require(wait_line() == 0);
        busy_leak_small();
        busy_leak_medium();
        busy_leak_large();
        say("done");
        wait_line();
        return 0;
}
