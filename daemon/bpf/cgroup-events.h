/* SPDX-License-Identifier: GPL-2.0-only */
/* Hear when a process enters a watched cgroup (BPF on sched_process_fork and sched_process_exec,
 * filtered by BPF's watched_cgroups, through a ring buffer of its own), and keep that map. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include "bpf-types.h"
#include "macro.h"

struct memleak_bpf;
struct cgroup_events;

typedef void (*cgroup_events_fn)(void *userdata, const struct cgroup_event *e);

/* Call fn on the event loop for each process that enters a watched cgroup, while active. */
int cgroup_events_new(sd_event *e, struct memleak_bpf *skel, cgroup_events_fn fn, void *userdata,
                      struct cgroup_events **ret);
/* Link the two programs while some cgroup is watched, and only then. */
int cgroup_events_set_active(struct cgroup_events *w, bool active);
/* Watch cgroup_id for watch_id (again: its lost count kept), or stop: 0 or a negative errno
 * (-E2BIG: MEMLEAK_CGROUP_WATCHES_MAX cgroups are watched already). */
int cgroup_events_watch(struct cgroup_events *w, uint64_t cgroup_id, uint32_t watch_id);
int cgroup_events_unwatch(struct cgroup_events *w, uint64_t cgroup_id);
/* The events about cgroup_id the full ring could not take: 0 and *ret, or a negative errno. */
int cgroup_events_lost(struct cgroup_events *w, uint64_t cgroup_id, uint64_t *ret);
/* Call fn for the events the ring holds now (not from fn itself). */
void cgroup_events_drain(struct cgroup_events *w);
struct cgroup_events *cgroup_events_free(struct cgroup_events *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgroup_events *, cgroup_events_free)
