/* SPDX-License-Identifier: MIT */
/* A stand-in for the C++ runtime (linked with DT_SONAME libstdc++.so.6): operator new calls malloc
 * and returns (a call, not a tail call: malloc returns into it), operator delete jumps to free.
 * Built with and without call-frame information: without, a walk from malloc's return into new
 * cannot reach new's caller, so new must stay probed. */
#include <stdlib.h>

void *fake_new(unsigned long size) __asm__("_Znwm");
void fake_delete(void *p) __asm__("_ZdlPv");

void *fake_new(unsigned long size)
{
        void *p = malloc(size ? size : 1);

        if (!p)
                abort();
        return p;
}

void fake_delete(void *p)
{
        free(p);
}
