/* SPDX-License-Identifier: GPL-2.0-only */
/* Gather per-stack outstanding totals from the BPF maps, or from an exited target's frozen copy. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "alloc-table.h"
#include "bpf-loader.h"
#include "combined-table.h"
#include "macro.h"
#include "util.h"
#include "map-dump.h"
#include "map-iter.h"
#include "reclaim.h"
#include "stack-totals.h"
#include "stack-collect.h"

static int copy_ips(const uint64_t *ips, size_t n, uint64_t **ret, size_t *ret_n)
{
        *ret = malloc(MAX(n, (size_t)1) * sizeof(uint64_t));
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, ips, n * sizeof(uint64_t));
        *ret_n = n;
        return 0;
}

/* Rows from which on the stack table is read whole, through its iterator or by batches, rather
 * than by one look-up (one system call, a full max_stack_depth value copied) per row. */
#define FRAMES_READ_WHOLE_MIN_ROWS 512
/* A batch read copies each stack's full value, its look-up by key costs a system call: where the
 * table holds more stacks than this a row, look-ups are cheaper. */
#define FRAMES_BY_BATCHES_MAX_STACKS_PER_ROW 8

/* A row's stack id beside its index. */
struct id_row {
        int64_t id;
        size_t row;
};

/* The rows by stack id: sorted (rows of one id side by side), and each id's first place there
 * found by hash, one or two probes where a binary search over 100,000 rows missed the cache at
 * most of its 17 steps. */
struct frames_by_id {
        struct stack_rows *rows;
        struct id_row *order;   /* every row, by stack id */
        uint32_t *first;        /* open addressing: 1 + an id's first index in order[], 0 empty */
        size_t mask;
};

static int order_by_stack_id(const void *a, const void *b)
{
        const struct id_row *x = a, *y = b;

        return x->id < y->id ? -1 : x->id > y->id;
}

