/* SPDX-License-Identifier: GPL-2.0-only */
/* How a target's user stacks are walked: the unwind tables of the files it maps, loaded once per
 * file (unwind-cache.h), and its list of executable mappings in BPF, kept current with its
 * module map. */
#pragma once

#include "target.h"

/* Set t up to be walked as mode says (no BPF work yet: target_unwind_refresh() does it). */
void target_unwind_init(const struct target_env *env, struct target *t, enum memleak_unwind mode);

/* Load the table of file (dev, ino), open as fd, for t (a program it is about to map), unless it
 * holds it already. */
int target_unwind_hold_file(struct target *t, uint64_t dev, uint64_t ino, int fd);

/* After t's module map changed: load the tables of files it maps that have none yet, and write
 * its mapping list to BPF when it differs from the last. -errno (the last list stays). */
int target_unwind_refresh(struct target *t);

/* BPF stops walking t by tables (its entry at target_slot, its target's slot, emptied); its
 * tables' references and its mapping list's slot go back. */
void target_unwind_done(struct target_unwind *u, uint32_t target_slot);

/* t exec'd: BPF emptied its mapping list (the old image's), the next refresh writes one again
 * whatever it holds. */
void target_unwind_execd(struct target *t);

/* Whether frames in file (dev, ino) are walked by its table now: loaded, with rows. */
bool target_unwind_walks_file(const struct target *t, uint64_t dev, uint64_t ino);

/* Whether a table of a file t holds is still being built. */
bool target_unwind_pending(const struct target *t);

struct target_unwind_stats {
        size_t tables;          /* files with rows */
        uint64_t rows;
        uint64_t bytes;         /* kernel memory of those rows (shared with other targets) */
        uint32_t mappings;      /* executable mappings the walker knows */
        unsigned mappings_dropped;
};

void target_unwind_get_stats(const struct target_unwind *u, struct target_unwind_stats *ret);
