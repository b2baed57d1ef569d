/* SPDX-License-Identifier: MIT */
/* Known leaks for byte sampling (tests/integration/test_sampling.py): four functions each leak
 * exactly 64 MiB in blocks of 16 to 4,096 bytes (sizes from a fixed sequence, all four alike),
 * while churn() allocates and frees as much again, block by block: under --sample-bytes each
 * function's estimate must come within the stated error of 64 MiB, and churn must not show.
 *
 * Protocol: print "ready", wait for a line, leak and churn, print "done", wait for EOF, exit. */
#include <stdint.h>
#include <stdlib.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define LEAK_BYTES (64u << 20)

/* The next block size: 16 to 4,096 bytes, multiples of 16 (an LCG, the same in every run). */
static size_t next_size(uint32_t *state)
{
        *state = *state * 1664525u + 1013904223u;
        return 16 + ((*state >> 8) % 256) * 16;
}

/* Leak exactly LEAK_BYTES: the last block takes what is left. */
static void leak_bytes(void)
{
        uint32_t state = 12345;
        size_t left = LEAK_BYTES;

        while (left > 0) {
                size_t size = next_size(&state);
                void *volatile p;

                if (size > left)
                        size = left;
                p = malloc(size);
                require(p);
                left -= size;
        }
}

static noinline void leak_one(void) { leak_bytes(); }
static noinline void leak_two(void) { leak_bytes(); }
static noinline void leak_three(void) { leak_bytes(); }
static noinline void leak_four(void) { leak_bytes(); }

static noinline void churn(void)
{
        uint32_t state = 777;

        for (size_t done = 0; done < LEAK_BYTES;) {
                size_t size = next_size(&state);
                void *volatile p = malloc(size);

                require(p);
                free(p);
                done += size;
        }
}

int main(void)
{
        setup_stdio();
        say("ready");
        if (wait_line() < 0)
                return 1;
        leak_one();
        churn();
        leak_two();
        leak_three();
        leak_four();
        say("done");
        while (wait_line() == 0)
                ;
        return 0;
}
