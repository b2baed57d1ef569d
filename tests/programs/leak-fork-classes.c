/* SPDX-License-Identifier: MIT */
/* A family whose every process keeps some blocks and loses others: memleakctl run --follow-forks
 * scans each at its exit and classifies its blocks, as valgrind --trace-children=yes would.
 *
 * Ground truth (tests/integration/test_follow_forks.py keeps the same numbers), per process:
 *                  still reachable         definitely lost         indirectly lost
 *   this program   keep_parent 2 x 1000    lose_parent 1 x 500     -
 *   forked child   keep_child 5 x 200      lose_child 3 x 64       lose_child's 3 x 32 (each
 *                                                                  pointed to from a lost block)
 *   spawned        keep_spawned 6 x 100    lose_spawned 2 x 48     -
 *     (this program again, started with posix_spawn: a child that execs)
 *   killed child   keep_killed 4 x 128    -                       -
 *     (forked, then killed by its parent with SIGKILL once it kept its blocks)
 * A kept block's pointer is in a global; a lost one's was only in its function's frame.
 *
 * No handshake: it runs at once, prints "forked PID", "spawned PID" and "killed PID" as it ends
 * each child, and exits 0 once every child ended as it should (memleakctl run holds each child at
 * its birth until memleakd traces it). */
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

static void *volatile kept[16];
static int n_kept;

static noinline void keep(size_t size, int n)
{
        for (int i = 0; i < n; i++) {
                void *p = malloc(size);

                require(p);
                memset(p, 0, size);
                kept[n_kept++] = p;
        }
}

/* n blocks whose only pointer is dropped; each pointing to a block of child_size (none for 0),
 * pointed to only from it */
static noinline void lose(size_t size, int n, size_t child_size)
{
        for (int i = 0; i < n; i++) {
                void *volatile *p = malloc(size);

                require(p);
                memset((void *)p, 0, size);
                if (child_size) {
                        p[0] = malloc(child_size);
                        require(p[0]);
                        memset((void *)p[0], 0, child_size);
                }
        }
}

/* Each stack names the function below: no tail call into keep() or lose(). */
#define NO_TAIL_CALL __asm__ volatile("" ::: "memory")

static noinline void keep_parent(void) { keep(1000, 2); NO_TAIL_CALL; }
static noinline void lose_parent(void) { lose(500, 1, 0); NO_TAIL_CALL; }
static noinline void keep_child(void) { keep(200, 5); NO_TAIL_CALL; }
static noinline void lose_child(void) { lose(64, 3, 32); NO_TAIL_CALL; }
static noinline void keep_spawned(void) { keep(100, 6); NO_TAIL_CALL; }
static noinline void lose_spawned(void) { lose(48, 2, 0); NO_TAIL_CALL; }
static noinline void keep_killed(void) { keep(128, 4); NO_TAIL_CALL; }

/* A child that keeps its blocks, says so on fd and waits to be killed. */
static noinline void killed_child(int fd)
{
        keep_killed();
        require(write(fd, "k", 1) == 1);
        for (;;)
                pause();
}

/* This program again, a vfork child that execs it. */
static pid_t spawn_self(void)
{
        extern char **environ;
        static char self[PATH_MAX];
        char *argv[] = { self, "--spawned", NULL };
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        pid_t pid;

        require(n > 0);
        self[n] = 0;
        require(posix_spawn(&pid, self, NULL, NULL, argv, environ) == 0);
        return pid;
}

/* "WHAT PID" on stdout, no stdio buffer allocated. */
static void tell(const char *what, pid_t pid)
{
        char line[64];
        int n = snprintf(line, sizeof(line), "%s %d\n", what, (int)pid);

        require(n > 0 && write(STDOUT_FILENO, line, (size_t)n) == n);
}

static void wait_child(pid_t pid, int signal)
{
        int status;

        require(waitpid(pid, &status, 0) == pid);
        if (signal)
                require(WIFSIGNALED(status) && WTERMSIG(status) == signal);
        else
                require(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char *argv[])
{
        pid_t child, spawned, killed;
        int fds[2];
        char c;

        if (argc > 1 && strcmp(argv[1], "--spawned") == 0) {
                lose_spawned();
                keep_spawned();
                return 0;
        }
        keep_parent();
        lose_parent();
        child = fork();
        require(child >= 0);
        if (child == 0) {
                lose_child();
                keep_child();
                _exit(0);
        }
        wait_child(child, 0);
        tell("forked", child);
        spawned = spawn_self();
        wait_child(spawned, 0);
        tell("spawned", spawned);
        require(pipe(fds) == 0);
        killed = fork();
        require(killed >= 0);
        if (killed == 0)
                killed_child(fds[1]);
        require(read(fds[0], &c, 1) == 1);
        require(kill(killed, SIGKILL) == 0);
        wait_child(killed, SIGKILL);
        tell("killed", killed);
        return 0;
}
