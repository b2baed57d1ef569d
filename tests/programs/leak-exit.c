/* SPDX-License-Identifier: MIT */
/* Leaks and then exits on its own: the daemon must mark it exited and keep its last report.
 *
 * Ground truth (tests/integration/test_targets.py keeps the same numbers): leak_then_exit
 * leaks EXIT_LEAK_COUNT blocks of EXIT_LEAK_SIZE bytes.
 *
 * Protocol: print "ready", wait for a line ("go"), leak, print "done", exit 0 at once. */
#include <stdlib.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define EXIT_LEAK_SIZE          3001u
#define EXIT_LEAK_COUNT         13

static void *kept[EXIT_LEAK_COUNT];

static noinline void leak_then_exit(void)
{
        for (int i = 0; i < EXIT_LEAK_COUNT; i++) {
                kept[i] = malloc(EXIT_LEAK_SIZE); /* site: leak_then_exit */
                require(kept[i]);
        }
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        leak_then_exit();
        say("done");
        return 0;
}
