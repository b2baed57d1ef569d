/* SPDX-License-Identifier: MIT */
/* Leaks exactly LEAK_COUNT blocks of LEAK_SIZE bytes from one function, then waits: the e2e ground truth.
 *
 * Ground truth (tests/e2e/test_systemd_units.py LEAK_SIZE/LEAK_COUNT keep the same numbers):
 * leak_fixed_blocks() leaks LEAK_COUNT blocks of LEAK_SIZE bytes from the line marked
 * "site: leak_fixed_blocks"; nothing else is allocated after "go".
 *
 * Protocol: print "ready PID" (PID as this process sees itself, i.e. in its PID namespace),
 * wait for a line ("go"), leak, print "done", wait for a line or EOF, exit 0. With --service (a
 * unit's ExecStart=, stdin /dev/null): leak at each SIGUSR1 instead (systemctl kill -s USR1),
 * and run until stopped. With --service-workers N: a forking server's master, which forks N
 * workers that each leak at each SIGUSR1, and leaks nothing itself. */
#include <signal.h>
#include <stdbool.h>
#include <stdnoreturn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define LEAK_SIZE       1234u
#define LEAK_COUNT      7

/* Leaked blocks stay reachable: nothing may look dead to a compiler or a checker. */
static void *leaked[LEAK_COUNT];

static noinline void leak_fixed_blocks(void)
{
        for (int i = 0; i < LEAK_COUNT; i++) {
                leaked[i] = malloc(LEAK_SIZE); /* site: leak_fixed_blocks */
                require(leaked[i]);
        }
}

/* A service: at each SIGUSR1, leak (leaks), or not; until stopped. */
static noreturn void serve(const sigset_t *usr1, bool leaks)
{
        int sig;

        for (;;) {
                require(sigwait(usr1, &sig) == 0);
                if (leaks)
                        leak_fixed_blocks();
        }
}

int main(int argc, char *argv[])
{
        bool service = argc > 1 && strcmp(argv[1], "--service") == 0;
        bool workers = argc > 2 && strcmp(argv[1], "--service-workers") == 0;

        if (service || workers) {
                sigset_t set;

                /* blocked before any fork: a worker never meets SIGUSR1's default (death) */
                sigemptyset(&set);
                sigaddset(&set, SIGUSR1);
                require(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
                for (int i = 0; workers && i < atoi(argv[2]); i++) {
                        pid_t pid = fork();

                        require(pid >= 0);
                        if (pid == 0)
                                serve(&set, true);
                }
                /* the master of a forking server leaks nothing: its workers do */
                serve(&set, service);
        }
        setup_stdio();
        printf("ready %ld\n", (long)getpid());
        fflush(stdout);
        if (wait_line() < 0)
                return 1;

        leak_fixed_blocks();

        say("done");
        (void) wait_line();
        return 0;
}
