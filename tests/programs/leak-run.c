/* SPDX-License-Identifier: MIT */
/* What memleakctl run starts: leaks before main (in a constructor) and from main's callees, then
 * exits at once, with the status it is told, or killed by the signal it is told.
 *
 * Ground truth (tests/integration/test_run.py keeps the same numbers):
 *   leak_in_constructor  3 blocks of 111 bytes, before main
 *   leak_malloc          5 blocks of 100 bytes
 *   leak_calloc          2 blocks of 4 * 50 bytes
 *   churn                nothing (every block freed)
 *   leak_in_child        4 blocks of 1000 bytes in each child --fork starts (not in leak-run)
 *
 * Usage: leak-run [--exit N] [--kill SIGNAL] [--echo] [--linger MS] [--fork N]
 *   --echo copies stdin to stdout (raw reads and writes: no stdio buffer is allocated).
 *   --linger waits MS milliseconds before it exits.
 *   --fork forks N children one after the other, each leaking before it exits, and waits for
 *   each.
 * LEAK_RUN_MARKER=PATH: create PATH first thing, before any allocation (a test checks the
 * program never ran). */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

static void *kept[16];
static int n_kept;

static noinline void keep(void *p)
{
        require(p);
        kept[n_kept++] = p;
}

/* The first constructor: the marker, before anything allocates. */
__attribute__((constructor(101))) static void create_marker(void)
{
        const char *marker = getenv("LEAK_RUN_MARKER");

        if (marker && *marker)
                close(open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
}

__attribute__((constructor(102))) static noinline void leak_in_constructor(void)
{
        for (int i = 0; i < 3; i++)
                keep(malloc(111)); /* site: leak_in_constructor */
}

static noinline void leak_malloc(void)
{
        for (int i = 0; i < 5; i++)
                keep(malloc(100)); /* site: leak_malloc */
}

static noinline void leak_calloc(void)
{
        for (int i = 0; i < 2; i++)
                keep(calloc(4, 50)); /* site: leak_calloc */
}

static noinline void churn(void)
{
        for (int i = 0; i < 20; i++)
                free(malloc(64 + i));
}

static noinline void leak_in_child(void)
{
        for (int i = 0; i < 4; i++)
                keep(malloc(1000)); /* site: leak_in_child */
}

static void fork_children(int n)
{
        for (int i = 0; i < n; i++) {
                pid_t child = fork();
                int status;

                require(child >= 0);
                if (child == 0) {
                        leak_in_child();
                        _exit(0);
                }
                require(waitpid(child, &status, 0) == child && WIFEXITED(status));
        }
}

static void echo_stdin(void)
{
        char buf[4096];
        ssize_t n;

        while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0)
                require(write(STDOUT_FILENO, buf, (size_t)n) == n);
}

int main(int argc, char *argv[])
{
        int status = 0, sig = 0;
        int echo = 0, linger_ms = 0, children = 0;

        setup_stdio();
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc)
                        status = atoi(argv[++i]);
                else if (strcmp(argv[i], "--kill") == 0 && i + 1 < argc)
                        sig = atoi(argv[++i]);
                else if (strcmp(argv[i], "--echo") == 0)
                        echo = 1;
                else if (strcmp(argv[i], "--linger") == 0 && i + 1 < argc)
                        linger_ms = atoi(argv[++i]);
                else if (strcmp(argv[i], "--fork") == 0 && i + 1 < argc)
                        children = atoi(argv[++i]);
        }
        leak_malloc();
        leak_calloc();
        churn();
        fork_children(children);
        if (echo)
                echo_stdin();
        if (linger_ms > 0)
                usleep((useconds_t)linger_ms * 1000);
        if (sig) {
                signal(sig, SIG_DFL);
                raise(sig);
        }
        return status;
}
