/* SPDX-License-Identifier: GPL-2.0-only */
/* Where exactly to put an entry probe: a few bytes past a function's entry when that lands on an
 * instruction the kernel emulates, so a hit needs no out-of-line single step (pure). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest prologue looked at: bytes, instructions. */
#define PROBE_PLACEMENT_BYTES 64U
#define PROBE_PLACEMENT_INSNS 12

/* The most arguments an entry probe can ask for: the calling convention's six registers. */
#define PROBE_PLACEMENT_MAX_ARGS 6

struct probe_placement {
        size_t skip;            /* how far past the entry the probe goes (0: at the entry) */
        /* the x86-64 register number (0 rax, 1 rcx, 2 rdx, 3 rbx, 6 rsi, 7 rdi, 8-15 r8-r15)
         * holding argument i at the probe */
        uint8_t arg_register[PROBE_PLACEMENT_MAX_ARGS];
        bool moved;             /* some argument is no longer in its calling-convention register */
};

/* code[0..n) is an x86-64 function's first bytes; its probe reads n_args arguments. Finds how
 * far past the entry the probe can go: over instructions that neither branch, nor write memory
 * or the stack pointer, nor lose an argument (endbr64; test and cmp, which only set flags; moves,
 * loads, lea, ALU operations and shifts; an argument register may be overwritten once the
 * argument was copied whole to another), onto one the kernel's uprobes emulate (push reg, jmp,
 * jcc, call). skip 0 when that is not the case: the probe stays at the entry. At the probe the
 * stack pointer and the return address at [rsp] are what they were at the entry, and each
 * argument is in arg_register[i], so an entry probe (and its return probe) sees the same. */
void probe_placement_find_x86_64(const uint8_t *code, size_t n, unsigned n_args, struct probe_placement *ret);

/* The length of the endbr64 that code[0..n) starts with (4), or 0 when it does not (CET's marker
 * of an indirect branch target, before a function's first instruction or a PLT stub's jmp). */
size_t probe_placement_endbr64_length(const uint8_t *code, size_t n);
