/* SPDX-License-Identifier: GPL-2.0-only */
/* Per-stack outstanding totals, the unit that flows from the maps into a report. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct stack_row {
        pid_t pid;
        uint32_t space;         /* ALLOC_SPACE_MMAP: anonymous mappings (--mmap); else 0 */
        int64_t stack_id;       /* < 0: -errno of the failed capture */
        uint64_t bytes;
        uint64_t allocs;
        uint64_t *ips;          /* owned; NULL when the stack is unavailable */
        size_t n_ips;
        size_t n_cut;           /* addresses dropped past a broken frame-pointer chain */
        size_t n_allocator;     /* the allocator's own frames dropped from its top */
        uint32_t unwind_stop;   /* enum unwind_stop: why the walk ended (0: normally) */
};

struct stack_rows {
        struct stack_row *rows;
        size_t n;
};

void stack_rows_done(struct stack_rows *r);

/* Says whether addr can be a return address in pid: inside code the process maps. */
typedef bool (*stack_rows_is_code_fn)(void *userdata, pid_t pid, uint64_t addr);

/* Cut each row's stack at its first address after the first that is not code: past it, the
 * frame-pointer walk read data, not frames (code built without frame pointers), and each run of
 * junk would make a stack of its own. n_cut says how many addresses went. Rows that become the
 * same stack of the same pid and space are merged (bytes and allocations summed, the lowest
 * stack id kept). */
void stack_rows_cut_broken_chains(struct stack_rows *r, stack_rows_is_code_fn is_code, void *userdata);

/* Says whether the frame at addr in pid is the allocator's own, not the program's. */
typedef bool (*stack_rows_is_allocator_fn)(void *userdata, pid_t pid, uint64_t addr);

/* Drop the addresses at the top of each row's stack that is_allocator() claims (an operator new
 * that called the malloc whose return took the stack), keeping at least one; rows that become
 * the same stack are merged as above. */
void stack_rows_drop_allocator_frames(struct stack_rows *r, stack_rows_is_allocator_fn is_allocator, void *userdata);
