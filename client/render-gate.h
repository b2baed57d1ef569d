/* SPDX-License-Identifier: MIT */
/* What a suppressions file took out of a report, as text: LeakSanitizer's "Suppressions used:"
 * (pure: cJSON in, text out). */
#pragma once

#include <stdio.h>
#include <cjson/cJSON.h>

/* From obj's "suppressed" (a report, or leaks' object; nothing without one):
 *   Suppressed: 500 bytes in 5 blocks by 1 stack (ci/lsan.supp)
 *   Suppressions used:
 *     stacks   blocks      bytes  pattern
 *          1        5        500  leak_malloc (line 2)
 * each pattern that matched a stack, in the file's order. 0, -EIO when the stream failed. */
int render_suppressed(FILE *f, const cJSON *obj);

/* render_report (or render_report_with_addresses), then render_suppressed: run's and report's
 * text. */
int render_report_suppressed(FILE *f, const cJSON *report);
int render_report_with_addresses_suppressed(FILE *f, const cJSON *report);
