/* SPDX-License-Identifier: GPL-2.0-only */
/* The slots of unwind_tables, the map of maps through which the walker reads each file's rows,
 * filled and emptied in batches: the kernel waits for an RCU grace period after each update or
 * delete of a map of maps (12 ms on the VM of bench/RESULTS.md, more under load), and once for a
 * whole batch update. A program mapping 48 files paid 48 waits to start and 48 more to go. */
#pragma once

#include <linux/bpf.h>
#include <stddef.h>
#include <stdint.h>

struct table_slots;
struct unwind_row;

/* The flags of every rows array, as bpf/unwind.h's struct unwind_rows has them (a map of maps
 * takes only inner maps of its template's flags): mmapable, so the rows are copied in, not
 * updated one element at a time (half a million rows: 115 ms of kernel time one by one). */
#define TABLE_SLOTS_ROWS_FLAGS (BPF_F_INNER_MAP | BPF_F_MMAPABLE)

/* n rows in a new BPF array for a slot (n == 0: none, -EINVAL); -errno. */
int table_slots_rows_map(const struct unwind_row *rows, size_t n, int *ret);

/* The n slots of tables_fd, all free; -errno. */
int table_slots_new(int tables_fd, uint32_t n, struct table_slots **ret);
/* Nothing is written to the map: it goes with the BPF object. */
struct table_slots *table_slots_free(struct table_slots *s);

/* A free slot, now taken, in *ret; -ENOSPC when every slot is taken or waits to be emptied. */
int table_slots_take(struct table_slots *s, uint32_t *ret);
/* A slot taken and never filled, free again. */
void table_slots_give_back(struct table_slots *s, uint32_t slot);

/* The rows map fds[i] into slots[i], for i < n, in one batch (in one at a time where the kernel
 * has no batch update for a map of maps); *ret_filled: how many, the first ones. Returns 0, or
 * the -errno of the first that failed. */
int table_slots_fill(struct table_slots *s, const uint32_t *slots, const int *fds, size_t n, size_t *ret_filled);

/* The table in slot is no longer wanted: the slot is emptied with the others released at the next
 * table_slots_flush(), and free from then on. */
int table_slots_release(struct table_slots *s, uint32_t slot);
/* Empty the slots released (an empty placeholder put in each, in one batch), freeing their rows.
 * Slots that could not be emptied stay released, for the next flush. */
void table_slots_flush(struct table_slots *s);
size_t table_slots_released(const struct table_slots *s);
