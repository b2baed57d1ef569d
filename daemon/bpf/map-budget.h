/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel memory the BPF maps take at given sizes, and whether this machine can hold it:
 * refused before loading, not found out by the OOM killer. */
#pragma once

#include <stdint.h>
#include "bpf-loader.h"

/* Bytes the maps take at sizes when full: a hash map's entry is a node (48 bytes) with its key
 * and value, plus a bucket per slot of the table (a power of two). Small maps are preallocated;
 * the big ones (allocs, mmaps, the stack table) take their buckets at load and each
 * entry as it comes, a power-of-two block from bpf_mem_alloc (the kernel's fdinfo "memlock"
 * counts the node and an 8-byte header of it: less than the block). Pure: for the unit tests. */
uint64_t map_budget_estimate(const struct bpf_sizes *sizes);

/* How max_allocs outstanding heap blocks are split: the slots of alloc_table (a power of two, at
 * most half of them and ALLOC_TABLE_SLOTS_MAX, preallocated), and the rest the allocs map's
 * entries. Pure. */
uint32_t map_budget_alloc_table_slots(uint32_t max_allocs);

/* The rows of the combined table for max_combined per-stack totals: a power of two, at least
 * twice as many, so that a window has room (preallocated). Pure. */
uint32_t map_budget_combined_rows(uint32_t max_combined);

struct memory_limits {
        uint64_t mem_total;             /* /proc/meminfo MemTotal */
        uint64_t mem_available;         /* MemAvailable */
        uint64_t cgroup_max;            /* memory.max of the daemon's cgroup; UINT64_MAX: none */
};

/* The most the maps may take: what is available now, at most half the machine, and 3/4 of the
 * daemon's cgroup limit (the kernel charges BPF maps to it). Pure. */
uint64_t map_budget_allowed(const struct memory_limits *l);

/* This machine's limits, read from meminfo_path ("/proc/meminfo") and the cgroup v2 file system
 * for the calling process. Fields it cannot read are UINT64_MAX. */
int map_budget_read_limits(const char *meminfo_path, struct memory_limits *ret);
