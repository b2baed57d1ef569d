/* SPDX-License-Identifier: GPL-2.0-only */
/* A BPF ring buffer read on the event loop: each record handed to a callback as it comes, and on
 * demand (drain), never from inside a read of the same ring. */
#pragma once

#include <stddef.h>
#include <systemd/sd-event.h>
#include "macro.h"

struct loop_ring;

typedef void (*loop_ring_fn)(void *userdata, const void *record, size_t size);

/* Read the ring map map_fd on e, calling fn for each record: 0 and *ret, or -errno. description:
 * the event source's name (a static string). */
int loop_ring_new(sd_event *e, int map_fd, loop_ring_fn fn, void *userdata, const char *description,
                  struct loop_ring **ret);
/* Call fn for the records the ring holds now; nothing when called from fn itself. */
void loop_ring_drain(struct loop_ring *r);
struct loop_ring *loop_ring_free(struct loop_ring *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct loop_ring *, loop_ring_free)
