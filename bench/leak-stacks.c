/* SPDX-License-Identifier: MIT */
/* Benchmark workload: leaks ALLOCS blocks of 32 bytes from STACKS distinct call stacks (up to
 * 400 x 250: a leaf function of 250 called from one of 400 others), then waits. For the daemon's
 * figures at scale (bench/status-latency.py): a report over 100,000 stacks and 1,000,000
 * allocations.
 * With "freed", each block is freed as soon as it is made: every stack ends with nothing
 * outstanding (the per-stack totals keep a row at zero for each).
 * usage: leak-stacks STACKS ALLOCS [freed]   (prints "ready", waits for a line, leaks, prints
 * "done") */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTER 400
#define INNER 250

typedef void *(*leaf_fn)(void);
typedef void (*outer_fn)(int inner, long n);

static int free_each;           /* "freed": each block is freed as soon as it is made */

#define X10(M, b) M(b##0) M(b##1) M(b##2) M(b##3) M(b##4) M(b##5) M(b##6) M(b##7) M(b##8) M(b##9)
#define X100(M, b) X10(M, b##0) X10(M, b##1) X10(M, b##2) X10(M, b##3) X10(M, b##4) \
                   X10(M, b##5) X10(M, b##6) X10(M, b##7) X10(M, b##8) X10(M, b##9)

/* Not a tail call: the leaf's own frame is in the stack, so each (outer, leaf) pair is one. */
#define LEAF(n)                                                                         \
        __attribute__((noinline)) static void *leaf_##n(void)                          \
        {                                                                               \
                void *p = malloc(32);                                                   \
                __asm__ volatile("" : : "r"(p) : "memory");                             \
                return p;                                                               \
        }
#define LEAF_REF(n) leaf_##n,
X100(LEAF, 1) X100(LEAF, 2) X10(LEAF, 30) X10(LEAF, 31) X10(LEAF, 32) X10(LEAF, 33) X10(LEAF, 34)
static const leaf_fn leaves[INNER] = {
        X100(LEAF_REF, 1) X100(LEAF_REF, 2) X10(LEAF_REF, 30) X10(LEAF_REF, 31) X10(LEAF_REF, 32)
        X10(LEAF_REF, 33) X10(LEAF_REF, 34)
};

#define OUTER_FN(n)                                                                     \
        __attribute__((noinline)) static void outer_##n(int inner, long count)         \
        {                                                                               \
                for (long k = 0; k < count; k++) {                                      \
                        void *p = leaves[inner]();                                      \
                                                                                        \
                        if (!p)                                                         \
                                abort();                                                \
                        if (free_each)                                                  \
                                free(p);                                                \
                }                                                                       \
                __asm__ volatile("" ::: "memory");      /* not a tail call */          \
        }
#define OUTER_REF(n) outer_##n,
X100(OUTER_FN, 1) X100(OUTER_FN, 2) X100(OUTER_FN, 3) X100(OUTER_FN, 4)
static const outer_fn outers[OUTER] = {
        X100(OUTER_REF, 1) X100(OUTER_REF, 2) X100(OUTER_REF, 3) X100(OUTER_REF, 4)
};

int main(int argc, char *argv[])
{
        long stacks, allocs;
        char line[16];

        if (argc < 3 || argc > 4 || (stacks = atol(argv[1])) <= 0 || stacks > OUTER * INNER ||
            (allocs = atol(argv[2])) < stacks)
                return 2;
        if (argc == 4) {
                if (strcmp(argv[3], "freed") != 0)
                        return 2;
                free_each = 1;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("ready\n");
        if (!fgets(line, sizeof(line), stdin))
                return 1;
        for (long s = 0; s < stacks; s++)
                outers[s / INNER](s % INNER, allocs / stacks + (s < allocs % stacks));
        printf("done\n");
        if (!fgets(line, sizeof(line), stdin))
                return 0;
        return 0;
}