static size_t id_hash(int64_t id, size_t mask)
{
        return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static void frames_by_id_done(struct frames_by_id *f)
{
        free(f->order);
        free(f->first);
        *f = (struct frames_by_id) {};
}

static int frames_by_id_init(struct frames_by_id *f, struct stack_rows *r)
{
        size_t slots = 2;

        if (r->n >= UINT32_MAX / 2)
                return -E2BIG;
        while (slots < 2 * r->n)
                slots *= 2;
        *f = (struct frames_by_id) {
                .rows = r,
                .order = malloc(MAX(r->n, (size_t)1) * sizeof(*f->order)),
                .first = calloc(slots, sizeof(*f->first)),
                .mask = slots - 1,
        };
        if (!f->order || !f->first) {
                frames_by_id_done(f);
                return -ENOMEM;
        }
        for (size_t i = 0; i < r->n; i++)
                f->order[i] = (struct id_row) { .id = r->rows[i].stack_id, .row = i };
        qsort(f->order, r->n, sizeof(*f->order), order_by_stack_id);
        for (size_t i = 0; i < r->n; i++) {
                size_t h;

                if (i > 0 && f->order[i].id == f->order[i - 1].id)
                        continue;
                for (h = id_hash(f->order[i].id, f->mask); f->first[h]; h = (h + 1) & f->mask)
                        ;
                f->first[h] = (uint32_t)i + 1;
        }
        return 0;
}

/* The index in f->order of id's first row, or the number of rows where no row has it. */
static size_t first_row_of(const struct frames_by_id *f, int64_t id)
{
        for (size_t h = id_hash(id, f->mask); f->first[h]; h = (h + 1) & f->mask)
                if (f->order[f->first[h] - 1].id == id)
                        return f->first[h] - 1;
        return f->rows->n;
}

/* Give stack id's frames to the rows of that id. */
static int give_frames(struct frames_by_id *f, uint64_t id, const uint64_t *ips, uint32_t depth, uint32_t stop)
{
        struct stack_row *rows = f->rows->rows;
        size_t n = f->rows->n;

        for (size_t i = first_row_of(f, (int64_t)id); i < n && f->order[i].id == (int64_t)id; i++) {
                struct stack_row *row = &rows[f->order[i].row];
                int r;

                if (row->ips)
                        continue;       /* the id seen twice (the table changed under the read) */
                if ((r = copy_ips(ips, depth, &row->ips, &row->n_ips)) < 0)
                        return r;
                row->unwind_stop = stop;
        }
        return 0;
}

/* map_iter_read_stream(): struct stack_iter_record and its frames, given to the rows of its id. */
static long consume_stack_records(const void *data, size_t len, void *userdata)
{
        size_t used = 0;

        for (;;) {
                struct stack_iter_record rec;
                size_t bytes;
                int r;

                if (len - used < sizeof(rec))
                        return (long)used;
                memcpy(&rec, (const char *)data + used, sizeof(rec));
                if (rec.depth > MEMLEAK_MAX_STACK_DEPTH)
                        return -EBADMSG;
                bytes = sizeof(rec) + rec.depth * sizeof(uint64_t);
                if (len - used < bytes)
                        return (long)used;
                r = give_frames(userdata, rec.id, (const uint64_t *)((const char *)data + used + sizeof(rec)),
                                rec.depth, rec.stop);
                if (r < 0)
                        return r;
                used += bytes;
        }
}

/* A frames_by_id and the stack table's value size, for map_dump_hash_each(). */
struct frames_by_batch {
        struct frames_by_id f;
        size_t value_size;
};

/* map_dump_hash_each(): stack ids and their struct stack_trace, value_size bytes each. */
static int consume_stack_batch(const void *keys, const void *values, size_t n, void *userdata)
{
        struct frames_by_batch *b = userdata;
        uint32_t fits = (uint32_t)((b->value_size - offsetof(struct stack_trace, ips)) / sizeof(uint64_t));

        for (size_t i = 0; i < n; i++) {
                const struct stack_trace *t = (const void *)((const char *)values + i * b->value_size);
                uint64_t id;
                int r;

                memcpy(&id, (const char *)keys + i * sizeof(id), sizeof(id));
                r = give_frames(&b->f, id, (const uint64_t *)t->ips, MIN(t->depth, fits), t->stop);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Fill in the rows' frames from the stack table read whole by batch look-ups. */
static int rows_add_frames_by_batches(struct stack_rows *r, int stacks_fd, size_t value_size)
{
        struct frames_by_batch b = { .value_size = value_size };
        int ret;

        if (value_size < offsetof(struct stack_trace, ips) || value_size > sizeof(struct stack_trace))
                return -EINVAL;
        if ((ret = frames_by_id_init(&b.f, r)) < 0)
                return ret;
        ret = map_dump_hash_each(stacks_fd, sizeof(uint64_t), value_size, consume_stack_batch, &b);
        frames_by_id_done(&b.f);
        return ret;
}

/* Fill in the rows' frames from the stack table read whole through its iterator. */
static int rows_add_frames_by_iterator(struct stack_rows *r, int iter_fd)
{
        struct map_iter_buffer buf = {};
        struct frames_by_id f;
        int ret;

        if ((ret = frames_by_id_init(&f, r)) < 0)
                return ret;
        ret = map_iter_read_stream(iter_fd, &buf, consume_stack_records, &f);
        map_iter_buffer_done(&buf);
        frames_by_id_done(&f);
        return ret;
}

/* Fill in each row's frames from the stack table, one look-up a row. */
static int rows_add_frames_by_lookup(struct stack_rows *r, int stacks_fd)
{
        struct stack_trace t;

        for (size_t i = 0; i < r->n; i++) {
                uint64_t id;
                int ret;

                if (r->rows[i].stack_id < 0)
                        continue;
                id = (uint64_t)r->rows[i].stack_id;
                memset(&t, 0, sizeof(t));
                if (bpf_map_lookup_elem(stacks_fd, &id, &t) < 0)
                        continue;       /* reported as a stack with no frames */
                r->rows[i].unwind_stop = t.stop;
                ret = copy_ips((const uint64_t *)t.ips, MIN(t.depth, (uint32_t)MEMLEAK_MAX_STACK_DEPTH),
                               &r->rows[i].ips, &r->rows[i].n_ips);
                if (ret < 0)
                        return ret;
        }
        return 0;
}

/* Fill in each row's frames from the stack table: by a look-up a row for a few rows (or a few
 * against the stacks held: a whole read copies every stack), else read whole, through its
 * iterator where the kernel loaded one, else by batch look-ups. */
static int rows_add_frames(struct stack_rows *r, struct memleak_bpf *skel)
{
        int stacks_fd = bpf_loader_stacks_fd(skel), iter_fd = bpf_loader_stacks_iter_fd(skel), ret;

        if (r->n < FRAMES_READ_WHOLE_MIN_ROWS ||
            (iter_fd < 0 && r->n < bpf_loader_stacks_held(skel) / FRAMES_BY_BATCHES_MAX_STACKS_PER_ROW))
                return rows_add_frames_by_lookup(r, stacks_fd);
        ret = iter_fd >= 0 ? rows_add_frames_by_iterator(r, iter_fd) :
                rows_add_frames_by_batches(r, stacks_fd, bpf_loader_stacks_value_size(skel));
        if (ret >= 0 || ret == -ENOMEM)
                return ret;
        /* the read failed midway: start over by look-ups */
        for (size_t i = 0; i < r->n; i++) {
                free(r->rows[i].ips);
                r->rows[i].ips = NULL;
                r->rows[i].n_ips = 0;
                r->rows[i].unwind_stop = 0;
        }
        return rows_add_frames_by_lookup(r, stacks_fd);
}

/* Totals as read, not yet sorted or merged. */
struct totals_list {
        struct stack_total *rows;
        size_t n, cap;
};

static int totals_append(struct totals_list *l, const struct stack_total *row)
{
        if (l->n == l->cap) {
                size_t ncap = l->cap ? l->cap * 2 : 64;
                struct stack_total *n = realloc(l->rows, ncap * sizeof(*n));

                if (!n)
                        return -ENOMEM;
                l->rows = n;
                l->cap = ncap;
        }
        l->rows[l->n++] = *row;
        return 0;
}

/* totals[n] as rows, their frames not filled in yet. */
static int rows_from_totals(const struct stack_total *totals, size_t n, struct stack_rows *ret)
{
        struct stack_rows rows = { .rows = calloc(MAX(n, (size_t)1), sizeof(struct stack_row)) };

        if (!rows.rows)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                rows.rows[i] = (struct stack_row) {
                        .pid = totals[i].pid, .space = totals[i].space, .stack_id = totals[i].stack_id,
                        .bytes = totals[i].bytes, .allocs = totals[i].allocs,
                };
        rows.n = n;
        *ret = rows;
        return 0;
}

/* The rows of pids[] from the per-stack totals: read as the snapshot tick reads them, already
 * merged and sorted by stack_totals_read(). */
static int collect_combined(struct memleak_bpf *skel, const pid_t *pids, size_t n_pids, struct stack_rows *ret)
{
        struct stack_totals *t = NULL;
        const struct stack_total *totals;
        size_t n;
        int r;

        r = stack_totals_new(&t);
        if (r < 0)
                return r;
        r = stack_totals_read(t, bpf_loader_combined_fd(skel), pids, n_pids, &totals, &n);
        if (r >= 0)
                r = rows_from_totals(totals, n, ret);
        stack_totals_free(t);
        return r;
}

/* A row space for an outstanding allocation: mappings apart, the rest (heap, the kernel's slab
 * objects, pages, percpu) together, as the per-stack totals map keeps them. */
static uint32_t row_space(const struct alloc_key *k)
{
        return k->space == ALLOC_SPACE_MMAP ? ALLOC_SPACE_MMAP : 0;
}

/* The outstanding blocks (struct alloc_key and struct alloc_info) of the allocations map, and
 * when table_fd >= 0, of alloc_table after them. */
static int dump_outstanding(int table_fd, int fd, uint32_t max, struct map_dump *ret)
{
        int r;

        r = map_dump_hash(fd, sizeof(struct alloc_key), sizeof(struct alloc_info), max, ret);
        if (r >= 0 && table_fd >= 0 && (r = alloc_table_append(table_fd, ret)) < 0)
                map_dump_done(ret);
        return r;
}

static int append_outstanding(int table_fd, int fd, uint32_t max, const pid_t *pids, size_t n_pids,
                              uint64_t min_age_ns, struct totals_list *totals)
{
        _cleanup_(map_dump_done) struct map_dump d = {};
        uint64_t now = (now_monotonic_usec() * 1000);
        int r;

        r = dump_outstanding(table_fd, fd, max, &d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d.n; i++) {
                const struct alloc_key *k = (const struct alloc_key *)d.keys + i;
                const struct alloc_info *v = (const struct alloc_info *)d.values + i;

                if (!stack_totals_pid_wanted(pids, n_pids, k->tgid))
                        continue;
                if (v->timestamp_ns > now || now - v->timestamp_ns < min_age_ns)
                        continue;
                /* a sampled block counts for what it stands for, as in the per-stack totals */
                r = totals_append(totals, &(struct stack_total) {
                        .pid = (pid_t)k->tgid, .space = row_space(k), .stack_id = v->stack_id, .bytes = v->weight,
                        .allocs = MEMLEAK_WEIGHT_ALLOCS(v->weight, v->size),
                });
                if (r < 0)
                        return r;
        }
        return 0;
}

static int collect_allocs(struct memleak_bpf *skel, const struct map_limits *lim,
                          const pid_t *pids, size_t n_pids, uint64_t min_age_ns, struct stack_rows *ret)
{
        struct totals_list totals = {};
        struct stack_total *scratch = NULL;
        int r;

        r = append_outstanding(bpf_loader_alloc_table_fd(skel), bpf_loader_allocs_fd(skel), lim->max_allocs, pids,
                               n_pids, min_age_ns, &totals);
        if (r >= 0)
                r = append_outstanding(-1, bpf_loader_mmaps_fd(skel), lim->max_mmaps, pids, n_pids, min_age_ns,
                                       &totals);
        if (r >= 0 && !(scratch = malloc(MAX(totals.n, (size_t)1) * sizeof(*scratch))))
                r = -ENOMEM;
        if (r >= 0) {
                /* the two buffers swap: the result is in totals.rows, and both are freed below */
                totals.n = stack_totals_sort_merge(&totals.rows, &scratch, totals.n);
                r = rows_from_totals(totals.rows, totals.n, ret);
        }
        free(totals.rows);
        free(scratch);
        return r;
}

static int block_by_addr(const void *a, const void *b)
{
        const struct outstanding_block *x = a, *y = b;

        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int stack_collect_blocks(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid,
                         struct outstanding_block **ret, size_t *ret_n)
{
        _cleanup_(map_dump_done) struct map_dump d = {};
        _cleanup_free_ struct outstanding_block *blocks = NULL;
        size_t n = 0;
        int r;

        assert(ret);
        assert(ret_n);
        r = dump_outstanding(bpf_loader_alloc_table_fd(skel), bpf_loader_allocs_fd(skel), lim->max_allocs, &d);
        if (r < 0)
                return r;
        blocks = calloc(MAX(d.n, (size_t)1), sizeof(*blocks));
        if (!blocks)
                return -ENOMEM;
        for (size_t i = 0; i < d.n; i++) {
                const struct alloc_key *k = (const struct alloc_key *)d.keys + i;
                const struct alloc_info *v = (const struct alloc_info *)d.values + i;

                if ((pid_t)k->tgid != pid || k->space != ALLOC_SPACE_USER)
                        continue;
                blocks[n++] = (struct outstanding_block) { .addr = k->addr, .size = v->size,
                                                           .stack_id = v->stack_id };
        }
        if (n > 0)
                qsort(blocks, n, sizeof(*blocks), block_by_addr);
        *ret = TAKE_PTR(blocks);
        *ret_n = n;
        return 0;
}

int stack_collect_live(struct memleak_bpf *skel, const struct map_limits *lim, const pid_t *pids,
                       size_t n_pids, uint64_t min_age_ns, bool from_allocs, struct stack_rows *ret)
{
        struct stack_rows rows = {};
        int r;

        assert(skel);
        assert(lim);
        assert(ret);
        if (min_age_ns == 0 && !from_allocs)
                r = collect_combined(skel, pids, n_pids, &rows);
        else
                r = collect_allocs(skel, lim, pids, n_pids, min_age_ns, &rows);
        if (r < 0)
                return r;
        r = rows_add_frames(&rows, skel);
        if (r < 0) {
                stack_rows_done(&rows);
                return r;
        }
        *ret = rows;
        return 0;
}

void stack_collect_free_frozen(struct frozen_target *f)
{
        if (!f)
                return;
        stack_rows_done(&f->rows);
        free(f);
}

int stack_collect_freeze(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid, bool from_allocs,
                         struct frozen_target **ret)
{
        struct frozen_target *f;
        int r;

        assert(skel);
        assert(lim);
        assert(ret);
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        /* The per-stack totals with their frames: what every later report of it needs. */
        r = stack_collect_live(skel, lim, &pid, 1, 0, from_allocs, &f->rows);
        if (r < 0) {
                free(f);
                return r;
        }
        f->bytes = sizeof(*f) + f->rows.n * sizeof(*f->rows.rows);
        for (size_t i = 0; i < f->rows.n; i++)
                f->bytes += f->rows.rows[i].n_ips * sizeof(uint64_t);
        *ret = f;
        return 0;
}

int stack_collect_frozen(const struct frozen_target *f, struct stack_rows *ret)
{
        struct stack_rows rows = {};
        int r;

        assert(f);
        assert(ret);
        rows.rows = calloc(MAX(f->rows.n, (size_t)1), sizeof(*rows.rows));
        if (!rows.rows)
                return -ENOMEM;
        for (size_t i = 0; i < f->rows.n; i++) {
                rows.rows[i] = f->rows.rows[i];
                rows.rows[i].ips = NULL;
                rows.n++;
                if (!f->rows.rows[i].ips)
                        continue;
                r = copy_ips(f->rows.rows[i].ips, f->rows.rows[i].n_ips, &rows.rows[i].ips, &rows.rows[i].n_ips);
                if (r < 0) {
                        stack_rows_done(&rows);
                        return r;
                }
        }
        *ret = rows;
        return 0;
}

static bool alloc_of(const void *key, const void *value, void *pid)
{
        return (pid_t)((const struct alloc_key *)key)->tgid == *(pid_t *)pid;
}

/* combined_table_for_each(): the stack ids of pid's rows. */
struct pid_stacks {
        pid_t pid;
        int64_t *ids;
        size_t n, room;
};

static int add_pid_stack(const struct combined_key *k, int64_t bytes, int64_t allocs, void *userdata)
{
        struct pid_stacks *p = userdata;

        if ((pid_t)k->tgid == p->pid && k->stack_id >= 0 && p->n < p->room)
                p->ids[p->n++] = k->stack_id;
        return 0;
}

/* Free pid's rows of the combined table, then delete from the stack table the stacks they named
 * that no other row does (reclaim.h), so that stacks of targets that are gone do not fill the
 * table for those that come later. Returns how many stacks went. */
static int purge_rows_and_stacks(struct memleak_bpf *skel, const struct mapped_array *combined, pid_t pid)
{
        _cleanup_free_ int64_t *ids = malloc(MAX(combined->n, 1u) * sizeof(*ids));
        struct pid_stacks p = { .pid = pid, .ids = ids, .room = combined->n };
        int purged;

        if (!ids)
                return -ENOMEM;
        (void)combined_table_for_each(combined, add_pid_stack, &p);
        (void)mapped_array_free_slots(combined, pid);
        purged = reclaim_unnamed_stacks(bpf_loader_stacks_fd(skel), combined, ids, p.n);
        if (purged > 0)
                bpf_loader_stacks_purged(skel, (uint64_t)purged);
        return purged;
}

int stack_collect_purge(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid)
{
        _cleanup_(mapped_array_close) struct mapped_array combined = {};
        int purged, r;

        assert(skel);
        assert(lim);
        r = mapped_array_open(bpf_loader_combined_fd(skel), sizeof(struct combined_row), &combined);
        purged = r < 0 ? r : purge_rows_and_stacks(skel, &combined, pid);
        (void)alloc_table_purge(bpf_loader_alloc_table_fd(skel), pid);
        r = map_dump_purge(bpf_loader_allocs_fd(skel), sizeof(struct alloc_key), sizeof(struct alloc_info),
                           lim->max_allocs, alloc_of, &pid);
        if (r > 0 && pid != MEMLEAK_KERNEL_TGID)
                bpf_loader_overflow_removed(skel, (uint64_t)r);
        (void)map_dump_purge(bpf_loader_mmaps_fd(skel), sizeof(struct alloc_key), sizeof(struct alloc_info),
                             lim->max_mmaps, alloc_of, &pid);
        return purged;
}
