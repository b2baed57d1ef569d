/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's snapshot ring as a time series, in total and per stack, with each stack's verdict. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "history.h"
#include "json-util.h"
#include "leak-verdict.h"
#include "loss-window.h"
#include "macro.h"
#include "reply-fields.h"
#include "target-json.h"
#include "verdict-json.h"

static cJSON *point(uint64_t timestamp_usec, uint64_t bytes, uint64_t allocs)
{
        cJSON *o = cJSON_CreateObject();

        if (!o)
                return NULL;
        cJSON_AddNumberToObject(o, RF_T, (double)timestamp_usec / 1e6);
        json_add_u64(o, RF_BYTES, bytes);
        json_add_u64(o, RF_ALLOCS, allocs);
        return o;
}

static cJSON *totals_to_json(const struct snapshot_ring *ring)
{
        cJSON *arr = cJSON_CreateArray();

        for (uint32_t i = 0; arr && i < snapshot_ring_count(ring); i++) {
                const struct snapshot *s = snapshot_ring_get(ring, i);

                cJSON_AddItemToArray(arr, point(s->timestamp_usec, s->bytes, s->allocs));
        }
        return arr;
}

static cJSON *stack_to_json(const struct snapshot_ring *ring, int64_t stack_id, uint64_t sample_bytes,
                            const struct leak_verdict_thresholds *thresholds, bool qualified)
{
        const struct snapshot *last = snapshot_ring_newest(ring);
        const struct snapshot_row *newest = last ? snapshot_find_row(last, stack_id) : NULL;
        struct leak_verdict_thresholds th = *thresholds;
        uint32_t n = snapshot_ring_count(ring);
        _cleanup_free_ struct leak_point *points = calloc(MAX(n, 1u), sizeof(*points));
        const struct snapshot *first = snapshot_ring_get(ring, 0);
        struct leak_assessment a;
        cJSON *o = cJSON_CreateObject(), *arr;

        if (!o || !points) {
                cJSON_Delete(o);
                return NULL;
        }
        json_add_u64_digits(o, RF_STACK_ID, (uint64_t)stack_id);
        arr = cJSON_CreateArray();
        for (uint32_t i = 0; arr && i < n; i++) {
                const struct snapshot *s = snapshot_ring_get(ring, i);
                const struct snapshot_row *r = snapshot_find_row(s, stack_id);

                points[i] = (struct leak_point) {
                        .t_s = (double)(s->timestamp_usec - first->timestamp_usec) / 1e6,
                        .bytes = r ? (double)r->bytes : 0,
                };
                cJSON_AddItemToArray(arr, point(s->timestamp_usec, r ? r->bytes : 0, r ? r->allocs : 0));
        }
        th.step_bytes = newest ? leak_verdict_step_bytes(sample_bytes, newest->bytes, newest->allocs) : 0;
        leak_verdict_assess(points, n, &th, &a);
        verdict_json_add(o, &a, qualified);
        cJSON_AddItemToObject(o, RF_POINTS, arr);
        return o;
}

static int by_bytes_desc(const void *a, const void *b)
{
        const struct snapshot_row *x = a, *y = b;

        if (x->bytes != y->bytes)
                return x->bytes > y->bytes ? -1 : 1;
        return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

/* The stacks to list: the asked one, or the top largest of the newest snapshot. */
static cJSON *stacks_to_json(const struct snapshot_ring *ring, uint64_t sample_bytes, const struct history_params *p,
                             bool qualified)
{
        const struct snapshot *newest = snapshot_ring_newest(ring);
        _cleanup_free_ struct snapshot_row *sorted = NULL;
        cJSON *arr = cJSON_CreateArray();

        if (!arr || !newest)
                return arr;
        if (p->has_stack_id) {
                cJSON_AddItemToArray(arr, stack_to_json(ring, p->stack_id, sample_bytes, &p->thresholds, qualified));
                return arr;
        }
        sorted = malloc(MAX(newest->n_rows, (size_t)1) * sizeof(*sorted));
        if (!sorted) {
                cJSON_Delete(arr);
                return NULL;
        }
        for (size_t i = 0; i < newest->n_rows; i++)
                sorted[i] = newest->rows[i];
        qsort(sorted, newest->n_rows, sizeof(*sorted), by_bytes_desc);
        for (size_t i = 0; i < newest->n_rows && i < p->top; i++)
                cJSON_AddItemToArray(arr, stack_to_json(ring, sorted[i].stack_id, sample_bytes, &p->thresholds,
                                                                qualified));
        return arr;
}

/* What the target lost within the ring's window: its snapshots' counters, then now's. */
static int assess_losses(const struct snapshot_ring *ring, const uint64_t *now_counters, uint64_t now_usec,
                         struct loss_window *ret)
{
        uint32_t n = snapshot_ring_count(ring);
        _cleanup_free_ struct loss_point *points = calloc(n + 1, sizeof(*points));

        if (!points)
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
                const struct snapshot *s = snapshot_ring_get(ring, i);

                points[i] = (struct loss_point) {
                        .timestamp_usec = s->timestamp_usec, .counters = s->has_counters ? s->counters : NULL,
                };
        }
        points[n] = (struct loss_point) { .timestamp_usec = now_usec, .counters = now_counters };
        loss_window_assess(points, n + 1, ret);
        return 0;
}

cJSON *history_to_json(const struct snapshot_ring *ring, const struct target_json *target,
                       const uint64_t *now_counters, uint64_t now_usec, const struct history_params *p)
{
        struct target_json tj = *target;
        struct loss_window w = {};
        cJSON *o;

        assert(p);
        if (assess_losses(ring, now_counters, now_usec, &w) < 0)
                return NULL;
        tj.snapshots = snapshot_ring_count(ring);
        o = target_json_new(&tj);
        if (!o)
                return NULL;
        cJSON_AddItemToObject(o, RF_TOTALS, totals_to_json(ring));
        loss_window_add_json(o, &w);
        cJSON_AddItemToObject(o, RF_STACKS, stacks_to_json(ring, target->sample_bytes, p, w.total > 0));
        return o;
}
