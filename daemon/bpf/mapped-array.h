/* SPDX-License-Identifier: GPL-2.0-only */
/* A BPF array made with BPF_F_MMAPABLE, mapped into the daemon's memory to be read and written in
 * place (alloc_table, the combined table). */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

struct mapped_array {
        void *values;           /* n values of value_size bytes, shared with BPF */
        uint32_t n;
        size_t value_size;
        size_t bytes;           /* the mapping's length */
};

/* Map the array fd, whose values must be value_size bytes: 0 or -errno (-EINVAL: another size). */
int mapped_array_open(int fd, size_t value_size, struct mapped_array *ret);
void mapped_array_close(struct mapped_array *a);

/* In an array of slots that start with a state word (alloc_table's struct alloc_slot, the
 * combined table's struct combined_row: the tgid in its high 32 bits, enum alloc_slot_state in
 * its low 16), free every live (or, in the combined table, retiring) slot of pid's (its target
 * gone) by compare-and-swap, as BPF frees one, so that a CPU taking the slot now and this do not
 * both count it. Returns how many. */
int mapped_array_free_slots(const struct mapped_array *a, pid_t pid);
