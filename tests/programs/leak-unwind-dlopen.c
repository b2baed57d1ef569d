/* SPDX-License-Identifier: MIT */
/* dlopen()s libleak-unwind-lib.so after memleakd attached and leaks through it by a function
 * pointer; the program and the library are both -O2 -fomit-frame-pointer, so the chain
 * lib_leak <- call_plugin <- main is walked by the unwind tables of both.
 *
 * Ground truth (tests/integration/test_unwind_chains.py; the library is leak-unwind-lib.c):
 *   lib_leak  LIB_LEAKS x 111 bytes <- call_plugin <- main
 *   churn     malloc/free balanced, before and after: nothing
 * Protocol: print "ready", wait for a line, dlopen the library, print "loaded", wait for a line,
 * leak through it, print "done", wait for a line or EOF. */
#include <dlfcn.h>
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

int main(void)
{
        static char exe[PATH_MAX], lib_path[PATH_MAX + 32];
        ssize_t n;
        void *lib;
        leak_fn leak;

        setup_stdio();
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        require(n > 0);
        exe[n] = 0;
        snprintf(lib_path, sizeof(lib_path), "%s/libleak-unwind-lib.so", dirname(exe));
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
