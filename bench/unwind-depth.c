/* SPDX-License-Identifier: MIT */
/* Benchmark workload for bench/unwind-cost.py: malloc/free pairs taken DEPTH frames deep, so the
 * stack memleakd captures at each malloc has DEPTH frames of descend() above main; then one
 * 1-byte block is leaked from there, whose reported stack shows how deep the walk went. Built
 * twice: with frame pointers and without. Prints "ready", waits for a line, runs, prints
 * "<ns> <pairs>", waits for its stdin to close. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uintptr_t sink;
static void *leaked;

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void churn(long pairs)
{
        for (long i = 0; i < pairs; i++) {
                void *p = malloc(64);

                sink = (uintptr_t)p;
                free(p);
        }
        leaked = malloc(1);
}

/* Not a tail call: the frame stays on the stack. */
__attribute__((noinline)) static void descend(int depth, long pairs)
{
        if (depth <= 1)
                churn(pairs);
        else
                descend(depth - 1, pairs);
        __asm__ volatile("" ::: "memory");
}

int main(int argc, char *argv[])
{
        char line[16];
        long pairs;
        int depth;
        uint64_t start;

        if (argc != 3) {
                fprintf(stderr, "usage: %s DEPTH PAIRS\n", argv[0]);
                return 2;
        }
        depth = atoi(argv[1]);
        pairs = atol(argv[2]);
        printf("ready\n");
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
                return 1;
        start = now_ns();
        descend(depth, pairs);
        printf("%llu %ld\n", (unsigned long long)(now_ns() - start), pairs);
        fflush(stdout);
        while (fgets(line, sizeof(line), stdin))
                ;
        return leaked ? 0 : 1;
}
