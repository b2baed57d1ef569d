/* SPDX-License-Identifier: GPL-2.0-only */
/* A ring of per-stack snapshots of one target's outstanding allocations, oldest dropped first. */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"

struct rows_block {
        unsigned refs;                  /* __atomic: the loop and the worker drop them */
        unsigned pad;
        struct snapshot_row rows[];
};

static struct rows_block *block_of(const struct snapshot_row *rows)
{
        return (struct rows_block *)((char *)rows - offsetof(struct rows_block, rows));
}

struct snapshot_row *snapshot_rows_new(size_t n)
{
        struct rows_block *b = calloc(1, sizeof(*b) + (n ? n : 1) * sizeof(struct snapshot_row));

        if (!b)
                return NULL;
        b->refs = 1;
        return b->rows;
}

void snapshot_rows_ref(const struct snapshot_row *rows)
{
        if (rows)
                __atomic_add_fetch(&block_of(rows)->refs, 1, __ATOMIC_RELAXED);
}

void snapshot_rows_unref(const struct snapshot_row *rows)
{
        if (rows && __atomic_sub_fetch(&block_of(rows)->refs, 1, __ATOMIC_ACQ_REL) == 0)
                free(block_of(rows));
}

struct snapshot_ring {
        uint32_t depth;
        uint32_t head;          /* slot of the oldest */
        uint32_t count;
        struct snapshot slots[];
};

const struct snapshot_row *snapshot_find_row(const struct snapshot *s, int64_t stack_id)
{
        size_t lo = 0, hi;

        assert(s);
        hi = s->n_rows;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (s->rows[mid].stack_id == stack_id)
                        return &s->rows[mid];
                if (s->rows[mid].stack_id < stack_id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

int snapshot_ring_new(uint32_t depth, struct snapshot_ring **ret)
{
        struct snapshot_ring *r;

        assert(ret);
        if (depth == 0)
                return -EINVAL;
        r = calloc(1, sizeof(*r) + (size_t)depth * sizeof(struct snapshot));
        if (!r)
                return -ENOMEM;
        r->depth = depth;
        *ret = r;
        return 0;
}

struct snapshot_ring *snapshot_ring_free(struct snapshot_ring *r)
{
        if (!r)
                return NULL;
        for (uint32_t i = 0; i < r->depth; i++)
                snapshot_rows_unref(r->slots[i].rows);
        free(r);
        return NULL;
}

int snapshot_ring_push(struct snapshot_ring *r, uint64_t timestamp_usec, struct snapshot_row *rows, size_t n_rows)
{
        struct snapshot *slot;

        assert(r);
        if (r->count == r->depth) {
                slot = &r->slots[r->head];
                r->head = (r->head + 1) % r->depth;
                r->count--;
        } else
                slot = &r->slots[(r->head + r->count) % r->depth];
        snapshot_rows_unref(slot->rows);
        *slot = (struct snapshot) { .timestamp_usec = timestamp_usec, .rows = rows, .n_rows = n_rows };
        for (size_t i = 0; i < n_rows; i++) {
                slot->bytes += rows[i].bytes;
                slot->allocs += rows[i].allocs;
        }
        r->count++;
        return 0;
}

void snapshot_ring_push_sums(struct snapshot_ring *r, uint64_t timestamp_usec, uint64_t bytes, uint64_t allocs)
{
        struct snapshot *s;

        assert(r);
        (void)snapshot_ring_push(r, timestamp_usec, NULL, 0);
        s = &r->slots[(r->head + r->count - 1) % r->depth];
        s->bytes = bytes;
        s->allocs = allocs;
}

void snapshot_ring_set_counters(struct snapshot_ring *r, const uint64_t counters[_COUNTER_MAX])
{
        struct snapshot *s;

        assert(counters);
        if (!r || r->count == 0)
                return;
        s = &r->slots[(r->head + r->count - 1) % r->depth];
        memcpy(s->counters, counters, sizeof(s->counters));
        s->has_counters = true;
}

uint32_t snapshot_ring_count(const struct snapshot_ring *r)
{
        return r ? r->count : 0;
}

uint32_t snapshot_ring_depth(const struct snapshot_ring *r)
{
        return r ? r->depth : 0;
}

const struct snapshot *snapshot_ring_get(const struct snapshot_ring *r, uint32_t i)
{
        if (!r || i >= r->count)
                return NULL;
        return &r->slots[(r->head + i) % r->depth];
}

const struct snapshot *snapshot_ring_newest(const struct snapshot_ring *r)
{
        return r && r->count ? snapshot_ring_get(r, r->count - 1) : NULL;
}

void snapshot_ring_drop_rows(struct snapshot_ring *r)
{
        for (uint32_t i = 0; r && i < r->depth; i++) {
                snapshot_rows_unref(r->slots[i].rows);
                r->slots[i].rows = NULL;
                r->slots[i].n_rows = 0;
        }
}

uint64_t snapshot_ring_bytes(const struct snapshot_ring *r)
{
        uint64_t bytes;

        if (!r)
                return 0;
        bytes = sizeof(*r) + (uint64_t)r->depth * sizeof(struct snapshot);
        for (uint32_t i = 0; i < r->depth; i++)
                bytes += r->slots[i].n_rows * sizeof(struct snapshot_row);
        return bytes;
}
