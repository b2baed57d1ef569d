/* SPDX-License-Identifier: GPL-2.0-only */
/* The unwind tables loaded into BPF, one per file, shared by the targets that map it. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "macro.h"
#include "unwind-cache.h"

struct unwind_cache {
        int tables_fd;
        int files_fd;
        uint32_t max_tables;
        uint8_t *table_used;            /* per slot of unwind_tables */
        uint32_t max_targets;
        uint8_t *target_used;           /* per slot of the mapping lists */
        struct unwind_cache_entry **entries;
        size_t n_entries;
};

int unwind_cache_new(int tables_fd, int files_fd, uint32_t max_tables, uint32_t max_targets,
                     struct unwind_cache **ret)
{
        struct unwind_cache *c;

        assert(ret);
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->tables_fd = tables_fd;
        c->files_fd = files_fd;
        c->max_tables = max_tables;
        c->max_targets = max_targets;
        c->table_used = calloc(MAX(max_tables, 1u), 1);
        c->target_used = calloc(MAX(max_targets, 1u), 1);
        if (!c->table_used || !c->target_used) {
                unwind_cache_free(c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

/* The key BPF knows e's file by: its inode, dev as the kernel encodes it. */
static struct unwind_file_key file_key(const struct unwind_cache_entry *e)
{
        return (struct unwind_file_key) {
                .dev = (uint64_t)major(e->dev) << 20 | minor(e->dev),
                .ino = e->ino,
        };
}

static void entry_free(struct unwind_cache *c, struct unwind_cache_entry *e)
{
        if (e->n_rows > 0) {
                struct unwind_file_key key = file_key(e);

                (void)bpf_map_delete_elem(c->files_fd, &key);
                (void)bpf_map_delete_elem(c->tables_fd, &e->slot);
                c->table_used[e->slot] = 0;
        }
        unwind_table_done(&e->table);
        free(e);
}

struct unwind_cache *unwind_cache_free(struct unwind_cache *c)
{
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_entries; i++)
                entry_free(c, c->entries[i]);
        free(c->entries);
        free(c->table_used);
        free(c->target_used);
        free(c);
        return NULL;
}

static struct unwind_cache_entry *find(struct unwind_cache *c, uint64_t dev, uint64_t ino, size_t *index)
{
        for (size_t i = 0; i < c->n_entries; i++)
                if (c->entries[i]->dev == dev && c->entries[i]->ino == ino) {
                        if (index)
                                *index = i;
                        return c->entries[i];
                }
        return NULL;
}

static int free_slot(uint8_t *used, uint32_t n, uint32_t *ret)
{
        for (uint32_t i = 0; i < n; i++)
                if (!used[i]) {
                        used[i] = 1;
                        *ret = i;
                        return 0;
                }
        return -ENOSPC;
}

/* An array of rows in the kernel, in slot of unwind_tables. */
static int load_rows(struct unwind_cache *c, const struct unwind_table *t, uint32_t slot)
{
        LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_INNER_MAP);
        _cleanup_free_ uint32_t *keys = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint32_t count = (uint32_t)t->n_rows;

        fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(uint32_t), sizeof(struct unwind_row),
                            (uint32_t)t->n_rows, &opts);
        if (fd < 0)
                return -errno;
        keys = malloc(t->n_rows * sizeof(*keys));
        if (!keys)
                return -ENOMEM;
        for (uint32_t i = 0; i < count; i++)
                keys[i] = i;
        if (bpf_map_update_batch(fd, keys, t->rows, &count, NULL) < 0)
                return -errno;
        if (count != t->n_rows)
                return -EIO;
        if (bpf_map_update_elem(c->tables_fd, &slot, &fd, BPF_ANY) < 0)
                return -errno;
        return 0;               /* the map of maps holds it: our fd goes */
}

/* List e's file in unwind_files, for the walker to find from a mapping's vma. Best effort: a file
 * not listed is found through its targets' mapping lists only. */
