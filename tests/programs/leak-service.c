/* SPDX-License-Identifier: MIT */
/* A service's process: it leaks when told, and forks workers that leak, as a server's master and
 * workers would; memleakd traces every process of its cgroup (attach --cgroup, --unit).
 *
 * Ground truth (tests/integration/test_cgroups.py keeps the same numbers):
 *   service_leak   4 x 500 bytes   in this process, at each "leak"
 *   worker_leak    3 x 256 bytes   in each worker it forks
 * while service_churn, in each process, leaves nothing outstanding.
 *
 * Protocol: print "ready", then for each line: "leak": leak and churn, print "leaked"; "fork":
 * fork a worker, print "forked PID"; the worker waits for SIGUSR1 (sent by the test once memleakd
 * traces it), leaks, churns, prints "worker PID", then waits to be killed. At EOF: kill the
 * workers, reap them, exit. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline, noclone))
#define WORKERS_MAX 16

static void *kept[64];
static int n_kept;
static pid_t workers[WORKERS_MAX];
static int n_workers;

static noinline void keep(void *p)
{
        require(p);
        require(n_kept < (int)(sizeof(kept) / sizeof(kept[0])));
        kept[n_kept++] = p;
        __asm__ volatile("" ::: "memory");
}

static noinline void service_leak(void)
{
        for (int i = 0; i < 4; i++)
                keep(malloc(500));
}

static noinline void worker_leak(void)
{
        for (int i = 0; i < 3; i++)
                keep(malloc(256));
}

static noinline void service_churn(void)
{
        for (int i = 0; i < 100; i++) {
                void *p = malloc(4000);

                require(p);
                memset(p, 1, 4000);
                free(p);
        }
}

static void worker(void)
{
        sigset_t set;
        int sig;
        char line[64];

        /* gone with the service, killed or not */
        require(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0);
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        require(sigwait(&set, &sig) == 0);
        worker_leak();
        service_churn();
        snprintf(line, sizeof(line), "worker %d", (int)getpid());
        say(line);
        for (;;)
                pause();
}

int main(void)
{
        char line[64];
        sigset_t set;

        setup_stdio();
        /* blocked before any fork: a worker's SIGUSR1 waits for its sigwait() */
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        require(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
        say("ready");
        while (fgets(line, sizeof(line), stdin)) {
                if (strcmp(line, "leak\n") == 0) {
                        service_leak();
                        service_churn();
                        say("leaked");
                } else if (strcmp(line, "fork\n") == 0) {
                        pid_t pid;

                        require(n_workers < WORKERS_MAX);
                        pid = fork();
                        require(pid >= 0);
                        if (pid == 0)
                                worker();
                        workers[n_workers++] = pid;
                        snprintf(line, sizeof(line), "forked %d", (int)pid);
                        say(line);
                }
        }
        for (int i = 0; i < n_workers; i++) {
                (void)kill(workers[i], SIGKILL);
                (void)waitpid(workers[i], NULL, 0);
        }
        return 0;
}
