/* SPDX-License-Identifier: GPL-2.0-only */
/* The BPF programs' per-CPU counters: every way an event was counted, lost or distorted. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "bpf-types.h"

struct memleak_bpf;

/* "allocs", "stack_eexist", ... as status and reports name them. */
const char *counters_to_string(enum memleak_counter c);
/* Loss counters are reported under "lost", the others under "counters". */
bool counters_is_loss(enum memleak_counter c);

/* Sum the per-CPU counters into totals[_COUNTER_MAX]. */
int counters_read(struct memleak_bpf *skel, uint64_t totals[_COUNTER_MAX]);
