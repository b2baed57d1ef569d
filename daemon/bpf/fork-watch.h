/* SPDX-License-Identifier: GPL-2.0-only */
/* Hear when a traced process forks a child, execs or maps code of a file not examined yet (BPF
 * on sched_process_fork, sched_process_exec and mmap's return, through a ring buffer). */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include "bpf-types.h"
#include "macro.h"

struct memleak_bpf;
struct fork_watch;

/* e: a fork (e->child_tgid set), or an exec or a mapping of new code (e->child_tgid 0,
 * e->exec_kind), common/bpf-types.h. */
typedef void (*fork_watch_fn)(void *userdata, const struct fork_event *e);

/* Call fn on the event loop for each fork and exec of a target, while active. */
int fork_watch_new(sd_event *e, struct memleak_bpf *skel, fork_watch_fn fn, void *userdata,
                   struct fork_watch **ret);
/* Link the fork and code-mapping programs while some process is traced, and only then: no
 * tracepoint of memleakd's stays attached with nothing to trace. */
int fork_watch_set_active(struct fork_watch *w, bool active);
/* Call fn for the forks the ring holds now, before the event loop would (a report counts them);
 * nothing when fn itself calls it (the events after the one fn was called for come next). */
void fork_watch_drain(struct fork_watch *w);
struct fork_watch *fork_watch_free(struct fork_watch *w);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct fork_watch *, fork_watch_free)
