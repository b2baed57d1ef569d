/* SPDX-License-Identifier: MIT */
/* dlopen()s libleak-unwind-lib.so after memleakd attached and leaks through it by a function
 * pointer; the program and the library are both -O2 -fomit-frame-pointer, so the chain
 * lib_leak <- call_plugin <- main is walked by the unwind tables of both.
 *
 * Ground truth (tests/integration/test_unwind_chains.py; the library is leak-unwind-lib.c):
 *   lib_leak  LIB_LEAKS x 111 bytes <- call_plugin <- main
 *   churn     malloc/free balanced, before and after: nothing
 * Protocol: print "ready", wait for a line, dlopen the library, print "loaded", wait for a line,
 * leak through it, print "done", wait for a line or EOF.
 * With the argument "at-once": print "ready", wait for a line, dlopen the library and at once
 * (before memleakd could have loaded its unwind table) leak through its three sites
 * (lib_sites <- call_plugin <- leak_at_once <- main, leak-unwind-lib.c), print "done", wait for a
 * line; on a line leak through them again (lib_sites <- call_plugin <- leak_again <- main), print
 * "done", wait for a line or EOF. With "at-once-no-wait": the first round alone, without waiting
 * (memleakctl run). */
#include <dlfcn.h>
#include <stdbool.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include "leak-util.h"

#define noinline __attribute__((noinline))
#define LIB_LEAKS 6

typedef int (*leak_fn)(int);

static volatile int leaks_wanted = LIB_LEAKS;

static noinline void churn(int n)
{
        for (int i = 0; i < n; i++) {
                free(malloc(16 + (size_t)i % 200));
                __asm__ volatile("" ::: "memory");
        }
}

static noinline int call_plugin(leak_fn fn, int n)
{
        int made = fn(n);

        __asm__ volatile("" ::: "memory");     /* no tail call: call_plugin's frame stays */
        return made;
}

#define SITES_ROUND (3 + 5 + 7)

static leak_fn sites;

/* dlopen the library and leak through its three sites before anything else */
static noinline int leak_at_once(const char *lib_path)
{
        void *lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);

        require(lib);
        sites = (leak_fn)dlsym(lib, "lib_sites");
        require(sites);
        require(call_plugin(sites, 0) == SITES_ROUND);
        return 0;
}

/* the same sites again, from the same caller in main's place */
static noinline int leak_again(void)
{
        int made = call_plugin(sites, SITES_ROUND);

        __asm__ volatile("" ::: "memory");     /* no tail call: leak_again's frame stays */
        return made;
}

int main(int argc, char **argv)
{
        static char exe[PATH_MAX], lib_path[PATH_MAX + 32];
        bool at_once = argc > 1 && strncmp(argv[1], "at-once", 7) == 0;
        bool no_wait = argc > 1 && strcmp(argv[1], "at-once-no-wait") == 0;
        ssize_t n;
        void *lib;
        leak_fn leak;

        setup_stdio();
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        require(n > 0);
        exe[n] = 0;
        snprintf(lib_path, sizeof(lib_path), "%s/libleak-unwind-lib.so", dirname(exe));
        if (at_once) {
                if (!no_wait) {
                        say("ready");
                        if (wait_line() < 0)
                                return 1;
                }
                leak_at_once(lib_path);
                say("done");
                if (no_wait || wait_line() < 0)
                        return 0;
                /* a second round, once the test saw the library's table loaded */
                require(leak_again() == 2 * SITES_ROUND);
                say("done");
                wait_line();
                return 0;
        }
        say("ready");
        if (wait_line() < 0)
                return 1;
        lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
        require(lib);
        leak = (leak_fn)dlsym(lib, "lib_leak");
        require(leak);
        say("loaded");
        if (wait_line() < 0)
                return 1;
        churn(100);
        require(call_plugin(leak, leaks_wanted) == LIB_LEAKS);
        churn(100);
        say("done");
        wait_line();
        return 0;
}
