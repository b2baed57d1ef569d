/* SPDX-License-Identifier: GPL-2.0-only */
/* Where exactly to put an entry probe: a few bytes past a function's entry when that lands on an
 * instruction the kernel emulates, so a hit needs no out-of-line single step (pure). */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* The longest prologue looked at: bytes, instructions. */
#define PROBE_PLACEMENT_BYTES 64U
#define PROBE_PLACEMENT_INSNS 12

/* code[0..n) is an x86-64 function's first bytes. Returns how far past the entry its probe can
 * go: over instructions that neither branch, nor write memory, the stack pointer or the first
 * n_args argument registers (endbr64; test and cmp, which only set flags; moves, loads, lea, ALU
 * operations and shifts into other registers), onto one the kernel's uprobes emulate (push
 * reg, jmp, jcc, call). 0 when that is not the case: the probe stays at the entry. At the
 * returned offset the arguments, the stack pointer and the return address at [rsp] are what
 * they were at the entry, so an entry probe (and its return probe) sees the same. */
size_t probe_entry_skip_x86_64(const uint8_t *code, size_t n, unsigned n_args);
