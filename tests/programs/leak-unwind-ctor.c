/* SPDX-License-Identifier: MIT */
/* A library leak-unwind links: its constructor leaks when ld.so runs it, before main, called from
 * _dl_start_user, which has no CFI but zeroes rbp to mark the deepest frame. Only memleakctl run
 * sees that allocation (an attach comes after it).
 *
 * Ground truth (tests/integration/test_unwind.py keeps the same numbers):
 *   ctor_leak  1 x 113 bytes  <- ld.so's call_init <- _dl_init <- _dl_start_user */
#include <stdlib.h>

void *volatile ctor_kept;
void ctor_leak(void);

__attribute__((constructor, noinline)) void ctor_leak(void)
{
        ctor_kept = malloc(113);
        __asm__ volatile("" ::: "memory");
}
