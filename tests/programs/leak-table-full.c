/* SPDX-License-Identifier: MIT */
/* A target that fills a small allocation table, or one that stays clean, for the per-target
 * counters (tests/integration/test_counters.py). Commands, one a line:
 *   go    leak_once() leaks 10 blocks of 100 bytes; then "done"
 *   fill  rounds every 10 ms of leak_steadily() (one 111-byte block, never freed) and
 *         keep_reachable() (40 blocks of 48 bytes kept in a list): past a small max_allocs most
 *         are dropped, and counted; "started" after the first round, until the line "stop",
 *         then "rounds N" (N rounds made: 41 N allocations)
 * Protocol: print "ready", then commands until EOF. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

struct node {
        struct node *next;
        char payload[40];
};

static struct node *kept;

static noinline void leak_once(void)
{
        for (int i = 0; i < 10; i++) {
                void *volatile p = malloc(100);

                require(p);
        }
}

static noinline void leak_steadily(void)
{
        void *volatile p = malloc(111);

        require(p);
}

static noinline void keep_reachable(void)
{
        for (int i = 0; i < 40; i++) {
                struct node *n = malloc(sizeof(*n));

                require(n);
                n->next = kept;
                kept = n;
        }
}

/* The next line from stdin (unbuffered) into buf, without its newline; -1 at EOF. */
static int read_line(char *buf, size_t size)
{
        size_t n = 0;
        char c;

        for (;;) {
                ssize_t r = read(0, &c, 1);

                if (r <= 0)
                        return n > 0 ? 0 : -1;
                if (c == '\n')
                        break;
                if (n + 1 < size)
                        buf[n++] = c;
        }
        buf[n] = 0;
        return 0;
}

/* Whether a line is waiting on stdin within ms milliseconds. */
static int line_waiting(int ms)
{
        struct pollfd p = { .fd = 0, .events = POLLIN };

        return poll(&p, 1, ms) > 0;
}

static void fill(void)
{
        char line[32];
        long rounds = 0;

        for (;;) {
                leak_steadily();
                keep_reachable();
                if (++rounds == 1)
                        say("started");
                if (line_waiting(10) && (read_line(line, sizeof(line)) < 0 || strcmp(line, "stop") == 0))
                        break;
        }
        printf("rounds %ld\n", rounds);
        fflush(stdout);
}

int main(void)
{
        char line[32];

        setup_stdio();
        say("ready");
        while (read_line(line, sizeof(line)) == 0) {
                if (strcmp(line, "go") == 0) {
                        leak_once();
                        say("done");
                } else if (strcmp(line, "fill") == 0) {
                        fill();
                }
        }
        return 0;
}
