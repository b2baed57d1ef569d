/* SPDX-License-Identifier: MIT */
/* Benchmark workload (bench/stack-churn-soak.py): allocates from a new call stack all the time,
 * at a steady rate, each block freed at once, for as long as asked: memleakd's stack-table
 * reclaim must keep pace with it (issue 38: ~2,000 new stacks/s for 30 minutes, no stack lost).
 *
 * Like tests/programs/stack-stream.c, with five recursion levels in place of three so that it
 * can run for half an hour without a stack coming back: stack n is level_0(i0) -> level_1(i1)
 * -> ... -> level_4(i4) -> malloc(48), freed at once, each level recursing i (0 <= i < FANOUT)
 * times into itself, the digits i0..i4 those of n in base FANOUT (i4 the lowest). FANOUT^5 =
 * 3,200,000 distinct stacks (26 minutes at 2,000/s; past that they come back in the same order),
 * none deeper than 5 * FANOUT + 3 = 103 frames (under max_stack_depth's default of 119, so none
 * is truncated and merged with another).
 *
 * usage: stack-churn SECONDS RATE. Prints "ready"; on a line, streams and prints
 * "streamed STACKS" (how many allocations it made, one per stack in turn); waits for EOF. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define noinline __attribute__((noinline))

#define FANOUT 20
#define LEVELS 5
#define BLOCK_SIZE 48u
#define TICKS_PER_SECOND 100

static void say(const char *word)
{
        fputs(word, stdout);
        fputc('\n', stdout);
        fflush(stdout);
}

static int wait_line(void)
{
        int c;

        while ((c = getchar()) != EOF)
                if (c == '\n')
                        return 0;
        return -1;
}

static noinline void leaf(void)
{
        void *p = malloc(BLOCK_SIZE);

        if (!p)
                abort();
        __asm__ volatile("" : : "r"(p) : "memory");
        free(p);
}

/* One function per level, each recursing into itself depth times before calling the next: the
 * empty asm after the call keeps the frame (no tail call). */
#define LEVEL(n, next_call)                                                             \
        static noinline void level_##n(int depth, const int *digits)                    \
        {                                                                               \
                if (depth > 0) {                                                        \
                        level_##n(depth - 1, digits);                                   \
                        __asm__ volatile("" ::: "memory");                              \
                        return;                                                         \
                }                                                                       \
                next_call;                                                              \
                __asm__ volatile("" ::: "memory");                                      \
        }

LEVEL(4, leaf())
LEVEL(3, level_4(digits[4], digits))
LEVEL(2, level_3(digits[3], digits))
LEVEL(1, level_2(digits[2], digits))
LEVEL(0, level_1(digits[1], digits))

static void add_ns(struct timespec *t, long ns)
{
        t->tv_nsec += ns;
        while (t->tv_nsec >= 1000000000L) {
                t->tv_nsec -= 1000000000L;
                t->tv_sec++;
        }
}

int main(int argc, char **argv)
{
        static char out_buffer[4096];
        long seconds, rate, stack = 0, distinct = 1;
        struct timespec next;
        char line[64];

        setvbuf(stdin, NULL, _IONBF, 0);
        setvbuf(stdout, out_buffer, _IOFBF, sizeof(out_buffer));
        if (argc != 3)
                return 2;
        seconds = atol(argv[1]);
        rate = atol(argv[2]);
        if (seconds <= 0 || rate < TICKS_PER_SECOND)
                return 2;
        for (int l = 0; l < LEVELS; l++)
                distinct *= FANOUT;
        say("ready");
        if (wait_line() < 0)
                return 1;
        clock_gettime(CLOCK_MONOTONIC, &next);
        for (long tick = 0; tick < seconds * TICKS_PER_SECOND; tick++) {
                for (long n = 0; n < rate / TICKS_PER_SECOND; n++, stack++) {
                        int digits[LEVELS];
                        long rest = stack % distinct;

                        for (int l = LEVELS - 1; l >= 0; l--, rest /= FANOUT)
                                digits[l] = (int)(rest % FANOUT);
                        level_0(digits[0], digits);
                }
                add_ns(&next, 1000000000L / TICKS_PER_SECOND);
                while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0)
                        ;
        }
        snprintf(line, sizeof(line), "streamed %ld", stack);
        say(line);
        wait_line();
        return 0;
}
