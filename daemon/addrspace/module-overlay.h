/* SPDX-License-Identifier: GPL-2.0-only */
/* Lay the file mappings BPF recorded as a target made them over its module map: what it mapped
 * later wins where they overlap (pure). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "module-map.h"

struct recorded_mapping {
        uint64_t start, end, pgoff;
        uint64_t dev, ino;      /* dev in makedev() form, as struct module_mapping has it */
        uint64_t mm;            /* the address space: an exec starts a new one */
        uint64_t timestamp_ns;
};

/* Keep the mappings of the address space the newest one belongs to (the program the process
 * runs now), oldest first; returns how many are left at the front of m. */
size_t module_overlay_latest(struct recorded_mapping *m, size_t n);

/* The path a target sees for file (dev, ino); NULL when unknown. */
typedef const char *(*module_path_fn)(void *userdata, uint64_t dev, uint64_t ino);

/* Overlay m[0..n) (oldest first) on mm: each clears what it overlaps (cutting older mappings, their
 * offsets kept right) and takes its place, named by path_of (one it cannot name only clears).
 * Mappings recorded before mm was read (mm->read_ns) are skipped: the view has them, or they were
 * unmapped before it was taken (a file the loader maps for a moment, whose addresses JIT code may
 * take next). mm stays sorted by address. On failure mm is unchanged. */
int module_overlay_apply(struct module_map *mm, const struct recorded_mapping *m, size_t n,
                       module_path_fn path_of, void *userdata);
