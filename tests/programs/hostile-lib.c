/* SPDX-License-Identifier: MIT */
/* A library the hostile tests dlopen, copy, strip and doctor (FIFO debuglink, decompression bomb). */
#include <stdlib.h>

void *hostile_leak(void);

__attribute__((noinline)) void *hostile_leak(void)
{
        return malloc(4242);    /* site: hostile_leak */
}
