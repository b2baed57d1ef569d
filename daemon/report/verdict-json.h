/* SPDX-License-Identifier: GPL-2.0-only */
/* A stack's verdict as a report and a history show it, serialised once (pure). */
#pragma once

#include <stdbool.h>
#include <cjson/cJSON.h>
#include "leak-verdict.h"

/* Add "verdict", then "snapshots_missing" (pending) or "growth_bytes_per_s" (to 0.1 B/s),
 * "first_bytes" and "verdict_qualified" (its target lost allocations within the window: the
 * series may miss some of the stack's) to o (REPLY_VERDICT). */
void verdict_json_add(cJSON *o, const struct leak_assessment *a, bool qualified);
