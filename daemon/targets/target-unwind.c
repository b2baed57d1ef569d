/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's user stacks walked by the unwind tables of the files it maps. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bpf-loader.h"
#include "macro.h"
#include "target-unwind.h"
#include "unwind-cache.h"
#include "util.h"

void target_unwind_init(const struct target_env *env, struct target *t, enum memleak_unwind mode)
{
        assert(env);
        assert(t);
        t->unwind.mode = mode;
        if (mode == MEMLEAK_UNWIND_FP || t->kernel || !env->unwind)
                return;
        t->unwind.cache = env->unwind;
        t->unwind.targets_fd = bpf_loader_unwind_targets_fd(env->skel);
        t->unwind.mappings_fd = bpf_loader_unwind_mappings_fd(env->skel);
}

static bool holds(const struct target_unwind *u, uint64_t dev, uint64_t ino)
{
        for (size_t i = 0; i < u->n_files; i++)
                if (u->files[i].dev == dev && u->files[i].ino == ino)
                        return true;
        return false;
}

int target_unwind_hold_file(struct target *t, uint64_t dev, uint64_t ino, int fd)
{
        struct target_unwind *u;
        const struct unwind_cache_entry *e;
        struct target_unwind_file *n;
        int r;

        assert(t);
        u = &t->unwind;
        if (!u->cache || holds(u, dev, ino))
                return 0;
        n = realloc(u->files, (u->n_files + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        u->files = n;
        r = unwind_cache_get(u->cache, dev, ino, fd, &e);
        if (r < 0)
                return r;
        u->files[u->n_files++] = (struct target_unwind_file) { .dev = dev, .ino = ino };
        return 0;
}

/* The table of m's file, loaded if new (a reference held once per file); NULL if it cannot be
 * had (its frames are then walked by frame pointer). */
static const struct unwind_cache_entry *table_of(struct target *t, const struct module_mapping *m)
{
        _cleanup_close_ int fd = -EBADF;

        if (!holds(&t->unwind, m->dev, m->ino)) {
                fd = module_map_open_file(t->pid, m->path, m->dev, m->ino, m->start, m->end);
                if (fd < 0 || target_unwind_hold_file(t, m->dev, m->ino, fd) < 0)
                        return NULL;
        }
        return unwind_cache_peek(t->unwind.cache, m->dev, m->ino);
}

static bool overlaps_any(const struct unwind_mapping *list, uint32_t n, const struct address_range *a)
{
        for (uint32_t i = 0; i < n; i++)
                if (list[i].start < a->end && a->start < list[i].end)
                        return true;
        return false;
}

/* t's executable mappings as the walker reads them, sorted by start; how many. */
static uint32_t build_list(struct target *t, struct unwind_mapping *list)
{
        uint32_t n = 0;

        t->unwind.mappings_dropped = 0;
        for (size_t i = 0; i < t->modules.n; i++) {
                const struct module_mapping *m = &t->modules.mappings[i];
                const struct unwind_cache_entry *e;
                uint64_t bias = 0;

                if (m->not_code)
                        continue;
                if (n >= UNWIND_MAPPINGS_MAX) {
                        t->unwind.mappings_dropped++;
                        continue;
                }
                e = table_of(t, m);
                list[n] = (struct unwind_mapping) { .start = m->start, .end = m->end };
                if (e && e->pending)
                        list[n].table = UNWIND_TABLE_PENDING;   /* the walk stops there: no_table */
                else if (e && e->n_rows > 0 && unwind_table_mapping_bias(&e->table, m->start, m->pgoff, &bias) >= 0) {
                        list[n].bias = bias;
                        list[n].table = e->slot;
                        list[n].n_rows = e->n_rows;
                }
                n++;
        }
        /* JIT code, stepped by its frame pointers (no table): listed, its frames are found without
         * a look at their vma, and a walk through them can be answered from a memo */
        for (size_t i = 0, files = n; i < t->modules.n_anon_code; i++) {
                const struct address_range *a = &t->modules.anon_code[i];

                if (overlaps_any(list, files, a))
                        continue;       /* a file kept after it was unmapped (its frames' names) */
                if (n >= UNWIND_MAPPINGS_MAX) {
                        t->unwind.mappings_dropped++;
                        continue;
                }
                list[n++] = (struct unwind_mapping) { .start = a->start, .end = a->end };
        }
        return n;
}

static int mapping_cmp(const void *a, const void *b)
{
        const struct unwind_mapping *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

/* FNV-1a over the list: whether it changed since it was written. */
static uint64_t signature(const struct unwind_mapping *list, uint32_t n)
{
        return fnv1a64(FNV1A64_INIT ^ n, list, n * sizeof(*list));
}

static int write_list(struct target *t, const struct unwind_mapping *list, uint32_t n)
{
        /* of every target's list: the walker's row caches; even (BPF makes an odd one when it
         * empties the list of a process that execs) */
        static uint32_t generation;
        struct target_unwind *u = &t->unwind;
        __u32 key = t->slot.slot;       /* its slot of target_slots, which its probes carry */
        /* the list walks do not read (none, before the first): they go on with the current one
         * until the entry names the new */
        __u32 half = u->installed ? !u->half : 0;
        struct unwind_target entry = { .tgid = (__u32)t->pid, .n = n, .half = half };

        entry.generation = __atomic_add_fetch(&generation, 2, __ATOMIC_RELAXED);

        for (uint32_t i = 0; i < n; i++) {
                __u32 index = (key * 2 + half) * UNWIND_MAPPINGS_MAX + i;

                if (bpf_map_update_elem(u->mappings_fd, &index, &list[i], BPF_ANY) < 0)
                        return -errno;
        }
        if (bpf_map_update_elem(u->targets_fd, &key, &entry, BPF_ANY) < 0)
                return -errno;
        u->installed = true;
        u->half = half;
        u->n_mappings = n;
        return 0;
}

/* The tables of its files: how many have rows, how many rows, their kernel memory. */
static void count_tables(struct target_unwind *u)
{
        u->tables = 0;
        u->rows = u->bytes = 0;
        for (size_t i = 0; i < u->n_files; i++) {
                const struct unwind_cache_entry *e = unwind_cache_peek(u->cache, u->files[i].dev, u->files[i].ino);

                if (!e || e->n_rows == 0)
                        continue;
                u->tables++;
                u->rows += e->n_rows;
                u->bytes += e->bytes;
        }
}

int target_unwind_refresh(struct target *t)
{
        struct target_unwind *u;
        _cleanup_free_ struct unwind_mapping *list = NULL;
        uint64_t sig;
        uint32_t n;
        int r;

        assert(t);
        u = &t->unwind;
        if (!u->cache || target_phase_exited(t->phase) || !t->slot.set)
                return 0;       /* not walked by tables, or stopped: its slot is another's */
        list = calloc(UNWIND_MAPPINGS_MAX, sizeof(*list));
        if (!list)
                return -ENOMEM;
        n = build_list(t, list);
        qsort(list, n, sizeof(*list), mapping_cmp);
        sig = signature(list, n);
        if (u->installed && !u->stale && sig == u->signature)
                return 0;
        r = write_list(t, list, n);
        if (r < 0)
                return r;
        u->signature = sig;
        u->stale = false;
        count_tables(u);
        return 0;
}

void target_unwind_execd(struct target *t)
{
        assert(t);
        t->unwind.stale = true;
}

bool target_unwind_walks_file(const struct target *t, uint64_t dev, uint64_t ino)
{
        const struct unwind_cache_entry *e;

        assert(t);
        e = t->unwind.cache ? unwind_cache_peek(t->unwind.cache, dev, ino) : NULL;
        return e && !e->pending && e->n_rows > 0;
}

bool target_unwind_pending(const struct target *t)
{
        const struct target_unwind *u;

        assert(t);
        u = &t->unwind;
        for (size_t i = 0; u->cache && i < u->n_files; i++) {
                const struct unwind_cache_entry *e = unwind_cache_peek(u->cache, u->files[i].dev, u->files[i].ino);

                if (e && e->pending)
                        return true;
        }
        return false;
}

void target_unwind_done(struct target_unwind *u, uint32_t target_slot)
{
        assert(u);
        if (u->installed)
                (void)bpf_map_update_elem(u->targets_fd, &target_slot, &(struct unwind_target) {}, BPF_ANY);
        u->installed = false;
        if (!u->cache)
                return;
        for (size_t i = 0; i < u->n_files; i++)
                unwind_cache_put(u->cache, u->files[i].dev, u->files[i].ino);
        free(u->files);
        u->files = NULL;
        u->n_files = 0;
        u->cache = NULL;
}

void target_unwind_get_stats(const struct target_unwind *u, struct target_unwind_stats *ret)
{
        assert(u);
        assert(ret);
        *ret = (struct target_unwind_stats) {
                .tables = u->tables, .rows = u->rows, .bytes = u->bytes,
                .mappings = u->n_mappings, .mappings_dropped = u->mappings_dropped,
        };
}
