/* SPDX-License-Identifier: MIT */
/* A CI gate over a report (memleakctl run and leaks --error-exitcode): the stacks a suppressions
 * file names taken out and counted, then a pass or fail on what is left (pure: cJSON in, cJSON
 * out, no I/O). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "suppressions.h"

/* The verdicts a gate fails on (--fail-on). */
enum {
        GATE_LOST        = 1u << 0,     /* a block definitely or indirectly lost (a scan's classes) */
        GATE_GROWING     = 1u << 1,     /* a stack whose verdict is "growing" */
        GATE_OUTSTANDING = 1u << 2,     /* any block still outstanding (heap or mapping) */
};

/* "lost,growing,outstanding" (a comma list, each once at most) as a mask. -EINVAL: an empty
 * list, an empty item, an unknown name. */
int gate_kinds_parse(const char *list, unsigned *ret);

/* The names of mask's kinds, comma-separated, into buf (the order above). */
const char *gate_kinds_to_string(unsigned mask, char *buf, size_t size);

struct gate_tally {
        uint64_t stacks, allocs, bytes;
};

struct gate_result {
        unsigned fail_on;
        struct gate_tally suppressed;           /* the stacks the suppressions took out */
        struct gate_tally *patterns;            /* the same by suppression (sup->n of them) */
        struct gate_tally lost, growing, outstanding;   /* the stacks left that fail each */
        cJSON *undecided;       /* array of strings: why a verdict asked for could not be decided */
        bool failed;            /* a stack failed, or a verdict asked for could not be decided */
};

void gate_result_done(struct gate_result *r);

/* Over report (a report reply's "report" object), in place: every stack of "stacks" that sup
 * matches (sup may be NULL) is taken out and counted, in ret->suppressed and ret->patterns;
 * the stacks left are judged for fail_on (0: nothing); then, keep being the stacks to list,
 * those past it are folded into "other" (its counts added to), as memleakd folds them.
 * Adds "suppressed" (with sup) and "gate" (with fail_on) to report.
 *
 * A verdict that cannot be decided fails the gate, its reason in ret->undecided: "lost" for a
 * target with heap blocks left that was not scanned (or whose scan is partial); "growing" for
 * a stack with no verdict (no snapshot yet, "pending": an exited target's kept from its exit, so
 * a program that ran shorter than verdict_min_snapshots snapshots cannot be decided) or a target
 * whose verdicts are qualified (it lost allocations within its snapshots); any, for stacks
 * memleakd did not list
 * ("other" already counting stacks: the report must be asked for every stack).
 * Returns 0 or -ENOMEM. error_exitcode is only written into "gate". */
int gate_apply(cJSON *report, const struct suppressions *sup, unsigned fail_on, int error_exitcode, uint64_t keep,
               struct gate_result *ret);
