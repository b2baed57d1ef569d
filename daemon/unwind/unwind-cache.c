/* SPDX-License-Identifier: GPL-2.0-only */
/* The unwind tables loaded into BPF, one per file, shared by the targets that map it. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <fcntl.h>
#include <unistd.h>
#include "macro.h"
#include "table-slots.h"
#include "table-store.h"
#include "worker.h"
#include "unwind-cache.h"

struct unwind_cache {
        int tables_fd;
        int files_fd;
        struct worker *worker;          /* builds the tables, off the event loop */
        struct table_store *store;      /* tables kept on disk, or NULL (not ours) */
        unwind_cache_loaded_fn loaded;
        void *userdata;
        uint64_t next_id;
        struct table_slots *slots;      /* of unwind_tables */
        sd_event_source *flush;         /* empties the slots released, once per loop iteration */
        bool freeing;
        struct build_job *ready[64];    /* built, their rows to go into BPF in one batch (at most
                                         * this many wait: a steady stream of builds gets its
                                         * tables in too) */
        size_t n_ready;
        struct unwind_cache_entry **entries;
        size_t n_entries;
};

static int on_flush(sd_event_source *s, void *userdata)
{
        struct unwind_cache *c = userdata;

        table_slots_flush(c->slots);
        return 0;
}

