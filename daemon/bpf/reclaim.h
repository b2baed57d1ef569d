/* SPDX-License-Identifier: GPL-2.0-only */
/* Giving back, while targets stay attached, what no outstanding block uses any more: rows of
 * per-stack totals at zero (bpf/combined-table.h), and the stacks of the stack table that no row
 * names. A target that keeps allocating from new stacks (ever-changing call paths, generated
 * code) would otherwise fill max_combined and max_stacks in time, and a leak that begins later
 * would find no room for its stack. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "mapped-array.h"

struct reclaim_counts {
        uint64_t rows_retired;          /* live rows found at zero, retired */
        uint64_t rows_freed;            /* retired rows still at zero a pass later, freed */
        uint64_t rows_revived;          /* retired rows some block came back to, live again */
        uint64_t stacks_deleted;
        uint64_t stacks_restored;       /* deleted, then named by a row a moment later: put back */
};

/* One pass over the mapped combined table (struct combined_row values): a row retired by the
 * last pass is freed when it is still retiring and at zero (an add in between made it live
 * again, in BPF), or made live again when a block came to it anyway (a probe that found it live
 * just before it was retired); then the live rows at zero are retired. Every change is a
 * compare-and-swap of the row's word, as BPF's claims are. Adds what it did to *c. */
void reclaim_rows(const struct mapped_array *combined, struct reclaim_counts *c);

/* The stack ids (>= 0) that the live and retiring rows of combined name, sorted, duplicates
 * left in: *ret (free()), *ret_n. 0 or -ENOMEM. */
int reclaim_named_stacks(const struct mapped_array *combined, int64_t **ret, size_t *ret_n);

/* Delete from the stack table stacks_fd those of ids[0..n) (duplicates allowed) that no live,
 * retiring or busy row of combined names: a gone target's stacks, once its rows are freed.
 * Returns how many went, or -errno. */
int reclaim_unnamed_stacks(int stacks_fd, const struct mapped_array *combined, const int64_t *ids, size_t n);

/* Delete from the stack table stacks_fd (a hash of __u64 ids) the stacks no live or retiring
 * row of combined names, at most max of them. purged() is called once they are gone (the
 * probes' walk memos must drop the ids they keep); then, recheck_ms later, a stack that a row
 * names by now (a probe was between taking its stack's id and adding its row) is put back.
 * Adds what it did to *c; 0 or -errno. */
int reclaim_stacks(int stacks_fd, const struct mapped_array *combined, size_t max, unsigned recheck_ms,
                   void (*purged)(void *userdata), void *userdata, struct reclaim_counts *c);

/* The snapshot ticks to wait before the next pass, after a pass that did c with wait ticks
 * between (0: none yet): least after one that gave something back; twice as many after one
 * that gave nothing back (the tables hold what is outstanding, and reading every stack's key
 * costs a syscall each), up to most. */
unsigned reclaim_next_wait(unsigned wait, const struct reclaim_counts *c, unsigned least, unsigned most);

/* How full the two tables are at a snapshot tick, and how long since the last pass began. */
struct reclaim_fill {
        size_t rows_held;               /* live and retiring rows of per-stack totals */
        size_t rows_max;                /* max_combined: the table has twice as many rows */
        uint64_t stacks_held;
        uint64_t stacks_max;            /* max_stacks */
        unsigned ticks;                 /* snapshot ticks since the last pass began */
        unsigned wait;                  /* ticks due between passes (reclaim_next_wait) */
        unsigned least;                 /* the least wait: the last pass gave something back */
};

/* A pass the snapshot tick starts: rows at zero always. */
struct reclaim_plan {
        bool stacks;                    /* the stack table's unnamed stacks too */
        size_t stacks_max;              /* at most this many of them */
};

/* Whether a pass is due at this tick (*ret filled) or not (false): once the wait is over, for a
 * table past half full (rows: past max_combined / 2, a quarter of its rows, as a window fills
 * long before the table does); at once, whatever the wait, for one past three quarters (rows:
 * past half), so that a target making new stacks faster than passes at the least wait give them
 * back is kept pace with, a pass a tick, as long as passes give something back (one that gave
 * nothing back waits as reclaim_next_wait says: the tables hold what is outstanding). A pass may delete per_pass stacks, or as many as bring
 * the stack table back to a quarter full when that is more. */
bool reclaim_plan_pass(const struct reclaim_fill *f, size_t per_pass, struct reclaim_plan *ret);
