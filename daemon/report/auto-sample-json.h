/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's "auto_sample" member: when and at what mean memleakd turned it to sampling
 * (targets/auto-sample.h), null when it never did. Shared by status, attach, report, history. */
#pragma once

#include <cjson/cJSON.h>
#include "auto-sample.h"

/* Add "auto_sample" to o: 0 or -ENOMEM. */
int auto_sample_json_add(cJSON *o, const struct auto_sample_history *h);
