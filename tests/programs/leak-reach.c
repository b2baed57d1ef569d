/* SPDX-License-Identifier: MIT */
/* Blocks a reachability scan must tell apart (tests/integration/test_reachability.py), each from a
 * function of its own:
 *   free_block()            111 bytes, freed: not outstanding at all
 *   keep_in_global()        222 bytes, a global points to it: still reachable
 *   lose_parent()           48 bytes, its only pointer dropped: definitely lost ...
 *   make_child()            333 bytes, pointed to only from lose_parent()'s block: indirectly lost
 *   lose_overwritten()      444 bytes, its pointer overwritten: definitely lost
 *   keep_on_thread_stack()  555 bytes, a blocked thread's local: still reachable
 *   keep_in_register()      666 bytes, a blocked thread's register (r12) only: still reachable
 *   keep_in_pool()          777 bytes, pointed to only from a pool the program mmap()s (as
 *                           Python's pymalloc does): still reachable ...
 *   lose_big()              200000 bytes, its only pointer dropped: definitely lost; glibc maps
 *                           it on its own, right below the pool, and the kernel merges the two
 *   make_big_child()        888 bytes, pointed to only from lose_big()'s block: indirectly lost
 *   keep_in_early_block()   999 bytes, pointed to only from a block main() allocated before it
 *                           printed "ready" (before an attach: a block memleakd never saw made,
 *                           whose global pointer keeps it): still reachable
 *
 * Protocol: print "ready", wait for a line, make the blocks, print "made". With "exit" as its
 * argument it then exits (its threads still blocked: memleakctl run scans it there); otherwise
 * it answers each line with "alive" (it runs on after a live scan) until stdin closes. With "big" it
 * also keeps 256 MiB of data in a global's block, more than a scan reads in 10 ms. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

void *volatile global_keep;
void *volatile global_overwritten;
void *volatile global_big;
static pthread_barrier_t threads_holding;

static noinline void free_block(void)
{
        void *volatile p = malloc(111);

        require(p);
        free(p);
}

static noinline void keep_in_global(void)
{
        global_keep = malloc(222);
        require(global_keep);
}

static noinline void *make_child(void)
{
        void *p = malloc(333);

        require(p);
        return p;
}

static noinline void lose_parent(void)
{
        void **volatile parent = malloc(48);

        require(parent);
        memset(parent, 0, 48);
        parent[0] = make_child();
        parent = NULL;
}

static noinline void lose_overwritten(void)
{
        global_overwritten = malloc(444);
        require(global_overwritten);
        global_overwritten = NULL;
}

#define POOL_BYTES (1u << 20)
#define BIG_BYTES 200000        /* past glibc's mmap threshold (128 KiB): a mapping of its own */

static void **pool;
static void **early_block;

static noinline void keep_in_early_block(void)
{
        early_block[3] = malloc(999);
        require(early_block[3]);
}

static noinline void keep_in_pool(void)
{
        pool[7] = malloc(777);
        require(pool[7]);
}

static noinline void *make_big_child(void)
{
        void *p = malloc(888);

        require(p);
        return p;
}

static noinline void lose_big(void)
{
        void **volatile big = malloc(BIG_BYTES);

        require(big);
        memset(big, 0, BIG_BYTES);
        big[100] = make_big_child();
        big = NULL;
}

/* The pool first, then the big block: the kernel places a new mapping right below the last. */
static void pool_and_big_block(void)
{
        pool = mmap(NULL, POOL_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        require(pool != MAP_FAILED);
        keep_in_pool();
        lose_big();
}

static noinline void *keep_on_thread_stack(void *arg)
{
        void *volatile local = malloc(555);

        require(local);
        pthread_barrier_wait(&threads_holding);
        for (;;)
                pause();
        return NULL;
}

static noinline void *make_register_block(void)
{
        void *p = malloc(666);

        require(p);
        return p;
}

/* The block's address in r12 alone while the thread sleeps in pause(2), called directly. */
static noinline void *keep_in_register(void *arg)
{
        register void *p asm("r12") = make_register_block();

        pthread_barrier_wait(&threads_holding);
        for (;;)
                __asm__ volatile("mov $34, %%eax\n\tsyscall" : : "r"(p) : "rax", "rcx", "r11", "memory");
        return NULL;
}

static noinline void keep_big(void)
{
        size_t size = 256u << 20;

        global_big = malloc(size);
        require(global_big);
        memset(global_big, 0x5a, size);
}

/* Old frames below the stack pointer keep the addresses the calls above handled: clear them, so
 * that only what the program still holds points anywhere (valgrind sees the same memory). */
static noinline void scrub_stack(void)
{
        volatile char junk[16384];

        memset((char *)junk, 0, sizeof(junk));
}

int main(int argc, char **argv)
{
        pthread_t stack_thread, register_thread;
        int exit_after = argc > 1 && strcmp(argv[1], "exit") == 0;
        int big = argc > 1 && strcmp(argv[1], "big") == 0;

        setup_stdio();
        require(pthread_barrier_init(&threads_holding, NULL, 3) == 0);
        early_block = calloc(8, sizeof(*early_block));
        require(early_block);
        say("ready");
        if (wait_line() < 0 && !exit_after)
                return 1;
        free_block();
        keep_in_global();
        lose_parent();
        lose_overwritten();
        pool_and_big_block();
        keep_in_early_block();
        if (big)
                keep_big();
        require(pthread_create(&stack_thread, NULL, keep_on_thread_stack, NULL) == 0);
        require(pthread_create(&register_thread, NULL, keep_in_register, NULL) == 0);
        pthread_barrier_wait(&threads_holding);
        scrub_stack();
        say("made");
        if (exit_after)
                exit(0);
        while (wait_line() == 0)
                say("alive");
        return 0;
}
