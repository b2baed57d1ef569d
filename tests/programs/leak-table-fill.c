/* SPDX-License-Identifier: MIT */
/* Reachable data that grows past the allocation table while one function leaks steadily
 * (tests/integration/test_auto_sample.py, with a small max_allocs).
 *
 * After "ready", on a line: keep_early() keeps EARLY_BLOCKS blocks of EARLY_SIZE bytes (reachable
 * to the end: recorded exactly, before the table fills), then "kept". On the next line: each round, grow_cache()
 * appends CACHE_PER_ROUND nodes of CACHE_SIZE bytes to a list it keeps (reachable, growing without
 * end, as a cache or a key store does) and leak_steadily() leaks one block of LEAK_SIZE bytes,
 * then it sleeps a millisecond; until a line comes. Then "done", and it waits for EOF. */
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include "leak-util.h"

#define EARLY_BLOCKS 3000
#define EARLY_SIZE 100
#define CACHE_PER_ROUND 5
#define CACHE_SIZE 48
#define LEAK_SIZE 256

struct node {
        struct node *next;
        char data[CACHE_SIZE - sizeof(struct node *)];
};

static void *early[EARLY_BLOCKS];
static struct node *cache;
static volatile unsigned long rounds;

static void keep_early(void)
{
        for (int i = 0; i < EARLY_BLOCKS; i++) {
                early[i] = malloc(EARLY_SIZE);  /* site: keep_early */
                require(early[i]);
        }
}

static void grow_cache(void)
{
        for (int i = 0; i < CACHE_PER_ROUND; i++) {
                struct node *n = malloc(sizeof(*n));    /* site: grow_cache */

                require(n);
                n->next = cache;
                cache = n;
        }
}

static void leak_steadily(void)
{
        char *p = malloc(LEAK_SIZE);    /* site: leak_steadily */

        require(p);
        p[0] = 1;
}

static int line_waiting(void)
{
        struct pollfd p = { .fd = 0, .events = POLLIN };

        return poll(&p, 1, 0) > 0;
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 0;
        keep_early();
        say("kept");
        if (wait_line() < 0)
                return 0;
        while (!line_waiting()) {
                grow_cache();
                leak_steadily();
                rounds++;
                usleep(1000);
        }
        wait_line();
        say("done");
        wait_line();
        require(early[0] && early[EARLY_BLOCKS - 1] && (cache || rounds == 0));
        return 0;
}
