/* SPDX-License-Identifier: MIT */
/* Leaks in the processes it forks, and in one of theirs, as a server's workers or a script's
 * commands would: memleakd follows them with --follow-forks.
 *
 * Ground truth (tests/integration/test_follow_forks.py keeps the same numbers):
 *   parent_leak      3 x 1000 bytes   in this process
 *   child_leak       5 x 200 bytes    in each of its 2 children (10 x 200 in all)
 *   grandchild_leak  4 x 300 bytes    in the child the first child forks
 *   spawned_leak     6 x 100 bytes    in this program again, started with posix_spawn (a vfork
 *                                     child, in this process's memory until it execs)
 * while child_churn, in each child, leaves nothing outstanding.
 *
 * Protocol: print "ready", wait for a line; leak, fork the children and print "forked". Each
 * child (the grandchild, the spawned program) waits for SIGUSR1, sent by the test once memleakd
 * follows it, before it allocates anything; the first child forks the grandchild when signalled,
 * then leaks, and waits for it. Once its children are gone print "done", wait for a line or EOF,
 * exit. Run with --spawned, it is the spawned program: wait for SIGUSR1, leak, exit. With
 * --no-wait (last), no process waits for SIGUSR1: each leaks the moment it starts (memleakctl run
 * holds each child at its birth until memleakd traces it). With --fork-first (first), the
 * children are forked (and the program spawned) before "ready", waiting for SIGUSR1 as above, and
 * the line that follows makes the parent leak, print "forked", and go on as above: memleakd
 * attached with --follow-forks finds them running. */
#include <limits.h>
#include <stdbool.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

static void *kept[16];
static int n_kept;
static bool no_wait;

static noinline void keep(void *p)
{
        require(p);
        require(n_kept < (int)(sizeof(kept) / sizeof(kept[0])));
        kept[n_kept++] = p;
        __asm__ volatile("" ::: "memory");
}

static noinline void parent_leak(void)
{
        for (int i = 0; i < 3; i++)
                keep(malloc(1000));
}

static noinline void child_leak(void)
{
        for (int i = 0; i < 5; i++)
                keep(malloc(200));
}

static noinline void grandchild_leak(void)
{
        for (int i = 0; i < 4; i++)
                keep(malloc(300));
}

static noinline void spawned_leak(void)
{
        for (int i = 0; i < 6; i++)
                keep(malloc(100));
}

static noinline void child_churn(void)
{
        for (int i = 0; i < 100; i++) {
                void *p = malloc(4000);

                require(p);
                memset(p, 1, 4000);
                free(p);
        }
}

/* A test that fails must not leave a child waiting for SIGUSR1 for ever: it goes with its parent. */
static void die_with_parent(pid_t parent)
{
        require(prctl(PR_SET_PDEATHSIG, SIGKILL) == 0);
        if (getppid() != parent)
                _exit(1);
}

/* SIGUSR1 is blocked in every process of the family (the mask is inherited): wait for it. */
static void wait_for_the_test(void)
{
        sigset_t usr1;
        int sig;

        if (no_wait)
                return;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        require(sigwait(&usr1, &sig) == 0 && sig == SIGUSR1);
}

static void wait_child(pid_t pid)
{
        int status;

        require(waitpid(pid, &status, 0) == pid);
        require(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static noinline void grandchild(pid_t parent)
{
        int inherited = n_kept;                 /* the parent's blocks are in its copy too */

        die_with_parent(parent);
        wait_for_the_test();
        grandchild_leak();
        _exit(n_kept == inherited + 4 ? 0 : 1);
}

static noinline void child(int index, pid_t parent)
{
        pid_t grandchild_pid = 0, self = getpid();
        int inherited = n_kept;

        die_with_parent(parent);
        wait_for_the_test();
        if (index == 0) {
                grandchild_pid = fork();
                require(grandchild_pid >= 0);
                if (grandchild_pid == 0)
                        grandchild(self);
        }
        child_churn();
        child_leak();
        if (grandchild_pid > 0)
                wait_child(grandchild_pid);
        _exit(n_kept == inherited + 5 ? 0 : 1);
}

/* This program again, as a vfork child that execs it (posix_spawn keeps the signal mask). */
static pid_t spawn_self(void)
{
        extern char **environ;
        static char self[PATH_MAX];
        char *argv[] = { self, "--spawned", no_wait ? "--no-wait" : NULL, NULL };
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        pid_t pid;

        require(n > 0);
        self[n] = 0;
        require(posix_spawn(&pid, self, NULL, NULL, argv, environ) == 0);
        return pid;
}

/* The two children, then this program spawned again. */
static void fork_children(pid_t children[3], pid_t parent)
{
        for (int i = 0; i < 2; i++) {
                children[i] = fork();
                require(children[i] >= 0);
                if (children[i] == 0)
                        child(i, parent);
        }
        children[2] = spawn_self();
}

int main(int argc, char *argv[])
{
        sigset_t usr1;
        pid_t children[3], parent = getpid();
        bool fork_first = argc > 1 && strcmp(argv[1], "--fork-first") == 0;

        no_wait = argc > 1 && strcmp(argv[argc - 1], "--no-wait") == 0;
        if (argc > 1 && strcmp(argv[1], "--spawned") == 0) {
                die_with_parent(getppid());
                wait_for_the_test();
                spawned_leak();
                return n_kept == 6 ? 0 : 1;
        }
        setup_stdio();
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        require(sigprocmask(SIG_BLOCK, &usr1, NULL) == 0);
        if (fork_first)
                fork_children(children, parent);
        say("ready");
        if (wait_line() < 0)
                return 1;
        parent_leak();
        if (!fork_first)
                fork_children(children, parent);
        say("forked");
        for (int i = 0; i < 3; i++)
                wait_child(children[i]);
        say("done");
        wait_line();
        return n_kept == 3 ? 0 : 1;
}
