/* SPDX-License-Identifier: GPL-2.0-only */
/* The unwind tables loaded into BPF, one per file (by dev/ino), shared by every target that maps
 * it and released with the last. (A target's mapping list is at its own slot: targets/.) */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <systemd/sd-event.h>
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
        bool pending;                   /* being built (on the cache's worker thread) */
        uint64_t id;                    /* which of the entries (dev, ino) ever had this is */
        struct unwind_table table;      /* base_vaddr and segments; its rows freed once loaded */
        unsigned refs;
};

struct unwind_cache_stats {
        size_t tables;                  /* files with rows loaded */
        uint64_t rows;
        uint64_t bytes;
        size_t without_rows;            /* files known to have no CFI */
        size_t failed;                  /* files whose table could not be had (unreadable CFI, past a
                                         * limit, every slot taken): walked by frame pointer */
        size_t pending;                 /* being built */
};

/* A table finished building and is in BPF (or turned out to have no rows): targets that map its
 * file should write their mapping lists again. */
typedef void (*unwind_cache_loaded_fn)(void *userdata);

/* tables_fd: the unwind_tables map of maps (max_tables slots); files_fd: unwind_files, where
 * each loaded table is listed by inode. Tables are built on a thread of the cache's own (tens of ms for libc, half a second for libLLVM), and
 * loaded() called on e's loop as each is in. */
int unwind_cache_new(sd_event *e, int tables_fd, int files_fd, uint32_t max_tables, unwind_cache_loaded_fn loaded,
                     void *userdata, struct unwind_cache **ret);
struct unwind_cache *unwind_cache_free(struct unwind_cache *c);
/* Take tables from store (table-store.h) and keep those built there; before any is asked for.
 * The store stays the caller's, to free after c. */
struct table_store;
void unwind_cache_set_store(struct unwind_cache *c, struct table_store *store);

/* The entry of file (dev, ino), its table queued to be built from fd if it is new (fd is
 * duplicated, the caller keeps its own): a reference, put back with unwind_cache_put(). Until
 * it is built (pending), and for a file whose CFI cannot be read, the entry has no rows. */
int unwind_cache_get(struct unwind_cache *c, uint64_t dev, uint64_t ino, int fd,
                     const struct unwind_cache_entry **ret);
/* The entry of (dev, ino) if loaded, without a new reference; NULL otherwise. */
const struct unwind_cache_entry *unwind_cache_peek(struct unwind_cache *c, uint64_t dev, uint64_t ino);
void unwind_cache_put(struct unwind_cache *c, uint64_t dev, uint64_t ino);

void unwind_cache_get_stats(struct unwind_cache *c, struct unwind_cache_stats *ret);
