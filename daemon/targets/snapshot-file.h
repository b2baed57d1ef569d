/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's snapshot ring as bytes, and back: what a restart keeps of its history (written by
 * the daemon at each tick, read when it adopts the target). Pure: no I/O. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "snapshot.h"

/* The ring's snapshots, oldest first, with their rows and counters, and a checksum: *ret
 * (malloc'd) and *ret_n. -ENOMEM. */
int snapshot_file_encode(const struct snapshot_ring *r, void **ret, size_t *ret_n);
/* Push the snapshots data (n bytes) holds onto r, oldest first (r keeps its depth: the newest
 * depth stay). 0; -EBADMSG when data is not a whole ring this encoding wrote (cut, altered, rows
 * out of order), r then unchanged; -ENOMEM. */
int snapshot_file_decode(const void *data, size_t n, struct snapshot_ring *r);
