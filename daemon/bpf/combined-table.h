/* SPDX-License-Identifier: GPL-2.0-only */
/* BPF's combined table (the per-stack totals, bpf/combined-table.h) read in place; purged by
 * mapped_array_free_slots(). */
#pragma once

#include <stdint.h>
#include <sys/types.h>
#include "bpf-types.h"
#include "mapped-array.h"

/* Called for a live or retiring row (daemon/bpf/reclaim.h): its key and totals. A negative errno stops the walk and is returned. */
typedef int (*combined_row_fn)(const struct combined_key *key, int64_t bytes, int64_t allocs, void *userdata);

/* Call fn for each live or retiring row of the mapped table t (mapped_array_open() with struct combined_row
 * values), rows at zero among them. A key may have more than one row (two CPUs made its row at
 * once): its totals are their sum. A row BPF is updating may come out with its bytes and allocs
 * a step apart. 0, or what fn returned. */
int combined_table_for_each(const struct mapped_array *t, combined_row_fn fn, void *userdata);

