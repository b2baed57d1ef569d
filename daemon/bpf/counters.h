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

/* The daemon's counters: every row's (every target's, and no target's) per-CPU counters summed
 * into totals[_COUNTER_MAX]. */
int counters_read(struct memleak_bpf *skel, uint64_t totals[_COUNTER_MAX]);

/* The row of the counters map the target at slot of target_slots counts in (the kernel target's
 * is its own, whatever its slot). */
uint32_t counters_row_of(struct memleak_bpf *skel, uint32_t slot, bool kernel);
/* Row row's per-CPU counters summed into totals[_COUNTER_MAX] (as counted since the daemon
 * started: a target subtracts what its row held when it took it). */
int counters_read_row(struct memleak_bpf *skel, uint32_t row, uint64_t totals[_COUNTER_MAX]);
/* totals[c] -= base[c] for each counter, at least 0. */
void counters_subtract(uint64_t totals[_COUNTER_MAX], const uint64_t base[_COUNTER_MAX]);
