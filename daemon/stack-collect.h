/* SPDX-License-Identifier: GPL-2.0-only */
/* Gather per-stack outstanding totals from the BPF maps, or from an exited target's frozen copy. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf-types.h"
#include "stack-rows.h"

struct memleak_bpf;



/* One outstanding allocation, as kept for an exited target. */
struct frozen_alloc {
        uint32_t space;         /* as struct stack_row */
        int64_t stack_id;
        uint64_t size;
        uint64_t timestamp_ns;
};

struct frozen_stack {
        int64_t stack_id;
        uint64_t ips[MEMLEAK_MAX_STACK_DEPTH];
        size_t n_ips;
};

/* Everything an exited target's report needs, copied out of the maps before they are purged. */
struct frozen_target {
        struct frozen_alloc *allocs;
        size_t n_allocs;
        struct frozen_stack *stacks;
        size_t n_stacks;
};

struct map_limits {
        uint32_t max_allocs;
        uint32_t max_combined;
        uint32_t max_inflight;
        uint32_t max_mmaps;
};

/* Rows for the live targets in pids[]. With min_age_ns == 0 and !from_allocs, the per-stack
 * totals; otherwise the outstanding allocations (at least min_age_ns old, by bpf_ktime,
 * CLOCK_MONOTONIC) summed per stack: slower, but exact even when the totals map overflowed. */
int stack_collect_live(struct memleak_bpf *skel, const struct map_limits *lim, const pid_t *pids,
                       size_t n_pids, uint64_t min_age_ns, bool from_allocs, struct stack_rows *ret);

/* Per-stack totals of pid only, without frames: what the snapshot ring keeps. */
int stack_collect_totals(struct memleak_bpf *skel, const struct map_limits *lim,
                         const pid_t *pids, size_t n_pids, struct stack_rows *ret);

int stack_collect_freeze(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid,
                         struct frozen_target **ret);
void frozen_target_free(struct frozen_target *f);
int stack_collect_frozen(const struct frozen_target *f, pid_t pid, uint64_t min_age_ns,
                         struct stack_rows *ret);

/* Remove every allocs/combined/inflight entry of pid. */
int stack_collect_purge(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid);
