/* SPDX-License-Identifier: MIT */
/* A program another execs as a child (memleakctl run --follow-forks -- sh -c 'leak-child-exec;
 * true'): it leaks at once, from its first instructions, before memleakd could have loaded its
 * unwind table unless it held the child at its exec. -O2 -fomit-frame-pointer, so its frames are
 * walked by its own table.
 *
 * Ground truth (tests/integration/test_child_exec.py keeps the same numbers), three call sites of
 * one allocating function, which only their callers tell apart:
 *   child_keep <- child_site_a <- leak_at_start <- main   3 x 301 bytes
 *   child_keep <- child_site_b <- leak_at_start <- main   5 x 302 bytes
 *   child_keep <- child_site_c <- leak_at_start <- main   7 x 303 bytes
 * Nothing else: no stdio buffer is allocated (its output is unbuffered, and it says one word). */
#include <stdio.h>
#include <stdlib.h>

#define noinline __attribute__((noinline))

void *volatile child_kept[3 + 5 + 7];

/* The one function that allocates for the three sites: a cut walk would merge them here. */
static noinline void child_keep(int i, size_t size)
{
        child_kept[i] = malloc(size);
        if (!child_kept[i])
                abort();
        __asm__ volatile("" ::: "memory");
}

static noinline int child_site_a(int next)
{
        for (int i = 0; i < 3; i++)
                child_keep(next++, 301);
        __asm__ volatile("" ::: "memory");     /* no tail call: each site's frame stays */
        return next;
}

static noinline int child_site_b(int next)
{
        for (int i = 0; i < 5; i++)
                child_keep(next++, 302);
        __asm__ volatile("" ::: "memory");
        return next;
}

static noinline int child_site_c(int next)
{
        for (int i = 0; i < 7; i++)
                child_keep(next++, 303);
        __asm__ volatile("" ::: "memory");
        return next;
}

static noinline int leak_at_start(void)
{
        int next = child_site_c(child_site_b(child_site_a(0)));

        __asm__ volatile("" ::: "memory");     /* no tail call: leak_at_start's frame stays */
        return next;
}

int main(void)
{
        if (leak_at_start() != 3 + 5 + 7)
                abort();
        setvbuf(stdout, NULL, _IONBF, 0);
        fputs("done\n", stdout);
        return 0;
}
