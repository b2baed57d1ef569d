/* SPDX-License-Identifier: GPL-2.0-only */
/* A process's uprobes: on the objects named with --obj, or on the allocator that serves it (and
 * the other objects defining malloc & co, and C++'s operators), and later on what it dlopens. */
#pragma once

#include <stddef.h>
#include "detacher.h"
#include "target.h"

/* --obj: exactly these objects, every entry point each defines. */
int probes_attach_named(const struct target_env *env, struct target *t, char *const *objs, size_t n_objs,
                        char **error);

/* Discovery (or, before an exec, the program's planned files): the allocator that serves the
 * process and the rest, as the loader's lookup order says. */
int probes_attach_discovered(const struct target_env *env, struct target *t, char **error);

/* A rescan looks at the files a target mapped since the last one (dlopen) for allocator entry
 * points, on the worker thread, from a copy of its module map; on the event loop again, the
 * entry points it found get probes. */
struct probes_rescan;

/* An object a rescan found: probed (probes > 0), or why not. */
struct rescanned_object {
        char *path;
        size_t probes;
        unsigned forwarded;     /* operators left unprobed (target_object's) */
        char *error;
};

/* NULL (0) when t needs none (exited, the kernel, --obj named its objects, or it maps no file
 * its rescans have not looked at). -ENOMEM. */
int probes_rescan_new(const struct target_env *env, const struct target *t, struct probes_rescan **ret);
struct probes_rescan *probes_rescan_free(struct probes_rescan *r);
pid_t probes_rescan_pid(const struct probes_rescan *r);
/* worker_run_fn: look at the new files. */
void probes_rescan_run(void *rescan);
/* Probe what it found in t (the target it was made for), and remember the files it looked at.
 * What happened to each object goes in *ret (free with probes_rescanned_free()). */
int probes_rescan_finish(const struct target_env *env, struct target *t, struct probes_rescan *r,
                         struct rescanned_object **ret, size_t *ret_n);
void probes_rescanned_free(struct rescanned_object *o, size_t n);

/* Destroy t's links now (a failed attach, shutdown) ... */
void probes_destroy_links(struct target *t);
/* ... or hand them to w for the detacher. */
void probes_links_to_work(struct target *t, struct detach_work *w);

/* What clearing t's forked children's breakpoints needs: its probed objects and addresses. */
int probes_sweep_work(const struct target *t, struct detach_work *w);
