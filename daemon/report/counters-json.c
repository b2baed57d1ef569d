/* SPDX-License-Identifier: GPL-2.0-only */
/* The BPF counters as a reply shows them (pure). */
#include "counters-json.h"
#include "json-util.h"

cJSON *counters_json_new(const uint64_t totals[_COUNTER_MAX], bool losses)
{
        cJSON *o = cJSON_CreateObject();

        for (int c = 0; o && c < _COUNTER_MAX; c++)
                if (counters_is_loss(c) == losses)
                        json_add_u64(o, counters_to_string(c), totals[c]);
        return o;
}
