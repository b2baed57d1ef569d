/* SPDX-License-Identifier: GPL-2.0-only */
/* BPF's target_blocks: how many heap blocks each process target holds in the allocation table
 * (alloc_table and the allocs map), by its slot, and whether BPF switched it to sampling at its
 * limit (struct target_fill). */
#pragma once

#include <stdint.h>
#include "bpf-types.h"

struct memleak_bpf;

/* The blocks the target at slot holds now (0 when the count is below zero, as it may be for an
 * instant): 0 or -errno. */
int target_blocks_read(struct memleak_bpf *skel, uint32_t slot, uint64_t *ret);

/* The whole of slot's entry (its blocks, and BPF's switch to sampling): 0 or -errno. */
int target_blocks_read_fill(struct memleak_bpf *skel, uint32_t slot, struct target_fill *ret);

/* Zero slot's entry, before a new target takes it: 0 or -errno. */
int target_blocks_reset(struct memleak_bpf *skel, uint32_t slot);
