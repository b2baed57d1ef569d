/* SPDX-License-Identifier: MIT */
/* A report's stacks, one at a time, each as an object with its "frames", however the report
 * carries them: memleakd asked for "locations" sends each distinct frame once, in the report's
 * "locations", and each stack's "locations" as indices into it, and memleakctl keeps each stack
 * as its text until it is read (json-raw.h); an older memleakd sends each stack whole. Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>

struct report_stacks {
        const cJSON *stacks;            /* the report's "stacks" */
        const cJSON **locations;        /* its "locations" by index (none: n_locations 0) */
        size_t n_locations;
};

/* rs over report: 0, -EBADMSG (no "stacks" array, or "locations" not an array of objects),
 * -ENOMEM. */
int report_stacks_init(struct report_stacks *rs, const cJSON *report);
void report_stacks_done(struct report_stacks *rs);

/* item (one of rs->stacks) as a new object with "frames": parsed when it is raw text, its
 * "locations" indices made into "frames" (references to the report's entries: valid while the
 * report is; a stack given whole keeps its own). With needs and fn, the stack's own strings are
 * mapped as json_strings_map() does. 0, -EBADMSG (not an object, an index out of range), -ENOMEM. */
int report_stacks_open(const struct report_stacks *rs, const cJSON *item, bool (*needs)(const char *s),
                       char *(*fn)(const char *s), cJSON **ret);

/* Every stack of report made an object in place (report_stacks_open's, the strings as they are),
 * for readers of a report of few stacks that want it whole. 0, -EBADMSG, -ENOMEM. */
int report_stacks_expand(cJSON *report);
