/* SPDX-License-Identifier: MIT */
/* What memleakctl run --error-exitcode judges (tests/integration/test_gates.py): blocks lost at
 * exit, each kind from a function of its own, then an exit with the status it is told.
 *
 * Ground truth at its exit (scanned there by memleakctl run):
 *   lose_list()       48 bytes, 1 block, its only pointer dropped: definitely lost ...
 *   make_child()      333 bytes, 1 block (called from lose_list()), pointed to only from
 *                     lose_list()'s block: indirectly lost
 *   lose_overwritten() 4 blocks of 100 bytes, each pointer overwritten: definitely lost
 *   keep_in_global()  222 bytes, 1 block, a global points to it: still reachable
 * With --clean it loses nothing: only keep_in_global()'s block is outstanding.
 *
 * Usage: leak-lose [--clean] [--exit N] [--wait]
 *   --wait: print "ready", wait for a line, make the blocks, print "made", then wait until stdin
 *   closes before it exits (a live target whose memory grows no more). */
#include <stdlib.h>
#include <string.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

void *volatile global_keep;
void *volatile global_overwritten;

static noinline void keep_in_global(void)
{
        global_keep = malloc(222); /* site: keep_in_global */
        require(global_keep);
}

static noinline void *make_child(void)
{
        void *p = malloc(333); /* site: make_child */

        require(p);
        return p;
}

static noinline void lose_list(void)
{
        void **volatile parent = malloc(48); /* site: lose_list */

        require(parent);
        memset(parent, 0, 48);
        parent[0] = make_child();
        parent = NULL;
}

static noinline void lose_overwritten(void)
{
        for (int i = 0; i < 4; i++) {
                global_overwritten = malloc(100); /* site: lose_overwritten */
                require(global_overwritten);
        }
        global_overwritten = NULL;
}

/* Old frames below the stack pointer keep the addresses the calls above handled: clear them, so
 * that only what the program still holds points anywhere. */
static noinline void scrub_stack(void)
{
        volatile char junk[16384];

        memset((char *)junk, 0, sizeof(junk));
}

int main(int argc, char **argv)
{
        int clean = 0, status = 0, wait = 0;

        setup_stdio();
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--clean") == 0)
                        clean = 1;
                else if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc)
                        status = atoi(argv[++i]);
                else if (strcmp(argv[i], "--wait") == 0)
                        wait = 1;
        }
        if (wait) {
                say("ready");
                if (wait_line() < 0)
                        return 1;
        }
        keep_in_global();
        if (!clean) {
                lose_list();
                lose_overwritten();
        }
        scrub_stack();
        if (wait) {
                say("made");
                while (wait_line() == 0)
                        ;
        }
        exit(status);
}
