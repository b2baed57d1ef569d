/* SPDX-License-Identifier: MIT */
/* Benchmark workload: leaks 786,432 blocks of 32 bytes from 65,536 distinct call stacks 19 frames
 * deep (main, 16 levels each taken through one of two functions, the leaf, malloc), 12 blocks
 * per stack: what a stack walk and a per-stack table cost when stacks are deep and many.
 * Speaks bench/alloc-churn's protocol: prints "ready", waits for a line, leaks, prints the loop's
 * wall time in nanoseconds and the number of allocator calls.
 * usage: leak-deep */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LEVELS 16
#define PER_STACK 12

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void leaf(void)
{
        for (int i = 0; i < PER_STACK; i++) {
                void *p = malloc(32);

                if (!p)
                        abort();
                __asm__ volatile("" : : "r"(p) : "memory");
        }
}

typedef void (*level_fn)(unsigned path);

/* Level n, way w (0 or 1): goes on to level n + 1 by bit n + 1 of path. */
#define LEVEL(n, next)                                                                  \
        __attribute__((noinline)) static void level##n##_0(unsigned path) { next; __asm__ volatile("" ::: "memory"); } \
        __attribute__((noinline)) static void level##n##_1(unsigned path) { next; __asm__ volatile("" ::: "memory"); }
#define NEXT(m) ((path >> (m)) & 1 ? level##m##_1 : level##m##_0)(path)

LEVEL(15, ((void)path, leaf()))
LEVEL(14, NEXT(15)) LEVEL(13, NEXT(14)) LEVEL(12, NEXT(13)) LEVEL(11, NEXT(12))
LEVEL(10, NEXT(11)) LEVEL(9, NEXT(10)) LEVEL(8, NEXT(9)) LEVEL(7, NEXT(8))
LEVEL(6, NEXT(7)) LEVEL(5, NEXT(6)) LEVEL(4, NEXT(5)) LEVEL(3, NEXT(4))
LEVEL(2, NEXT(3)) LEVEL(1, NEXT(2)) LEVEL(0, NEXT(1))

int main(void)
{
        uint64_t start, end;
        char line[16];

        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("ready\n");
        if (!fgets(line, sizeof(line), stdin))
                return 1;
        start = now_ns();
        for (unsigned path = 0; path < 1u << LEVELS; path++)
                (path & 1 ? level0_1 : level0_0)(path);
        end = now_ns();
        printf("%llu %u\n", (unsigned long long)(end - start), (1u << LEVELS) * PER_STACK);
        return 0;
}
