/* SPDX-License-Identifier: MIT */
/* Unit tests for probe-placement.c: entry probes step over harmless bytes onto emulated ones. */
#include <stdint.h>
#include "macro.h"
#include "probe-placement.h"
#include "test-util.h"

/* Skip for an entry program reading one argument (malloc, free, new, delete), or n_args. */
#define SKIP_ARGS(n_args, ...) ({ static const uint8_t c[] = { __VA_ARGS__ }; probe_entry_skip_x86_64(c, sizeof(c), n_args); })
#define SKIP(...) SKIP_ARGS(1, __VA_ARGS__)

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

static void allocators_prologues_reach_their_branch(void)
{
        /* tcmalloc malloc: mov 0x132f9(%rip),%rax; mov %rdi,%r8; test %rax,%rax; jne rel32 */
        ASSERT_EQ(SKIP(0x48, 0x8b, 0x05, 0xf9, 0x32, 0x01, 0x00, 0x49, 0x89, 0xf8, 0x48, 0x85, 0xc0,
                       0x0f, 0x85, 0x8e, 0x00, 0x00, 0x00), 13);
        /* tcmalloc free: mov 0x1c4199(%rip),%rax; test %rax,%rax; jne rel32 */
        ASSERT_EQ(SKIP(0x48, 0x8b, 0x05, 0x99, 0x41, 0x1c, 0x00, 0x48, 0x85, 0xc0,
                       0x0f, 0x85, 0x90, 0x00, 0x00, 0x00), 10);
        /* jemalloc malloc: cmp $0x1000,%rdi; ja rel32 */
        ASSERT_EQ(SKIP(0x48, 0x81, 0xff, 0x00, 0x10, 0x00, 0x00, 0x0f, 0x87, 0x93, 0x00, 0x00, 0x00), 7);
        /* mimalloc free: mov %rdi,%rcx; test %rdi,%rdi; je rel8 -- rcx is not free's argument... */
        ASSERT_EQ(SKIP(0x48, 0x89, 0xf9, 0x48, 0x85, 0xff, 0x74, 0x5d), 6);
        /* ... but it is mmap's fourth (flags): the probe stays */
        ASSERT_EQ(SKIP_ARGS(4, 0x48, 0x89, 0xf9, 0x48, 0x85, 0xff, 0x74, 0x5d), 0);
        /* mov %rdi,%rsi writes calloc's second argument, not malloc's */
        ASSERT_EQ(SKIP_ARGS(1, 0x48, 0x89, 0xfe, 0x74, 0x05), 3);
        ASSERT_EQ(SKIP_ARGS(2, 0x48, 0x89, 0xfe, 0x74, 0x05), 0);
        /* mov 0x..(%rip),%r9 (REX.R): not an argument of any probe reading < 6 */
        ASSERT_EQ(SKIP(0x4c, 0x8b, 0x0d, 0x00, 0x00, 0x00, 0x00, 0x74, 0x05), 7);
        /* libstdc++ operator new: endbr64; test %rdi,%rdi; mov $1,%eax; push %rbx */
        ASSERT_EQ(SKIP(0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x85, 0xff, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x53), 12);
        /* mov $1,%edi writes the size; mov $1,%r9d does not; xor %eax,%eax; mov %edi,%edx */
        ASSERT_EQ(SKIP(0xbf, 0x01, 0x00, 0x00, 0x00, 0x53), 0);
        ASSERT_EQ(SKIP(0x41, 0xb9, 0x01, 0x00, 0x00, 0x00, 0x53), 6);
        ASSERT_EQ(SKIP(0x31, 0xc0, 0x89, 0xfa, 0x74, 0x05), 4);
        ASSERT_EQ(SKIP_ARGS(3, 0x31, 0xc0, 0x89, 0xfa, 0x74, 0x05), 0);
        /* xor %edi,%edi zeroes the argument; mov %edi,%esp moves the stack */
        ASSERT_EQ(SKIP(0x31, 0xff, 0x74, 0x05), 0);
        ASSERT_EQ(SKIP(0x89, 0xfc, 0x74, 0x05), 0);
        /* cmp $8,%edi; jbe rel8 */
        ASSERT_EQ(SKIP(0x83, 0xff, 0x08, 0x76, 0x05), 3);
        /* at most PROBE_PLACEMENT_INSNS instructions are stepped over */
        ASSERT_EQ(SKIP(0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x74, 0x05), 0);
        ASSERT_EQ(SKIP(0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x74, 0x05), 8);
}

static void emulated_entry_stays(void)
{
        ASSERT_EQ(SKIP(0x41, 0x54, 0x55), 0);                   /* push %r12 (glibc malloc) */
        ASSERT_EQ(SKIP(0x55, 0x48, 0x89, 0xe5), 0);             /* push %rbp */
        ASSERT_EQ(SKIP(0xe9, 0x00, 0x00, 0x00, 0x00), 0);       /* jmp rel32 */
}

static void anything_else_stays_at_the_entry(void)
{
        /* mov 0x...(%rip),%rax; mov %rdi,%rax; then a lea: nothing emulated in reach */
        ASSERT_EQ(SKIP(0x48, 0x8b, 0x05, 0xf9, 0x32, 0x01, 0x00, 0x48, 0x89, 0xf8, 0x48, 0x8d, 0x47, 0x07), 0);
        /* test %rdi,%rdi; mov %rdi,%rax; end of the bytes */
        ASSERT_EQ(SKIP(0x48, 0x85, 0xff, 0x48, 0x89, 0xf8), 0);
        /* mov %fs:(%rax),%rdi: a segment prefix is not decoded */
        ASSERT_EQ(SKIP(0x64, 0x48, 0x8b, 0x38, 0x74, 0x05), 0);
        /* mov 0x..(%rip),%rdi writes the argument the probe reads */
        ASSERT_EQ(SKIP(0x48, 0x8b, 0x3d, 0x00, 0x00, 0x00, 0x00, 0x74, 0x05), 0);
        /* mov %rdi,%rsp */
        ASSERT_EQ(SKIP(0x48, 0x89, 0xfc, 0x74, 0x05), 0);
        /* test with a memory operand is not the register form */
        ASSERT_EQ(SKIP(0x48, 0x85, 0x07, 0x74, 0x05), 0);
        /* sub $8,%rsp; push: moves the stack pointer */
        ASSERT_EQ(SKIP(0x48, 0x83, 0xec, 0x08, 0x55), 0);
        /* cut short: the jcc's displacement is not all there */
        ASSERT_EQ(SKIP(0x48, 0x85, 0xff, 0x0f, 0x84, 0x00), 0);
        ASSERT_EQ(probe_entry_skip_x86_64(NULL, 0, 1), 0);
        ASSERT_EQ(SKIP(0x48), 0);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(glibc_free_probes_its_jcc),
                TEST(endbr64_is_stepped_over),
                TEST(allocators_prologues_reach_their_branch),
                TEST(emulated_entry_stays),
                TEST(anything_else_stays_at_the_entry),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
