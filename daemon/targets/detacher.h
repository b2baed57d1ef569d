/* SPDX-License-Identifier: GPL-2.0-only */
/* What stopping a target leaves to do, done in background threads: removing its probes (each
 * unregistration waits for a grace period, tens of milliseconds), purging what it left in the BPF
 * maps (a dump of the allocations map), and clearing the breakpoints its forked children
 * inherited. A pid with such work going is busy: a new attach to it waits, since two sets of
 * probes on one process must never be live at once; and while a purge goes on every pid is busy:
 * the room it frees in the maps is for the next target. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include "stack-collect.h"

struct bpf_link;
struct memleak_bpf;
struct mapping_log;
struct detacher;

/* An object whose inherited breakpoints go (bpf_loader_clear_inherited_uprobes()). */
struct sweep_object {
        int fd;                 /* the object file */
        uint64_t *offsets;
        size_t n_offsets;
};

/* The work for one pid; everything in it is the detacher's once submitted. */
struct detach_work {
        pid_t pid;
        struct bpf_link **links;
        size_t n_links;
        int *multi_fds;         /* uprobe_multi links */
        size_t n_multi_fds;
        struct sweep_object *sweeps;
        size_t n_sweeps;
        bool purge;             /* its entries in the maps, its stacks, its recorded mappings */
};

/* Free what w holds (work that will not be submitted). */
void detacher_work_done(struct detach_work *w);

/* On the event loop: pid's work is done (other pids may have become free with it). */
typedef void (*detacher_idle_fn)(void *userdata, pid_t pid);

int detacher_new(sd_event *e, struct memleak_bpf *skel, const struct map_limits *limits, struct mapping_log *log,
                 detacher_idle_fn on_idle, void *userdata, struct detacher **ret);
/* Wait for all the work to be done, then free. */
struct detacher *detacher_free(struct detacher *d);

/* Start w (taken, also on failure, when what could not start is done here). */
int detacher_submit(struct detacher *d, struct detach_work *w);
bool detacher_busy(struct detacher *d, pid_t pid);
/* Whether pid's own work is going, whatever the purges of others (a forked child to follow at
 * once does not wait for the room they free: it would be gone). */
bool detacher_pid_busy(struct detacher *d, pid_t pid);
