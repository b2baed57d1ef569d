/* SPDX-License-Identifier: GPL-2.0-only */
/* Is a stack leaking? A verdict from its outstanding bytes over the snapshot ring (pure): the
 * trend (least-squares slope and fit), whether it still reaches new highs, and how it moves
 * against its own noise. */
#pragma once

#include <stddef.h>
#include <stdint.h>

enum leak_verdict {
        LEAK_VERDICT_PENDING = 0,       /* too few snapshots to tell */
        LEAK_VERDICT_GROWING,           /* still growing: a leak suspect */
        LEAK_VERDICT_PLATEAU,           /* flat now (after growing or not): initialisation, a cache */
        LEAK_VERDICT_CHURN,             /* up and down around a level */
        _LEAK_VERDICT_MAX,
};

const char *leak_verdict_to_string(enum leak_verdict v);

struct leak_verdict_thresholds {
        uint32_t min_points;            /* snapshots a verdict needs */
        double noise_factor;            /* growth over the recent half must exceed this many times
                                         * the scatter around its trend line */
        uint64_t flat_bytes;            /* a recent range at most this (or flat_ratio of the level)
                                         * is flat */
        double flat_ratio;
        double step_bytes;              /* a sampled series rises in steps of about this many
                                         * bytes, one per sample point (0: exact, per allocation) */
};

#define LEAK_VERDICT_THRESHOLDS_DEFAULT ((struct leak_verdict_thresholds) {    \
                .min_points = 6,                                                \
                .noise_factor = 2.0,                                            \
                .flat_bytes = 64,                                               \
                .flat_ratio = 0.01,                                             \
        })

struct leak_point {
        double t_s;                     /* seconds, increasing */
        double bytes;
};

struct leak_assessment {
        enum leak_verdict verdict;
        uint32_t points_missing;        /* PENDING: snapshots still needed */
        double slope_bytes_per_s;       /* least squares over every point */
        double fit_r2;                  /* of that line, 0..1 (1 for a flat series) */
        double recent_growth_bytes;     /* the trend line's rise over the recent half */
        double first_bytes, last_bytes;
};

/* The step a sampled stack's series rises by: one sample point's weight, the mean between two
 * (sample_bytes) or the stack's own block size where larger; 0 when exact (sample_bytes 0). */
double leak_verdict_step_bytes(uint64_t sample_bytes, uint64_t bytes, uint64_t allocs);

/* Assess points[0..n) (oldest first). */
void leak_verdict_assess(const struct leak_point *points, size_t n, const struct leak_verdict_thresholds *th,
                         struct leak_assessment *ret);