int unwind_cache_new(sd_event *e, int tables_fd, int files_fd, uint32_t max_tables, unwind_cache_loaded_fn loaded,
                     void *userdata, struct unwind_cache **ret)
{
        struct unwind_cache *c;
        int r;

        assert(e);
        assert(ret);
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->tables_fd = tables_fd;
        c->files_fd = files_fd;
        c->loaded = loaded;
        c->userdata = userdata;
        r = worker_new(e, &c->worker);
        if (r < 0) {
                unwind_cache_free(c);
                return r;
        }
        r = table_slots_new(tables_fd, max_tables, &c->slots);
        if (r >= 0)
                r = sd_event_add_defer(e, &c->flush, on_flush, c);
        if (r >= 0)
                r = sd_event_source_set_enabled(c->flush, SD_EVENT_OFF);
        if (r < 0) {
                unwind_cache_free(c);
                return r;
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
        struct unwind_file_key key = file_key(e);

        if (!c->freeing) {      /* else the maps go with the BPF object */
                (void)bpf_map_delete_elem(c->files_fd, &key);  /* listed once examined, rows or not */
                if (e->n_rows > 0) {
                        (void)table_slots_release(c->slots, e->slot);
                        (void)sd_event_source_set_enabled(c->flush, SD_EVENT_ONESHOT);
                }
        }
        unwind_table_done(&e->table);
        free(e);
}

struct build_job;
static void job_free(struct build_job *j);

struct unwind_cache *unwind_cache_free(struct unwind_cache *c)
{
        if (!c)
                return NULL;
        c->loaded = NULL;
        c->freeing = true;
        c->worker = worker_free(c->worker);     /* builds not started are cancelled */
        for (size_t i = 0; i < c->n_ready; i++)
                job_free(c->ready[i]);
        for (size_t i = 0; i < c->n_entries; i++)
                entry_free(c, c->entries[i]);
        free(c->entries);
        sd_event_source_disable_unref(c->flush);
        table_slots_free(c->slots);
        free(c);
        return NULL;
}

void unwind_cache_set_store(struct unwind_cache *c, struct table_store *store)
{
        assert(c);
        assert(worker_pending(c->worker) == 0);
        c->store = store;
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

/* List e's file in unwind_files once it is examined, with its rows or with none (walked by frame
 * pointer), for the walker to find from a mapping's vma: a file not listed there is one it has
 * not examined yet, where the walk stops (no_table). Best effort: a file not listed is found
 * through its targets' mapping lists only. */
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

/* A table being built on the worker: everything it touches is its own. */
struct build_job {
        struct unwind_cache *cache;
        uint64_t dev, ino, id;          /* the entry it is for, if that is still there */
        int fd;                         /* the file, a dup of the caller's */
        int rows_fd;                    /* the rows in a BPF array, not in unwind_tables yet */
        int error;
        struct unwind_table table;
};

/* The rows of t in a new BPF array, for a slot of unwind_tables. */
static int rows_map(const struct unwind_table *t, int *ret)
{
        return table_slots_rows_map(t->rows, t->n_rows, ret);
}

/* On the worker: read the file's CFI, put its rows in a BPF array. */
static void build_run(void *userdata)
{
        struct build_job *j = userdata;
        struct unwind_table_limits limits = UNWIND_TABLE_LIMITS_DEFAULT;
        int r;

        r = table_store_build(j->cache->store, j->fd, &limits, &j->table);
        if (r >= 0 && j->table.n_rows > 0)
                r = rows_map(&j->table, &j->rows_fd);
        j->error = r < 0 ? r : 0;
        free(j->table.rows);    /* what stays: base_vaddr and the segments */
        j->table.rows = NULL;
        closep(&j->fd);
        j->fd = -EBADF;
}

static void job_free(struct build_job *j)
{
        unwind_table_done(&j->table);
        closep(&j->rows_fd);
        closep(&j->fd);
        free(j);
}

/* On the event loop: the rows of every table built since the last batch into slots of
 * unwind_tables, in one batch update (one RCU grace period for them all), each for the entry
 * that asked (which has its job's table now); then targets write their mapping lists again. */
static void install_ready(struct unwind_cache *c)
{
        struct unwind_cache_entry *examined[ELEMENTSOF(c->ready)], *filling[ELEMENTSOF(c->ready)];
        uint32_t slots[ELEMENTSOF(c->ready)] = {};
        int fds[ELEMENTSOF(c->ready)] = {};
        size_t n = 0, n_examined = 0, filled = 0;
        int r;

        for (size_t i = 0; i < c->n_ready; i++) {
                struct build_job *j = c->ready[i];
                struct unwind_cache_entry *e = find(c, j->dev, j->ino, NULL);

                if (!e || e->id != j->id)
                        continue;       /* put back while it was built */
                examined[n_examined++] = e;
                e->table = j->table;
                j->table = (struct unwind_table) {};
                e->pending = false;
                e->error = j->error;
                if (e->error < 0 || j->rows_fd < 0)
                        continue;       /* no CFI: frame pointers */
                e->error = table_slots_take(c->slots, &e->slot);
                if (e->error < 0)
                        continue;
                filling[n] = e;
                slots[n] = e->slot;
                fds[n++] = j->rows_fd;
        }
        r = table_slots_fill(c->slots, slots, fds, n, &filled);
        for (size_t i = 0; i < n; i++) {
                struct unwind_cache_entry *e = filling[i];

                if (i >= filled) {
                        table_slots_give_back(c->slots, e->slot);
                        e->slot = 0;
                        e->error = r < 0 ? r : -EIO;
                        continue;
                }
                e->n_rows = (uint32_t)e->table.n_rows;
                e->table.n_rows = 0;            /* its rows are in BPF, not here */
                e->bytes = (uint64_t)e->n_rows * ((sizeof(struct unwind_row) + 7) & ~(size_t)7);
        }
        for (size_t i = 0; i < n_examined; i++)
                list_file(c, examined[i]);      /* rows or not: examined */
        for (size_t i = 0; i < c->n_ready; i++)
                job_free(c->ready[i]);
        c->n_ready = 0;
        if (n_examined > 0 && c->loaded)
                c->loaded(c->userdata);
}

static void build_done(void *userdata, bool cancelled)
{
        struct build_job *j = userdata;
        struct unwind_cache *c = j->cache;

        if (cancelled || c->freeing) {
                job_free(j);
                return;
        }
        c->ready[c->n_ready++] = j;
        /* the worker has nothing more for now (or a long stream of tables): in they go */
        if (worker_pending(c->worker) == 0 || c->n_ready == ELEMENTSOF(c->ready))
                install_ready(c);
}

/* Queue e's table to be built from (a dup of) fd. */
static int build(struct unwind_cache *c, struct unwind_cache_entry *e, int fd)
{
        struct build_job *j = calloc(1, sizeof(*j));
        int r;

        if (!j)
                return -ENOMEM;
        *j = (struct build_job) {
                .cache = c, .dev = e->dev, .ino = e->ino, .id = e->id, .fd = -EBADF, .rows_fd = -EBADF,
        };
        j->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (j->fd < 0) {
                r = -errno;
                free(j);
                return r;
        }
        r = worker_submit(c->worker, j, build_run, build_done);
        if (r < 0) {
                close(j->fd);
                free(j);
                return r;
        }
        e->pending = true;
        return 0;
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
        e->id = ++c->next_id;
        e->refs = 1;
        e->error = build(c, e, fd);     /* until it is built: the walk stops there (no_table) */
        if (e->error < 0)
                list_file(c, e);        /* it will not be: frame pointers */
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

void unwind_cache_get_stats(struct unwind_cache *c, struct unwind_cache_stats *ret)
{
        assert(c);
        assert(ret);
        *ret = (struct unwind_cache_stats) {};
        for (size_t i = 0; i < c->n_entries; i++) {
                const struct unwind_cache_entry *e = c->entries[i];

                if (e->pending) {
                        ret->pending++;
                        continue;
                }
                if (e->error < 0) {
                        ret->failed++;
                        continue;
                }
                if (e->n_rows == 0) {
                        ret->without_rows++;
                        continue;
                }
                ret->tables++;
                ret->rows += e->n_rows;
                ret->bytes += e->bytes;
        }
}
