/* SPDX-License-Identifier: GPL-2.0-only */
/* Where exactly to put an entry probe: a few bytes past a function's entry when that lands on an
 * instruction the kernel emulates, so a hit needs no out-of-line single step (pure).
 *
 * Why: a uprobe hit on an instruction the kernel cannot emulate is executed out of line with a
 * single step, a second trap that costs far more than the first on some machines (20 us against
 * 0.75 us for an emulated push on the VM bench/RESULTS.md comes from). glibc's free starts with
 * `test %rdi,%rdi; je ...`: probing the je instead of the test makes every free cheap.
 *
 * Only a few instruction forms are decoded, each of exactly known length, and only those that
 * write no memory, do not branch, and write no register the probe reads (the stack pointer and
 * the arguments): anything else ends the search and the probe stays at the entry.
 * libstdc++'s operator new (endbr64; test %rdi,%rdi; mov $1,%eax; push %rbx) is probed on its
 * push; jemalloc's free (ten loads and ALU operations, some reading memory, before its first
 * branch) and mimalloc's malloc (which moves its argument to %rsi and overwrites %rdi before
 * branching) still single-step. */
#include <stdbool.h>
#include "probe-placement.h"

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI };

/* The registers an entry probe reading n_args arguments must find untouched. */
static unsigned protected_registers(unsigned n_args)
{
        static const unsigned args[] = { RDI, RSI, RDX, RCX, 8 /* r8 */, 9 /* r9 */ };
        unsigned set = 1u << RSP;

        for (unsigned i = 0; i < n_args && i < sizeof(args) / sizeof(args[0]); i++)
                set |= 1u << args[i];
        return set;
}

static bool is_rex_w(uint8_t b)
{
        return (b & 0xf8) == 0x48;
}

/* Length of a harmless instruction at c, or 0. *written: the register it writes (-1: none). */
static size_t decode_harmless(const uint8_t *c, size_t n, int *written)
{
        *written = -1;
        /* endbr64 */
        if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
                return 4;
        /* test r32, r32 / cmp r32, imm8 / cmp r32, imm32: flags only */
        if (n >= 2 && c[0] == 0x85 && (c[1] >> 6) == 3)
                return 2;
        if (n >= 3 && c[0] == 0x83 && (c[1] & 0xf8) == 0xf8)
                return 3;
        if (n >= 6 && c[0] == 0x81 && (c[1] & 0xf8) == 0xf8)
                return 6;
        /* mov $imm32, r32 (zero-extends into r64): writes r (libstdc++'s operator new) */
        if (n >= 5 && c[0] >= 0xb8 && c[0] <= 0xbf) {
                *written = c[0] - 0xb8;
                return 5;
        }
        if (n >= 6 && c[0] == 0x41 && c[1] >= 0xb8 && c[1] <= 0xbf) {
                *written = 8 + (c[1] - 0xb8);
                return 6;
        }
        /* xor r32, r32 / mov r32, r32 (register forms): write r/m */
        if (n >= 2 && (c[0] == 0x31 || c[0] == 0x89) && (c[1] >> 6) == 3) {
                *written = c[1] & 7;
                return 2;
        }
        if (n < 3 || !is_rex_w(c[0]))
                return 0;
        switch (c[1]) {
        case 0x85:      /* test r64, r64 */
                return (c[2] >> 6) == 3 ? 3 : 0;
        case 0x83:      /* cmp r64, imm8 (83 /7, register form) */
                return (c[2] & 0xf8) == 0xf8 && n >= 4 ? 4 : 0;
        case 0x81:      /* cmp r64, imm32 */
                return (c[2] & 0xf8) == 0xf8 && n >= 7 ? 7 : 0;
        case 0x89:      /* mov r64, r64 (register form): writes r/m */
                if ((c[2] >> 6) != 3)
                        return 0;
                *written = (c[2] & 7) | ((c[0] & 1) << 3);
                return 3;
        case 0x8b:      /* mov disp32(%rip), r64: writes reg */
                if ((c[2] & 0xc7) != 0x05 || n < 7)
                        return 0;
                *written = ((c[2] >> 3) & 7) | ((c[0] & 4) << 1);
                return 7;
        default:
                return 0;
        }
}

/* Whether the kernel's x86 uprobes emulate this instruction (no single step). */
static bool emulated(const uint8_t *c, size_t n)
{
        if (n >= 1 && c[0] >= 0x50 && c[0] <= 0x57)
                return true;                            /* push r64 */
        if (n >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57)
                return true;                            /* push r8..r15 */
        if (n >= 2 && c[0] >= 0x70 && c[0] <= 0x7f)
                return true;                            /* jcc rel8 */
        if (n >= 6 && c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f)
                return true;                            /* jcc rel32 */
        if ((n >= 2 && c[0] == 0xeb) || (n >= 5 && (c[0] == 0xe9 || c[0] == 0xe8)))
                return true;                            /* jmp rel8/rel32, call rel32 */
        return false;
}

size_t probe_entry_skip_x86_64(const uint8_t *code, size_t n, unsigned n_args)
{
        unsigned protect = protected_registers(n_args);
        size_t skip = 0;

        if (!code || emulated(code, n))
                return 0;                               /* already cheap where it is */
        for (int i = 0; i < PROBE_PLACEMENT_INSNS; i++) {
                int written;
                size_t len = decode_harmless(code + skip, n - skip, &written);

                if (len == 0 || (written >= 0 && (protect & (1u << written))))
                        return 0;
                skip += len;
                if (emulated(code + skip, n - skip))
                        return skip;
        }
        return 0;
}
