/* SPDX-License-Identifier: GPL-2.0-only */
/* Did a target lose events that bear on its verdicts within the snapshots they look at? (pure) */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "bpf-types.h"

/* Counters of events the verdicts miss: allocations not recorded (a table full, no thread state)
 * or recorded without their stack (stack table full, hash clash, no scratch buffer). */
bool loss_window_blinds(enum memleak_counter c);

/* A target's counters at one moment: a snapshot of its ring, or now. */
struct loss_point {
        uint64_t timestamp_usec;
        const uint64_t *counters;       /* _COUNTER_MAX, as counted up to then; NULL: not known */
};

struct loss_window {
        uint64_t lost[_COUNTER_MAX];    /* loss_window_blinds() counters' rise over the window; 0 for the others */
        uint64_t total;                 /* their sum: > 0, the verdicts are qualified */
        uint64_t since_usec;            /* the earliest the losses can have begun: the point before the
                                         * first rise; 0 without losses */
        uint64_t latest_usec;           /* the point by which the latest of them was counted */
};

/* What points[0..n) (oldest first, the last one now) say was lost between the first point whose
 * counters are known and the last. Points without counters are skipped. */
void loss_window_assess(const struct loss_point *points, size_t n, struct loss_window *ret);

/* w as a target's fields in o: "verdicts_qualified", "blind_since" (seconds since the epoch, or
 * null) and "lost_in_window" ({counter: events}, those that rose only). */
void loss_window_add_json(cJSON *o, const struct loss_window *w);
