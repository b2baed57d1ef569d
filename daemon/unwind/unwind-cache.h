/* SPDX-License-Identifier: GPL-2.0-only */
/* The unwind tables loaded into BPF, one per file (by dev/ino), shared by every target that maps
 * it and released with the last; and the slots of the targets' mapping lists. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "unwind-table.h"

struct unwind_cache;

/* A file's table as targets use it: its rows are in BPF (slot of unwind_tables), what stays here
 * is what turns a mapping of it into a bias. n_rows == 0: the file has no usable CFI (or it could
 * not be read): its frames are walked by frame pointer. */
struct unwind_cache_entry {
        uint64_t dev, ino;
        uint32_t slot;
        uint32_t n_rows;
        uint64_t bytes;                 /* the kernel memory its rows take */
        int error;                      /* why it has no rows: 0 (no CFI), or -errno */
        struct unwind_table table;      /* base_vaddr and segments; its rows freed once loaded */
        unsigned refs;
};

struct unwind_cache_stats {
        size_t tables;                  /* files with rows loaded */
        uint64_t rows;
        uint64_t bytes;
        size_t without_rows;            /* files known to have none */
};

/* tables_fd: the unwind_tables map of maps (max_tables slots); files_fd: unwind_files, where
 * each loaded table is listed by inode; max_targets: the slots of the mapping lists. */
int unwind_cache_new(int tables_fd, int files_fd, uint32_t max_tables, uint32_t max_targets,
                     struct unwind_cache **ret);
struct unwind_cache *unwind_cache_free(struct unwind_cache *c);

/* The entry of file (dev, ino), its table built from fd and loaded if it is new (fd is only
 * read, the caller keeps it): a reference, put back with unwind_cache_put(). -ENOSPC when every
 * slot is taken, -ENOMEM. A file whose CFI cannot be read still gets an entry, without rows. */
int unwind_cache_get(struct unwind_cache *c, uint64_t dev, uint64_t ino, int fd,
                     const struct unwind_cache_entry **ret);
/* The entry of (dev, ino) if loaded, without a new reference; NULL otherwise. */
const struct unwind_cache_entry *unwind_cache_peek(struct unwind_cache *c, uint64_t dev, uint64_t ino);
void unwind_cache_put(struct unwind_cache *c, uint64_t dev, uint64_t ino);

/* A free slot for a target's mapping list, or -ENOSPC; give it back with unwind_cache_put_slot(). */
int unwind_cache_get_slot(struct unwind_cache *c, uint32_t *ret);
void unwind_cache_put_slot(struct unwind_cache *c, uint32_t slot);

void unwind_cache_get_stats(struct unwind_cache *c, struct unwind_cache_stats *ret);
