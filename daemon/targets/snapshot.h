/* SPDX-License-Identifier: GPL-2.0-only */
/* A ring of per-stack snapshots of one target's outstanding allocations, oldest dropped first. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf-types.h"

struct snapshot_row {
        int64_t stack_id;
        uint64_t bytes;
        uint64_t allocs;
};

struct snapshot {
        uint64_t timestamp_usec;        /* CLOCK_REALTIME */
        uint64_t bytes;                 /* sums over rows */
        uint64_t allocs;
        struct snapshot_row *rows;
        size_t n_rows;
        /* the target's own counters (bpf-types.h) as they were then: what it lost between two
         * snapshots, whether the verdicts over them saw every allocation */
        bool has_counters;
        uint64_t counters[_COUNTER_MAX];
};

struct snapshot_ring;

/* The row of stack_id in a snapshot's rows (sorted by stack_id); NULL when it had none. */
const struct snapshot_row *snapshot_find_row(const struct snapshot *s, int64_t stack_id);

/* Rows for snapshot_ring_push(): n zeroed rows in a block that the ring and the report jobs
 * reading it share (counted references, dropped from either thread); NULL without memory. A
 * snapshot's rows are sorted by stack_id and never change once pushed. */
struct snapshot_row *snapshot_rows_new(size_t n);
void snapshot_rows_ref(const struct snapshot_row *rows);
void snapshot_rows_unref(const struct snapshot_row *rows);     /* NULL is fine */

int snapshot_ring_new(uint32_t depth, struct snapshot_ring **ret);
struct snapshot_ring *snapshot_ring_free(struct snapshot_ring *r);

/* Take ownership of rows (from snapshot_rows_new(), sorted by stack_id; also on failure);
 * compute the sums; drop the oldest when full. */
int snapshot_ring_push(struct snapshot_ring *r, uint64_t timestamp_usec, struct snapshot_row *rows, size_t n_rows);

/* A snapshot of its sums only, rows dropped (an exited target's, read back after a restart): as
 * snapshot_ring_push() with no rows, then those sums. */
void snapshot_ring_push_sums(struct snapshot_ring *r, uint64_t timestamp_usec, uint64_t bytes, uint64_t allocs);

/* The target's counters at the newest snapshot (the one just pushed). */
void snapshot_ring_set_counters(struct snapshot_ring *r, const uint64_t counters[_COUNTER_MAX]);

/* Drop every snapshot's rows, keeping its time and sums: what an exited target's trend needs. */
void snapshot_ring_drop_rows(struct snapshot_ring *r);
/* The memory the ring holds. */
uint64_t snapshot_ring_bytes(const struct snapshot_ring *r);

uint32_t snapshot_ring_count(const struct snapshot_ring *r);
uint32_t snapshot_ring_depth(const struct snapshot_ring *r);
/* i = 0 is the oldest kept; NULL past the end. */
const struct snapshot *snapshot_ring_get(const struct snapshot_ring *r, uint32_t i);
const struct snapshot *snapshot_ring_newest(const struct snapshot_ring *r);
