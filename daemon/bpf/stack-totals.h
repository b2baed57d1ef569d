/* SPDX-License-Identifier: GPL-2.0-only */
/* The live targets' per-stack totals, read from the combined table every snapshot tick. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One (pid, space, stack)'s outstanding allocations, as the combined table keeps them. */
struct stack_total {
        pid_t pid;
        uint32_t space;         /* ALLOC_SPACE_MMAP for mappings, else 0 */
        int64_t stack_id;       /* < 0: -errno of the failed capture */
        uint64_t bytes;
        uint64_t allocs;
};

/* Whether pid is one of pids[n]. */
bool stack_totals_pid_wanted(const pid_t *pids, size_t n, pid_t pid);

/* A reader that keeps the table mapped and its buffers between reads: a tick allocates nothing
 * once they have grown to the number of rows the targets have (not to the table's size). */
struct stack_totals;

int stack_totals_new(struct stack_totals **ret);
struct stack_totals *stack_totals_free(struct stack_totals *t);
/* Let the table's mapping and the buffers go while no target is traced: the pages of the table
 * a read touched count in the daemon's RSS. The next read maps it again. Returns whether there
 * was anything to let go. */
bool stack_totals_release(struct stack_totals *t);

/* Read the rows of pids[] from the combined table fd (mapped by t at its first read, and kept).
 * Sorted by pid, space and stack id, the same key summed, rows without allocations left out.
 * *ret (*ret_n rows) points into t, valid until its next read or free. Returns 0 or -errno. */
int stack_totals_read(struct stack_totals *t, int combined_fd, const pid_t *pids, size_t n_pids,
                      const struct stack_total **ret, size_t *ret_n);
/* The live and retiring rows the last read found in the table, of every target, rows at zero
 * among them: how full it is. */
size_t stack_totals_rows_held(const struct stack_totals *t);

/* Sort rows[n] by pid, space and stack id (a radix sort through scratch[n]; the two swap, so the
 * result is in *rows), then sum rows of the same key and leave out those without allocations.
 * Returns how many rows are left in *rows. */
size_t stack_totals_sort_merge(struct stack_total **rows, struct stack_total **scratch, size_t n);
