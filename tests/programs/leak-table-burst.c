/* SPDX-License-Identifier: MIT */
/* A burst of small blocks that fills the allocation table far faster than the daemon checks it
 * (every 100 ms), while one function leaks steadily (tests/integration/test_auto_sample.py, with
 * a small max_allocs).
 *
 * After "ready", on a line: keep_early() keeps EARLY_BLOCKS blocks of EARLY_SIZE bytes (reachable
 * to the end: recorded exactly), at most EARLY_PER_MS a millisecond, then "kept". On the next line: leak_steadily() leaks one block
 * of LEAK_SIZE bytes a millisecond until a line comes; then fill_burst() keeps BURST_BLOCKS
 * blocks of BURST_SIZE bytes in a list (reachable), as fast as malloc goes, and it says
 * "burst <microseconds the burst took>"; then leak_steadily() again until a line; then
 * "done <blocks leak_steadily leaked in all>", and it waits for EOF.
 *
 * With the argument "first": on the first line after "ready", fill_burst() keeps
 * FIRST_BURST_BLOCKS blocks at once (before the daemon has seen any of its heap: a burst past
 * what the first sampling mean fits), says "burst <microseconds>", and on the next line "done 0";
 * then it waits for EOF. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "leak-util.h"

#define EARLY_BLOCKS 5000
#define EARLY_SIZE 100
#define EARLY_PER_MS 20         /* at most: not a burst itself */
#define BURST_BLOCKS 20000
#define FIRST_BURST_BLOCKS 60000
#define BURST_SIZE 48
#define LEAK_SIZE 256

struct node {
        struct node *next;
        char data[BURST_SIZE - sizeof(struct node *)];
};

static void *early[EARLY_BLOCKS];
static struct node *burst;
static unsigned long leaked;

static void keep_early(void)
{
        for (int i = 0; i < EARLY_BLOCKS; i++) {
                early[i] = malloc(EARLY_SIZE);  /* site: keep_early */
                require(early[i]);
                if (i % EARLY_PER_MS == EARLY_PER_MS - 1)
                        usleep(1000);
        }
}

static void fill_burst(int blocks)
{
        for (int i = 0; i < blocks; i++) {
                struct node *n = malloc(sizeof(*n));    /* site: fill_burst */

                require(n);
                n->next = burst;
                burst = n;
        }
}

static void leak_steadily(void)
{
        char *p = malloc(LEAK_SIZE);    /* site: leak_steadily */

        require(p);
        p[0] = 1;
        leaked++;
}

static int line_waiting(void)
{
        struct pollfd p = { .fd = 0, .events = POLLIN };

        return poll(&p, 1, 0) > 0;
}

static void leak_until_a_line(void)
{
        while (!line_waiting()) {
                leak_steadily();
                usleep(1000);
        }
        wait_line();
}

static long long now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static int burst_first(void)
{
        long long start;

        start = now_usec();
        fill_burst(FIRST_BURST_BLOCKS);
        printf("burst %lld\n", now_usec() - start);
        fflush(stdout);
        if (wait_line() < 0)
                return 0;
        say("done 0");
        wait_line();
        require(burst);
        return 0;
}

int main(int argc, char **argv)
{
        long long start;

        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 0;
        if (argc > 1 && strcmp(argv[1], "first") == 0)
                return burst_first();
        keep_early();
        say("kept");
        if (wait_line() < 0)
                return 0;
        leak_until_a_line();
        start = now_usec();
        fill_burst(BURST_BLOCKS);
        printf("burst %lld\n", now_usec() - start);
        fflush(stdout);
        leak_until_a_line();
        printf("done %lu\n", leaked);
        fflush(stdout);
        wait_line();
        require(early[0] && early[EARLY_BLOCKS - 1] && burst);
        return 0;
}
