/* SPDX-License-Identifier: GPL-2.0-only */
/* Did a target lose events that bear on its verdicts within the snapshots they look at? (pure) */
#include <assert.h>
#include <string.h>
#include "counters.h"
#include "json-util.h"
#include "loss-window.h"
#include "reply-fields.h"

bool loss_window_blinds(enum memleak_counter c)
{
        switch (c) {
        case COUNTER_LOST_ALLOCS_MAP_FULL:
        case COUNTER_LOST_COMBINED_MAP_FULL:
        case COUNTER_LOST_NO_THREAD_STATE:
        case COUNTER_STACK_TABLE_FULL:
        case COUNTER_STACK_HASH_CLASH:
        case COUNTER_STACK_NO_SCRATCH:
        case COUNTER_LOST_MMAPS_MAP_FULL:
                return true;
        default:
                return false;
        }
}

static uint64_t blinding_sum(const uint64_t *counters)
{
        uint64_t sum = 0;

        for (int c = 0; c < _COUNTER_MAX; c++)
                if (loss_window_blinds(c))
                        sum += counters[c];
        return sum;
}

void loss_window_assess(const struct loss_point *points, size_t n, struct loss_window *ret)
{
        const struct loss_point *first = NULL, *prev = NULL;

        assert(points || n == 0);
        assert(ret);
        memset(ret, 0, sizeof(*ret));
        for (size_t i = 0; i < n; i++) {
                const struct loss_point *p = &points[i];

                if (!p->counters)
                        continue;
                if (!first)
                        first = p;
                /* a rise between the point before and this one: lost in between */
                if (prev && blinding_sum(p->counters) > blinding_sum(prev->counters)) {
                        if (ret->since_usec == 0)
                                ret->since_usec = prev->timestamp_usec;
                        ret->latest_usec = p->timestamp_usec;
                }
                prev = p;
        }
        if (!first || first == prev)
                return;
        for (int c = 0; c < _COUNTER_MAX; c++) {
                /* counters only rise; a row read as less (a new base) counts nothing */
                if (!loss_window_blinds(c) || prev->counters[c] <= first->counters[c])
                        continue;
                ret->lost[c] = prev->counters[c] - first->counters[c];
                ret->total += ret->lost[c];
        }
        if (ret->total == 0)
                ret->since_usec = ret->latest_usec = 0;
}

void loss_window_add_json(cJSON *o, const struct loss_window *w)
{
        cJSON *in_window;

        assert(w);
        if (!o)
                return;
        cJSON_AddBoolToObject(o, RF_VERDICTS_QUALIFIED, w->total > 0);
        if (w->total > 0)
                json_add_u64(o, RF_BLIND_SINCE, w->since_usec / 1000000);
        else
                cJSON_AddNullToObject(o, RF_BLIND_SINCE);
        in_window = cJSON_AddObjectToObject(o, RF_LOST_IN_WINDOW);
        for (int c = 0; in_window && c < _COUNTER_MAX; c++)
                if (w->lost[c] > 0)
                        json_add_u64(in_window, counters_to_string(c), w->lost[c]);
}
