/* SPDX-License-Identifier: MIT */
/* Three kinds of outstanding memory for the leak verdicts (tests/integration/test_verdicts.py):
 * fill_cache() allocates 20 blocks of 222 bytes once and keeps them (a plateau), leak_steadily()
 * leaks a 111-byte block every 50 ms (growing), and churn_buffers() holds 0 to 9 blocks of 333
 * bytes, filling up and emptying every half second (churn).
 *
 * Protocol: print "ready", wait for a line, fill the cache, print "started", then run until
 * stdin closes. */
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

static void *cache[20];
static void *buffers[10];
static int n_buffers;

static noinline void fill_cache(void)
{
        for (int i = 0; i < 20; i++) {
                cache[i] = malloc(222);
                require(cache[i]);
        }
}

static noinline void leak_steadily(void)
{
        void *volatile p = malloc(111);

        require(p);
}

static noinline void churn_buffers(void)
{
        if (n_buffers == 9) {
                while (n_buffers > 0)
                        free(buffers[--n_buffers]);
                return;
        }
        buffers[n_buffers] = malloc(333);
        require(buffers[n_buffers]);
        n_buffers++;
}

/* Whether stdin closed within ms milliseconds. */
static int stdin_closed(int ms)
{
        struct pollfd p = { .fd = 0, .events = POLLIN };
        char c;

        if (poll(&p, 1, ms) <= 0)
                return 0;
        return read(0, &c, 1) <= 0;
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        fill_cache();
        say("started");
        while (!stdin_closed(50)) {
                leak_steadily();
                churn_buffers();
        }
        return 0;
}
