/* SPDX-License-Identifier: GPL-2.0-only */
/* A stack's leak verdict and what it rests on, as replies show it (pure). */
#include <math.h>
#include "json-util.h"
#include "reply-fields.h"
#include "verdict-json.h"

void verdict_json_add(cJSON *o, const struct leak_assessment *a, bool qualified)
{
        cJSON_AddStringToObject(o, RF_VERDICT, leak_verdict_to_string(a->verdict));
        if (a->verdict == LEAK_VERDICT_PENDING)
                cJSON_AddNumberToObject(o, RF_SNAPSHOTS_MISSING, a->points_missing);
        else
                cJSON_AddNumberToObject(o, RF_GROWTH_BYTES_PER_S, round(a->slope_bytes_per_s * 10) / 10);
        json_add_u64(o, RF_FIRST_BYTES, (uint64_t)a->first_bytes);
        cJSON_AddBoolToObject(o, RF_VERDICT_QUALIFIED, qualified);
}
