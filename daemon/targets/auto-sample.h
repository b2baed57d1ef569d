/* SPDX-License-Identifier: GPL-2.0-only */
/* When a target's share of the allocation table nears full, memleakd samples its heap (the
 * Poisson byte sampling of --sample-bytes) instead of dropping the allocations that no longer fit:
 * the rate to switch it to, and what it remembers of each switch. Pure: for the unit tests. */
#pragma once

#include <stdint.h>

#define AUTO_SAMPLE_PERCENT_DEFAULT 80u         /* of its share: auto_sample_percent */
#define AUTO_SAMPLE_MIN_BYTES 256u              /* the least mean it samples at */
#define AUTO_SAMPLE_HEADROOM 4u                 /* its heap may grow this many times its size
                                                 * again before the room left is used */
#define AUTO_SAMPLE_CHANGES_MAX 16u             /* changes remembered (the first and the latest) */

/* What the snapshot tick knows of a process target. */
struct auto_sample_view {
        uint64_t share;                 /* the blocks its share of the table holds */
        uint64_t blocks;                /* the blocks it holds there now */
        uint64_t bytes;                 /* its outstanding heap bytes (estimated when sampled) */
        uint64_t allocs;                /* and allocations */
        uint64_t sample_bytes;          /* its mean now; 0: every allocation recorded */
        uint64_t blocks_at_change;      /* the blocks it held when memleakd last set its mean; 0:
                                         * never did */
        uint64_t blocks_before;         /* the blocks it held at the check before; 0: none */
        uint64_t dropped;               /* its allocations dropped for a full table since then */
        uint32_t percent;               /* of its share that switches it; 0: never */
};

/* Its share of a table of max_allocs blocks shared by n_targets live targets (at least 1). */
uint64_t auto_sample_share(uint64_t max_allocs, uint32_t n_targets);

/* How full its share is, in percent (100 and more: full). */
uint32_t auto_sample_fill_percent(uint64_t blocks, uint64_t share);

/* The mean (bytes, a power of two, at most max_mean) to sample it at from now on; 0: leave it as
 * it is. It switches when its blocks reach percent of its share, or would fill it by the next
 * check if it grew as much as since the last (a target filling its share in a few checks is
 * switched before it is full, not past it), and raises its mean again when it has used (or will have) half
 * the room it had left at the last change (a room counts as at least a sixteenth of the share: a
 * target past its share, full or shared with more targets since, still gets a finite mean, raised
 * again only after it grew). Allocations of it dropped since the last check switch it, or raise
 * its mean, whatever the rest says. The mean makes the room left hold
 * AUTO_SAMPLE_HEADROOM times its heap's bytes again, at least twice the mean it had and four
 * times its mean block (blocks of the mean or more are always recorded). */
uint64_t auto_sample_decide(const struct auto_sample_view *v, uint64_t max_mean);

/* The blocks at which BPF itself switches an exact target to sampling (struct target_config's
 * limit_blocks): percent of its share, rounded up (where auto_sample_decide() switches it); 0
 * (no limit) when percent is 0. */
uint64_t auto_sample_limit(uint64_t share, uint32_t percent);

/* The blocks at which BPF itself raises the mean of a target v describes, should it get there
 * before the daemon's next check (struct target_config's limit_blocks): while exact, or sampled
 * at a mean it was attached with, auto_sample_limit(); once memleakd changed its mean, half the
 * room it had left then used (where auto_sample_decide() raises it again), and never below
 * auto_sample_limit(). 0 (no limit) when percent is 0. */
uint64_t auto_sample_bpf_limit(const struct auto_sample_view *v);

/* The mean BPF switches it to there (limit_sample_bytes), set ahead by the daemon for a target
 * that fills its share faster than the daemon checks it: what auto_sample_decide() would pick if
 * it held limit blocks of its mean block now (v->bytes / v->allocs), so that the room left in
 * its share then holds AUTO_SAMPLE_HEADROOM times that heap again; at least AUTO_SAMPLE_MIN_BYTES
 * and four times its mean block, a power of two, at most max_mean. */
uint64_t auto_sample_preset(const struct auto_sample_view *v, uint64_t limit, uint64_t max_mean);

/* One change of a target's mean. */
struct auto_sample_change {
        uint64_t at_usec;               /* CLOCK_REALTIME */
        uint64_t sample_bytes;          /* the mean from then on */
        uint32_t fill_percent;          /* how full its share of the table was */
        uint32_t pad;
        uint64_t blocks;                /* the blocks it held in the table then */
};

/* BPF's switch of a target at its limit, or raise of its mean at a later step, as the change the
 * daemon notes: at switched_ns (CLOCK_MONOTONIC, nanoseconds) told in CLOCK_REALTIME by the
 * clocks now, to sample_bytes, holding blocks (the step's) of its share. */
struct auto_sample_change auto_sample_bpf_change(uint64_t switched_ns, uint64_t sample_bytes, uint64_t blocks,
                                                 uint64_t share, uint64_t now_realtime_usec,
                                                 uint64_t now_monotonic_usec);

/* What a target remembers of being sampled by memleakd. */
struct auto_sample_history {
        uint64_t sample_bytes_asked;    /* its mean before the first change (0: exact): what the
                                         * processes followed from it start with */
        uint64_t blocks_checked;        /* the blocks it held at the last check */
        uint64_t dropped_seen;          /* its allocs_map_full then */
        uint32_t bpf_noted;             /* BPF's changes of its mean noted (struct target_fill) */
        uint32_t n_changes;             /* every change; the first and the latest kept */
        struct auto_sample_change changes[AUTO_SAMPLE_CHANGES_MAX];
};

/* Remember c: kept in order; past AUTO_SAMPLE_CHANGES_MAX the first stays and the rest shift. */
void auto_sample_note(struct auto_sample_history *h, const struct auto_sample_change *c);

/* The first change and the latest one; NULL when it never changed. */
const struct auto_sample_change *auto_sample_first(const struct auto_sample_history *h);
const struct auto_sample_change *auto_sample_last(const struct auto_sample_history *h);
/* How many are kept (at most AUTO_SAMPLE_CHANGES_MAX). */
uint32_t auto_sample_kept(const struct auto_sample_history *h);
