/* SPDX-License-Identifier: GPL-2.0-only */
/* Is a stack leaking? A verdict from its outstanding bytes over the snapshot ring (pure). */
#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include "leak-verdict.h"
#include "macro.h"
#include "string-table.h"

static const char *const leak_verdict_table[_LEAK_VERDICT_MAX] = {
        [LEAK_VERDICT_PENDING] = "pending",
        [LEAK_VERDICT_GROWING] = "growing",
        [LEAK_VERDICT_PLATEAU] = "plateau",
        [LEAK_VERDICT_CHURN] = "churn",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(leak_verdict, enum leak_verdict);

struct line {
        double slope, intercept, r2;
        double scatter;                 /* root mean square of the residuals */
};

/* Least squares over points[0..n), n >= 2. */
static struct line fit(const struct leak_point *p, size_t n)
{
        double mt = 0, mb = 0, stt = 0, stb = 0, sbb = 0, sse = 0;
        struct line l = {};

        for (size_t i = 0; i < n; i++) {
                mt += p[i].t_s;
                mb += p[i].bytes;
        }
        mt /= n;
        mb /= n;
        for (size_t i = 0; i < n; i++) {
                double dt = p[i].t_s - mt, db = p[i].bytes - mb;

                stt += dt * dt;
                stb += dt * db;
                sbb += db * db;
        }
        l.slope = stt > 0 ? stb / stt : 0;
        l.intercept = mb - l.slope * mt;
        for (size_t i = 0; i < n; i++) {
                double r = p[i].bytes - (l.intercept + l.slope * p[i].t_s);

                sse += r * r;
        }
        l.r2 = sbb > 0 ? 1 - sse / sbb : 1;
        l.scatter = sqrt(sse / n);
        return l;
}

static double max_of(const struct leak_point *p, size_t n)
{
        double m = -INFINITY;

        for (size_t i = 0; i < n; i++)
                m = MAX(m, p[i].bytes);
        return m;
}

static double min_of(const struct leak_point *p, size_t n)
{
        double m = INFINITY;

        for (size_t i = 0; i < n; i++)
                m = MIN(m, p[i].bytes);
        return m;
}

double leak_verdict_step_bytes(uint64_t sample_bytes, uint64_t bytes, uint64_t allocs)
{
        double block = allocs > 0 ? (double)bytes / (double)allocs : 0;

        return sample_bytes == 0 ? 0 : MAX((double)sample_bytes, block);
}

/* Does the series still reach new highs at its end: its last quarter's highest point above the
 * quarter's before it? A sampled series rises in steps, one per sample point; a last quarter
 * that merely ties may have caught no step by chance. Sample points come as a Poisson process:
 * at the recent trend, the quarter expects rise/step of them and catches none with probability
 * exp(-rise/step). A tie counts as still rising while that chance is above 1% (fewer than 4.6
 * steps expected); a stack that stopped is told once the quarter is long enough to expect more. */
static bool reaches_new_highs(const struct leak_point *last, const struct leak_point *before, size_t q,
                              double recent_slope, const struct leak_verdict_thresholds *th)
{
        double high = max_of(last, q), high_before = max_of(before, q);

        if (high > high_before)
                return true;
        if (th->step_bytes <= 0 || high < high_before || recent_slope <= 0)
                return false;
        return recent_slope * (last[q - 1].t_s - before[q - 1].t_s) < 4.6 * th->step_bytes;
}

void leak_verdict_assess(const struct leak_point *points, size_t n, const struct leak_verdict_thresholds *th,
                         struct leak_assessment *ret)
{
        const struct leak_point *recent, *last, *before;
        size_t n_recent, q;
        struct line line;
        double range;

        assert(points || n == 0);
        assert(th);
        assert(ret);
        *ret = (struct leak_assessment) {};
        if (n > 0) {
                ret->first_bytes = points[0].bytes;
                ret->last_bytes = points[n - 1].bytes;
        }
        if (n < MAX(th->min_points, 6u)) {
                ret->verdict = LEAK_VERDICT_PENDING;
                ret->points_missing = (uint32_t)(MAX(th->min_points, 6u) - n);
                return;
        }
        line = fit(points, n);
        ret->slope_bytes_per_s = line.slope;
        ret->fit_r2 = line.r2;
        /* the recent half; the last quarter of the points against the quarter before it */
        n_recent = n - n / 2;
        recent = points + n / 2;
        q = MAX(n / 4, (size_t)3);
        last = points + n - q;
        before = points + n - 2 * q;
        line = fit(recent, n_recent);
        ret->recent_growth_bytes = line.slope * (recent[n_recent - 1].t_s - recent[0].t_s);

        /* growing: the recent trend rises clearly above its own scatter, still reaches new highs
         * at the end (a stack that grew, then stopped, does not: reaches_new_highs()), and its
         * floor rose (buffers
         * that fill and empty come back down to where they were, whatever phase the window
         * caught them in) */
        if (ret->recent_growth_bytes > th->noise_factor * line.scatter &&
            ret->recent_growth_bytes > (double)th->flat_bytes &&
            reaches_new_highs(last, before, q, line.slope, th) &&
            min_of(last, q) > min_of(points, n / 2) + (double)th->flat_bytes) {
                ret->verdict = LEAK_VERDICT_GROWING;
                return;
        }
        range = max_of(last, q) - min_of(last, q);
        if (range <= (double)th->flat_bytes || range <= th->flat_ratio * max_of(last, q))
                ret->verdict = LEAK_VERDICT_PLATEAU;
        else
                ret->verdict = LEAK_VERDICT_CHURN;
}
