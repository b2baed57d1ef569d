/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's life as one state machine: its phases and the changes allowed between them. Pure:
 * the manager (core/manager-targets.c, manager_target_phase()) makes every change through
 * target_phase_change() and logs a refused one as the bug it is.
 *
 *   probing ---------------------> recording -----> exiting --> exited
 *      |                              ^  (held at new code: a count,  |
 *      +--> awaiting-tables ----------+   not a phase)                |
 *               |      +--> exiting (went before its tables were in)  |
 *               +--> failed                                           |
 *   any phase but exiting and dropped --> dropped <-------------------+
 *   (detached, pruned, failed and answered, shutdown)
 *
 * An attach that waits for the detacher and a forked child waiting to be followed are not targets
 * yet: the manager's pending operations hold them. */
#pragma once

#include <stdbool.h>

enum target_phase {
        TARGET_PHASE_PROBING,           /* made, its probes being placed (target_attach()) */
        TARGET_PHASE_AWAITING_TABLES,   /* probed; recording from when its unwind tables are in */
        TARGET_PHASE_RECORDING,         /* BPF records it (target_register() done) */
        TARGET_PHASE_FAILED,            /* its recording could not start: answered, then dropped */
        TARGET_PHASE_EXITING,           /* its exit heard: its last report being kept */
        TARGET_PHASE_EXITED,            /* gone; its report kept within exited_max_mb */
        TARGET_PHASE_DROPPED,           /* forgotten: the manager frees it next */
        _TARGET_PHASE_MAX,
};

/* "probing", "awaiting-tables", ...; NULL out of range. */
const char *target_phase_to_string(enum target_phase p);

/* Whether a target may go from one to the other. */
bool target_phase_allowed(enum target_phase from, enum target_phase to);

/* *phase becomes to if allowed: 0; -EINVAL (*phase unchanged) if not. */
int target_phase_change(enum target_phase *phase, enum target_phase to);

/* Whether a target in p has exited (its last report kept) or is being forgotten: it is traced no
 * longer. Every other phase is live, failed included (its probes still to be taken away). */
bool target_phase_exited(enum target_phase p);
