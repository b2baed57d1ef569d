/* SPDX-License-Identifier: GPL-2.0-only */
/* "counters" and "lost" (the daemon's, a target's, a report's): one object of counter name →
 * events, serialised once for status, report and the report's targets (pure). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "counters.h"

/* The event counters of totals (losses false: REPLY_COUNTERS) or its loss counters (losses true:
 * REPLY_LOST), in the counters' order; NULL without memory. */
cJSON *counters_json_new(const uint64_t totals[_COUNTER_MAX], bool losses);
