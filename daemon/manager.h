/* SPDX-License-Identifier: GPL-2.0-only */
/* The daemon's core: event loop, BPF state, targets, snapshot timer, socket, lifecycle. */
#pragma once

#include <stdint.h>
#include <systemd/sd-event.h>
#include "config.h"
#include "targets.h"

struct server;
struct symbolizer;
struct fork_watch;

struct manager {
        sd_event *event;
        struct memleakd_config config;
        char *config_path;              /* NULL: defaults only */
        struct target_env env;
        struct target **targets;
        size_t n_targets;
        struct server *server;
        sd_event_source *snapshot_timer;
        sd_event_source *children_timer;        /* clears the probes forked children inherited */
        struct fork_watch *forks;
        uint64_t exited_dropped;        /* exited targets' reports dropped to stay within bounds */
        uint64_t started_usec;          /* CLOCK_REALTIME */
        uint64_t started_mono_usec;
};

/* Takes ownership of config (moved) and config_path. */
int manager_new(struct memleakd_config *config, const char *config_path, struct manager **ret);
struct manager *manager_free(struct manager *m);
/* watchdog_usec: the unit's watchdog period (watchdog_stretch_for_startup()), 0 for none. */
int manager_run(struct manager *m, uint64_t watchdog_usec);

struct target *manager_find_target(struct manager *m, pid_t pid);
/* Replace an exited record of the same pid; EEXIST for a live one. */
int manager_add_target(struct manager *m, struct target *t);
void manager_remove_target(struct manager *m, struct target *t);
unsigned manager_live_targets(const struct manager *m);
/* The memory the records of exited targets hold. */
uint64_t manager_exited_bytes(const struct manager *m);
/* Mark the targets that exited and whose exit the event loop has not dispatched yet (a request
 * arriving right after a target's exit sees it exited, its report frozen). */
void manager_reap_exited_targets(struct manager *m);
