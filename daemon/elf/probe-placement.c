/* SPDX-License-Identifier: GPL-2.0-only */
/* Where exactly to put an entry probe: a few bytes past a function's entry when that lands on an
 * instruction the kernel emulates, so a hit needs no out-of-line single step (pure).
 *
 * Why: a uprobe hit on an instruction the kernel cannot emulate is executed out of line with a
 * single step, a second trap that costs far more than the first on some machines (20 us against
 * 0.75 us for an emulated push on the VM bench/RESULTS.md comes from). glibc's free starts with
 * `test %rdi,%rdi; je ...`: probing the je instead of the test makes every free cheap.
 *
 * Only the common integer forms are decoded (moves, loads, ALU operations, shifts, compares,
 * lea, each with its exact length), and only those that write no memory, do not branch, and
 * leave the stack pointer and every argument the probe reads somewhere in a register: anything
 * else ends the search and the probe stays at the entry. An argument copied whole (a 64-bit
 * register move) before its own register is overwritten is read from the copy: the placement says
 * which register holds each argument at the probe. libstdc++'s operator new (endbr64; test
 * %rdi,%rdi; mov $1,%eax; push %rbx) is probed on its push, jemalloc's free on its first branch
 * nine loads and ALU operations in, mimalloc's malloc (mov %rdi,%rsi; mov %fs:(%rax),%rdi; cmp
 * $0x400,%rsi; ja) on its ja with the size in %rsi.
 *
 * A branch from later in the function back into the instructions stepped over would reach the
 * probe again without a new call; memleakd's programs take a second entry at the same stack
 * pointer as a nested call (and a second free of one block as unknown), so nothing is counted
 * twice. */
#include <stdbool.h>
#include <string.h>
#include "probe-placement.h"

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI };

/* The System V calling convention's argument registers, in order. */
static const uint8_t argument_registers[PROBE_PLACEMENT_MAX_ARGS] = { RDI, RSI, RDX, RCX, 8 /* r8 */, 9 /* r9 */ };

/* A ModRM operand: its length with SIB and displacement, whether it is a register (mod 3). */
struct modrm {
        size_t len;
        bool is_register;
        int reg;                /* the reg field, REX.R applied */
        int rm;                 /* mod 3: the register, REX.B applied */
};

static bool decode_modrm(const uint8_t *c, size_t n, uint8_t rex, struct modrm *m)
{
        uint8_t b, mod, rm;

        if (n < 1)
                return false;
        b = c[0];
        mod = b >> 6;
        rm = b & 7;
        *m = (struct modrm) { .len = 1, .is_register = mod == 3,
                              .reg = ((b >> 3) & 7) | ((rex & 4) << 1), .rm = rm | ((rex & 1) << 3) };
        if (mod == 3)
                return true;
        if (rm == 4) {                                  /* SIB */
                if (n < 2)
                        return false;
                m->len++;
                if (mod == 0 && (c[1] & 7) == 5)
                        m->len += 4;                    /* no base: disp32 */
        } else if (mod == 0 && rm == 5) {
                m->len += 4;                            /* disp32(%rip) */
        }
        if (mod == 1)
                m->len += 1;
        else if (mod == 2)
                m->len += 4;
        return m->len <= n;
}

/* Length of a harmless instruction at c, or 0. *written: the register it writes (-1: none);
 * *copied: the register whose whole value it copies there (a 64-bit register move; -1: none).
 * Harmless: it neither branches nor writes memory nor touches the stack implicitly; it may read
 * memory (a load the function makes anyway, probe or not). An operand-size prefix, 8-bit
 * operands other than in a compare or test, and everything not listed end the search. */
