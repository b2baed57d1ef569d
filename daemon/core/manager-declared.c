/* SPDX-License-Identifier: GPL-2.0-only */
/* The processes memleakd.conf declares ([target] sections: config-targets.h), each made a watch
 * (manager-watch.c) as soon as what it names is there, and kept so while it is declared. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "config-targets.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "util.h"

struct declared_target {
        struct config_targets decl;     /* one section, a copy of the config's */
        uint32_t watch_id;              /* 0: not watched yet (waiting for what it names) */
        bool ended;                     /* its watch ended by a detach request: not made again */
        int said;                       /* the error last logged for it (0: none) */
};

static void declared_done(struct declared_target *d)
{
        config_targets_done(&d->decl);
}

void manager_declared_free(struct manager *m)
{
        assert(m);
        for (size_t i = 0; i < m->n_declared; i++)
                declared_done(&m->declared[i]);
        free(m->declared);
        m->declared = NULL;
        m->n_declared = 0;
}

static bool still_declared(const struct manager *m, const struct config_target *t)
{
        for (size_t i = 0; i < m->config.targets.n; i++)
                if (config_targets_same(&m->config.targets.v[i], t))
                        return true;
        return false;
}

static bool known(const struct manager *m, const struct config_target *t)
{
        for (size_t i = 0; i < m->n_declared; i++)
                if (config_targets_same(&m->declared[i].decl.v[0], t))
                        return true;
        return false;
}

/* Its watch made now, if what it names is there: logged once per kind of failure. */
static void try_watch(struct manager *m, struct declared_target *d)
{
        const struct config_target *t = &d->decl.v[0];
        _cleanup_free_ char *error = NULL;
        struct follower_options o = {
                .filter = {
                        .min_size = t->min_size ? t->min_size : m->config.min_size,
                        .max_size = t->max_size ? t->max_size : m->config.max_size,
                        .sample_bytes = t->sample_bytes ? t->sample_bytes : m->config.sample_bytes,
                },
                .objs = (char **)t->objs, .n_objs = t->n_objs, .track_mmap = t->mmap,
                .unwind = t->unwind != MEMLEAK_UNWIND_DEFAULT ? t->unwind : m->config.unwind,
        };
        struct memleak_request req = {};
        uint32_t id = 0;
        int r;

        switch (t->match) {
        case CONFIG_TARGET_UNIT:
        case CONFIG_TARGET_CGROUP:
                if (t->match == CONFIG_TARGET_UNIT)
                        req.unit = t->value;
                else
                        req.cgroup = t->value;
                r = manager_watch_add(m, &req, &o, &id, &error);
                break;
        case CONFIG_TARGET_EXE:
        case CONFIG_TARGET_COMM:
                r = manager_watch_add_program(m, t->match == CONFIG_TARGET_COMM, t->value, &o, &id, &error);
                break;
        default:
                return;
        }
        if (r >= 0) {
                manager_watch_set_declared(m, id);
                d->watch_id = id;
                d->said = 0;
                log_info("Watching %s %s, as %s declares", config_targets_match_name(t->match), t->value,
                         t->where);
                return;
        }
        if (r == d->said)
                return;
        d->said = r;
        if (r == -ENOENT)
                log_info("%s declares %s %s, which is not there yet: watched once it is (%s)", t->where,
                         config_targets_match_name(t->match), t->value, error ?: strerror(-r));
        else
                log_warning("%s declares %s %s, which cannot be watched now (tried again at each snapshot "
                            "tick): %s", t->where, config_targets_match_name(t->match), t->value,
                            error ?: strerror(-r));
}

void manager_declared_sync(struct manager *m)
{
        size_t k = 0;

        assert(m);
        /* withdrawn at a reload: ended, their processes detached */
        for (size_t i = 0; i < m->n_declared; i++) {
                struct declared_target *d = &m->declared[i];

                if (still_declared(m, &d->decl.v[0])) {
                        m->declared[k++] = *d;
                        continue;
                }
                log_info("%s %s is no longer declared", config_targets_match_name(d->decl.v[0].match),
                         d->decl.v[0].value);
                if (d->watch_id && manager_watch_live(m, d->watch_id))
                        manager_watch_end(m, d->watch_id);
                declared_done(d);
        }
        m->n_declared = k;
        /* new ones */
        for (size_t i = 0; i < m->config.targets.n; i++) {
                const struct config_target *t = &m->config.targets.v[i];
                struct config_targets one = { .v = (struct config_target *)t, .n = 1 };
                struct declared_target *grown;

                if (known(m, t))
                        continue;
                grown = reallocarray(m->declared, m->n_declared + 1, sizeof(*grown));
                if (!grown) {
                        log_warning("Out of memory: %s is not watched", t->where);
                        continue;
                }
                m->declared = grown;
                grown[m->n_declared] = (struct declared_target) {};
                if (config_targets_copy(&one, &grown[m->n_declared].decl) < 0) {
                        log_warning("Out of memory: %s is not watched", t->where);
                        continue;
                }
                m->n_declared++;
        }
        /* those not watched yet, or no more (a detach request ended it: left so) */
        for (size_t i = 0; i < m->n_declared; i++) {
                struct declared_target *d = &m->declared[i];

                if (d->ended)
                        continue;
                if (d->watch_id && !manager_watch_live(m, d->watch_id)) {
                        d->ended = true;
                        log_info("The watch of %s %s (%s) was ended by request: not made again until memleakd "
                                 "reloads or restarts", config_targets_match_name(d->decl.v[0].match),
                                 d->decl.v[0].value, d->decl.v[0].where);
                        continue;
                }
                if (!d->watch_id)
                        try_watch(m, d);
        }
}
