/* SPDX-License-Identifier: MIT */
/* Unit tests for probe-placement.c: entry probes step over harmless bytes onto emulated ones. */
#include <stdint.h>
#include "macro.h"
#include "probe-placement.h"
#include "test-util.h"

/* The placement of a probe reading n_args arguments at code c. */
#define PLACE(p, n_args, ...) ({ static const uint8_t c[] = { __VA_ARGS__ }; probe_placement_find_x86_64(c, sizeof(c), n_args, p); })
/* Skip for an entry program reading one argument (malloc, free, new, delete), or n_args. */
#define SKIP_ARGS(n_args, ...) ({ struct probe_placement _p; PLACE(&_p, n_args, __VA_ARGS__); _p.skip; })
#define SKIP(...) SKIP_ARGS(1, __VA_ARGS__)

enum { RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI };

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
        /* at most PROBE_PLACEMENT_INSNS (12) instructions are stepped over */
        ASSERT_EQ(SKIP(0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff,
                       0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x74, 0x05), 0);
        ASSERT_EQ(SKIP(0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff,
                       0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x85, 0xff, 0x74, 0x05), 24);
}

static void jemalloc_free_probes_its_first_branch(void)
{
        /* Debian 12's libjemalloc.so.2 free: nine loads and ALU operations, then jne rel32 */
        ASSERT_EQ(SKIP(0x48, 0x89, 0xf8,                                /* mov %rdi,%rax */
                       0x48, 0x8b, 0x15, 0x0e, 0x53, 0x0a, 0x00,        /* mov 0xa530e(%rip),%rdx */
                       0x48, 0x89, 0xf9,                                /* mov %rdi,%rcx */
                       0x48, 0xc1, 0xe8, 0x1a,                          /* shr $0x1a,%rax */
                       0x48, 0x81, 0xe1, 0x00, 0x00, 0x00, 0xc0,        /* and $-0x40000000,%rcx */
                       0x25, 0xf0, 0x00, 0x00, 0x00,                    /* and $0xf0,%eax */
                       0x64, 0x48, 0x03, 0x04, 0x25, 0x00, 0x00, 0x00, 0x00, /* add %fs:0x0,%rax */
                       0x48, 0x01, 0xd0,                                /* add %rdx,%rax */
                       0x48, 0x3b, 0x88, 0xb0, 0x01, 0x00, 0x00,        /* cmp 0x1b0(%rax),%rcx */
                       0x0f, 0x85, 0x8a, 0x00, 0x00, 0x00), 0x30);      /* jne rel32 */
        /* the same prologue ahead of mmap, whose fourth argument is %rcx: stays */
        ASSERT_EQ(SKIP_ARGS(4, 0x48, 0x89, 0xf8, 0x48, 0x89, 0xf9, 0x75, 0x05), 0);
}

