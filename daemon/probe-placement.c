/* SPDX-License-Identifier: GPL-2.0-only */
/* Where exactly to put an entry probe: a few bytes past a function's entry when that lands on an
 * instruction the kernel emulates, so a hit needs no out-of-line single step (pure).
 *
 * Why: a uprobe hit on an instruction the kernel cannot emulate is executed out of line with a
 * single step, a second trap that costs far more than the first on some machines (20 us against
 * 0.75 us for an emulated push on the VM bench/RESULTS.md comes from). glibc's free starts with
 * `test %rdi,%rdi; je ...`: probing the je instead of the test makes every free cheap. */
#include <stdbool.h>
#include "probe-placement.h"

/* Length of an instruction that changes nothing an entry probe reads and does not branch, or 0. */
static size_t harmless_length(const uint8_t *c, size_t n)
{
        /* endbr64 */
        if (n >= 4 && c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
                return 4;
        /* test r64, r64 (REX.W 85 /r, register form): flags only */
        if (n >= 3 && (c[0] & 0xf0) == 0x40 && (c[0] & 0x08) && c[1] == 0x85 && (c[2] >> 6) == 3)
                return 3;
        /* test r32, r32 */
        if (n >= 2 && c[0] == 0x85 && (c[1] >> 6) == 3)
                return 2;
        return 0;
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

size_t probe_entry_skip_x86_64(const uint8_t *code, size_t n)
{
        size_t skip = 0;

        if (!code)
                return 0;
        if (emulated(code, n))
                return 0;                               /* already cheap where it is */
        for (int i = 0; i < 2; i++) {
                size_t len = harmless_length(code + skip, n - skip);

                if (len == 0)
                        break;
                skip += len;
        }
        return skip > 0 && emulated(code + skip, n - skip) ? skip : 0;
}
