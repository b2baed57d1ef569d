/* SPDX-License-Identifier: GPL-2.0-only */
/* A stack's leak verdict over its target's snapshots, and those kept at a target's exit. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "macro.h"
#include "stack-verdict.h"

_Static_assert((unsigned)_LEAK_VERDICT_MAX == EXIT_VERDICT_KINDS, "an exited target keeps every verdict there is");

static double bytes_at(const struct snapshot *s, int64_t stack_id)
{
        const struct snapshot_row *r = snapshot_find_row(s, stack_id);

        return r ? (double)r->bytes : 0;
}

int stack_verdict_assess(const struct snapshot *history, size_t n, int64_t stack_id, uint64_t read_usec,
                         uint64_t bytes, uint64_t allocs, uint64_t sample_bytes,
                         const struct leak_verdict_thresholds *th, struct leak_assessment *ret)
{
        _cleanup_free_ struct leak_point *points = malloc((n + 1) * sizeof(*points));
        struct leak_verdict_thresholds t;
        uint64_t t0;
        size_t k = 0;

        assert(history || n == 0);
        assert(th);
        assert(ret);
        if (!points)
                return -ENOMEM;
        t0 = n > 0 ? history[0].timestamp_usec : read_usec;
        for (size_t i = 0; i < n; i++)
                points[k++] = (struct leak_point) {
                        .t_s = (double)(history[i].timestamp_usec - t0) / 1e6,
                        .bytes = bytes_at(&history[i], stack_id),
                };
        /* the read is the newest point of the series */
        if (n == 0 || read_usec > history[n - 1].timestamp_usec)
                points[k++] = (struct leak_point) { .t_s = (double)(read_usec - t0) / 1e6, .bytes = (double)bytes };
        t = *th;
        t.step_bytes = leak_verdict_step_bytes(sample_bytes, bytes, allocs);
        leak_verdict_assess(points, k, &t, ret);
        return 0;
}

static struct exit_verdict kept_of(int64_t stack_id, const struct leak_assessment *a)
{
        return (struct exit_verdict) {
                .stack_id = stack_id, .verdict = (uint32_t)a->verdict, .points_missing = a->points_missing,
                .slope_bytes_per_s = a->slope_bytes_per_s, .fit_r2 = a->fit_r2,
                .recent_growth_bytes = a->recent_growth_bytes, .first_bytes = a->first_bytes,
                .last_bytes = a->last_bytes,
        };
}

void stack_verdict_from_kept(const struct exit_verdict *k, struct leak_assessment *ret)
{
        assert(k);
        assert(ret);
        *ret = (struct leak_assessment) {
                .verdict = k->verdict < _LEAK_VERDICT_MAX ? (enum leak_verdict)k->verdict : LEAK_VERDICT_PENDING,
                .points_missing = k->points_missing, .slope_bytes_per_s = k->slope_bytes_per_s, .fit_r2 = k->fit_r2,
                .recent_growth_bytes = k->recent_growth_bytes, .first_bytes = k->first_bytes,
                .last_bytes = k->last_bytes,
        };
}

int stack_verdict_keep(const struct snapshot *history, size_t n, const struct stack_rows *rows, uint64_t exit_usec,
                       uint64_t sample_bytes, const struct leak_verdict_thresholds *th, struct exit_verdicts **ret)
{
        struct exit_verdicts *v = NULL;
        size_t heap = 0;
        int r;

        assert(history || n == 0);
        assert(rows);
        assert(th);
        assert(ret);
        for (size_t i = 0; i < rows->n; i++)
                heap += rows->rows[i].space == 0 && rows->rows[i].stack_id >= 0;
        if (heap == 0) {
                *ret = NULL;
                return 0;
        }
        v = calloc(1, sizeof(*v));
        if (!v || !(v->items = calloc(heap, sizeof(*v->items)))) {
                free(v);
                return -ENOMEM;
        }
        for (size_t i = 0; i < rows->n; i++) {
                const struct stack_row *row = &rows->rows[i];
                struct leak_assessment a;

                if (row->space != 0 || row->stack_id < 0)
                        continue;
                r = stack_verdict_assess(history, n, row->stack_id, exit_usec, row->bytes, row->allocs, sample_bytes,
                                         th, &a);
                if (r < 0) {
                        exit_verdicts_free(v);
                        return r;
                }
                v->items[v->n++] = kept_of(row->stack_id, &a);
        }
        /* a stack is one row of a target's heap: -EINVAL (twice) cannot come from frozen rows */
        if (exit_verdicts_sort(v) < 0) {
                exit_verdicts_free(v);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}