static void list_file(struct unwind_cache *c, const struct unwind_cache_entry *e)
{
        struct unwind_file_key key = file_key(e);
        struct unwind_file f = {
                .table = e->slot, .n_rows = e->n_rows, .base_vaddr = e->table.base_vaddr,
        };

        for (size_t i = 0; i < e->table.n_segments && f.n_segments < UNWIND_FILE_SEGMENTS; i++)
                f.segments[f.n_segments++] = (struct unwind_file_segment) {
                        .vaddr = e->table.segments[i].vaddr,
                        .offset = e->table.segments[i].offset,
                        .size = e->table.segments[i].size,
                };
        (void)bpf_map_update_elem(c->files_fd, &key, &f, BPF_ANY);
}

/* Rows for e's table: a slot, the rows loaded there. */
static int load(struct unwind_cache *c, struct unwind_cache_entry *e)
{
        uint32_t slot;
        int r;

        if (e->table.n_rows == 0)
                return 0;       /* no CFI: frame pointers */
        if (e->table.n_rows > UINT32_MAX)
                return -EFBIG;
        r = free_slot(c->table_used, c->max_tables, &slot);
        if (r < 0)
                return r;
        r = load_rows(c, &e->table, slot);
        if (r < 0) {
                c->table_used[slot] = 0;
                return r;
        }
        e->slot = slot;
        e->n_rows = (uint32_t)e->table.n_rows;
        e->bytes = (uint64_t)e->n_rows * ((sizeof(struct unwind_row) + 7) & ~(size_t)7);
        list_file(c, e);
        return 0;
}

/* e's table from fd, its rows loaded; a file without usable CFI gets none (e->error says why). */
static void build(struct unwind_cache *c, struct unwind_cache_entry *e, int fd)
{
        struct unwind_table_limits limits = UNWIND_TABLE_LIMITS_DEFAULT;
        int r;

        r = unwind_table_build(fd, &limits, &e->table);
        if (r >= 0)
                r = load(c, e);
        if (r < 0)
                e->error = r;
        /* what stays: base_vaddr and the segments */
        free(e->table.rows);
        e->table.rows = NULL;
        e->table.n_rows = 0;
}

int unwind_cache_get(struct unwind_cache *c, uint64_t dev, uint64_t ino, int fd,
                     const struct unwind_cache_entry **ret)
{
        struct unwind_cache_entry *e, **n;

        assert(c);
        assert(ret);
        e = find(c, dev, ino, NULL);
        if (e) {
                e->refs++;
                *ret = e;
                return 0;
        }
        n = realloc(c->entries, (c->n_entries + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        c->entries = n;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->dev = dev;
        e->ino = ino;
        e->refs = 1;
        build(c, e, fd);
        c->entries[c->n_entries++] = e;
        *ret = e;
        return 0;
}

const struct unwind_cache_entry *unwind_cache_peek(struct unwind_cache *c, uint64_t dev, uint64_t ino)
{
        assert(c);
        return find(c, dev, ino, NULL);
}

void unwind_cache_put(struct unwind_cache *c, uint64_t dev, uint64_t ino)
{
        struct unwind_cache_entry *e;
        size_t i;

        assert(c);
        e = find(c, dev, ino, &i);
        if (!e || --e->refs > 0)
                return;
        entry_free(c, e);
        c->entries[i] = c->entries[--c->n_entries];
}

int unwind_cache_get_slot(struct unwind_cache *c, uint32_t *ret)
{
        assert(c);
        assert(ret);
        return free_slot(c->target_used, c->max_targets, ret);
}

void unwind_cache_put_slot(struct unwind_cache *c, uint32_t slot)
{
        assert(c);
        if (slot < c->max_targets)
                c->target_used[slot] = 0;
}

void unwind_cache_get_stats(struct unwind_cache *c, struct unwind_cache_stats *ret)
{
        assert(c);
        assert(ret);
        *ret = (struct unwind_cache_stats) {};
        for (size_t i = 0; i < c->n_entries; i++) {
                const struct unwind_cache_entry *e = c->entries[i];

                if (e->n_rows == 0) {
                        ret->without_rows++;
                        continue;
                }
                ret->tables++;
                ret->rows += e->n_rows;
                ret->bytes += e->bytes;
        }
}
