/* SPDX-License-Identifier: MIT */
/* A fork storm: short-lived children forked at a steady rate, as a pre-forking server under load
 * or a shell script would; memleakd follows them with --follow-forks, or counts those that went
 * by too fast.
 *
 * usage: leak-fork-storm RATE LIFETIME_MS:COUNT [LIFETIME_MS:COUNT ...]
 *
 * Ground truth (tests/integration/test_follow_forks.py, bench/fork-storm.py): each child churns
 * (3 blocks allocated and freed), lives LIFETIME_MS from its fork, then storm_leak leaks one
 * block of 1000 + LIFETIME_MS bytes and it exits at once. Nothing else is left outstanding; the
 * parent leaks nothing.
 *
 * Protocol: print "ready", wait for a line; fork RATE children a second, the classes taken in
 * turn until each has forked its COUNT; print "child PID LIFETIME_MS BORN_USEC" for each (its
 * fork's CLOCK_MONOTONIC time); reap them as they
 * exit; once all are reaped print "done", wait for a line or EOF, exit. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))
#define CLASSES_MAX 16

static void *volatile sink;

static noinline void storm_churn(void)
{
        for (int i = 0; i < 3; i++) {
                void *p = malloc(64 + (size_t)i);

                require(p);
                sink = p;
                free(p);
        }
}

static noinline void storm_leak(size_t size)
{
        sink = malloc(size);
        require(sink);
}

static void add_ns(struct timespec *t, uint64_t ns)
{
        t->tv_nsec += (long)(ns % 1000000000);
        t->tv_sec += (time_t)(ns / 1000000000) + t->tv_nsec / 1000000000;
        t->tv_nsec %= 1000000000;
}

static __attribute__((noreturn)) void child(const struct timespec *born, unsigned lifetime_ms)
{
        struct timespec until = *born;

        storm_churn();
        add_ns(&until, (uint64_t)lifetime_ms * 1000000);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
                ;
        storm_leak(1000 + (size_t)lifetime_ms);
        _exit(0);
}

static void reap(bool wait_all, unsigned *alive)
{
        int status;
        pid_t pid;

        while (*alive > 0 && (pid = waitpid(-1, &status, wait_all ? 0 : WNOHANG)) > 0) {
                require(WIFEXITED(status) && WEXITSTATUS(status) == 0);
                (*alive)--;
        }
}

int main(int argc, char **argv)
{
        unsigned lifetime_ms[CLASSES_MAX], left[CLASSES_MAX], n_classes = 0, rate, alive = 0;
        struct timespec next;
        bool forked;

        setup_stdio();
        require(argc >= 3 && argc - 2 <= CLASSES_MAX);
        rate = (unsigned)strtoul(argv[1], NULL, 10);
        require(rate > 0 && rate <= 100000);
        for (int i = 2; i < argc; i++) {
                require(sscanf(argv[i], "%u:%u", &lifetime_ms[n_classes], &left[n_classes]) == 2);
                n_classes++;
        }
        say("ready");
        if (wait_line() < 0)
                return 1;
        clock_gettime(CLOCK_MONOTONIC, &next);
        do {
                forked = false;
                for (unsigned c = 0; c < n_classes; c++) {
                        struct timespec born;
                        pid_t pid;

                        if (left[c] == 0)
                                continue;
                        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
                                ;
                        clock_gettime(CLOCK_MONOTONIC, &born);
                        pid = fork();
                        require(pid >= 0);
                        if (pid == 0)
                                child(&born, lifetime_ms[c]);
                        alive++;
                        left[c]--;
                        forked = true;
                        printf("child %d %u %lld\n", (int)pid, lifetime_ms[c],
                               (long long)born.tv_sec * 1000000 + born.tv_nsec / 1000);
                        fflush(stdout);
                        add_ns(&next, 1000000000ULL / rate);
                        reap(false, &alive);
                }
        } while (forked);
        reap(true, &alive);
        say("done");
        (void)wait_line();
        return 0;
}
