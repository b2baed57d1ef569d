/* SPDX-License-Identifier: GPL-2.0-only */
/* BPF's alloc_table read and purged in place (mapped into the daemon's memory): the outstanding
 * heap blocks whose windows had room (bpf/alloc-table.h). */
#pragma once

#include <sys/types.h>
#include "map-dump.h"
#include "mapped-array.h"

/* The live blocks of the table fd added to d, a dump of the allocs map (map_dump_hash()): keys
 * struct alloc_key, values struct alloc_info. A slot BPF rewrites while it is read may come out
 * as a mix of two blocks, as an entry of the allocs map copied without its bucket lock may.
 * 0 or -errno (d as it was). */
int alloc_table_append(int fd, struct map_dump *d);

/* Free every live slot of pid's (its target gone): how many, or -errno. */
int alloc_table_purge(int fd, pid_t pid);

/* When pid's blocks at addrs[0..n) were allocated, as the table (fd table_fd, -1: none) or the
 * allocs map (allocs_fd) hold them now: ret[i], 0 for a block not outstanding. One look-up each,
 * not a dump; pid must be stopped (none of its blocks may go into the allocs map meanwhile).
 * 0 or -errno. */
int alloc_table_times(int table_fd, int allocs_fd, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *ret);

/* The same look-ups, many times over (a concurrent reachability scan's rounds and stops): the
 * table mapped once, its pages brought in by the first look-ups, not by those in a stop. */
struct alloc_table_view {
        struct mapped_array table;      /* not mapped: no table */
        int allocs_fd;
};
/* 0 or -errno. The fds must outlive the view. */
int alloc_table_view_open(int table_fd, int allocs_fd, struct alloc_table_view *ret);
void alloc_table_view_close(struct alloc_table_view *t);
/* As alloc_table_times(). A block moved into the allocs map while pid runs is not: BPF puts a
 * block there when it is allocated, so one looked up (older) is already there, or never. */
int alloc_table_view_times(const struct alloc_table_view *t, pid_t pid, const uint64_t *addrs, size_t n,
                           uint64_t *ret);
