/* SPDX-License-Identifier: GPL-2.0-only */
/* A fixed number of numbered slots, each free or taken: the slots of a BPF array that things
 * occupy while they live (a target's entry, a loaded table). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

struct slot_set {
        uint8_t *taken;
        uint32_t n;
};

/* n slots, all free; -ENOMEM. */
int slot_set_init(struct slot_set *s, uint32_t n);
/* The lowest free slot, now taken, in *ret; -ENOSPC when every slot is taken. */
int slot_set_take(struct slot_set *s, uint32_t *ret);
/* That slot taken: 0, -EBUSY when it is already, -ERANGE out of range. */
int slot_set_take_at(struct slot_set *s, uint32_t slot);
/* Slot given back (a slot out of range, or free already, is left as it is). */
void slot_set_give_back(struct slot_set *s, uint32_t slot);
bool slot_set_is_taken(const struct slot_set *s, uint32_t slot);
void slot_set_done(struct slot_set *s);
