/* SPDX-License-Identifier: GPL-2.0-only */
/* A reachability scan's result (or why there is none) as bytes, and back: what an exited
 * target's kept report holds of the scan at its exit (memleakctl run), so that its verdicts,
 * which blocks were definitely or indirectly lost and which still reachable, outlive a restart.
 * Pure: no I/O (targets/exited-file carries the bytes). */
#pragma once

#include <stddef.h>
#include "reach-scan.h"

/* Most bytes of each of its strings (a message, why there is no scan). */
#define REACH_FILE_STRING_MAX 65536U

/* r (NULL: none) and why there is none (NULL: nothing to say): *ret (malloc'd) and *ret_n.
 * -ENOMEM. */
int reach_file_encode(const struct reach_result *r, const char *why, void **ret, size_t *ret_n);

/* Back from data (n bytes): *ret (reach_scan_result_free(); NULL when it held none) and *ret_why
 * (malloc'd; NULL when it said nothing). -EBADMSG when data is not a whole record this encoding
 * wrote (cut, out of range, its stacks not in order), -ENOMEM. */
int reach_file_decode(const void *data, size_t n, struct reach_result **ret, char **ret_why);