static void loads_and_alu_forms(void)
{
        /* lea 0x7(%rsi),%rax; shr $3,%rax; mov 0x8(%rdi,%rax,8),%rax (SIB, disp8); jcc */
        ASSERT_EQ(SKIP(0x48, 0x8d, 0x46, 0x07, 0x48, 0xc1, 0xe8, 0x03, 0x48, 0x8b, 0x44, 0xc7, 0x08, 0x74, 0x05),
                  13);
        /* movzbl (%rsi),%eax; imul %rsi,%rax; test $0x10,%eax... f7 /0 with a register */
        ASSERT_EQ(SKIP(0x0f, 0xb6, 0x06, 0x48, 0x0f, 0xaf, 0xc6, 0xf7, 0xc0, 0x10, 0x00, 0x00, 0x00, 0x74, 0x05),
                  13);
        /* cmp $1,(%rdi) reads memory: harmless; sar $1,%r10 (d1 /7) */
        ASSERT_EQ(SKIP(0x83, 0x3f, 0x01, 0x49, 0xd1, 0xfa, 0x74, 0x05), 6);
        /* add %rax,(%rdi) writes memory; and $1,(%rdi) too */
        ASSERT_EQ(SKIP(0x48, 0x01, 0x07, 0x74, 0x05), 0);
        ASSERT_EQ(SKIP(0x83, 0x27, 0x01, 0x74, 0x05), 0);
        /* movabs $imm64,%rax; then push */
        ASSERT_EQ(SKIP(0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 0x53), 10);
        /* lea (%rdi),%rdi writes the argument; sub %rax,%rsp moves the stack */
        ASSERT_EQ(SKIP(0x48, 0x8d, 0x3f, 0x74, 0x05), 0);
        ASSERT_EQ(SKIP(0x48, 0x29, 0xc4, 0x74, 0x05), 0);
        /* tcmalloc's calloc: mov 0x13919(%rip),%rcx; cmpb $0,%fs:0x10(%rcx); jne rel32 */
        ASSERT_EQ(SKIP_ARGS(2, 0x48, 0x8b, 0x0d, 0x19, 0x39, 0x01, 0x00, 0x64, 0x80, 0x79, 0x10, 0x00,
                            0x0f, 0x85, 0x7e, 0x01, 0x00, 0x00), 12);
        /* testb $1,(%rdi); cmp %al,%bl; test %cl,%dl; then push */
        ASSERT_EQ(SKIP(0xf6, 0x07, 0x01, 0x38, 0xc3, 0x84, 0xca, 0x53), 7);
        /* 80 /0 (add $imm8 to a byte in memory) and f6 /2 (not) write: the search ends */
        ASSERT_EQ(SKIP(0x80, 0x07, 0x01, 0x74, 0x05), 0);
        ASSERT_EQ(SKIP(0xf6, 0xd0, 0x74, 0x05), 0);
        /* an operand-size prefix, a byte store, f7 /2 (not): the search ends */
        ASSERT_EQ(SKIP(0x66, 0x85, 0xff, 0x74, 0x05), 0);
        ASSERT_EQ(SKIP(0x88, 0x07, 0x74, 0x05), 0);
        ASSERT_EQ(SKIP(0xf7, 0xd0, 0x74, 0x05), 0);
        /* cut short inside a SIB displacement */
        ASSERT_EQ(SKIP(0x48, 0x03, 0x04, 0x25, 0x00, 0x00), 0);
}

static void mimalloc_arguments_are_read_where_they_were_copied(void)
{
        struct probe_placement p;

        /* malloc: mov 0xb449(%rip),%rax; mov %rdi,%rsi; mov %fs:(%rax),%rdi; cmp $0x400,%rsi; ja */
        PLACE(&p, 1, 0x48, 0x8b, 0x05, 0x49, 0xb4, 0x00, 0x00, 0x48, 0x89, 0xfe, 0x64, 0x48, 0x8b, 0x38,
              0x48, 0x81, 0xfe, 0x00, 0x04, 0x00, 0x00, 0x77, 0x29);
        ASSERT_EQ(p.skip, 0x15);
        ASSERT_TRUE(p.moved);
        ASSERT_EQ(p.arg_register[0], RSI);
        /* calloc: mov 0xadc9(%rip),%rdx; mov %rdi,%rax; mov %fs:(%rdx),%rdi; cmp $1,%rax; je */
        PLACE(&p, 2, 0x48, 0x8b, 0x15, 0xc9, 0xad, 0x00, 0x00, 0x48, 0x89, 0xf8, 0x64, 0x48, 0x8b, 0x3a,
              0x48, 0x83, 0xf8, 0x01, 0x74, 0x08);
        ASSERT_EQ(p.skip, 0x12);
        ASSERT_TRUE(p.moved);
        ASSERT_EQ(p.arg_register[0], RAX);
        ASSERT_EQ(p.arg_register[1], RSI);
        /* realloc: mov 0xa949(%rip),%rax; mov %rsi,%rdx; mov %rdi,%rsi; mov %fs:(%rax),%rax;
         * mov %rax,%rdi; jmp mi_heap_realloc@plt (the heap goes first) */
        PLACE(&p, 2, 0x48, 0x8b, 0x05, 0x49, 0xa9, 0x00, 0x00, 0x48, 0x89, 0xf2, 0x48, 0x89, 0xfe,
              0x64, 0x48, 0x8b, 0x00, 0x48, 0x89, 0xc7, 0xe9, 0xf7, 0x4e, 0xff, 0xff);
        ASSERT_EQ(p.skip, 0x14);
        ASSERT_EQ(p.arg_register[0], RSI);
        ASSERT_EQ(p.arg_register[1], RDX);
        /* mov %rdi,%rsi written the other way (8b /r); the argument stays where it is */
        PLACE(&p, 1, 0x48, 0x8b, 0xf7, 0x74, 0x05);
        ASSERT_EQ(p.skip, 3);
        ASSERT_TRUE(!p.moved);
        ASSERT_EQ(p.arg_register[0], RDI);
        /* nothing moved: the calling convention's registers */
        PLACE(&p, 2, 0x48, 0x85, 0xff, 0x74, 0x05);
        ASSERT_TRUE(!p.moved);
        ASSERT_EQ(p.arg_register[0], RDI);
        ASSERT_EQ(p.arg_register[1], RSI);
}

