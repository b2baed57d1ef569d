/* SPDX-License-Identifier: GPL-2.0-only */
/* Which target: by pid, by id, the kernel's, those a request names, and a target's family (the
 * targets followed from its forks, and the exit hold of memleakctl run's program above it). Reads
 * the manager's list only: every other part of the manager finds its targets here. */
#include <assert.h>
#include <string.h>
#include "kernel-target.h"
#include "manager.h"
#include "protocol.h"

unsigned manager_live_targets(const struct manager *m)
{
        unsigned n = 0;

        assert(m);
        for (size_t i = 0; i < m->n_targets; i++)
                n += !target_phase_exited(m->targets[i]->phase);
        return n;
}

struct target *manager_find_target(struct manager *m, pid_t pid)
{
        struct target *exited = NULL;

        assert(m);
        /* the live one (at most one), else the newest of the exited ones kept (a pid reused) */
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];

                if (t->pid != pid)
                        continue;
                if (!target_phase_exited(t->phase))
                        return t;
                exited = t;
        }
        return exited;
}

struct target *manager_find_target_by_id(const struct manager *m, uint64_t id)
{
        assert(m);
        for (size_t i = 0; i < m->n_targets; i++)
                if (m->targets[i]->id == id)
                        return m->targets[i];
        return NULL;
}

struct target *manager_find_kernel_target(struct manager *m)
{
        assert(m);
        return manager_find_target(m, KERNEL_TARGET_PID);
}

/* t, then the target it was followed from, and so on up: the first that pred() accepts, or NULL.
 * Parents are older targets: the walk ends, at most one step per target. */
static const struct target *find_up(const struct manager *m, const struct target *t,
                                    bool (*pred)(const struct target *t, const void *arg), const void *arg)
{
        for (size_t steps = 0; t && steps <= m->n_targets; steps++) {
                if (pred(t, arg))
                        return t;
                t = t->parent_id ? manager_find_target_by_id(m, t->parent_id) : NULL;
        }
        return NULL;
}

static bool has_pid(const struct target *t, const void *pid)
{
        return t->pid == *(const pid_t *)pid;
}

static bool has_id(const struct target *t, const void *id)
{
        return t->id == *(const uint64_t *)id;
}

static bool holds_at_exit(const struct target *t, const void *unused)
{
        return t->exit_hold != NULL;
}

bool manager_target_in_family(const struct manager *m, const struct target *t, pid_t pid)
{
        assert(m);
        assert(t);
        return find_up(m, t, has_pid, &pid) != NULL;
}

bool manager_target_followed_from(const struct manager *m, const struct target *t, const struct target *ancestor)
{
        assert(m);
        assert(t);
        assert(ancestor);
        return t != ancestor && find_up(m, t, has_id, &ancestor->id) != NULL;
}

bool manager_request_names_target(const struct manager *m, const struct memleak_request *req,
                                  const struct target *t)
{
        assert(req);
        if (req->kernel)
                return t->kernel != NULL;
        /* a watch's name is unique among its kind's: the targets of one removed and made again
         * are the service's too */
        if (req->unit || req->cgroup)
                return t->watch_name && t->watch_is_unit == (req->unit != NULL) &&
                       strcmp(t->watch_name, req->unit ?: req->cgroup) == 0;
        if (!req->has_pid)
                return true;
        return req->children ? manager_target_in_family(m, t, req->pid) : t->pid == req->pid;
}

struct exit_hold *manager_family_hold(const struct manager *m, const struct target *t)
{
        const struct target *holder;

        assert(m);
        holder = t ? find_up(m, t, holds_at_exit, NULL) : NULL;
        return holder ? holder->exit_hold : NULL;
}

void manager_link_followed(struct manager *m)
{
        assert(m);
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];

                if (t->parent_id || t->parent_link.pid == 0)
                        continue;
                for (size_t k = 0; k < m->n_targets; k++) {
                        const struct target *p = m->targets[k];

                        if (p != t && !p->kernel && p->pid == t->parent_link.pid &&
                            p->proc_start_time == t->parent_link.start_time) {
                                t->parent_id = p->id;
                                break;
                        }
                }
        }
}
