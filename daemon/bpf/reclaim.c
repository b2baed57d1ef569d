/* SPDX-License-Identifier: GPL-2.0-only */
/* Rows at zero and stacks no row names, given back while targets stay attached. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include "bpf-types.h"
#include "macro.h"
#include "reclaim.h"

static bool row_cas(struct combined_row *row, uint64_t seen, uint32_t state)
{
        __u64 expected = seen;  /* row->word's own type: uint64_t is another to clang */

        return __atomic_compare_exchange_n(&row->word, &expected, (seen & ~UINT64_C(0xffff)) | state, false,
                                           __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
}

static bool row_at_zero(const struct combined_row *row)
{
        return __atomic_load_n(&row->bytes, __ATOMIC_ACQUIRE) == 0 &&
               __atomic_load_n(&row->allocs, __ATOMIC_ACQUIRE) == 0;
}

void reclaim_rows(const struct mapped_array *combined, struct reclaim_counts *c)
{
        struct combined_row *rows;

        assert(combined);
        assert(c);
        rows = combined->values;
        for (uint32_t i = 0; i < combined->n; i++) {
                struct combined_row *row = &rows[i];
                uint64_t word = __atomic_load_n(&row->word, __ATOMIC_ACQUIRE);

                switch (COMBINED_ROW_STATE(word)) {
                case ALLOC_SLOT_RETIRING:
                        /* at zero read after the word: a free that raced an add left it so */
                        if (row_at_zero(row))
                                c->rows_freed += row_cas(row, word, ALLOC_SLOT_FREE);
                        else
                                c->rows_revived += row_cas(row, word, ALLOC_SLOT_LIVE);
                        break;
                case ALLOC_SLOT_LIVE:
                        if (row_at_zero(row))
                                c->rows_retired += row_cas(row, word, ALLOC_SLOT_RETIRING);
                        break;
                }
        }
}

int reclaim_named_stacks(const struct mapped_array *combined, int64_t **ret, size_t *ret_n)
{
        const struct combined_row *rows;
        int64_t *ids;
        size_t n = 0;

        assert(combined);
        assert(ret);
        assert(ret_n);
        rows = combined->values;
        ids = malloc(MAX(combined->n, 1u) * sizeof(*ids));
        if (!ids)
                return -ENOMEM;
        for (uint32_t i = 0; i < combined->n; i++) {
                uint64_t word = __atomic_load_n(&rows[i].word, __ATOMIC_ACQUIRE);
                uint32_t state = COMBINED_ROW_STATE(word);
                int64_t id = __atomic_load_n(&rows[i].stack_id, __ATOMIC_RELAXED);

                /* a row being claimed (BUSY) names its stack too */
                if ((state == ALLOC_SLOT_LIVE || state == ALLOC_SLOT_RETIRING || state == ALLOC_SLOT_BUSY) &&
                    id >= 0)
                        ids[n++] = id;
        }
        qsort(ids, n, sizeof(*ids), cmp_int64);
        *ret = ids;
        *ret_n = n;
        return 0;
}

static bool named(const int64_t *ids, size_t n, int64_t id)
{
        return bsearch(&id, ids, n, sizeof(*ids), cmp_int64) != NULL;
}

int reclaim_unnamed_stacks(int stacks_fd, const struct mapped_array *combined, const int64_t *ids, size_t n)
{
        _cleanup_free_ int64_t *in_use = NULL;
        size_t n_in_use;
        int deleted = 0, r;

        assert(combined);
        assert(ids || n == 0);
        r = reclaim_named_stacks(combined, &in_use, &n_in_use);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                uint64_t id = (uint64_t)ids[i];

                if (!named(in_use, n_in_use, ids[i]))
                        deleted += bpf_map_delete_elem(stacks_fd, &id) == 0;
        }
        return deleted;
}

/* Every key of the stack table, at most max_entries (keys deleted meanwhile may be missed). */
static int stack_keys(int fd, uint32_t max_entries, uint64_t **ret, size_t *ret_n)
{
        _cleanup_free_ uint64_t *keys = malloc(MAX(max_entries, 1u) * sizeof(*keys));
        uint64_t *prev = NULL;
        size_t n = 0;

        if (!keys)
                return -ENOMEM;
        while (n < max_entries && bpf_map_get_next_key(fd, prev, &keys[n]) == 0) {
                prev = &keys[n];
                n++;
        }
        *ret = TAKE_PTR(keys);
        *ret_n = n;
        return 0;
}

