/* SPDX-License-Identifier: MIT */
/* Leaks a known number of blocks of known sizes through every hooked allocator entry point.
 *
 * Ground truth (tests/integration/test_every_hook.py EVERY_HOOK_LEAKS keeps the same numbers):
 * each leak_* function leaks COUNT blocks of SIZE requested bytes from call sites marked
 * "site: <function>"; every other function leaves nothing outstanding. Sizes are odd and
 * distinct so no coincidence can make a wrong report add up.
 *
 * Protocol: allocate PRE_ATTACH_BLOCKS blocks, print "ready", wait for a line ("go"), leak,
 * free the pre-attach blocks, churn, print "done", wait for a line or EOF, exit 0. */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define MALLOC_SIZE             1001u
#define MALLOC_COUNT            5
#define CALLOC_N                7u
#define CALLOC_SIZE             149u            /* 1043 bytes a block */
#define CALLOC_COUNT            3
#define REALLOC_GROW_SIZES      { 101u, 303u, 505u, 1207u }     /* the last one counts */
#define REALLOC_MOVED_SIZES     { 211u, 2011u, 3011u, 4011u }   /* every step moves */
#define REALLOC_SHRINK_FROM     3001u
#define REALLOC_SHRINK_TO       1825u
#define REALLOCARRAY_N          11u
#define REALLOCARRAY_SIZE       93u             /* 1023 bytes a block */
#define REALLOCARRAY_COUNT      2
#define POSIX_MEMALIGN_ALIGN    64u
#define POSIX_MEMALIGN_SIZE     1111u
#define POSIX_MEMALIGN_COUNT    3
#define ALIGNED_ALLOC_ALIGN     128u
#define ALIGNED_ALLOC_SIZE      1213u
#define ALIGNED_ALLOC_COUNT     2
#define MEMALIGN_ALIGN          256u
#define MEMALIGN_SIZE           1315u
#define MEMALIGN_COUNT          2
#define VALLOC_SIZE             1417u
#define VALLOC_COUNT            2
#define PVALLOC_SIZE            1519u           /* pvalloc rounds to a page; we count the request */
#define PVALLOC_COUNT           2
#define BEFORE_FAILED_REALLOC_SIZE 1621u
#define REALLOC_TO_ZERO_SIZE    1723u
#define PRE_ATTACH_BLOCKS       41
#define PRE_ATTACH_SIZE         77u
#define CHURN_ROUNDS            2000
#define MOVE_BLOCKER_SIZE       40001u          /* past tcache and small bins: comes from the top */

/* Volatile so the compiler cannot see that the failing calls fail. */
static volatile size_t huge_size = SIZE_MAX;

/* Leaked blocks stay reachable: nothing may look dead to a compiler or a checker. */
static void *leaked[64];
static unsigned n_leaked;

static void keep(void *p)
{
        require(p);
        require(n_leaked < sizeof(leaked) / sizeof(leaked[0]));
        leaked[n_leaked++] = p;
}

static void *pre_attach[PRE_ATTACH_BLOCKS];

static noinline void alloc_before_attach(void)
{
        for (int i = 0; i < PRE_ATTACH_BLOCKS; i++) {
                pre_attach[i] = malloc(PRE_ATTACH_SIZE); /* site: alloc_before_attach */
                require(pre_attach[i]);
        }
}

static noinline void free_pre_attach(void)
{
        for (int i = 0; i < PRE_ATTACH_BLOCKS; i++)
                free(pre_attach[i]);
}

static noinline void leak_malloc(void)
{
        for (int i = 0; i < MALLOC_COUNT; i++)
                keep(malloc(MALLOC_SIZE)); /* site: leak_malloc */
}

static noinline void leak_calloc(void)
{
        for (int i = 0; i < CALLOC_COUNT; i++)
                keep(calloc(CALLOC_N, CALLOC_SIZE)); /* site: leak_calloc */
}

static noinline void leak_realloc_grow(void)
{
        static const size_t sizes[] = REALLOC_GROW_SIZES;
        void *p;

        p = realloc(NULL, sizes[0]); /* site: leak_realloc_grow */
        require(p);
        for (size_t i = 1; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                p = realloc(p, sizes[i]); /* site: leak_realloc_grow */
                require(p);
        }
        keep(p);
}

/* Each step must move the block: a blocker allocated right behind it stops in-place growth. */
static noinline void leak_realloc_chain_moved(void)
{
        static const size_t sizes[] = REALLOC_MOVED_SIZES;
        void *blockers[sizeof(sizes) / sizeof(sizes[0])];
        void *p, *q;
        size_t i;

        p = malloc(sizes[0]); /* site: leak_realloc_chain_moved */
        require(p);
        for (i = 1; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                blockers[i] = malloc(MOVE_BLOCKER_SIZE);
                require(blockers[i]);
                q = realloc(p, sizes[i]); /* site: leak_realloc_chain_moved */
                require(q);
                require(q != p);
                p = q;
        }
        for (i = 1; i < sizeof(sizes) / sizeof(sizes[0]); i++)
                free(blockers[i]);
        keep(p);
}

