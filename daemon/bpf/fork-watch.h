/* SPDX-License-Identifier: GPL-2.0-only */
/* Hear when a traced process forks a child (BPF on sched_process_fork, through a ring buffer). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include "macro.h"

struct memleak_bpf;
struct fork_watch;

/* shares_memory: a vfork child (posix_spawn, system), in the parent's memory until it execs. */
typedef void (*fork_watch_fn)(void *userdata, pid_t parent, pid_t child, bool shares_memory);

/* Call fn on the event loop for each fork of a target, while active. */
int fork_watch_new(sd_event *e, struct memleak_bpf *skel, fork_watch_fn fn, void *userdata,
                   struct fork_watch **ret);
/* Link the fork program while some process is traced, and only then: no tracepoint of memleakd's
 * stays attached with nothing to trace. */
int fork_watch_set_active(struct fork_watch *w, bool active);
/* Call fn for the forks the ring holds now, before the event loop would (a report counts them). */
void fork_watch_drain(struct fork_watch *w);
struct fork_watch *fork_watch_free(struct fork_watch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fork_watch *, fork_watch_free)
