/* SPDX-License-Identifier: GPL-2.0-only */
/* A stack's leak verdict from its target's snapshots and a newer read of its bytes (pure): a live
 * target's at each report, an exited one's once, at its exit, kept with it
 * (targets/exit-verdicts.h) since its ring's rows go then. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "exit-verdicts.h"
#include "leak-verdict.h"
#include "snapshot.h"
#include "stack-rows.h"

/* The verdict on stack_id's bytes over history[0..n) (oldest first; rows as snapshot.h's) then
 * bytes (allocs blocks) read at read_usec, a point of its own when newer than the newest
 * snapshot; sample_bytes: its target's mean (0: exact). 0 or -ENOMEM. */
int stack_verdict_assess(const struct snapshot *history, size_t n, int64_t stack_id, uint64_t read_usec,
                         uint64_t bytes, uint64_t allocs, uint64_t sample_bytes,
                         const struct leak_verdict_thresholds *th, struct leak_assessment *ret);

/* At a target's exit: the verdict of each heap row of rows (stack_id >= 0; their addresses are
 * not read) over its ring's snapshots history[0..n), its frozen bytes the newest point at
 * exit_usec. *ret NULL when rows has no heap row with a stack. 0 or -ENOMEM. Some 4 ms per
 * thousand stacks of a ring of 60: the worker's work (core/manager-verdicts.c). */
int stack_verdict_keep(const struct snapshot *history, size_t n, const struct stack_rows *rows, uint64_t exit_usec,
                       uint64_t sample_bytes, const struct leak_verdict_thresholds *th, struct exit_verdicts **ret);

/* A kept verdict as the assessment it was. */
void stack_verdict_from_kept(const struct exit_verdict *k, struct leak_assessment *ret);
