/* SPDX-License-Identifier: MIT */
/* The library leak-unwind-dlopen dlopen()s after memleakd attached, built like the program:
 * -O2 -fomit-frame-pointer, so its frames are walked by its own unwind table (loaded when the
 * daemon's snapshot tick sees the new mapping).
 *
 * Ground truth (tests/integration/test_unwind_chains.py keeps the same numbers):
 *   lib_leak   n x malloc(LIB_LEAK_SIZE) <- call_plugin <- main (n: the program passes 6)
 *   lib_churn  malloc/free balanced: nothing */
#include <stdlib.h>

#define noinline __attribute__((noinline))
#define LIB_LEAK_SIZE 111

void *volatile lib_kept[64];

int lib_leak(int n);            /* found by dlsym */

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
