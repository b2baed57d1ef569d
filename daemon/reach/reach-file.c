/* SPDX-License-Identifier: GPL-2.0-only */
/* A scan's result as words and strings (base/word-buf): a version word, whether it has one, why
 * not, its fields, its totals and its stacks by class. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "macro.h"
#include "reach-file.h"
#include "word-buf.h"

/* "REACH1" and the classes it counts: another layout is refused. */
#define REACH_FILE_VERSION (0x314843414552ULL | ((uint64_t)_REACHABILITY_MAX << 56))

static void put_tallies(struct word_buf_writer *w, const struct reach_tally t[_REACHABILITY_MAX])
{
        for (size_t c = 0; c < _REACHABILITY_MAX; c++) {
                word_buf_put(w, t[c].bytes);
                word_buf_put(w, t[c].allocs);
        }
}

static void put_result(struct word_buf_writer *w, const struct reach_result *r)
{
        word_buf_put(w, (uint64_t)(int64_t)r->error);
        word_buf_put_string(w, r->message);
        word_buf_put_string(w, r->partial);
        word_buf_put_string(w, r->no_snapshot);
        word_buf_put_string(w, r->no_concurrent);
        word_buf_put(w, r->rounds);
        word_buf_put(w, r->written_bytes);
        word_buf_put(w, r->method);
        word_buf_put(w, r->copy_reaped);
        word_buf_put(w, r->at_exit);
        word_buf_put(w, r->traced_from_start);
        word_buf_put(w, r->scanned_at_usec);
        word_buf_put(w, r->paused_usec);
        word_buf_put(w, r->longest_pause_usec);
        word_buf_put(w, r->last_stops);
        word_buf_put(w, r->scan_usec);
        word_buf_put(w, r->mark_usec);
        word_buf_put(w, r->mark_cpu_usec);
        word_buf_put(w, r->threads);
        word_buf_put(w, r->roots_bytes);
        word_buf_put(w, r->blocks_overlapping);
        word_buf_put(w, r->blocks_after);
        word_buf_put(w, r->blocks_freed);
        word_buf_put(w, r->blocks_bytes);
        word_buf_put(w, r->stats.bytes_scanned);
        word_buf_put(w, r->stats.bytes_unreadable);
        word_buf_put(w, r->stats.blocks_unreadable);
        word_buf_put(w, r->stats.words_filtered);
        word_buf_put(w, r->stats.words_looked_up);
        word_buf_put(w, r->stats.words_settled);
        put_tallies(w, r->totals);
        word_buf_put(w, r->n_stacks);
        for (size_t i = 0; i < r->n_stacks; i++) {
                word_buf_put(w, (uint64_t)r->stacks[i].stack_id);
                put_tallies(w, r->stacks[i].by_class);
        }
}

int reach_file_encode(const struct reach_result *r, const char *why, void **ret, size_t *ret_n)
{
        struct word_buf_writer w = { .ok = true };

        assert(ret);
        assert(ret_n);
        word_buf_put(&w, REACH_FILE_VERSION);
        word_buf_put(&w, r != NULL);
        word_buf_put_string(&w, why);
        if (r)
                put_result(&w, r);
        if (!w.ok) {
                free(w.p);
                return -ENOMEM;
        }
        *ret = w.p;
        *ret_n = w.n;
        return 0;
}

static void get_tallies(struct word_buf_reader *rd, struct reach_tally t[_REACHABILITY_MAX])
{
        for (size_t c = 0; c < _REACHABILITY_MAX; c++) {
                t[c].bytes = word_buf_get(rd);
                t[c].allocs = word_buf_get(rd);
        }
}

static void get_result(struct word_buf_reader *rd, struct reach_result *r)
{
        int64_t error = (int64_t)word_buf_get(rd);
        size_t n;

        if (error > 0 || error < -4095)
                rd->ok = false;
        r->error = (int)error;
        (void)word_buf_get_string(rd, REACH_FILE_STRING_MAX, &r->message);
        (void)word_buf_get_string(rd, REACH_FILE_STRING_MAX, &r->partial);
        (void)word_buf_get_string(rd, REACH_FILE_STRING_MAX, &r->no_snapshot);
        (void)word_buf_get_string(rd, REACH_FILE_STRING_MAX, &r->no_concurrent);
        r->rounds = (uint32_t)word_buf_get_max(rd, UINT32_MAX);
        r->written_bytes = word_buf_get(rd);
        r->method = (enum reach_method)word_buf_get_max(rd, _REACH_METHOD_MAX - 1);
        r->copy_reaped = word_buf_get_bool(rd);
        r->at_exit = word_buf_get_bool(rd);
        r->traced_from_start = word_buf_get_bool(rd);
        r->scanned_at_usec = word_buf_get(rd);
        r->paused_usec = word_buf_get(rd);
        r->longest_pause_usec = word_buf_get(rd);
        r->last_stops = (uint32_t)word_buf_get_max(rd, UINT32_MAX);
        r->scan_usec = word_buf_get(rd);
        r->mark_usec = word_buf_get(rd);
        r->mark_cpu_usec = word_buf_get(rd);
        r->threads = (uint32_t)word_buf_get_max(rd, UINT32_MAX);
        r->roots_bytes = word_buf_get(rd);
        r->blocks_overlapping = word_buf_get(rd);
        r->blocks_after = word_buf_get(rd);
        r->blocks_freed = word_buf_get(rd);
        r->blocks_bytes = word_buf_get(rd);
        r->stats.bytes_scanned = word_buf_get(rd);
        r->stats.bytes_unreadable = word_buf_get(rd);
        r->stats.blocks_unreadable = word_buf_get(rd);
        r->stats.words_filtered = word_buf_get(rd);
        r->stats.words_looked_up = word_buf_get(rd);
        r->stats.words_settled = word_buf_get(rd);
        get_tallies(rd, r->totals);
        n = word_buf_get_array(rd, (1 + 2 * _REACHABILITY_MAX) * sizeof(uint64_t), sizeof(*r->stacks),
                               (void **)&r->stacks);
        for (size_t i = 0; i < n && rd->ok; i++) {
                r->stacks[i].stack_id = (int64_t)word_buf_get(rd);
                get_tallies(rd, r->stacks[i].by_class);
                /* reach_scan_result_find() looks them up by halves */
                if (rd->ok && i > 0 && r->stacks[i].stack_id <= r->stacks[i - 1].stack_id)
                        rd->ok = false;
        }
        r->n_stacks = n;
}

int reach_file_decode(const void *data, size_t n, struct reach_result **ret, char **ret_why)
{
        struct word_buf_reader rd = { .p = data, .n = n, .ok = true };
        struct reach_result *r = NULL;
        _cleanup_free_ char *why = NULL;
        bool has;

        assert(data || n == 0);
        assert(ret);
        assert(ret_why);
        if (word_buf_get(&rd) != REACH_FILE_VERSION)
                return -EBADMSG;
        has = word_buf_get_bool(&rd);
        (void)word_buf_get_string(&rd, REACH_FILE_STRING_MAX, &why);
        if (has && rd.ok) {
                r = calloc(1, sizeof(*r));
                if (!r)
                        return -ENOMEM;
                get_result(&rd, r);
        }
        if (rd.enomem || !rd.ok || rd.at != rd.n) {
                reach_scan_result_free(r);
                return rd.enomem ? -ENOMEM : -EBADMSG;
        }
        *ret = r;
        *ret_why = TAKE_PTR(why);
        return 0;
}
