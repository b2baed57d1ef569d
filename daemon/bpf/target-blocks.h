/* SPDX-License-Identifier: GPL-2.0-only */
/* BPF's target_blocks: how many heap blocks each process target holds in the allocation table
 * (alloc_table and the allocs map), by its slot; per CPU, summed here. */
#pragma once

#include <stdint.h>

struct memleak_bpf;

/* The blocks the target at slot holds now (0 when the per-CPU counts sum below zero, as they may
 * for an instant): 0 or -errno. */
int target_blocks_read(struct memleak_bpf *skel, uint32_t slot, uint64_t *ret);

/* Zero slot's count, before a new target takes it: 0 or -errno. */
int target_blocks_reset(struct memleak_bpf *skel, uint32_t slot);
