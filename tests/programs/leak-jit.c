/* SPDX-License-Identifier: MIT */
/* Leaks through "JIT code": machine code this program writes into anonymous executable memory at
 * run time, as V8 or a JVM does, keeping a frame pointer (push %rbp; mov %rsp, %rbp) as theirs
 * does, and named in the program's perf map (/tmp/perf-PID.map) as node --perf-basic-prof names
 * its JavaScript. Built -O2 -fomit-frame-pointer: the C frames are walked by their CFI, the JIT
 * frame by its frame pointer.
 *
 * Ground truth (tests/integration/test_jit.py keeps the same numbers):
 *   jit_leak          7 x 131 bytes <- jit_named_stub [jit] <- leak_through_named_stub <- main
 *   jit_leak_unnamed  5 x 137 bytes <- (a stub the perf map does not name, made after the attach)
 *                                     <- leak_through_unnamed_stub <- main
 *   jit_leak_frameless 3 x 139 bytes <- (a stub that keeps no frame pointer: it zeroes %rbp, as
 *                                     code using it as a register may) <- ...: no walk goes past
 *                                     it, and none may say it reached the outermost frame there
 * while jit_churn, called through the named stub too, leaves nothing outstanding.
 *
 * Protocol: print "ready", wait for a line, leak, print "done", wait for a line or EOF; the perf
 * map is removed at exit, unless the first argument is --keep-perf-map (as node leaves its own). */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "leak-util.h"

#define noinline __attribute__((noinline))

typedef void *(*leak_fn)(void);
typedef void *(*stub_fn)(leak_fn callee);

/* push %rbp; mov %rsp,%rbp; call *%rdi; pop %rbp; ret */
static const unsigned char stub_code[] = { 0x55, 0x48, 0x89, 0xe5, 0xff, 0xd7, 0x5d, 0xc3 };
/* push %rbp; xor %ebp,%ebp; call *%rdi; pop %rbp; ret (7 bytes; the page's rest is zeroes) */
static const unsigned char frameless_code[] = { 0x55, 0x31, 0xed, 0xff, 0xd7, 0x5d, 0xc3 };

static void *kept[16];
static int n_kept;
static char perf_map_path[64];

static noinline void keep(void *p)
{
        require(p);
        require(n_kept < (int)(sizeof(kept) / sizeof(kept[0])));
        kept[n_kept++] = p;
        __asm__ volatile("" ::: "memory");
}

static noinline void *jit_leak(void)
{
        void *p = malloc(131);

        __asm__ volatile("" : : "r"(p) : "memory");     /* no tail call: this frame stays */
        return p;
}

static noinline void *jit_leak_unnamed(void)
{
        void *p = malloc(137);

        __asm__ volatile("" : : "r"(p) : "memory");     /* no tail call: this frame stays */
        return p;
}

static noinline void *jit_leak_frameless(void)
{
        void *p = malloc(139);

        __asm__ volatile("" : : "r"(p) : "memory");     /* no tail call: this frame stays */
        return p;
}

static noinline void *jit_churn(void)
{
        void *p = malloc(4000);

        require(p);
        memset(p, 1, 4000);
        free(p);
        return NULL;
}

/* A stub of machine code on a page of its own, as a JIT maps its code. */
static stub_fn make_code(const unsigned char *machine_code, size_t size)
{
        long page = sysconf(_SC_PAGESIZE);
        unsigned char *code = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        require(code != MAP_FAILED);
        memcpy(code, machine_code, size);
        require(mprotect(code, page, PROT_READ | PROT_EXEC) == 0);
        return (stub_fn)(void *)code;
}

static stub_fn make_stub(void)
{
        return make_code(stub_code, sizeof(stub_code));
}

/* The named stub, made before the attach, in the perf map. */
static stub_fn make_named_stub(void)
{
        stub_fn stub = make_stub();
        FILE *f;

        snprintf(perf_map_path, sizeof(perf_map_path), "/tmp/perf-%d.map", (int)getpid());
        f = fopen(perf_map_path, "we");
        require(f);
        fprintf(f, "%lx %zx jit_named_stub\n", (unsigned long)(uintptr_t)stub, sizeof(stub_code));
        require(fclose(f) == 0);
        return stub;
}

static noinline void leak_through_named_stub(stub_fn stub)
{
        for (int i = 0; i < 7; i++)
                keep(stub(jit_leak));
}

static noinline void leak_through_unnamed_stub(stub_fn stub)
{
        for (int i = 0; i < 5; i++)
                keep(stub(jit_leak_unnamed));
}

static noinline void leak_through_frameless_stub(stub_fn stub)
{
        for (int i = 0; i < 3; i++)
                keep(stub(jit_leak_frameless));
}

static noinline void churn_through_stub(stub_fn stub)
{
        for (int i = 0; i < 100; i++)
                stub(jit_churn);
        __asm__ volatile("" ::: "memory");
}

int main(int argc, char *argv[])
{
        bool keep_perf_map = argc > 1 && strcmp(argv[1], "--keep-perf-map") == 0;
        stub_fn named, unnamed, frameless;

        setup_stdio();
        named = make_named_stub();
        say("ready");
        if (wait_line() < 0) {
                unlink(perf_map_path);
                return 1;
        }
        /* made after the attach: memleakd learns of it from its vma as the walk meets it */
        unnamed = make_stub();
        frameless = make_code(frameless_code, sizeof(frameless_code));
        churn_through_stub(named);
        leak_through_named_stub(named);
        leak_through_unnamed_stub(unnamed);
        leak_through_frameless_stub(frameless);
        churn_through_stub(named);
        say("done");
        wait_line();
        if (!keep_perf_map)
                unlink(perf_map_path);
        return n_kept == 15 ? 0 : 1;
}
