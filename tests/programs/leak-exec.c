/* SPDX-License-Identifier: MIT */
/* Leaks, then execs itself as another image that leaks too: the first image's blocks go with it.
 * The exec is made by the main thread, or by another thread (which takes over the process's pid).
 *
 * Ground truth (tests/integration/test_targets.py keeps the same numbers): leak_before_exec
 * leaks BEFORE_COUNT blocks of BEFORE_SIZE bytes in the first image, which its exec takes away;
 * leak_after_exec leaks AFTER_COUNT blocks of AFTER_SIZE bytes in the second, which stay.
 *
 * Protocol: print "ready", wait for a line ("go"), leak, print "leaked", wait for a line: "thread"
 * execs from a new thread, "prog PATH" execs PATH (no arguments) from the main thread, any other
 * from the main one; the program execs itself with the argument "after" (same pid, same stdin and
 * stdout), prints "execd", waits for a line, leaks, prints "done", waits for a line or EOF,
 * exits 0. */
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

#define BEFORE_SIZE     333u
#define BEFORE_COUNT    5
#define AFTER_SIZE      999u
#define AFTER_COUNT     7

static void *kept[BEFORE_COUNT > AFTER_COUNT ? BEFORE_COUNT : AFTER_COUNT];
static char *program;

static noinline void leak_before_exec(void)
{
        for (int i = 0; i < BEFORE_COUNT; i++) {
                kept[i] = malloc(BEFORE_SIZE); /* site: leak_before_exec */
                require(kept[i]);
        }
}

static noinline void leak_after_exec(void)
{
        for (int i = 0; i < AFTER_COUNT; i++) {
                kept[i] = malloc(AFTER_SIZE); /* site: leak_after_exec */
                require(kept[i]);
        }
}

static void *exec_again(void *unused)
{
        char *again[] = { program, "after", NULL };

        (void)unused;
        execv("/proc/self/exe", again);
        abort();
}

int main(int argc, char *argv[])
{
        char line[PATH_MAX + 8];
        pthread_t thread;

        setup_stdio();
        program = argv[0];
        if (argc > 1 && strcmp(argv[1], "after") == 0) {
                say("execd");
                if (wait_line() < 0)
                        return 1;
                leak_after_exec();
                say("done");
                (void)wait_line();
                return 0;
        }
        say("ready");
        if (wait_line() < 0)
                return 1;
        leak_before_exec();
        say("leaked");
        if (!fgets(line, sizeof(line), stdin))
                return 1;
        if (strcmp(line, "thread\n") == 0) {
                require(pthread_create(&thread, NULL, exec_again, NULL) == 0);
                pause();
        }
        if (strncmp(line, "prog ", 5) == 0) {
                line[strcspn(line, "\n")] = '\0';
                execl(line + 5, line + 5, (char *)NULL);
                abort();
        }
        exec_again(NULL);
}
