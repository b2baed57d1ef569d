/* SPDX-License-Identifier: GPL-2.0-only */
/* Per-stack outstanding totals, the unit that flows from the maps into a report. */
#pragma once

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
};

struct stack_rows {
        struct stack_row *rows;
        size_t n;
};

void stack_rows_done(struct stack_rows *r);
