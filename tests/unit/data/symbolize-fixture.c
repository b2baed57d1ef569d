/* SPDX-License-Identifier: MIT */
/* Fixture for test-symbolize: functions at marked source lines, built -O0 -g as a shared library. */
/* test-symbolize finds the "line:" markers below by reading this file: keep each one unique. */

#include <setjmp.h>

void *fixture_return_address;
void *fixture_local_address;
int fixture_call(int x);
int fixture_caller(int x);
void fixture_noreturn_caller(void);
int fixture_after_noreturn(void);
int fixture_run_noreturn(void);

static jmp_buf fixture_jump;

/* Records where it returns to: the instruction after the call in its caller. GCC puts the
 * prologue on the line of the opening brace. */
__attribute__((noinline)) int fixture_call(int x)
{       /* line:callee-entry */
        fixture_return_address = __builtin_return_address(0);
        return x * 3 + 1;
}

__attribute__((noinline)) int fixture_caller(int x)
{
        fixture_call(x);        /* line:call */
        return x + 1;           /* line:after-call */
}

/* Only in .symtab: static functions are not exported through .dynsym. */
__attribute__((noinline)) static int fixture_local(int x)
{
        return x - 1;
}

__attribute__((noinline, noreturn)) static void fixture_escape(void)
{
        fixture_return_address = __builtin_return_address(0);
        fixture_local_address = (void *)fixture_local;
        longjmp(fixture_jump, 1);
}

/* Ends in a noreturn call, so its return address is the first byte of the next function. */
__attribute__((noinline)) void fixture_noreturn_caller(void)
{
        fixture_escape();       /* line:noreturn-call */
}

__attribute__((noinline)) int fixture_after_noreturn(void)
{
        return 7;
}

int fixture_run_noreturn(void)
{
        if (setjmp(fixture_jump) == 0)
                fixture_noreturn_caller();
        return fixture_local(1);
}

/* Inlined even at -O0: the return address recorded by fixture_call lies in code that DWARF
 * describes as fixture_inline_helper inlined into fixture_inline_outer inlined into
 * fixture_inline_caller. */
int fixture_inline_caller(int x);

__attribute__((always_inline)) static inline int fixture_inline_helper(int x)
{
        return fixture_call(x) + 2;             /* line:inline-call */
}

__attribute__((always_inline)) static inline int fixture_inline_outer(int x)
{
        return fixture_inline_helper(x) * 2;    /* line:inline-outer-call */
}

__attribute__((noinline)) int fixture_inline_caller(int x)
{
        return fixture_inline_outer(x) - 1;     /* line:inline-site */
}