static void arguments_lost_keep_the_probe_at_the_entry(void)
{
        struct probe_placement p;

        /* mov %edi,%esi copies 32 bits only: the size is lost when %rdi is overwritten */
        ASSERT_EQ(SKIP(0x89, 0xfe, 0x64, 0x48, 0x8b, 0x38, 0x74, 0x05), 0);
        /* the copy overwritten too (mov %rdi,%rsi; mov (%rax),%rdi; xor %esi,%esi) */
        ASSERT_EQ(SKIP(0x48, 0x89, 0xfe, 0x48, 0x8b, 0x38, 0x31, 0xf6, 0x74, 0x05), 0);
        /* a load into %rsi from memory is not a copy of %rdi (mov (%rdi),%rsi; mov (%rax),%rdi) */
        ASSERT_EQ(SKIP(0x48, 0x8b, 0x37, 0x48, 0x8b, 0x38, 0x74, 0x05), 0);
        /* copied into the stack pointer: never */
        ASSERT_EQ(SKIP(0x48, 0x89, 0xfc, 0x48, 0x8b, 0x38, 0x74, 0x05), 0);
        /* a copy into r8 survives; the probe reads it there (mov %rdi,%r8; xor %edi,%edi; je) */
        PLACE(&p, 1, 0x49, 0x89, 0xf8, 0x31, 0xff, 0x74, 0x05);
        ASSERT_EQ(p.skip, 5);
        ASSERT_EQ(p.arg_register[0], 8);
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
        /* mov %fs:(%rax),%rdi writes the argument, which has no copy */
        ASSERT_EQ(SKIP(0x64, 0x48, 0x8b, 0x38, 0x74, 0x05), 0);
        /* mov 0x..(%rip),%rdi writes the argument the probe reads */
        ASSERT_EQ(SKIP(0x48, 0x8b, 0x3d, 0x00, 0x00, 0x00, 0x00, 0x74, 0x05), 0);
        /* mov %rdi,%rsp */
        ASSERT_EQ(SKIP(0x48, 0x89, 0xfc, 0x74, 0x05), 0);
        /* test with a memory operand only reads it */
        ASSERT_EQ(SKIP(0x48, 0x85, 0x07, 0x74, 0x05), 3);
        /* sub $8,%rsp; push: moves the stack pointer */
        ASSERT_EQ(SKIP(0x48, 0x83, 0xec, 0x08, 0x55), 0);
        /* cut short: the jcc's displacement is not all there */
        ASSERT_EQ(SKIP(0x48, 0x85, 0xff, 0x0f, 0x84, 0x00), 0);
        ASSERT_EQ(SKIP_ARGS(1), 0);
        ASSERT_EQ(SKIP(0x48), 0);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(glibc_free_probes_its_jcc),
                TEST(endbr64_is_stepped_over),
                TEST(allocators_prologues_reach_their_branch),
                TEST(jemalloc_free_probes_its_first_branch),
                TEST(loads_and_alu_forms),
                TEST(mimalloc_arguments_are_read_where_they_were_copied),
                TEST(arguments_lost_keep_the_probe_at_the_entry),
                TEST(emulated_entry_stays),
                TEST(anything_else_stays_at_the_entry),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
