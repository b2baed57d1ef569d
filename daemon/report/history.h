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

/* Stacks one history reply lists per target at most (each a series of ring_depth points). */
#define HISTORY_STACKS_MAX 1000

struct history_params {
        struct leak_verdict_thresholds thresholds;
        uint64_t top;                   /* stacks listed: the largest in the newest snapshot */
        bool has_stack_id;              /* only this stack */
        int64_t stack_id;
};

/* {"pid", "comm", "exited", "snapshots", "totals": [{"t", "bytes", "allocs"}...], "stacks":
 * [{"stack_id", "verdict", ..., "points": [{"t", "bytes", "allocs"}...]}...]}; t in seconds since
 * the epoch. NULL without memory. */
cJSON *history_to_json(const struct snapshot_ring *ring, pid_t pid, const char *comm, bool exited,
                       const struct history_params *p);

/* The same, for a target whose counters now are now_counters at now_usec (NULL: not known): with
 * what it lost within the ring's window ("verdicts_qualified", "blind_since", "lost_in_window",
 * loss-window.h), each stack's verdict saying so ("verdict_qualified"). */
cJSON *history_to_json_counted(const struct snapshot_ring *ring, pid_t pid, const char *comm, bool exited,
                               const uint64_t *now_counters, uint64_t now_usec, const struct history_params *p);
