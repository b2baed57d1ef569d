/* SPDX-License-Identifier: MIT */
/* Benchmark workload: a steady churn of malloc/free (sizes 16..4095 bytes, 1024 blocks live per
 * thread), the pattern of a busy service. Waits for a line on stdin so memleakd can attach
 * first, then prints the loop's wall time in nanoseconds and the number of allocator calls.
 * With "fork", a child forked after that line does the churn at once (the worker a traced server
 * forks), and the time is the child's. With "cxx", the blocks come from C++'s operator new and go
 * to operator delete (bench/cxx-alloc.cc).
 * usage: alloc-churn ITERATIONS THREADS [fork|cxx] */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIVE 1024

static long iterations;
static void *(*allocate)(size_t size) = malloc;
static void (*release)(void *block) = free;

/* bench/cxx-alloc.cc */
void *cxx_new(size_t size);
void cxx_delete(void *block);

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *churn(void *arg)
{
        void *live[LIVE] = { 0 };
        uint32_t x = (uint32_t)(uintptr_t)arg * 2654435761u + 1;

        for (long i = 0; i < iterations; i++) {
                size_t slot = (size_t)i % LIVE;

                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                release(live[slot]);
                live[slot] = allocate(16 + x % 4080);
                if (!live[slot])
                        abort();
                *(volatile char *)live[slot] = 1;
        }
        for (size_t i = 0; i < LIVE; i++)
                release(live[i]);
        return NULL;
}

int main(int argc, char *argv[])
{
        pthread_t threads[64];
        long n_threads;
        uint64_t start, end;
        char line[16];

        bool in_child = argc == 4 && strcmp(argv[3], "fork") == 0;
        bool cxx = argc == 4 && strcmp(argv[3], "cxx") == 0;
        pid_t child = 0;

        if (argc != 3 && !in_child && !cxx)
                return 2;
        if (cxx) {
                allocate = cxx_new;
                release = cxx_delete;
        }
        iterations = atol(argv[1]);
        n_threads = atol(argv[2]);
        if (iterations <= 0 || n_threads <= 0 || n_threads > 64)
                return 2;
        setvbuf(stdout, NULL, _IOLBF, 0);
        printf("ready\n");
        if (!fgets(line, sizeof(line), stdin))
                return 1;
        if (in_child) {
                int status;

                child = fork();
                if (child < 0)
                        return 1;
                if (child > 0)
                        return waitpid(child, &status, 0) == child && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        }
        start = now_ns();
        for (long t = 0; t < n_threads; t++)
                if (pthread_create(&threads[t], NULL, churn, (void *)(uintptr_t)t) != 0)
                        return 1;
        for (long t = 0; t < n_threads; t++)
                pthread_join(threads[t], NULL);
        end = now_ns();
        /* one allocation and one release per iteration, plus the final releases */
        printf("%llu %ld\n", (unsigned long long)(end - start), n_threads * (2 * iterations + LIVE));
        return 0;
}
