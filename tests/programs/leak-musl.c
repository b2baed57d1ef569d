/* SPDX-License-Identifier: MIT */
/* Leaks through musl's allocator (built with Debian's musl-gcc, linked dynamically and
 * statically), as a program in an Alpine container would: every C entry point musl has.
 *
 * Ground truth (tests/integration/test_allocators.py keeps the same numbers):
 *   leak_malloc          5 x malloc(100)
 *   leak_calloc          3 x calloc(4, 50) = 200
 *   leak_realloc         2 blocks grown by realloc 64 -> 256: 2 x 256
 *   leak_aligned         posix_memalign(64, 96) + aligned_alloc(128, 256) + memalign(32, 48)
 *   churn                each of those, balanced: nothing outstanding
 *
 * Protocol: print "ready", wait for a line, leak, print "done", wait for a line or EOF. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

static void *volatile kept[16];
static int n_kept;

static noinline void keep(void *p)
{
        require(p);
        kept[n_kept++] = p;
}

static noinline void leak_malloc(void)
{
        for (int i = 0; i < 5; i++)
                keep(malloc(100));
}

static noinline void leak_calloc(void)
{
        for (int i = 0; i < 3; i++)
                keep(calloc(4, 50));
}

static noinline void leak_realloc(void)
{
        for (int i = 0; i < 2; i++) {
                void *p = malloc(64);

                require(p);
                keep(realloc(p, 256));
        }
}

static noinline void leak_aligned(void)
{
        void *p = NULL;

        require(posix_memalign(&p, 64, 96) == 0);
        keep(p);
        keep(aligned_alloc(128, 256));
        keep(memalign(32, 48));
}

static noinline void churn(void)
{
        for (int i = 0; i < 50; i++) {
                void *a = malloc(300), *b = calloc(3, 100), *c = NULL, *d;

                require(a && b && posix_memalign(&c, 64, 200) == 0);
                a = realloc(a, 900);
                d = aligned_alloc(64, 128);
                require(a && d);
                memset(a, 1, 900);
                free(a);
                free(b);
                free(c);
                free(d);
        }
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        churn();
        leak_malloc();
        leak_calloc();
        leak_realloc();
        leak_aligned();
        churn();
        say("done");
        wait_line();
        return n_kept == 13 ? 0 : 1;
}
