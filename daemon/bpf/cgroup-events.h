/* SPDX-License-Identifier: GPL-2.0-only */
/* Hear when a process enters a watched cgroup (BPF on sched_process_fork and sched_process_exec,
 * filtered by BPF's watched_cgroups, through a ring buffer of its own), and keep that map. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
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
/* Watch a program for watch_id: by its file (dev and ino as stat(2) gives them: the file a
 * process exec'd, an interpreter's for a script, as /proc/PID/exe) or by the name a process takes
 * at its exec (its first 15 bytes), or stop: 0 or a negative errno (-E2BIG: past
 * MEMLEAK_PROGRAM_WATCHES_MAX). Their events are CGROUP_EVENT_PROGRAM. */
int cgroup_events_watch_exe(struct cgroup_events *w, dev_t dev, ino_t ino, uint32_t watch_id);
int cgroup_events_unwatch_exe(struct cgroup_events *w, dev_t dev, ino_t ino);
int cgroup_events_watch_comm(struct cgroup_events *w, const char *comm, uint32_t watch_id);
int cgroup_events_unwatch_comm(struct cgroup_events *w, const char *comm);
/* The events about a program watched (by comm, or if NULL by dev and ino) the full ring could not
 * take: 0 and *ret, or a negative errno. */
int cgroup_events_program_lost(struct cgroup_events *w, const char *comm, dev_t dev, ino_t ino, uint64_t *ret);
/* The events about cgroup_id the full ring could not take: 0 and *ret, or a negative errno. */
int cgroup_events_lost(struct cgroup_events *w, uint64_t cgroup_id, uint64_t *ret);
/* Call fn for the events the ring holds now (not from fn itself). */
void cgroup_events_drain(struct cgroup_events *w);
struct cgroup_events *cgroup_events_free(struct cgroup_events *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgroup_events *, cgroup_events_free)
