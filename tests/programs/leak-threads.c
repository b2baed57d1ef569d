/* SPDX-License-Identifier: MIT */
/* Eight threads leak concurrently, each from its own function with its own size and count.
 *
 * Ground truth (tests/integration/test_threads.py keeps the same numbers): thread i leaks
 * LEAK_COUNT(i) blocks of LEAK_SIZE(i) bytes from leak_thread_i, while churn_in_thread
 * leaves nothing outstanding. All threads start together behind a barrier and interleave
 * their leaks with churn, so the probes see many CPUs at once.
 *
 * Protocol: print "ready", wait for a line ("go"), start the threads, join them, print
 * "done", wait for a line or EOF, exit 0. */
#include <pthread.h>
#include <stdlib.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define N_THREADS               8
#define LEAK_SIZE(i)            (33u + 16u * (unsigned)(i))     /* 33, 49, ..., 145: odd */
#define LEAK_COUNT(i)           (200 + 31 * (i))                /* 200, 231, ..., 417 */
#define CHURN_PER_LEAK          7

static pthread_barrier_t start_line;

static noinline void churn_in_thread(unsigned round)
{
        for (unsigned j = 0; j < CHURN_PER_LEAK; j++) {
                void *p = malloc(1 + (round * 13 + j * 101) % 2000);

                require(p);
                p = realloc(p, 1 + (round * 7 + j * 59) % 3000);
                require(p);
                free(p);
                free(calloc(2, 1 + j));
        }
}

/* One function per thread: the report must attribute each thread's bytes to its own. */
#define DEFINE_LEAK_THREAD(i)                                                           \
        static noinline void leak_thread_##i(void **kept)                               \
        {                                                                               \
                for (int k = 0; k < LEAK_COUNT(i); k++) {                               \
                        kept[k] = malloc(LEAK_SIZE(i));                                 \
                        require(kept[k]);                                               \
                        churn_in_thread((unsigned)k);                                   \
                }                                                                       \
        }

DEFINE_LEAK_THREAD(0)
DEFINE_LEAK_THREAD(1)
DEFINE_LEAK_THREAD(2)
DEFINE_LEAK_THREAD(3)
DEFINE_LEAK_THREAD(4)
DEFINE_LEAK_THREAD(5)
DEFINE_LEAK_THREAD(6)
DEFINE_LEAK_THREAD(7)

static void (*const leak_functions[N_THREADS])(void **) = {
        leak_thread_0, leak_thread_1, leak_thread_2, leak_thread_3,
        leak_thread_4, leak_thread_5, leak_thread_6, leak_thread_7,
};

/* Where each thread keeps its leaked pointers; sized for the largest count, not malloc'ed. */
static void *kept_by_thread[N_THREADS][LEAK_COUNT(N_THREADS - 1)];

static void *thread_main(void *arg)
{
        unsigned i = (unsigned)(unsigned long)arg;
        int r;

        r = pthread_barrier_wait(&start_line);
        require(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
        leak_functions[i](kept_by_thread[i]);
        return NULL;
}

int main(void)
{
        pthread_t threads[N_THREADS];

        setup_stdio();
        require(pthread_barrier_init(&start_line, NULL, N_THREADS) == 0);
        say("ready");
        if (wait_line() < 0)
                return 1;

        for (unsigned long i = 0; i < N_THREADS; i++)
                require(pthread_create(&threads[i], NULL, thread_main, (void *)i) == 0);
        for (unsigned i = 0; i < N_THREADS; i++)
                require(pthread_join(threads[i], NULL) == 0);

        say("done");
        (void) wait_line();
        return 0;
}
