/* SPDX-License-Identifier: MIT */
/* Leaks exactly LEAK_COUNT blocks of LEAK_SIZE bytes from one function, then waits: the e2e ground truth.
 *
 * Ground truth (tests/e2e/test_systemd_units.py LEAK_SIZE/LEAK_COUNT keep the same numbers):
 * leak_fixed_blocks() leaks LEAK_COUNT blocks of LEAK_SIZE bytes from the line marked
 * "site: leak_fixed_blocks"; nothing else is allocated after "go".
 *
 * Protocol: print "ready PID" (PID as this process sees itself, i.e. in its PID namespace),
 * wait for a line ("go"), leak, print "done", wait for a line or EOF, exit 0. With --service (a
 * unit's ExecStart=, stdin /dev/null): wait for SIGUSR1 instead (systemctl kill -s USR1), leak,
 * then run until stopped. */
#include <signal.h>
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

int main(int argc, char *argv[])
{
        if (argc > 1 && strcmp(argv[1], "--service") == 0) {
                sigset_t set;
                int sig;

                sigemptyset(&set);
                sigaddset(&set, SIGUSR1);
                require(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
                require(sigwait(&set, &sig) == 0);
                leak_fixed_blocks();
                for (;;)
                        pause();
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
