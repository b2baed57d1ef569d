/* SPDX-License-Identifier: GPL-2.0-only */
/* Unwind tables kept on disk (under the daemon's cache directory) by build ID, or by file identity
 * for files without one, so that a program run again, or another program mapping the same
 * libraries, takes its tables from there instead of reading its CFI again. Bounded (the least
 * recently used go first), written atomically, checked on load (table-file.h). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "unwind-table.h"

struct table_store;

/* The subdirectory of the cache directory the tables are in. */
#define TABLE_STORE_SUBDIR "unwind-tables"

struct table_store_stats {
        uint64_t hits;                  /* tables taken from the store */
        uint64_t misses;                /* tables built (none stored for the file) */
        uint64_t rejected;              /* files refused (corrupt, truncated, another version, not
                                         * ours, a symlink...): removed, the table built again */
        uint64_t written;
        uint64_t write_failed;
        uint64_t evicted;               /* files removed to stay within max_bytes */
        uint64_t files;                 /* in the store now (at the last count) */
        uint64_t bytes;
        uint64_t max_bytes;
};

/* The store in directory/TABLE_STORE_SUBDIR, creating both (mode 0700) when absent. directory must
 * be a directory owned by us and writable by no one else, not a symlink, and so must the
 * subdirectory be: -EPERM otherwise. Stray temporary files are removed and the store trimmed to
 * max_bytes. */
int table_store_open(const char *directory, uint64_t max_bytes, struct table_store **ret);
struct table_store *table_store_free(struct table_store *s);

/* fd's table (the file kept open by the caller), from the store if it has it, else built with
 * unwind_table_build() and stored. s may be NULL: built only. Errors are unwind_table_build()'s;
 * the store's own failures only cost the build. Called on one thread at a time. */
int table_store_build(struct table_store *s, int fd, const struct unwind_table_limits *limits,
                      struct unwind_table *ret);

/* From any thread. */
void table_store_get_stats(struct table_store *s, struct table_store_stats *ret);
