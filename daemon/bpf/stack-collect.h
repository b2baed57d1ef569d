/* SPDX-License-Identifier: GPL-2.0-only */
/* Gather per-stack outstanding totals from the BPF maps, or from an exited target's frozen copy. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "alloc-table.h"
#include "bpf-types.h"
#include "stack-rows.h"

struct memleak_bpf;



/* Everything an exited target's report needs, copied out of the maps before they are purged:
 * its per-stack totals with their frames (not one record per allocation: a target that leaked a
 * million blocks from ten stacks keeps ten rows). */
struct frozen_target {
        struct stack_rows rows;
        uint64_t bytes;                 /* the memory this takes */
};

struct stack_totals;

struct map_limits {
        uint32_t max_allocs;
        uint32_t max_mmaps;
};

/* Rows for the live targets in pids[]. With min_age_ns == 0 and !from_allocs, the per-stack
 * totals; otherwise the outstanding allocations (at least min_age_ns old, by bpf_ktime,
 * CLOCK_MONOTONIC) summed per stack: slower, but exact even when the totals map overflowed. */
int stack_collect_live(struct memleak_bpf *skel, const struct map_limits *lim, const pid_t *pids,
                       size_t n_pids, uint64_t min_age_ns, bool from_allocs, struct stack_rows *ret);

/* pid's per-stack totals with frames, kept for reports after it exited (from_allocs: summed from
 * the allocations, when the totals map overflowed), read through totals when given (kept mapped
 * by its owner: a storm of exits does not map the table each time), else a reader of its own. */
int stack_collect_freeze(struct memleak_bpf *skel, const struct map_limits *lim, struct stack_totals *totals,
                         pid_t pid, bool from_allocs, struct frozen_target **ret);
void stack_collect_free_frozen(struct frozen_target *f);
/* A copy of an exited target's rows, for one report. Its allocations are final: no --min-age. */
int stack_collect_frozen(const struct frozen_target *f, struct stack_rows *ret);

/* One outstanding heap allocation of a live target (not a --mmap mapping). */
struct outstanding_block {
        uint64_t addr;
        uint64_t size;
        int64_t stack_id;
        uint64_t timestamp_ns;          /* CLOCK_MONOTONIC when it was allocated */
};

/* pid's outstanding heap allocations, sorted by address. -errno. */
int stack_collect_blocks(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid,
                         struct outstanding_block **ret, size_t *ret_n);

/* Remove every allocs/mmaps/combined entry of pid, and the stacks in the stack table that no
 * other target's allocations use. Returns how many stacks went, or -errno (the entries went
 * anyway, as far as they could be read). */
int stack_collect_purge(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid);

/* When pid's heap blocks at addrs[0..n) were allocated (their timestamp_ns), as the maps hold them
 * now: ret[i], 0 for one not outstanding (freed). A look-up each. 0 or -errno. */
int stack_collect_block_times(struct memleak_bpf *skel, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *ret);
/* The maps those look-ups read, for many (alloc_table_view_times(), alloc_table_view_close()). */
int stack_collect_times_open(struct memleak_bpf *skel, struct alloc_table_view *ret);
