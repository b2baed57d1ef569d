// SPDX-License-Identifier: MIT
// The same leaks, built against glibc, tcmalloc, jemalloc and mimalloc (and statically): memleakd
// must find the allocator that serves the process and report the same functions and bytes.
// Each build also leaks through its allocator's own API (ALLOCATOR_* macros).
//
// Ground truth (tests/integration/test_allocators.py keeps the same numbers):
//   leak_malloc()        5 x malloc(100)
//   leak_calloc()        3 x calloc(4, 50) = 200
//   leak_realloc()       2 blocks grown by realloc 64 -> 256: 2 x 256
//   leak_new()           4 x new Widget = 48
//   leak_new_array()     2 x new int[25] = 100
//   leak_extended()      tcmalloc: 2 x tc_malloc(88); jemalloc: 3 x mallocx(72), one grown by
//                        rallocx to 144 and one by xallocx in place to 80 (72 + 80 + 144);
//                        mimalloc: 3 x mi_malloc(40) + mi_malloc_aligned(128, 64)
//   churn()              every call above, and the extended frees, balanced: nothing outstanding
// Protocol: print "ready", wait for a line ("go"), leak, print "done", wait for EOF.
#include <cstdlib>
#include <new>

#if defined(ALLOCATOR_TCMALLOC)
#include <gperftools/tcmalloc.h>
#elif defined(ALLOCATOR_JEMALLOC)
#include <jemalloc/jemalloc.h>
#elif defined(ALLOCATOR_MIMALLOC)
#include <mimalloc.h>
#endif

extern "C" {
#include "leak-util.h"
}

#define noinline __attribute__((noinline))

void *volatile keep[64];
static int n_keep;

struct Widget {
        long fields[6];
};

noinline void leak_malloc()
{
        for (int i = 0; i < 5; i++)
                keep[n_keep++] = malloc(100);
}

noinline void leak_calloc()
{
        for (int i = 0; i < 3; i++)
                keep[n_keep++] = calloc(4, 50);
}

noinline void leak_realloc()
{
        for (int i = 0; i < 2; i++) {
                void *p = malloc(64);
                keep[n_keep++] = realloc(p, 256);
        }
}

noinline void leak_new()
{
        for (int i = 0; i < 4; i++)
                keep[n_keep++] = new Widget();
}

noinline void leak_new_array()
{
        for (int i = 0; i < 2; i++)
                keep[n_keep++] = new int[25];
}

noinline void leak_extended()
{
#if defined(ALLOCATOR_TCMALLOC)
        for (int i = 0; i < 2; i++)
                keep[n_keep++] = tc_malloc(88);
#elif defined(ALLOCATOR_JEMALLOC)
        for (int i = 0; i < 3; i++)
                keep[n_keep++] = mallocx(72, 0);
        keep[n_keep - 1] = rallocx(keep[n_keep - 1], 144, 0);
        /* grown in place within its size class (80): xallocx returns the real size */
        require(xallocx(keep[n_keep - 2], 80, 0, 0) >= 80);
#elif defined(ALLOCATOR_MIMALLOC)
        for (int i = 0; i < 3; i++)
                keep[n_keep++] = mi_malloc(40);
        keep[n_keep++] = mi_malloc_aligned(128, 64);
#endif
}

noinline void churn()
{
        for (int round = 0; round < 40; round++) {
                void *p = malloc(100 + round);
                void *c = calloc(3, 30);
                void *r = realloc(malloc(10), 1000);
                Widget *w = new Widget();
                int *a = new int[round + 1];

                free(p);
                free(c);
                free(r);
                delete w;
                delete[] a;
#if defined(ALLOCATOR_TCMALLOC)
                tc_free_sized(tc_malloc(300), 300);
                tc_free(tc_calloc(2, 20));
#elif defined(ALLOCATOR_JEMALLOC)
                void *x = mallocx(300, 0);
                xallocx(x, 310, 0, 0);
                sdallocx(x, 310, 0);
                dallocx(rallocx(mallocx(20, 0), 4000, 0), 0);
#elif defined(ALLOCATOR_MIMALLOC)
                mi_free_size(mi_malloc(300), 300);
                mi_free(mi_realloc(mi_calloc(2, 20), 4000));
                mi_free_aligned(mi_malloc_aligned(256, 128), 128);
#endif
        }
}

int main()
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        leak_malloc();
        leak_calloc();
        leak_realloc();
        leak_new();
        leak_new_array();
        leak_extended();
        churn();
        say("done");
        wait_line();
        return 0;
}
