/* SPDX-License-Identifier: MIT */
/* A small call tree of outstanding memory for memleakctl html's flame graph and diff
 * (tests/integration/test_html_browser.py). serve() calls handle_get(), which keeps 10 and then 5
 * blocks of 300 bytes through parse_header() from two call sites of its own (two stacks, one
 * function: 4,500 bytes), and handle_post(), which keeps 3 more through parse_header() (900
 * bytes); load_config() keeps one block of 4,000 bytes. After "started", grow_steadily() keeps a
 * 64-byte block every 20 ms: the one stack that grows between two snapshots.
 *
 * Protocol: print "ready", wait for a line, allocate the tree, print "started", then run until
 * stdin closes. */
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

static void *kept[32];
static int n_kept;

static noinline void parse_header(void)
{
        require(n_kept < (int)(sizeof(kept) / sizeof(kept[0])));
        kept[n_kept] = malloc(300);
        require(kept[n_kept]);
        n_kept++;
}

static noinline void handle_get(void)
{
        for (int i = 0; i < 10; i++)
                parse_header();
        for (int i = 0; i < 5; i++)
                parse_header();
}

static noinline void handle_post(void)
{
        for (int i = 0; i < 3; i++)
                parse_header();
}

static noinline void serve(void)
{
        handle_get();
        handle_post();
}

static noinline void load_config(void)
{
        static void *config;

        config = malloc(4000);
        require(config);
}

static noinline void grow_steadily(void)
{
        void *volatile p = malloc(64);

        require(p);
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
        load_config();
        serve();
        say("started");
        while (!stdin_closed(20))
                grow_steadily();
        return 0;
}