static size_t decode_harmless(const uint8_t *c, size_t n, int *written, int *copied)
{
        struct modrm m;
        size_t i = 0, imm = 0;
        uint8_t rex = 0, op;

        *written = -1;
        *copied = -1;
        if (probe_placement_endbr64_length(c, n) > 0)
                return 4;
        if (i < n && (c[i] == 0x64 || c[i] == 0x65))    /* %fs:, %gs: (thread-local loads) */
                i++;
        if (i < n && (c[i] & 0xf0) == 0x40)
                rex = c[i++];
        if (i >= n)
                return 0;
        op = c[i++];
        if (op >= 0xb8 && op <= 0xbf) {                 /* mov $imm, r (imm64 with REX.W) */
                imm = rex & 8 ? 8 : 4;
                *written = (op & 7) | ((rex & 1) << 3);
                return i + imm <= n ? i + imm : 0;
        }
        switch (op) {
        case 0x05: case 0x0d: case 0x25: case 0x2d: case 0x35:  /* add/or/and/sub/xor $imm32, %eax */
                *written = RAX;
                return i + 4 <= n ? i + 4 : 0;
        case 0x3d: case 0xa9:                           /* cmp/test $imm32, %eax */
                return i + 4 <= n ? i + 4 : 0;
        default:
                break;
        }
        if (op == 0x0f) {                               /* movzx, movsx, imul r, r/m */
                if (i >= n || (c[i] != 0xb6 && c[i] != 0xb7 && c[i] != 0xbe && c[i] != 0xbf && c[i] != 0xaf))
                        return 0;
                i++;
                if (!decode_modrm(c + i, n - i, rex, &m))
                        return 0;
                *written = m.reg;
                return i + m.len;
        }
        if (!decode_modrm(c + i, n - i, rex, &m))
                return 0;
        i += m.len;
        switch (op) {
        case 0x01: case 0x09: case 0x11: case 0x19: case 0x21: case 0x29: case 0x31: case 0x89:
                /* add/or/adc/sbb/and/sub/xor/mov r, r/m: writes r/m (a register, not memory) */
                if (!m.is_register)
                        return 0;
                *written = m.rm;
                if (op == 0x89 && (rex & 8))
                        *copied = m.reg;
                return i;
        case 0x03: case 0x0b: case 0x13: case 0x1b: case 0x23: case 0x2b: case 0x33: case 0x8b:
                /* the same, r/m into r */
                *written = m.reg;
                if (op == 0x8b && (rex & 8) && m.is_register)
                        *copied = m.rm;
                return i;
        case 0x8d:                                      /* lea: computes an address, reads nothing */
                if (m.is_register)
                        return 0;
                *written = m.reg;
                return i;
        case 0x38: case 0x39: case 0x3a: case 0x3b: case 0x84: case 0x85:
                return i;                               /* cmp, test (8, 32, 64 bits): flags only */
        case 0x80:                                      /* cmp r/m8, $imm8 (80 /7) only */
                if ((m.reg & 7) != 7)
                        return 0;
                return i + 1 <= n ? i + 1 : 0;
        case 0xf6:                                      /* test r/m8, $imm8 (f6 /0) only */
                if ((m.reg & 7) != 0)
                        return 0;
                return i + 1 <= n ? i + 1 : 0;
        case 0x81: case 0x83: case 0xc1: case 0xd1: case 0xf7:
                imm = op == 0x81 ? 4 : op == 0xd1 ? 0 : 1;
                if (op == 0xf7) {                       /* test r/m, $imm32 (f7 /0) only */
                        if ((m.reg & 7) != 0)
                                return 0;
                        return i + 4 <= n ? i + 4 : 0;
                }
                if (i + imm > n)
                        return 0;
                if ((op == 0x81 || op == 0x83) && (m.reg & 7) == 7)
                        return i + imm;                 /* cmp r/m, $imm */
                if ((op == 0xc1 || op == 0xd1) && (m.reg & 7) == 6)
                        return 0;                       /* not a shift */
                if (!m.is_register)
                        return 0;                       /* writes memory */
                *written = m.rm;
                return i + imm;
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

/* Where each of the n_args arguments can be read at the probe: a set of registers each (bit r:
 * register r holds it whole). */
struct argument_homes {
        unsigned n_args;
        uint16_t homes[PROBE_PLACEMENT_MAX_ARGS];
};

/* Register `written` changes; it holds a whole copy of `copied` afterwards if copied >= 0. False
 * when that loses an argument (its last register) or moves the stack pointer. */
static bool homes_update(struct argument_homes *a, int written, int copied)
{
        if (written < 0)
                return true;
        if (written == RSP)
                return false;
        for (unsigned i = 0; i < a->n_args; i++) {
                bool copy = copied >= 0 && (a->homes[i] & (1u << copied));

                a->homes[i] &= (uint16_t)~(1u << written);
                if (copy)
                        a->homes[i] |= (uint16_t)(1u << written);
                if (a->homes[i] == 0)
                        return false;
        }
        return true;
}

/* The register each argument is read from: its own where it still is, else its lowest copy. */
static void homes_choose(const struct argument_homes *a, struct probe_placement *ret)
{
        for (unsigned i = 0; i < a->n_args; i++) {
                uint8_t reg = argument_registers[i];

                if (!(a->homes[i] & (1u << reg))) {
                        reg = (uint8_t)__builtin_ctz(a->homes[i]);
                        ret->moved = true;
                }
                ret->arg_register[i] = reg;
        }
}

void probe_placement_find_x86_64(const uint8_t *code, size_t n, unsigned n_args, struct probe_placement *ret)
{
        struct argument_homes a = { .n_args = n_args < PROBE_PLACEMENT_MAX_ARGS ? n_args : PROBE_PLACEMENT_MAX_ARGS };
        size_t skip = 0;

        *ret = (struct probe_placement) {};
        for (unsigned i = 0; i < PROBE_PLACEMENT_MAX_ARGS; i++) {
                ret->arg_register[i] = argument_registers[i];
                a.homes[i] = (uint16_t)(1u << argument_registers[i]);
        }
        if (!code || emulated(code, n))
                return;                                 /* already cheap where it is */
        for (int i = 0; i < PROBE_PLACEMENT_INSNS; i++) {
                int written, copied;
                size_t len = decode_harmless(code + skip, n - skip, &written, &copied);

                if (len == 0 || !homes_update(&a, written, copied))
                        return;
                skip += len;
                if (emulated(code + skip, n - skip)) {
                        ret->skip = skip;
                        homes_choose(&a, ret);
                        return;
                }
        }
}

size_t probe_placement_endbr64_length(const uint8_t *code, size_t n)
{
        static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

        return n >= sizeof(endbr64) && memcmp(code, endbr64, sizeof(endbr64)) == 0 ? sizeof(endbr64) : 0;
}
