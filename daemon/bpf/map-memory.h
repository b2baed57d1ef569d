/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel memory the BPF maps hold now, as the kernel counts it. */
#pragma once

#include <stdint.h>

struct memleak_bpf;

/* The sum of the "memlock" lines of the fdinfo of every map of skel: a preallocated map counts
 * its limit, one that allocates as it goes (BPF_F_NO_PREALLOC) its table and the entries it
 * holds now. The unwind tables (inner maps) are not among them: unwind_cache_get_stats() counts
 * those. */
int map_memory_now(struct memleak_bpf *skel, uint64_t *ret);

/* The "memlock:" value of the fdinfo text read from f (pure: for the unit tests); -ENOENT when
 * it has none. */
int map_memory_parse_fdinfo(const char *text, uint64_t *ret);
