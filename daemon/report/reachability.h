/* SPDX-License-Identifier: GPL-2.0-only */
/* Which outstanding blocks nothing points to (pure): the conservative mark LeakSanitizer and
 * valgrind's memcheck do, on memory read from a stopped process. Every aligned 8-byte word of the
 * roots (writable segments, thread stacks, registers) that holds an address inside a block (its
 * start or any byte of it) reaches that block, and every block reached is scanned in turn. What
 * is not reached is lost: "indirectly" when another lost block points to it, "definitely"
 * otherwise; a cycle of lost blocks has one definitely lost block (the first in address order,
 * as memcheck's clique leader) and the rest indirectly lost. */
#pragma once

#include <stddef.h>
#include <stdint.h>

enum reachability {
        REACHABILITY_STILL_REACHABLE = 0,
        REACHABILITY_DEFINITELY_LOST,
        REACHABILITY_INDIRECTLY_LOST,
        _REACHABILITY_MAX,
};

const char *reachability_to_string(enum reachability r);

/* An outstanding block and its contents (bytes NULL when they could not be read: it is still
 * classified, but reaches nothing). */
struct reach_block {
        uint64_t addr;
        uint64_t size;
        const uint8_t *bytes;
};

/* A root: memory that is live by definition, and what it held. */
struct reach_root {
        uint64_t addr;
        const uint8_t *bytes;
        size_t size;
};

/* blocks[0..n_blocks) sorted by addr, not overlapping. ret[i] is blocks[i]'s class. -ENOMEM. */
int reachability_classify(const struct reach_block *blocks, size_t n_blocks, const struct reach_root *roots,
                          size_t n_roots, enum reachability *ret);
