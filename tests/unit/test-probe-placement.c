/* SPDX-License-Identifier: MIT */
/* Unit tests for probe-placement.c: entry probes step over harmless bytes onto emulated ones. */
#include <stdint.h>
#include "macro.h"
#include "probe-placement.h"
#include "test-util.h"

#define SKIP(...) ({ static const uint8_t c[] = { __VA_ARGS__ }; probe_entry_skip_x86_64(c, sizeof(c)); })

static void glibc_free_probes_its_jcc(void)
{
        /* test %rdi,%rdi; je rel32 */
        ASSERT_EQ(SKIP(0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0x00, 0x00, 0x00), 3);
        /* test %edi,%edi; jne rel8 */
        ASSERT_EQ(SKIP(0x85, 0xff, 0x75, 0x10), 2);
}

static void endbr64_is_stepped_over(void)
{
        /* endbr64; jmp rel32 (libstdc++'s operator delete -> free@plt) */
        ASSERT_EQ(SKIP(0xf3, 0x0f, 0x1e, 0xfa, 0xe9, 0x00, 0x01, 0x00, 0x00), 4);
        /* endbr64; test %rdi,%rdi; je rel8 */
        ASSERT_EQ(SKIP(0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff, 0x74, 0x05), 7);
        /* endbr64; push %r12 */
        ASSERT_EQ(SKIP(0xf3, 0x0f, 0x1e, 0xfa, 0x41, 0x54), 4);
}

static void emulated_entry_stays(void)
{
        ASSERT_EQ(SKIP(0x41, 0x54, 0x55), 0);                   /* push %r12 (glibc malloc) */
        ASSERT_EQ(SKIP(0x55, 0x48, 0x89, 0xe5), 0);             /* push %rbp */
        ASSERT_EQ(SKIP(0xe9, 0x00, 0x00, 0x00, 0x00), 0);       /* jmp rel32 */
}

static void anything_else_stays_at_the_entry(void)
{
        /* mov 0x...(%rip),%rax: writes a register */
        ASSERT_EQ(SKIP(0x48, 0x8b, 0x05, 0xf9, 0x32, 0x01, 0x00, 0x48, 0x89, 0xf8), 0);
        /* test %rdi,%rdi; mov %rdi,%rax: nothing emulated after the test */
        ASSERT_EQ(SKIP(0x48, 0x85, 0xff, 0x48, 0x89, 0xf8), 0);
        /* test with a memory operand is not the register form */
        ASSERT_EQ(SKIP(0x48, 0x85, 0x07, 0x74, 0x05), 0);
        /* sub $8,%rsp; push: moves the stack pointer */
        ASSERT_EQ(SKIP(0x48, 0x83, 0xec, 0x08, 0x55), 0);
        /* cut short: the jcc's displacement is not all there */
        ASSERT_EQ(SKIP(0x48, 0x85, 0xff, 0x0f, 0x84, 0x00), 0);
        ASSERT_EQ(probe_entry_skip_x86_64(NULL, 0), 0);
        ASSERT_EQ(SKIP(0x48), 0);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(glibc_free_probes_its_jcc),
                TEST(endbr64_is_stepped_over),
                TEST(emulated_entry_stays),
                TEST(anything_else_stays_at_the_entry),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
