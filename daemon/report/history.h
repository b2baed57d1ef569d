/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's snapshot ring as a time series, in total and per stack, with each stack's verdict
 * (the history request; pure). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "leak-verdict.h"
#include "snapshot.h"
#include "target-json.h"

/* Stacks one history reply lists per target at most (each a series of ring_depth points). */
#define HISTORY_STACKS_MAX 1000

struct history_params {
        struct leak_verdict_thresholds thresholds;
        uint64_t top;                   /* stacks listed: the largest in the newest snapshot */
        bool has_stack_id;              /* only this stack */
        int64_t stack_id;
};

/* target (target-json.h; its snapshots are the ring's), then "totals": [{"t", "bytes", "allocs"}...],
 * what it lost within the ring's window for a target whose counters now are now_counters at
 * now_usec (NULL: not known): "verdicts_qualified", "blind_since", "lost_in_window"
 * (loss-window.h), and "stacks": [{"stack_id", "verdict", ..., "points": [{"t", "bytes",
 * "allocs"}...]}...], each stack's verdict saying so ("verdict_qualified"); t in seconds since the
 * epoch. NULL without memory. */
cJSON *history_to_json(const struct snapshot_ring *ring, const struct target_json *target,
                       const uint64_t *now_counters, uint64_t now_usec, const struct history_params *p);
