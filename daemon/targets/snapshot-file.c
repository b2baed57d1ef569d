/* SPDX-License-Identifier: GPL-2.0-only */
/* A snapshot ring encoded: a header, each snapshot (time, counters, rows), a checksum. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "snapshot-file.h"
#include "util.h"
#include "word-buf.h"

#define SNAPSHOT_FILE_MAGIC 0x31474e4952454d4dULL      /* "MEMRING1" */
/* a row's bytes: stack_id, bytes, allocs */
#define ROW_BYTES (3 * sizeof(uint64_t))

static uint64_t checksum(const unsigned char *p, size_t n)
{
        return fnv1a64(FNV1A64_INIT, p, n);
}

int snapshot_file_encode(const struct snapshot_ring *r, void **ret, size_t *ret_n)
{
        uint32_t count = snapshot_ring_count(r);
        struct word_buf_writer w = { .ok = true };

        assert(ret);
        assert(ret_n);
        word_buf_put(&w, SNAPSHOT_FILE_MAGIC);
        word_buf_put(&w, count);
        for (uint32_t i = 0; i < count; i++) {
                const struct snapshot *s = snapshot_ring_get(r, i);

                word_buf_put(&w, s->timestamp_usec);
                word_buf_put(&w, s->has_counters);
                for (size_t c = 0; c < _COUNTER_MAX; c++)
                        word_buf_put(&w, s->counters[c]);
                word_buf_put(&w, s->n_rows);
                for (size_t k = 0; k < s->n_rows; k++) {
                        word_buf_put(&w, (uint64_t)s->rows[k].stack_id);
                        word_buf_put(&w, s->rows[k].bytes);
                        word_buf_put(&w, s->rows[k].allocs);
                }
        }
        if (w.ok)
                word_buf_put(&w, checksum(w.p, w.n));
        if (!w.ok) {
                free(w.p);
                return -ENOMEM;
        }
        *ret = w.p;
        *ret_n = w.n;
        return 0;
}

/* Check data whole, before anything is pushed: its size, checksum, shape, rows in order. */
static int check(const unsigned char *p, size_t n, uint64_t *ret_count)
{
        struct word_buf_reader rd = { .p = p, .n = n >= sizeof(uint64_t) ? n - sizeof(uint64_t) : 0, .ok = true };
        uint64_t sum, count;

        if (n < 3 * sizeof(uint64_t))
                return -EBADMSG;
        memcpy(&sum, p + n - sizeof(sum), sizeof(sum));
        if (sum != checksum(p, n - sizeof(sum)) || word_buf_get(&rd) != SNAPSHOT_FILE_MAGIC)
                return -EBADMSG;
        count = word_buf_get(&rd);
        for (uint64_t i = 0; i < count && rd.ok; i++) {
                int64_t last = INT64_MIN;
                size_t rows;

                for (size_t k = 0; k < 2 + _COUNTER_MAX; k++)
                        (void)word_buf_get(&rd);
                rows = word_buf_get_count(&rd, ROW_BYTES);
                for (size_t k = 0; k < rows && rd.ok; k++) {
                        int64_t id = (int64_t)word_buf_get(&rd);

                        if (k > 0 && id <= last)
                                return -EBADMSG;        /* rows are sorted by stack_id, once each */
                        last = id;
                        (void)word_buf_get(&rd);
                        (void)word_buf_get(&rd);
                }
        }
        if (!rd.ok || rd.at != rd.n)
                return -EBADMSG;
        *ret_count = count;
        return 0;
}

int snapshot_file_decode(const void *data, size_t n, struct snapshot_ring *r)
{
        struct word_buf_reader rd = { .p = data, .n = n - sizeof(uint64_t), .at = 2 * sizeof(uint64_t), .ok = true };
        uint64_t count;
        int k;

        assert(data);
        assert(r);
        k = check(data, n, &count);
        if (k < 0)
                return k;
        /* checked whole: no read below fails */
        for (uint64_t i = 0; i < count; i++) {
                uint64_t ts, has, counters[_COUNTER_MAX], rows;
                struct snapshot_row *row;

                ts = word_buf_get(&rd);
                has = word_buf_get(&rd);
                for (size_t c = 0; c < _COUNTER_MAX; c++)
                        counters[c] = word_buf_get(&rd);
                rows = word_buf_get(&rd);
                row = snapshot_rows_new(rows);
                if (!row)
                        return -ENOMEM;
                for (uint64_t j = 0; j < rows; j++) {
                        row[j].stack_id = (int64_t)word_buf_get(&rd);
                        row[j].bytes = word_buf_get(&rd);
                        row[j].allocs = word_buf_get(&rd);
                }
                k = snapshot_ring_push(r, ts, row, rows);
                if (k < 0)
                        return k;
                if (has)
                        snapshot_ring_set_counters(r, counters);
        }
        return 0;
}
