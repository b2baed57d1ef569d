/* SPDX-License-Identifier: MIT */
/* Eight threads leak at once, then the program exits without joining them: memleakctl run must
 * report every block with its frames named.
 *
 * Ground truth (tests/integration/test_run.py): thread_leak leaks THREAD_LEAKS blocks of
 * THREAD_LEAK_SIZE bytes in each of N_THREADS threads. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define N_THREADS        8
#define THREAD_LEAKS     10
#define THREAD_LEAK_SIZE 64

static pthread_barrier_t leaked;
static void *kept[N_THREADS][THREAD_LEAKS];

static noinline void thread_leak(long t)
{
        for (int i = 0; i < THREAD_LEAKS; i++) {
                kept[t][i] = malloc(THREAD_LEAK_SIZE); /* site: thread_leak */
                require(kept[t][i]);
        }
}

static void *thread_main(void *arg)
{
        thread_leak((long)arg);
        pthread_barrier_wait(&leaked);
        pause();        /* until the exit takes every thread down */
        return NULL;
}

int main(void)
{
        pthread_t threads[N_THREADS];

        setup_stdio();
        require(pthread_barrier_init(&leaked, NULL, N_THREADS + 1) == 0);
        for (long t = 0; t < N_THREADS; t++)
                require(pthread_create(&threads[t], NULL, thread_main, (void *)t) == 0);
        pthread_barrier_wait(&leaked);
        _exit(0);
}
