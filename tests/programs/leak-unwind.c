/* SPDX-License-Identifier: MIT */
/* Leaks whose stacks only unwind tables can walk: built -O2 -fomit-frame-pointer, leaking through
 * glibc (which has no frame pointers), deep recursion, a signal handler, a thread, and a function
 * written in assembly without CFI (leak-unwind-nocfi.S), with and without a frame pointer.
 *
 * Ground truth (tests/integration/test_unwind.py keeps the same numbers):
 *   leak_in_compare    5 x 41 bytes  <- compare_leaking <- qsort's internals <- sort_things <- main
 *   leak_at_bottom     3 x 57 bytes  <- recurse x RECURSION_DEPTH <- main
 *   leak_in_handler    2 x 73 bytes  <- on_signal <- __restore_rt <- raise ... <- interrupted <- main
 *   leak_in_thread     4 x 89 bytes  <- thread_main <- start_thread <- clone3
 *   nocfi_leak         1 x 97 bytes  (the walk stops there: no CFI, no frame pointer)
 *   nocfi_frame_leak   1 x 101 bytes <- call_nocfi_frame <- main (no CFI: its frame pointer)
 * and, before main, the constructor of the library it links (leak-unwind-ctor.c): ctor_leak.
 * while churn() leaves nothing outstanding.
 *
 * Protocol: print "ready", wait for a line, leak, print "done", wait for a line or EOF. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))
#define RECURSION_DEPTH 40

void *nocfi_leak(void);         /* leak-unwind-nocfi.S */
void *nocfi_frame_leak(void);   /* leak-unwind-nocfi.S */
extern void *volatile ctor_kept;        /* leak-unwind-ctor.c */

static void *kept[64];
static int n_kept;
static volatile int compares_leaking = 5;

static noinline void keep(void *p)
{
        require(p);
        require(n_kept < (int)(sizeof(kept) / sizeof(kept[0])));
        kept[n_kept++] = p;
}

static noinline void churn(int n)
{
        for (int i = 0; i < n; i++)
                free(malloc(16 + (size_t)i % 200));
}

static noinline void leak_in_compare(void)
{
        keep(malloc(41));
        __asm__ volatile("" ::: "memory");
}

static int compare_leaking(const void *a, const void *b)
{
        if (compares_leaking > 0) {
                compares_leaking--;
                leak_in_compare();
        }
        return *(const int *)a - *(const int *)b;
}

static noinline void sort_things(void)
{
        int v[16];

        for (int i = 0; i < 16; i++)
                v[i] = (i * 7919) % 16;
        qsort(v, 16, sizeof(v[0]), compare_leaking);
        require(compares_leaking == 0);
        __asm__ volatile("" ::: "memory");
}

static noinline void leak_at_bottom(void)
{
        for (int i = 0; i < 3; i++)
                keep(malloc(57));
        __asm__ volatile("" ::: "memory");
}

static noinline int recurse(int depth)
{
        if (depth <= 1)
                leak_at_bottom();
        else
                recurse(depth - 1);
        __asm__ volatile("" ::: "memory");     /* no tail call: each frame stays */
        return depth;
}

static noinline void leak_in_handler(void)
{
        keep(malloc(73));
        keep(malloc(73));
        __asm__ volatile("" ::: "memory");
}

static void on_signal(int sig)
{
        leak_in_handler();
        __asm__ volatile("" ::: "memory");
}

static noinline void interrupted(void)
{
        require(raise(SIGUSR1) == 0);
        __asm__ volatile("" ::: "memory");
}

static noinline void leak_in_thread(void)
{
        for (int i = 0; i < 4; i++)
                keep(malloc(89));
        __asm__ volatile("" ::: "memory");
}

static void *thread_main(void *arg)
{
        leak_in_thread();
        churn(50);
        __asm__ volatile("" ::: "memory");
        return arg;
}

static noinline void call_nocfi(void)
{
        keep(nocfi_leak());
        __asm__ volatile("" ::: "memory");
}

static noinline void call_nocfi_frame(void)
{
        keep(nocfi_frame_leak());
        __asm__ volatile("" ::: "memory");
}

int main(void)
{
        struct sigaction sa;
        pthread_t thread;

        setup_stdio();
        require(ctor_kept);             /* its library's constructor ran */
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        require(sigaction(SIGUSR1, &sa, NULL) == 0);
        say("ready");
        if (wait_line() < 0)
                return 1;
        churn(100);
        sort_things();
        churn(100);
        recurse(RECURSION_DEPTH);
        interrupted();
        require(pthread_create(&thread, NULL, thread_main, NULL) == 0);
        require(pthread_join(thread, NULL) == 0);
        call_nocfi();
        call_nocfi_frame();
        churn(100);
        say("done");
        wait_line();
        return n_kept == 16 ? 0 : 1;
}