static void sleep_ms(unsigned ms)
{
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Put back the deleted stacks (ids[i], their frames at values + i * value_size) that a row
 * names now. */
static int restore_named(int fd, const struct mapped_array *combined, const uint64_t *ids, const char *values,
                         size_t n, size_t value_size, struct reclaim_counts *c)
{
        _cleanup_free_ int64_t *now = NULL;
        size_t n_now;
        int r;

        r = reclaim_named_stacks(combined, &now, &n_now);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (named(now, n_now, (int64_t)ids[i]) &&
                    bpf_map_update_elem(fd, &ids[i], values + i * value_size, BPF_NOEXIST) == 0)
                        c->stacks_restored++;
        return 0;
}

int reclaim_stacks(int stacks_fd, const struct mapped_array *combined, size_t max, unsigned recheck_ms,
                   void (*purged)(void *userdata), void *userdata, struct reclaim_counts *c)
{
        _cleanup_free_ int64_t *in_use = NULL;
        _cleanup_free_ uint64_t *keys = NULL, *gone = NULL;
        _cleanup_free_ char *frames = NULL;
        struct bpf_map_info info = {};
        __u32 len = sizeof(info);
        size_t n_in_use, n_keys, n_gone = 0;
        int r;

        assert(combined);
        assert(c);
        if (bpf_obj_get_info_by_fd(stacks_fd, &info, &len) < 0)
                return -errno;
        /* the keys first, then what names them: a stack added after this read is left alone */
        r = stack_keys(stacks_fd, info.max_entries, &keys, &n_keys);
        if (r < 0)
                return r;
        r = reclaim_named_stacks(combined, &in_use, &n_in_use);
        if (r < 0)
                return r;
        max = MIN(max, n_keys);
        gone = malloc(MAX(max, (size_t)1) * sizeof(*gone));
        frames = malloc(MAX(max, (size_t)1) * info.value_size);
        if (!gone || !frames)
                return -ENOMEM;
        for (size_t i = 0; i < n_keys && n_gone < max; i++) {
                if ((int64_t)keys[i] < 0 || named(in_use, n_in_use, (int64_t)keys[i]))
                        continue;
                if (bpf_map_lookup_and_delete_elem(stacks_fd, &keys[i], frames + n_gone * info.value_size) == 0)
                        gone[n_gone++] = keys[i];
        }
        c->stacks_deleted += n_gone;
        if (n_gone == 0)
                return 0;
        if (purged)
                purged(userdata);
        sleep_ms(recheck_ms);
        return restore_named(stacks_fd, combined, gone, frames, n_gone, info.value_size, c);
}

unsigned reclaim_next_wait(unsigned wait, const struct reclaim_counts *c, unsigned least, unsigned most)
{
        assert(c);
        if (c->rows_retired + c->rows_freed + c->stacks_deleted > 0)
                return least;
        return MIN(2 * MAX(wait, least), most);
}

bool reclaim_plan_pass(const struct reclaim_fill *f, size_t per_pass, struct reclaim_plan *ret)
{
        bool rows_half, rows_urgent, stacks_half, stacks_urgent;
        uint64_t quarter;

        assert(f);
        assert(ret);
        rows_half = f->rows_held > f->rows_max / 2;
        rows_urgent = f->rows_held > f->rows_max;
        stacks_half = f->stacks_held > f->stacks_max / 2;
        stacks_urgent = f->stacks_held > f->stacks_max / 4 * 3;
        if (!rows_half && !stacks_half)
                return false;
        if (f->ticks < f->wait && !((rows_urgent || stacks_urgent) && f->wait <= f->least))
                return false;
        quarter = f->stacks_max / 4;
        *ret = (struct reclaim_plan) {
                .stacks = stacks_half,
                .stacks_max = MAX((uint64_t)per_pass, f->stacks_held > quarter ? f->stacks_held - quarter : 0),
        };
        return true;
}
