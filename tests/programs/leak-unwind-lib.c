/* SPDX-License-Identifier: MIT */
/* The library leak-unwind-dlopen dlopen()s after memleakd attached, built like the program:
 * -O2 -fomit-frame-pointer, so its frames are walked by its own unwind table (loaded when the
 * daemon's snapshot tick sees the new mapping).
 *
 * Ground truth (tests/integration/test_unwind_chains.py keeps the same numbers):
 *   lib_leak   n x malloc(LIB_LEAK_SIZE) <- call_plugin <- main (n: the program passes 6)
 *   lib_churn  malloc/free balanced: nothing
 * and, called by the program right after its dlopen (its "at-once" mode), three call sites of one
 * allocating function, which only its callers tell apart (test_unwind_chains.py, LATE_SITES),
 * each round (the program makes up to two):
 *   lib_keep <- lib_site_a <- lib_sites <- call_plugin <- main   3 x 201 bytes
 *   lib_keep <- lib_site_b <- lib_sites <- call_plugin <- main   5 x 202 bytes
 *   lib_keep <- lib_site_c <- lib_sites <- call_plugin <- main   7 x 203 bytes */
#include <stdlib.h>

#define noinline __attribute__((noinline))
#define LIB_LEAK_SIZE 111

void *volatile lib_kept[64];

int lib_leak(int n);            /* found by dlsym */
int lib_sites(int n);

static noinline void lib_churn(int n)
{
        for (int i = 0; i < n; i++) {
                void *p = malloc(24 + (size_t)i % 100);

                if (!p)
                        abort();
                free(p);
                __asm__ volatile("" ::: "memory");
        }
}

noinline int lib_leak(int n)
{
        if (n < 0 || n > (int)(sizeof(lib_kept) / sizeof(lib_kept[0])))
                abort();
        lib_churn(100);
        for (int i = 0; i < n; i++) {
                lib_kept[i] = malloc(LIB_LEAK_SIZE);
                if (!lib_kept[i])
                        abort();
        }
        lib_churn(100);
        __asm__ volatile("" ::: "memory");
        return n;
}

void *volatile lib_sites_kept[2 * (3 + 5 + 7)];

/* The one function that allocates for the three sites: a cut walk would merge them here. */
static noinline void lib_keep(int i, size_t size)
{
        lib_sites_kept[i] = malloc(size);
        if (!lib_sites_kept[i])
                abort();
        __asm__ volatile("" ::: "memory");
}

static noinline int lib_site_a(int next)
{
        for (int i = 0; i < 3; i++)
                lib_keep(next++, 201);
        __asm__ volatile("" ::: "memory");     /* no tail call: each site's frame stays */
        return next;
}

static noinline int lib_site_b(int next)
{
        for (int i = 0; i < 5; i++)
                lib_keep(next++, 202);
        __asm__ volatile("" ::: "memory");
        return next;
}

static noinline int lib_site_c(int next)
{
        for (int i = 0; i < 7; i++)
                lib_keep(next++, 203);
        __asm__ volatile("" ::: "memory");
        return next;
}

/* n: where in lib_sites_kept to start (0, then 15 for a second round) */
noinline int lib_sites(int n)
{
        n = lib_site_a(n);
        n = lib_site_b(n);
        n = lib_site_c(n);
        __asm__ volatile("" ::: "memory");
        return n;
}
