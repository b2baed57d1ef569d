/* SPDX-License-Identifier: GPL-2.0-only */
/* A snapshot ring encoded: a header, each snapshot (time, counters, rows), a checksum. */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "snapshot-file.h"
#include "util.h"

#define SNAPSHOT_FILE_MAGIC 0x31474e4952454d4dULL      /* "MEMRING1" */
/* a row's bytes: stack_id, bytes, allocs */
#define ROW_BYTES (3 * sizeof(uint64_t))

struct writer {
        unsigned char *p;
        size_t n;
};

static void put(struct writer *w, uint64_t v)
{
        memcpy(w->p + w->n, &v, sizeof(v));
        w->n += sizeof(v);
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
        return fnv1a64(FNV1A64_INIT, p, n);
}

int snapshot_file_encode(const struct snapshot_ring *r, void **ret, size_t *ret_n)
{
        uint32_t count = snapshot_ring_count(r);
        size_t size = 3 * sizeof(uint64_t);     /* magic, count, checksum */
        struct writer w = {};

        assert(ret);
        assert(ret_n);
        for (uint32_t i = 0; i < count; i++)
                size += (3 + _COUNTER_MAX) * sizeof(uint64_t) + snapshot_ring_get(r, i)->n_rows * ROW_BYTES;
        w.p = malloc(size);
        if (!w.p)
                return -ENOMEM;
        put(&w, SNAPSHOT_FILE_MAGIC);
        put(&w, count);
        for (uint32_t i = 0; i < count; i++) {
                const struct snapshot *s = snapshot_ring_get(r, i);

                put(&w, s->timestamp_usec);
                put(&w, s->has_counters);
                for (size_t c = 0; c < _COUNTER_MAX; c++)
                        put(&w, s->counters[c]);
                put(&w, s->n_rows);
                for (size_t k = 0; k < s->n_rows; k++) {
                        put(&w, (uint64_t)s->rows[k].stack_id);
                        put(&w, s->rows[k].bytes);
                        put(&w, s->rows[k].allocs);
                }
        }
        put(&w, checksum(w.p, w.n));
        assert(w.n == size);
        *ret = w.p;
        *ret_n = w.n;
        return 0;
}

struct reader {
        const unsigned char *p;
        size_t n, at;
};

static bool get(struct reader *rd, uint64_t *v)
{
        if (rd->n - rd->at < sizeof(*v))
                return false;
        memcpy(v, rd->p + rd->at, sizeof(*v));
        rd->at += sizeof(*v);
        return true;
}

/* Check data whole, before anything is pushed: its size, checksum, shape, rows in order. */
static int check(const unsigned char *p, size_t n, uint64_t *ret_count)
{
        struct reader rd = { .p = p, .n = n >= sizeof(uint64_t) ? n - sizeof(uint64_t) : 0 };
        uint64_t magic, count, sum, v, rows;

        if (n < 3 * sizeof(uint64_t))
                return -EBADMSG;
        memcpy(&sum, p + n - sizeof(sum), sizeof(sum));
        if (sum != checksum(p, n - sizeof(sum)))
                return -EBADMSG;
        if (!get(&rd, &magic) || magic != SNAPSHOT_FILE_MAGIC || !get(&rd, &count))
                return -EBADMSG;
        for (uint64_t i = 0; i < count; i++) {
                int64_t last = INT64_MIN;

                for (size_t k = 0; k < 2 + _COUNTER_MAX; k++)
                        if (!get(&rd, &v))
                                return -EBADMSG;
                if (!get(&rd, &rows) || rows > (rd.n - rd.at) / ROW_BYTES)
                        return -EBADMSG;
                for (uint64_t k = 0; k < rows; k++) {
                        uint64_t id = 0;

                        (void)get(&rd, &id);
                        if (k > 0 && (int64_t)id <= last)
                                return -EBADMSG;        /* rows are sorted by stack_id, once each */
                        last = (int64_t)id;
                        rd.at += 2 * sizeof(uint64_t);
                }
        }
        if (rd.at != rd.n)
                return -EBADMSG;
        *ret_count = count;
        return 0;
}

int snapshot_file_decode(const void *data, size_t n, struct snapshot_ring *r)
{
        struct reader rd = { .p = data, .n = n - sizeof(uint64_t), .at = 2 * sizeof(uint64_t) };
        uint64_t count;
        int k;

        assert(data);
        assert(r);
        k = check(data, n, &count);
        if (k < 0)
                return k;
        for (uint64_t i = 0; i < count; i++) {
                uint64_t ts = 0, has = 0, counters[_COUNTER_MAX] = {}, rows = 0;
                struct snapshot_row *row;

                (void)get(&rd, &ts);
                (void)get(&rd, &has);
                for (size_t c = 0; c < _COUNTER_MAX; c++)
                        (void)get(&rd, &counters[c]);
                (void)get(&rd, &rows);
                row = snapshot_rows_new(rows);
                if (!row)
                        return -ENOMEM;
                for (uint64_t j = 0; j < rows; j++) {
                        uint64_t id = 0;

                        (void)get(&rd, &id);
                        row[j].stack_id = (int64_t)id;
                        (void)get(&rd, &row[j].bytes);
                        (void)get(&rd, &row[j].allocs);
                }
                k = snapshot_ring_push(r, ts, row, rows);
                if (k < 0)
                        return k;
                if (has)
                        snapshot_ring_set_counters(r, counters);
        }
        return 0;
}
