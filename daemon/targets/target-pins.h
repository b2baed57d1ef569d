/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's probe links pinned in bpffs: they keep recording its allocations and frees while no
 * daemon runs, and the next daemon takes them back (adopts it). A pin is named
 * "s<slot>-<gen>-<n>": the target's slot, the daemon's generation (hex), a number. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "target.h"

/* Pin link_fd, one of t's links (nothing when t's links are not pinned). -errno (counted). */
int target_pins_add(struct target *t, int link_fd);
/* Remove t's pins (its links then go when closed), unless they are kept (keep_pins). */
void target_pins_remove(struct target *t);
/* Take back the links an earlier daemon pinned for t's slot: each reopened into t's links and
 * pinned again under this daemon's generation, the old pin removed. Returns how many, or -errno. */
int target_pins_adopt(struct target *t);
/* Hold the links an earlier daemon pinned for t's slot, which record t until its own probes take
 * over (target_take_over()): each reopened into t->links.inherited_fds, its pin left for
 * target_pins_sweep(). Returns how many, or -errno. */
int target_pins_inherit(struct target *t);
/* Remove the pins in dir of every other generation than gen (those no target adopted): returns
 * how many, or -errno. */
int target_pins_sweep(const char *dir, uint64_t gen);
/* A link of the daemon's own, pinned in dir as "<name>-<gen>" (name without '-'); removed. */
int target_pins_pin_named(const char *dir, uint64_t gen, const char *name, int link_fd);
void target_pins_unpin_named(const char *dir, uint64_t gen, const char *name);
