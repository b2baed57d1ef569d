/* SPDX-License-Identifier: MIT */
/* Leaks for memleakctl report --format pprof, read back by go tool pprof: two functions that
 * leak, one through a helper inlined into it (always_inline: inlined even at -O0), so that its
 * profile has a location with two lines.
 *
 * Ground truth (tests/integration/test_pprof.py keeps the same numbers):
 *   leak_direct        7 x 1000 bytes  <- leak_direct <- main
 *   leak_through_helper 3 x 2048 bytes <- fill_block (inlined) <- leak_through_helper <- main
 *   leak_big           1 x 1 MiB       <- leak_big <- main      (for --sample-bytes: an estimate)
 * Each malloc's line is marked "site: function"; the helper's call "site: leak_through_helper".
 *
 * Protocol: print "ready", wait for a line, leak, print "done", wait for a line or EOF. */
#include <stdlib.h>
#include <string.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

static void *kept[16];
static int n_kept;

static noinline void keep(void *p)
{
        require(p);
        require(n_kept < (int)(sizeof(kept) / sizeof(kept[0])));
        kept[n_kept++] = p;
}

static inline __attribute__((always_inline)) void *fill_block(size_t n)
{
        void *p = malloc(n); /* site: fill_block */

        memset(p, 0xab, n);
        return p;
}

static noinline void leak_direct(void)
{
        for (int i = 0; i < 7; i++)
                keep(malloc(1000)); /* site: leak_direct */
}

static noinline void leak_through_helper(void)
{
        for (int i = 0; i < 3; i++)
                keep(fill_block(2048)); /* site: leak_through_helper */
}

static noinline void leak_big(void)
{
        keep(malloc(1 << 20)); /* site: leak_big */
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        leak_direct();
        leak_through_helper();
        leak_big();
        say("done");
        wait_line();
        return 0;
}
