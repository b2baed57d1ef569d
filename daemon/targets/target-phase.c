/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's phases and the changes allowed between them (target-phase.h draws them). */
#include <errno.h>
#include "macro.h"
#include "string-table.h"
#include "target-phase.h"

static const char *const target_phase_table[_TARGET_PHASE_MAX] = {
        [TARGET_PHASE_PROBING] = "probing",
        [TARGET_PHASE_AWAITING_TABLES] = "awaiting-tables",
        [TARGET_PHASE_RECORDING] = "recording",
        [TARGET_PHASE_FAILED] = "failed",
        [TARGET_PHASE_EXITING] = "exiting",
        [TARGET_PHASE_EXITED] = "exited",
        [TARGET_PHASE_DROPPED] = "dropped",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(target_phase, enum target_phase);

#define TO(p) (1u << (p))

/* allowed[from]: the phases it may go to. */
static const unsigned allowed[_TARGET_PHASE_MAX] = {
        [TARGET_PHASE_PROBING] = TO(TARGET_PHASE_AWAITING_TABLES) | TO(TARGET_PHASE_RECORDING) |
                                 TO(TARGET_PHASE_DROPPED),
        [TARGET_PHASE_AWAITING_TABLES] = TO(TARGET_PHASE_RECORDING) | TO(TARGET_PHASE_FAILED) |
                                         TO(TARGET_PHASE_EXITING) | TO(TARGET_PHASE_DROPPED),
        [TARGET_PHASE_RECORDING] = TO(TARGET_PHASE_EXITING) | TO(TARGET_PHASE_DROPPED),
        [TARGET_PHASE_FAILED] = TO(TARGET_PHASE_DROPPED),
        [TARGET_PHASE_EXITING] = TO(TARGET_PHASE_EXITED),
        [TARGET_PHASE_EXITED] = TO(TARGET_PHASE_DROPPED),
        [TARGET_PHASE_DROPPED] = 0,
};

bool target_phase_allowed(enum target_phase from, enum target_phase to)
{
        if ((unsigned)from >= _TARGET_PHASE_MAX || (unsigned)to >= _TARGET_PHASE_MAX)
                return false;
        return allowed[from] & TO(to);
}

int target_phase_change(enum target_phase *phase, enum target_phase to)
{
        if (!phase || !target_phase_allowed(*phase, to))
                return -EINVAL;
        *phase = to;
        return 0;
}

bool target_phase_exited(enum target_phase p)
{
        return p == TARGET_PHASE_EXITED || p == TARGET_PHASE_DROPPED;
}
