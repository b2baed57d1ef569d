/* SPDX-License-Identifier: GPL-2.0-only */
/* Fill in per-stack rows' frames from the stack table: a look-up a row, or the table read whole
 * (its BPF iterator, else batch look-ups) with each stack given to the rows of its id. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "bpf-loader.h"
#include "macro.h"
#include "map-dump.h"
#include "map-iter.h"
#include "stack-frames.h"

int stack_frames_copy(const uint64_t *ips, size_t n, uint64_t **ret, size_t *ret_n)
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
                if ((r = stack_frames_copy(ips, depth, &row->ips, &row->n_ips)) < 0)
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
                ret = stack_frames_copy((const uint64_t *)t.ips, MIN(t.depth, (uint32_t)MEMLEAK_MAX_STACK_DEPTH),
                               &r->rows[i].ips, &r->rows[i].n_ips);
                if (ret < 0)
                        return ret;
        }
        return 0;
}

int stack_frames_fill(struct stack_rows *r, struct memleak_bpf *skel)
{
        int stacks_fd, iter_fd, ret;

        assert(r);
        assert(skel);
        stacks_fd = bpf_loader_stacks_fd(skel);
        iter_fd = bpf_loader_stacks_iter_fd(skel);

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
