/* SPDX-License-Identifier: GPL-2.0-only */
/* Numbered slots whose release takes effect only once a batch has emptied them: a slot of a BPF
 * map of maps given up is emptied with the others released since, in one update that waits for
 * an RCU grace period (no program still reads what it held after that), and only then handed out
 * again. Until then it is neither free nor its old holder's: a slot is never refilled while a
 * walk may still read it as the old holder's. No I/O: the caller empties the slots. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "slot-set.h"

struct slot_grace {
        struct slot_set slots;          /* taken: held, or released and not emptied yet */
        uint32_t *released;             /* released, to be emptied, oldest first */
        size_t n_released, n_allocated;
};

/* n slots, all free; -ENOMEM. */
int slot_grace_init(struct slot_grace *g, uint32_t n);
void slot_grace_done(struct slot_grace *g);

/* The lowest free slot, now held, in *ret; -ENOSPC when every slot is held or waits to be
 * emptied. */
int slot_grace_take(struct slot_grace *g, uint32_t *ret);
/* A slot taken and never filled: free again at once. */
void slot_grace_give_back(struct slot_grace *g, uint32_t slot);
/* A filled slot no longer wanted: queued to be emptied (not free yet). -ENOMEM when it cannot be
 * queued: the caller empties it alone, then gives it back. */
int slot_grace_release(struct slot_grace *g, uint32_t slot);
/* The slots released and not emptied yet, oldest first, and how many. */
const uint32_t *slot_grace_released(const struct slot_grace *g, size_t *ret_n);
/* The first n of slot_grace_released() are emptied and the grace period has passed: free again;
 * the others stay queued, oldest first. */
void slot_grace_emptied(struct slot_grace *g, size_t n);
