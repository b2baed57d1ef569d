/* SPDX-License-Identifier: MIT */
/* Three kinds of outstanding memory for the leak verdicts (tests/integration/test_verdicts.py):
 * fill_cache() allocates 20 blocks of 222 bytes once and keeps them (a plateau), leak_steadily()
 * leaks a 111-byte block every 50 ms (growing), and churn_buffers() holds 0 to 9 blocks of 333
 * bytes, filling up and emptying every half second (churn).
 *
 * Protocol: print "ready", wait for a line, fill the cache, print "started", then run until
 * stdin closes. Under memleakctl run (tests/integration/test_gates.py): --run-ms N runs N
 * milliseconds from its start instead, without waiting for anything, then exits; --no-leak leaves
 * leak_steadily() out (balanced churn and a plateau only); --exit N exits with status N. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
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

static long elapsed_ms(const struct timespec *since)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

int main(int argc, char *argv[])
{
        long run_ms = -1;
        int leak = 1, status = 0;
        struct timespec start;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--run-ms") == 0 && i + 1 < argc)
                        run_ms = atol(argv[++i]);
                else if (strcmp(argv[i], "--no-leak") == 0)
                        leak = 0;
                else if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc)
                        status = atoi(argv[++i]);
                else
                        require(!"known arguments");
        }
        clock_gettime(CLOCK_MONOTONIC, &start);
        setup_stdio();
        say("ready");
        if (run_ms < 0 && wait_line() < 0)
                return 1;
        fill_cache();
        say("started");
        for (;;) {
                if (run_ms < 0 ? stdin_closed(50) : elapsed_ms(&start) >= run_ms)
                        break;
                if (run_ms >= 0)
                        nanosleep(&(struct timespec) { .tv_nsec = 50 * 1000000 }, NULL);
                if (leak)
                        leak_steadily();
                churn_buffers();
        }
        return status;
}