static noinline void leak_realloc_shrink(void)
{
        void *p;

        p = malloc(REALLOC_SHRINK_FROM); /* site: leak_realloc_shrink */
        require(p);
        p = realloc(p, REALLOC_SHRINK_TO); /* site: leak_realloc_shrink */
        keep(p);
}

static noinline void leak_reallocarray(void)
{
        for (int i = 0; i < REALLOCARRAY_COUNT; i++)
                keep(reallocarray(NULL, REALLOCARRAY_N, REALLOCARRAY_SIZE)); /* site: leak_reallocarray */
}

static noinline void leak_posix_memalign(void)
{
        for (int i = 0; i < POSIX_MEMALIGN_COUNT; i++) {
                void *p = NULL;

                require(posix_memalign(&p, POSIX_MEMALIGN_ALIGN, POSIX_MEMALIGN_SIZE) == 0); /* site: leak_posix_memalign */
                keep(p);
        }
}

static noinline void leak_aligned_alloc(void)
{
        for (int i = 0; i < ALIGNED_ALLOC_COUNT; i++)
                keep(aligned_alloc(ALIGNED_ALLOC_ALIGN, ALIGNED_ALLOC_SIZE)); /* site: leak_aligned_alloc */
}

static noinline void leak_memalign(void)
{
        for (int i = 0; i < MEMALIGN_COUNT; i++)
                keep(memalign(MEMALIGN_ALIGN, MEMALIGN_SIZE)); /* site: leak_memalign */
}

static noinline void leak_valloc(void)
{
        for (int i = 0; i < VALLOC_COUNT; i++)
                keep(valloc(VALLOC_SIZE)); /* site: leak_valloc */
}

static noinline void leak_pvalloc(void)
{
        for (int i = 0; i < PVALLOC_COUNT; i++)
                keep(pvalloc(PVALLOC_SIZE)); /* site: leak_pvalloc */
}

/* realloc(p, 0) frees p (glibc): nothing of this function may stay outstanding. */
static noinline void realloc_to_zero_frees(void)
{
        void *p;

        p = malloc(REALLOC_TO_ZERO_SIZE);
        require(p);
        p = realloc(p, 0);
        require(!p);
}

static noinline void failed_malloc(void)
{
        require(!malloc(huge_size));
}

static noinline void failed_calloc(void)
{
        require(!calloc(huge_size / 2, 3));
}

static noinline void failed_posix_memalign(void)
{
        void *p = NULL;

        /* An alignment that is not a power of two: EINVAL, nothing allocated. */
        require(posix_memalign(&p, 3, 100) != 0);
        require(!p);
}

static noinline void *leak_before_failed_realloc(void)
{
        void *p = malloc(BEFORE_FAILED_REALLOC_SIZE); /* site: leak_before_failed_realloc */

        require(p);
        return p;
}

/* A failed realloc leaves the old block alone: it keeps the stack and size it was born with. */
static noinline void failed_realloc(void *p)
{
        require(!realloc(p, huge_size));
        keep(p);
}

/* Thousands of balanced allocate/free pairs through every entry point: none may remain. */
static noinline void churn_balanced(void)
{
        for (int i = 0; i < CHURN_ROUNDS; i++) {
                size_t size = 1 + (size_t)(i * 37 % 3000);
                void *p;

                free(malloc(size));
                free(calloc(3, size));

                p = realloc(NULL, size);
                require(p);
                p = realloc(p, size * 2 + 5);
                require(p);
                p = realloc(p, size / 2 + 1);
                require(p);
                free(p);

                free(reallocarray(NULL, 5, size));

                p = NULL;
                require(posix_memalign(&p, 32, size) == 0);
                free(p);

                free(aligned_alloc(64, size));
                free(memalign(128, size));
                if (i % 10 == 0) {
                        /* Page-sized blocks: fewer of them keeps the run short. */
                        free(valloc(size));
                        free(pvalloc(size));
                }
        }
}

int main(void)
{
        void *survivor;

        setup_stdio();
        alloc_before_attach();
        say("ready");
        if (wait_line() < 0)
                return 1;

        leak_realloc_chain_moved();     /* first: on a fresh heap the forced moves are certain */
        leak_malloc();
        leak_calloc();
        leak_realloc_grow();
        leak_realloc_shrink();
        leak_reallocarray();
        leak_posix_memalign();
        leak_aligned_alloc();
        leak_memalign();
        leak_valloc();
        leak_pvalloc();
        realloc_to_zero_frees();
        failed_malloc();
        failed_calloc();
        failed_posix_memalign();
        survivor = leak_before_failed_realloc();
        failed_realloc(survivor);
        free_pre_attach();
        churn_balanced();

        say("done");
        (void) wait_line();
        return 0;
}
