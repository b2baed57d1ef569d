/* SPDX-License-Identifier: GPL-2.0-only */
/* The requests the manager answers: validated at the edge, checked against who asks, dispatched
 * through the command table, the reply serialised. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bpf-loader.h"
#include "counters.h"
#include "counters-json.h"
#include "detacher.h"
#include "json-util.h"
#include "kernel-symbols.h"
#include "history.h"
#include "kernel-target.h"
#include "exit-hold.h"
#include "log.h"
#include "manager-bpf.h"
#include "manager-report.h"
#include "map-budget.h"
#include "map-memory.h"
#include "manager-requests.h"
#include "manager.h"
#include "auto-sample.h"
#include "reply-fields.h"
#include "stack-totals.h"
#include "target-blocks.h"
#include "protocol.h"
#include "server.h"
#include "snapshot.h"
#include "symbolizer.h"
#include "target-unwind.h"
#include "text-safe.h"
#include "table-store.h"
#include "target-json.h"
#include "unwind-cache.h"
#include "util.h"

/* A command: answers req, now (server_request_reply()) or later. */
typedef void (*command_fn)(struct manager *m, struct server_request *sreq, struct memleak_request *req);

static void reply_error(struct server_request *sreq, uint64_t id, int r, const char *message)
{
        server_request_reply(sreq, memleak_response_new_error(id, -r, message ? message : strerror(-r)));
}

/* Names a traced process chose (its comm, its paths) may be any bytes: the wire carries valid
 * UTF-8 only. */
static void reply(struct server_request *sreq, cJSON *r)
{
        if (r && json_strings_map(r, utf8_needs_repair, utf8_repair) < 0) {
                cJSON_Delete(r);
                r = NULL;
        }
        server_request_reply(sreq, r);
}

/* How its stacks are walked: "dwarf" by the tables of its files (those it holds, how big), "fp";
 * and (memleakctl run) how often and how long it was held at new code for them. */
static void add_unwind(cJSON *o, const struct target *t)
{
        const struct target_unwind *u = &t->unwind;
        struct target_unwind_stats st;
        cJSON *w = cJSON_AddObjectToObject(o, RF_UNWIND), *held;

        if (!w)
                return;
        target_unwind_get_stats(u, &st);
        cJSON_AddStringToObject(w, RF_MODE, memleak_unwind_to_string(u->mode) ?: "fp");
        cJSON_AddNumberToObject(w, RF_TABLES, (double)st.tables);
        json_add_u64(w, RF_ROWS, st.rows);
        json_add_u64(w, RF_TABLE_BYTES, st.bytes);
        cJSON_AddNumberToObject(w, RF_MAPPINGS, st.mappings);
        cJSON_AddNumberToObject(w, RF_MAPPINGS_DROPPED, st.mappings_dropped);
        held = cJSON_AddObjectToObject(w, RF_HELD_AT_NEW_CODE);
        if (!held)
                return;
        json_add_u64(held, RF_HOLDS, t->code_hold_stats.holds);
        cJSON_AddNumberToObject(held, RF_HELD_MS, (double)t->code_hold_stats.held_usec / 1000.0);
        cJSON_AddNumberToObject(held, RF_LONGEST_MS, (double)t->code_hold_stats.longest_usec / 1000.0);
        json_add_u64(held, RF_PAST_LIMIT, t->code_hold_stats.past_limit);
}

/* A target as status, attach and detach show it: its fields every reply has, then its objects
 * and how its stacks are walked. */
static cJSON *target_to_json(const struct target *t)
{
        cJSON *o = target_json_new(&(struct target_json) {
                .pid = t->pid, .comm = t->comm, .exited = target_phase_exited(t->phase),
                .has_attach = true, .mmap = t->track_mmap,
                .attached_s = (now_realtime_usec() - t->attached_usec) / 1000000,
                .allocator = t->allocator, .allocator_reason = t->allocator_reason,
                .snapshots = snapshot_ring_count(t->ring),
                .sample_bytes = t->filter.sample_bytes > 1 ? t->filter.sample_bytes : 0,
                .auto_sample = &t->auto_sample,
                .children_forked = t->children_forked, .follow_forks = t->follow_forks,
                .children_followed = t->children_followed, .forked_from = t->parent_pid,
                .children_missed = t->children_missed, .children_missed_exited = t->children_missed_exited,
                .watch_name = t->watch_name, .watch_is_unit = t->watch_is_unit,
        });
        cJSON *objs;

        if (!o)
                return NULL;
        cJSON_AddStringToObject(o, RF_PHASE, target_phase_to_string(t->phase));
        cJSON_AddBoolToObject(o, RF_ADOPTED, t->adopted);
        objs = cJSON_AddArrayToObject(o, RF_OBJECTS);
        for (size_t i = 0; objs && i < t->n_objects; i++) {
                cJSON *ob = cJSON_CreateObject();

                cJSON_AddStringToObject(ob, RF_PATH, t->objects[i].path);
                cJSON_AddNumberToObject(ob, RF_PROBES, t->objects[i].probes);
                cJSON_AddNumberToObject(ob, RF_FORWARDED, t->objects[i].forwarded);
                cJSON_AddStringToObject(ob, RF_ROLE, target_object_role_to_string(t->objects[i].role));
                cJSON_AddItemToArray(objs, ob);
        }
        if (!t->kernel)
                add_unwind(o, t);
        return o;
}

static void reply_target(struct server_request *sreq, uint64_t id, const struct target *t)
{
        cJSON *r = memleak_response_new_ok(id);

        if (r)
                cJSON_AddItemToObject(r, RF_TARGET, target_to_json(t));
        reply(sreq, r);
}

/* The kernel target's settings: the size bounds, and which allocating task to record. */
static struct target_config kernel_filter(const struct memleak_request *req, const struct target_config *sizes)
{
        struct target_config c = *sizes;

        c.filter_pid = (uint32_t)req->kernel_pid;
        c.filter_comm_set = req->kernel_comm[0] != '\0';
        memcpy(c.filter_comm, req->kernel_comm, MIN(sizeof(c.filter_comm), sizeof(req->kernel_comm)));
        return c;
}

static void log_kernel_symbols(const struct target *t)
{
        int r = t->kernel ? kernel_symbols_error(t->kernel) : 0;

        if (r == -EPERM)
                log_warning("Kernel addresses in /proc/kallsyms are hidden from memleakd (kptr_restrict): "
                            "kernel frames are shown as addresses; memleakd needs CAP_SYSLOG for them");
        else if (r < 0)
                log_warning_errno(r, "Cannot read /proc/kallsyms, kernel frames are shown as addresses: %m");
}

/* The one place an attach is answered: with why it failed (r < 0), or with its target, whose
 * children are then followed (follow_forks). */
static void answer_attach(struct manager *m, struct server_request *sreq, uint64_t id, struct target *t, int r,
                          const char *error)
{
        if (r < 0) {
                reply_error(sreq, id, r, error);
                return;
        }
        reply_target(sreq, id, t);
        manager_follow_existing_children(m, t);
}

/* Answer the attach of t once the tables of the files it maps (or its program will) are built:
 * what it allocates before is walked by frame pointer only, and a program memleakctl run starts
 * would make its first allocations then. */
static int await_tables(struct manager *m, struct server_request *sreq, uint64_t id, const struct target *t)
{
        return pending_ops_add(&m->pending, &(struct pending_op) {
                .kind = PENDING_ATTACH, .state = PENDING_AWAITING_TABLES, .pid = t->pid,
                .request = sreq, .id = id, .target_id = t->id });
}

void manager_requests_tables_loaded(struct manager *m)
{
        assert(m);
        for (size_t i = 0, n = m->pending.n; i < n; i++) {
                struct pending_op op = m->pending.ops[i];
                struct target *t;

                if (op.kind != PENDING_ATTACH || op.state != PENDING_AWAITING_TABLES)
                        continue;
                t = manager_find_target_by_id(m, op.target_id);
                if (t && target_unwind_pending(t))
                        continue;
                m->pending.ops[i].state = PENDING_DONE;         /* answering may add to the list */
                if (t && t->phase == TARGET_PHASE_FAILED)
                        answer_attach(m, op.request, op.id, t, t->register_errno,
                                      t->register_error ?: strerror(-t->register_errno));
                else
                        answer_attach(m, op.request, op.id, t, t ? 0 : -ESRCH, "The process went before it could run");
        }
        pending_ops_prune(&m->pending);
}

/* Why an attach of req is refused before any work (a negative errno and *error), or 0. */
static int attach_refused(struct manager *m, const struct memleak_request *req, const struct target_config *sizes,
                          char **error)
{
        pid_t pid = req->kernel ? KERNEL_TARGET_PID : req->pid;
        const struct target *t = manager_find_target(m, pid);

        if (t && !target_phase_exited(t->phase))
                return error_set(error, -EEXIST, "Already attached to pid %d (%s)", (int)t->pid, t->comm);
        if (manager_live_targets(m) >= m->config.max_targets)
                return error_set(error, -ENOSPC, "Already tracing %u processes (max_targets)", m->config.max_targets);
        if (sizes->max_size && sizes->min_size > sizes->max_size)
                return error_set(error, -EINVAL, "min_size is larger than max_size");
        if (req->kernel && req->sample_bytes)
                return error_set(error, -EINVAL, "\"sample_bytes\" samples a process's allocations; the kernel "
                                 "target records each");
        if (req->reachability && sizes->sample_bytes > 1)
                return error_set(error, -EINVAL, "\"reachability\" needs every block recorded: a sampled target "
                                 "(sample_bytes) cannot be scanned");
        if (req->reachability && !req->exec)
                return error_set(error, -EINVAL, "\"reachability\" on attach holds a program about to run "
                                 "(memleakctl run) at its exit; scan a running process with memleakctl report "
                                 "--reachability");
        return 0;
}

/* Make req's target, probe it and keep it: 0 and *ret, or a negative errno and *error. */
static int attach_target(struct manager *m, struct server_request *sreq, const struct memleak_request *req,
                         const struct target_config *sizes, struct target **ret, char **error)
{
        const struct ucred *peer = server_request_peer(sreq);
        pid_t pid = req->kernel ? KERNEL_TARGET_PID : req->pid;
        struct target *t = NULL;
        int r;

        if (req->kernel)
                r = kernel_target_attach(&m->env, &(struct kernel_target_params) {
                        .filter = kernel_filter(req, sizes), .ring_depth = m->config.ring_depth }, &t, error);
        else {
                struct target_config filter = *sizes;

                manager_sample_first_limit(m, &filter);
                r = target_attach(&m->env, &(struct target_attach_params) {
                        .pid = req->pid, .objs = req->objs, .n_objs = req->n_objs, .filter = filter,
                        .ring_depth = m->config.ring_depth, .track_mmap = req->mmap, .exec = req->exec,
                        .unwind = req->unwind != MEMLEAK_UNWIND_DEFAULT ? req->unwind : m->config.unwind,
                }, &t, error);
        }
        if (r < 0) {
                log_info("Refused to attach to pid %d for uid %u: %s", (int)pid, (unsigned)peer->uid,
                         *error ? *error : strerror(-r));
                return r;
        }
        (void)manager_target_phase(t, r > 0 ? TARGET_PHASE_AWAITING_TABLES : TARGET_PHASE_RECORDING);
        log_kernel_symbols(t);
        t->follow_forks = req->follow_forks;
        t->asker_uid = peer->uid;
        t->asker_gid = peer->gid;
        t->asked_by_user = !manager_peer_admin(m, sreq);
        r = manager_add_target(m, t);
        if (r < 0) {
                (void)target_stop(&m->env, t, false);
                target_free(t);
                free(*error);
                *error = NULL;
                return error_set(error, r, "Cannot watch pid %d: %s", (int)pid, strerror(-r));
        }
        /* run: held at its exit, its memory scanned before it goes (failing that, it runs anyway);
         * and at its execs and new code until their tables are in */
        if (req->reachability) {
                _cleanup_free_ char *why = NULL;

                r = exit_hold_start(t->pid, m->env.skel, &m->env.limits, m->config.reachability_max_pause_ms,
                                    t->follow_forks, t->unwind.cache != NULL, &t->exit_hold, &why);
                if (r < 0)
                        log_warning("Pid %d will not be scanned at its exit: %s", (int)t->pid,
                                    why ? why : strerror(-r));
        }
        log_info("Attached to pid %d (%s) for uid %u: %s allocator, %zu object(s)%s%s", (int)t->pid, t->comm,
                 (unsigned)peer->uid, t->allocator, t->n_objects, t->exec ? ", before it execs " : "",
                 t->exec ? t->exec->path : "");
        *ret = t;
        return 0;
}

/* Attach req's pid and answer: now, or once its target's tables are in. False, unanswered, while
 * the pid's previous probes are still going: two sets on one process must never be live at once. */
static bool attach_now(struct manager *m, struct server_request *sreq, struct memleak_request *req)
{
        struct target_config sizes = {
                .min_size = req->min_size ? req->min_size : m->config.min_size,
                .max_size = req->max_size ? req->max_size : m->config.max_size,
                .sample_bytes = req->kernel ? 0 : req->sample_bytes ? req->sample_bytes : m->config.sample_bytes,
        };
        _cleanup_free_ char *error = NULL;
        struct target *t = NULL;
        int r = 0;

        /* who asks first: nothing about another user's process is told (not even that it is
         * traced already) */
        if (req->kernel && !manager_peer_admin(m, sreq)) {
                log_info("Refused uid %u an attach to the kernel", (unsigned)server_request_peer(sreq)->uid);
                r = error_set(&error, -EPERM, "Only root (or admin_group) may trace the kernel");
        } else if (!req->kernel)
                r = manager_peer_may_trace(m, sreq, req->pid, &error);
        if (r == 0)
                r = attach_refused(m, req, &sizes, &error);
        if (r == 0 && detacher_busy(m->env.detacher, req->kernel ? KERNEL_TARGET_PID : req->pid))
                return false;
        if (r == 0)
                r = attach_target(m, sreq, req, &sizes, &t, &error);
        /* answered once its stacks are walked complete: its files' tables are built */
        if (r >= 0 && target_unwind_pending(t) && await_tables(m, sreq, req->id, t) >= 0)
                return true;
        answer_attach(m, sreq, req->id, t, r, error);
        return true;
}

/* The targets of watch id, live ones (and exited ones with all), as an array. */
static cJSON *watch_targets_json(struct manager *m, uint32_t id, bool exited_too)
{
        cJSON *arr = cJSON_CreateArray();

        for (size_t i = 0; arr && i < m->n_targets; i++)
                if (m->targets[i]->watch_id == id && (exited_too || !target_phase_exited(m->targets[i]->phase)))
                        cJSON_AddItemToArray(arr, target_to_json(m->targets[i]));
        return arr;
}

/* attach "unit" or "cgroup": the watch made, its processes attached now (each target of its own,
 * following its forks); answered with the watch and the targets it made. Only root and
 * admin_group: a cgroup holds other users' processes. */
static void handle_watch_attach(struct manager *m, struct server_request *sreq, struct memleak_request *req)
{
        const struct ucred *peer = server_request_peer(sreq);
        _cleanup_free_ char *error = NULL;
        struct follower_options o = {
                .filter = {
                        .min_size = req->min_size ? req->min_size : m->config.min_size,
                        .max_size = req->max_size ? req->max_size : m->config.max_size,
                        .sample_bytes = req->sample_bytes ? req->sample_bytes : m->config.sample_bytes,
                },
                .objs = req->objs, .n_objs = req->n_objs, .track_mmap = req->mmap,
                .unwind = req->unwind != MEMLEAK_UNWIND_DEFAULT ? req->unwind : m->config.unwind,
                .asker_uid = peer->uid, .asker_gid = peer->gid,
        };
        uint32_t id = 0;
        cJSON *r;
        int k;

        if (!manager_peer_admin(m, sreq)) {
                log_info("Refused uid %u a watch of %s %s", (unsigned)peer->uid, req->unit ? "unit" : "cgroup",
                         req->unit ?: req->cgroup);
                reply_error(sreq, req->id, -EPERM, "Only root (or admin_group) may watch a unit or cgroup");
                return;
        }
        if (o.filter.max_size && o.filter.min_size > o.filter.max_size) {
                reply_error(sreq, req->id, -EINVAL, "min_size is larger than max_size");
                return;
        }
        k = manager_watch_add(m, req, &o, &id, &error);
        if (k < 0) {
                log_info("Refused to watch %s %s for uid %u: %s", req->unit ? "unit" : "cgroup",
                         req->unit ?: req->cgroup, (unsigned)peer->uid, error ?: strerror(-k));
                reply_error(sreq, req->id, k, error);
                return;
        }
        log_info("Watching %s %s for uid %u", req->unit ? "unit" : "cgroup", req->unit ?: req->cgroup,
                 (unsigned)peer->uid);
        manager_watches_save(m);
        r = memleak_response_new_ok(req->id);
        if (r) {
                cJSON_AddItemToObject(r, RF_WATCH, manager_watch_to_json(m, id));
                cJSON_AddItemToObject(r, RF_TARGETS, watch_targets_json(m, id, false));
        }
        reply(sreq, r);
}

static void handle_attach(struct manager *m, struct server_request *sreq, struct memleak_request *req)
{
        struct pending_op op = {
                .kind = PENDING_ATTACH, .state = PENDING_QUEUED, .pid = req->kernel ? KERNEL_TARGET_PID : req->pid,
                .request = sreq, .id = req->id,
        };

        if (req->unit || req->cgroup) {
                handle_watch_attach(m, sreq, req);
                return;
        }
        if (attach_now(m, sreq, req))
                return;
        /* Answered once the detacher is done with the pid (manager_requests_pid_idle()). */
        op.parsed = malloc(sizeof(*op.parsed));
        if (!op.parsed || pending_ops_add(&m->pending, &op) < 0) {
                free(op.parsed);
                answer_attach(m, sreq, req->id, NULL, -ENOMEM, "Out of memory");
                return;
        }
        *op.parsed = *req;
        *req = (struct memleak_request) {};     /* its strings are the list's now */
        log_info("Attach to pid %d queued: the probes of its earlier target are still being removed", (int)op.pid);
}

void manager_requests_pid_idle(struct manager *m, pid_t pid)
{
        assert(m);
        for (size_t i = 0, n = m->pending.n; i < n; i++) {
                struct pending_op op = m->pending.ops[i];

                if (op.kind != PENDING_ATTACH || op.state != PENDING_QUEUED || detacher_busy(m->env.detacher, op.pid))
                        continue;
                m->pending.ops[i].state = PENDING_DONE;
                m->pending.ops[i].parsed = NULL;        /* ours: attaching may add to the list */
                if (!attach_now(m, op.request, op.parsed))
                        answer_attach(m, op.request, op.id, NULL, -EBUSY, "The probes of an earlier attach are still going");
                memleak_request_done(op.parsed);
                free(op.parsed);
        }
        pending_ops_prune(&m->pending);
}

void manager_requests_done(struct manager *m)
{
        assert(m);
        for (size_t i = 0; i < m->pending.n; i++) {
                struct pending_op *op = &m->pending.ops[i];

                if (op->kind != PENDING_ATTACH || op->state == PENDING_DONE)
                        continue;
                op->state = PENDING_DONE;
                reply_error(op->request, op->id, -ECANCELED, "memleakd is shutting down");
        }
        pending_ops_prune(&m->pending);
}

/* The targets followed from t (its family below it): a malloc'd array of *ret_n; NULL without
 * memory. */
static struct target **followed_from(struct manager *m, const struct target *t, size_t *ret_n)
{
        struct target **v = calloc(MAX(m->n_targets, (size_t)1), sizeof(*v));
        size_t n = 0;

        if (!v)
                return NULL;
        for (size_t i = 0; i < m->n_targets; i++)
                if (manager_target_followed_from(m, m->targets[i], t))
                        v[n++] = m->targets[i];
        *ret_n = n;
        return v;
}

/* detach "unit" or "cgroup": the watch ends, its live processes are detached (its exited ones'
 * reports kept, as any exited target's). */
static void handle_watch_detach(struct manager *m, struct server_request *sreq, struct memleak_request *req)
{
        _cleanup_free_ char *error = NULL;
        struct watch_removed w = {};
        cJSON *r, *targets;
        int k;

        if (!manager_peer_admin(m, sreq)) {
                reply_error(sreq, req->id, -EPERM, "Only root (or admin_group) may stop watching a unit or cgroup");
                return;
        }
        k = manager_watch_remove(m, req, &w, &error);
        if (k < 0) {
                reply_error(sreq, req->id, k, error);
                return;
        }
        manager_watches_save(m);
        targets = watch_targets_json(m, w.id, false);
        r = memleak_response_new_ok(req->id);
        if (r) {
                cJSON_AddItemToObject(r, RF_WATCH, TAKE_PTR(w.json));
                cJSON_AddItemToObject(r, RF_TARGETS, TAKE_PTR(targets));
        }
        cJSON_Delete(w.json);
        cJSON_Delete(targets);
        reply(sreq, r);
        log_info("Stopped watching %s %s: its processes detached", req->unit ? "unit" : "cgroup",
                 req->unit ?: req->cgroup);
        for (size_t i = m->n_targets; i > 0; i--) {
                struct target *t = m->targets[i - 1];

                if (t->watch_id == w.id && !target_phase_exited(t->phase))
                        manager_remove_target(m, t);
        }
}

static void handle_detach(struct manager *m, struct server_request *sreq, struct memleak_request *req)
{
        struct target *t = req->kernel ? manager_find_kernel_target(m) : manager_find_target(m, req->pid);
        _cleanup_free_ struct target **family = NULL;
        _cleanup_free_ char *error = NULL;
        cJSON *r, *children;
        size_t n = 0;

        if (req->unit || req->cgroup) {
                handle_watch_detach(m, sreq, req);
                return;
        }
        if (!t && req->kernel) {
                reply_error(sreq, req->id, -ESRCH, "Not tracing the kernel (memleakctl attach --kernel)");
                return;
        }
        if (!t) {
                error_set(&error, -ESRCH, "Not attached to pid %d", (int)req->pid);
                reply_error(sreq, req->id, -ESRCH, error);
                return;
        }
        if (!manager_peer_sees(m, sreq, t)) {
                log_info("Refused uid %u a detach from pid %d", (unsigned)server_request_peer(sreq)->uid, (int)t->pid);
                reply_error(sreq, req->id, -EPERM, req->kernel ? "Only root (or admin_group) may detach the kernel"
                                                               : "Not permitted: not a process you could trace");
                return;
        }
        family = followed_from(m, t, &n);
        r = family ? memleak_response_new_ok(req->id) : NULL;
        if (!r) {
                reply_error(sreq, req->id, -ENOMEM, "Out of memory");
                return;
        }
        cJSON_AddItemToObject(r, RF_TARGET, target_to_json(t));
        if (req->children) {
                children = cJSON_AddArrayToObject(r, RF_CHILDREN);
                for (size_t i = 0; i < n && children; i++)
                        cJSON_AddItemToArray(children, target_to_json(family[i]));
        } else
                json_add_u64(r, RF_CHILDREN_LEFT, n);
        reply(sreq, r);
        log_info("Detached from pid %d (%s)%s", (int)t->pid, t->comm,
                 req->children && n > 0 ? " and the processes followed from it" : "");
        for (size_t i = 0; req->children && i < n; i++) {
                manager_watch_forgo(m, family[i]->watch_id, family[i]->pid);
                manager_remove_target(m, family[i]);
        }
        manager_watch_forgo(m, t->watch_id, t->pid);
        manager_remove_target(m, t);
}

static void add_budget(cJSON *o, const char *name, uint64_t held, uint64_t max)
{
        cJSON *x = cJSON_AddObjectToObject(o, name);

        json_add_u64(x, RF_HELD, held);
        json_add_u64(x, RF_MAX, max);
}

/* How full BPF's tables are: the heap blocks the process targets hold in the allocation table
 * (and how much of it is each one's share before it is sampled), the stacks, the per-stack rows
 * (as the last snapshot tick found them). */
static void add_table_budgets(cJSON *o, struct manager *m)
{
        cJSON *x = cJSON_AddObjectToObject(o, RF_TABLES);
        uint64_t blocks = 0;

        if (!x)
                return;
        for (size_t i = 0; i < m->n_targets; i++) {
                const struct target *t = m->targets[i];
                uint64_t n;

                if (!target_phase_exited(t->phase) && !t->kernel && t->slot.set && target_blocks_read(m->env.skel, t->slot.slot, &n) >= 0)
                        blocks += n;
        }
        add_budget(x, RF_ALLOCS, blocks, m->config.max_allocs);
        json_add_u64(cJSON_GetObjectItemCaseSensitive(x, RF_ALLOCS), RF_SHARE,
                     auto_sample_share(m->config.max_allocs, manager_live_targets(m)));
        add_budget(x, RF_STACKS, bpf_loader_stacks_held(m->env.skel), m->config.max_stacks);
        add_budget(x, RF_PER_STACK_ROWS, stack_totals_rows_held(m->totals),
                   map_budget_combined_rows(m->config.max_combined));
}

/* What the daemon holds against the bounds a traced process or a client could push it to. */
static cJSON *limits_to_json(struct manager *m)
{
        struct symbolizer_stats syms;
        struct unwind_cache_stats tables;
        struct server_stats srv;
        struct bpf_sizes sizes = manager_bpf_sizes(&m->config);
        uint64_t map_bytes;
        cJSON *o = cJSON_CreateObject(), *x;

        if (!o)
                return NULL;
        symbolizer_get_stats(m->env.syms, &syms);
        server_get_stats(m->server, &srv);
        x = cJSON_AddObjectToObject(o, RF_EXITED);
        json_add_u64(x, RF_BYTES, manager_exited_bytes(m));
        json_add_u64(x, RF_MAX_BYTES, (uint64_t)m->config.exited_max_mb << 20);
        json_add_u64(x, RF_DROPPED, m->exited_dropped);
        x = cJSON_AddObjectToObject(o, RF_SYMBOLS);
        json_add_u64(x, RF_FILES, syms.files);
        json_add_u64(x, RF_DISTINCT, syms.images);
        json_add_u64(x, RF_OPEN, syms.open);
        json_add_u64(x, RF_MAX_OPEN, syms.max_open);
        json_add_u64(x, RF_INFLATED_BYTES, syms.open_bytes);
        json_add_u64(x, RF_CACHE_BYTES, syms.cache_bytes);
        json_add_u64(x, RF_MAX_BYTES, (uint64_t)m->config.symbols_max_mb << 20);
        json_add_u64(x, RF_CLOSED_FOR_LIMITS, syms.closed_for_limits);
        json_add_u64(x, RF_REOPENED, syms.reopened);
        json_add_u64(x, RF_REOPEN_FAILED, syms.reopen_failed);
        json_add_u64(x, RF_REFUSED, syms.refused);
        unwind_cache_get_stats(m->env.unwind, &tables);
        x = cJSON_AddObjectToObject(o, RF_UNWIND_TABLES);
        json_add_u64(x, RF_FILES, tables.tables);
        json_add_u64(x, RF_MAX_FILES, UNWIND_TABLES_MAX);
        json_add_u64(x, RF_ROWS, tables.rows);
        json_add_u64(x, RF_BYTES, tables.bytes);
        json_add_u64(x, RF_FILES_WITHOUT_CFI, tables.without_rows);
        json_add_u64(x, RF_FAILED, tables.failed);
        json_add_u64(x, RF_BUILDING, tables.pending);
        if (!m->table_store)
                cJSON_AddNullToObject(x, RF_DISK_CACHE);
        else {
                struct table_store_stats st;

                table_store_get_stats(m->table_store, &st);
                x = cJSON_AddObjectToObject(x, RF_DISK_CACHE);
                cJSON_AddStringToObject(x, RF_DIRECTORY, m->config.cache_directory);
                json_add_u64(x, RF_FILES, st.files);
                json_add_u64(x, RF_BYTES, st.bytes);
                json_add_u64(x, RF_MAX_BYTES, st.max_bytes);
                json_add_u64(x, RF_HITS, st.hits);
                json_add_u64(x, RF_MISSES, st.misses);
                json_add_u64(x, RF_REJECTED, st.rejected);
                json_add_u64(x, RF_WRITTEN, st.written);
                json_add_u64(x, RF_WRITE_FAILED, st.write_failed);
                json_add_u64(x, RF_EVICTED, st.evicted);
        }
        add_table_budgets(o, m);
        x = cJSON_AddObjectToObject(o, RF_MAPS);
        if (map_memory_now(m->env.skel, &map_bytes) < 0)
                cJSON_AddNullToObject(x, RF_KERNEL_BYTES);
        else
                json_add_u64(x, RF_KERNEL_BYTES, map_bytes);
        json_add_u64(x, RF_MAX_BYTES, map_budget_estimate(&sizes));
        x = cJSON_AddObjectToObject(o, RF_CLIENTS);
        json_add_u64(x, RF_CONNECTIONS, server_connections(m->server));
        json_add_u64(x, RF_REFUSED, srv.refused_full);
        json_add_u64(x, RF_TIMED_OUT, srv.timed_out);
        json_add_u64(x, RF_ACCEPT_PAUSED, srv.accept_backoffs);
        return o;
}

static void handle_status(struct manager *m, struct server_request *sreq, struct memleak_request *req)
{
        bool watch = req->unit || req->cgroup;
        uint32_t watch_id = watch ? manager_watch_id(m, req) : 0;
        struct peer_view view = manager_peer_view(m, sreq);
        cJSON *r, *arr;
        uint64_t totals[_COUNTER_MAX] = {};

        /* with "unit" or "cgroup": that watch and its targets only */
        if (watch && (!watch_id || !view.admin)) {
                reply_error(sreq, req->id, -ESRCH, req->unit ? "Not watching that unit" : "Not watching that cgroup");
                return;
        }
        r = memleak_response_new_ok(req->id);
        if (!r) {
                server_request_reply(sreq, NULL);
                return;
        }
        json_add_u64(r, RF_UPTIME_S, (now_realtime_usec() - m->started_usec) / 1000000);
        json_add_u64(r, RF_SNAPSHOT_INTERVAL_MS, m->config.snapshot_interval_ms);
        json_add_u64(r, RF_RING_DEPTH, m->config.ring_depth);
        json_add_u64(r, RF_REACHABILITY_MAX_PAUSE_MS, m->config.reachability_max_pause_ms);
        arr = cJSON_AddArrayToObject(r, RF_RESTART_PENDING);
        for (const char *k = m->restart_pending; arr && k && *k;) {
                size_t n = strcspn(k, ",");
                _cleanup_free_ char *name = strndup(k, n);

                if (name)
                        cJSON_AddItemToArray(arr, cJSON_CreateString(name));
                k += n;
                k += strspn(k, ", ");
        }
        arr = cJSON_AddObjectToObject(r, RF_PROBES);
        if (arr) {
                cJSON_AddBoolToObject(arr, RF_UPROBE_MULTI, bpf_loader_uprobe_multi(m->env.skel));
                cJSON_AddBoolToObject(arr, RF_ALLOC_SESSIONS, bpf_loader_uprobe_session(m->env.skel));
        }
        arr = cJSON_AddObjectToObject(r, RF_SNAPSHOT_COST);
        if (arr) {
                cJSON_AddNumberToObject(arr, RF_LAST_MS, (double)m->snapshot_cost.last_usec / 1000.0);
                cJSON_AddNumberToObject(arr, RF_MAX_MS, (double)m->snapshot_cost.max_usec / 1000.0);
                json_add_u64(arr, RF_LAST_ROWS, m->snapshot_cost.last_rows);
        }
        arr = cJSON_AddObjectToObject(r, RF_RECLAIM);
        if (arr) {
                json_add_u64(arr, RF_PASSES, m->reclaim.passes);
                json_add_u64(arr, RF_ROWS_FREED, m->reclaim.totals.rows_freed);
                json_add_u64(arr, RF_ROWS_REVIVED, m->reclaim.totals.rows_revived);
                json_add_u64(arr, RF_STACKS_DELETED, m->reclaim.totals.stacks_deleted);
                json_add_u64(arr, RF_STACKS_RESTORED, m->reclaim.totals.stacks_restored);
                json_add_u64(arr, RF_STACKS_HELD, bpf_loader_stacks_held(m->env.skel));
        }
        arr = cJSON_AddArrayToObject(r, RF_TARGETS);
        for (size_t i = 0; arr && i < m->n_targets; i++) {
                cJSON *o;

                if (!manager_peer_view_sees(&view, m->targets[i]))
                        continue;       /* another user's: not shown */
                if (watch && !manager_request_names_target(m, req, m->targets[i]))
                        continue;
                target_refresh_comm(m->targets[i]);
                o = target_to_json(m->targets[i]);
                /* its own counters, beside the daemon's below */
                if (o && target_counters_read(&m->env, m->targets[i], totals) >= 0) {
                        cJSON_AddItemToObject(o, RF_COUNTERS, counters_json_new(totals, false));
                        cJSON_AddItemToObject(o, RF_LOST, counters_json_new(totals, true));
                }
                cJSON_AddItemToArray(arr, o);
        }
        if (watch) {
                arr = cJSON_AddArrayToObject(r, RF_WATCHES);
                if (arr)
                        cJSON_AddItemToArray(arr, manager_watch_to_json(m, watch_id));
        } else
                cJSON_AddItemToObject(r, RF_WATCHES, view.admin ? manager_watches_to_json(m) : cJSON_CreateArray());
        if (counters_read(m->env.skel, totals) < 0)
                log_warning("Cannot read the BPF counters");
        cJSON_AddItemToObject(r, RF_COUNTERS, counters_json_new(totals, false));
        cJSON_AddItemToObject(r, RF_LOST, counters_json_new(totals, true));
        cJSON_AddItemToObject(r, RF_LIMITS, limits_to_json(m));
        reply(sreq, r);
}

static void handle_report(struct manager *m, struct server_request *sreq, struct memleak_request *req)
{
        _cleanup_free_ char *error = NULL;
        int r = manager_report_start(m, sreq, req, &error);

        if (r < 0)
                reply_error(sreq, req->id, r, error);
}

/* The snapshot rings of the targets asked for, as time series (history.h). Built here, on the
 * loop that owns the rings: a few hundred points per stack listed. */
static void handle_history(struct manager *m, struct server_request *sreq, struct memleak_request *req)
{
        struct history_params p = {
                .thresholds = manager_verdict_thresholds(m),
                /* built on the loop: a bounded number of series per target */
                .top = MIN(req->top, (uint64_t)HISTORY_STACKS_MAX), .has_stack_id = req->has_stack_id, .stack_id = (int64_t)req->stack_id,
        };
        cJSON *r = memleak_response_new_ok(req->id), *h, *arr;
        struct peer_view view = manager_peer_view(m, sreq);
        size_t found = 0, refused = 0;

        h = r ? cJSON_AddObjectToObject(r, RF_HISTORY) : NULL;
        arr = h ? cJSON_AddArrayToObject(h, RF_TARGETS) : NULL;
        if (!arr) {
                cJSON_Delete(r);
                reply_error(sreq, req->id, -ENOMEM, "Out of memory");
                return;
        }
        if ((req->unit || req->cgroup) && !manager_watch_id(m, req)) {
                cJSON_Delete(r);
                reply_error(sreq, req->id, -ESRCH, req->unit ? "Not watching that unit" : "Not watching that cgroup");
                return;
        }
        for (size_t i = 0; i < m->n_targets; i++) {
                const struct target *t = m->targets[i];
                uint64_t counters[_COUNTER_MAX];
                bool counted;
                cJSON *th;

                if (!manager_request_names_target(m, req, t))
                        continue;
                if (!manager_peer_view_sees(&view, t)) {
                        refused++;
                        continue;
                }
                /* a live target's now, the last point of its window; an exited one's ring ends
                 * at its last snapshot */
                counted = !target_phase_exited(t->phase) && target_counters_read(&m->env, t, counters) >= 0;
                th = history_to_json(t->ring, &(struct target_json) {
                        .pid = t->pid, .comm = t->comm, .exited = target_phase_exited(t->phase),
                        .sample_bytes = t->filter.sample_bytes > 1 ? t->filter.sample_bytes : 0,
                        .auto_sample = &t->auto_sample,
                        .children_forked = t->children_forked, .follow_forks = t->follow_forks,
                        .children_followed = t->children_followed, .forked_from = t->parent_pid,
                        .children_missed = t->children_missed, .children_missed_exited = t->children_missed_exited,
                        .watch_name = t->watch_name, .watch_is_unit = t->watch_is_unit,
                }, counted ? counters : NULL, now_realtime_usec(), &p);
                cJSON_AddItemToArray(arr, th);
                found++;
        }
        if (found == 0 && refused > 0 && (req->has_pid || req->kernel)) {
                cJSON_Delete(r);
                log_info("Refused uid %u the history of %s", (unsigned)server_request_peer(sreq)->uid,
                         req->kernel ? "the kernel" : "a process it could not trace");
                reply_error(sreq, req->id, -EPERM, "Not permitted: not a process you could trace");
                return;
        }
        if (found == 0 && (req->has_pid || req->kernel)) {
                cJSON_Delete(r);
                reply_error(sreq, req->id, -ESRCH, req->kernel ? "The kernel is not traced" : "Not attached to that pid");
                return;
        }
        reply(sreq, r);
}

static const struct {
        command_fn fn;
} commands[_MEMLEAK_CMD_MAX] = {
        [MEMLEAK_CMD_ATTACH] = { handle_attach },
        [MEMLEAK_CMD_DETACH] = { handle_detach },
        [MEMLEAK_CMD_STATUS] = { handle_status },
        [MEMLEAK_CMD_REPORT] = { handle_report },
        [MEMLEAK_CMD_HISTORY] = { handle_history },
        [MEMLEAK_CMD_METRICS] = { handle_report },      /* a report job too (manager-report.c) */
};

void manager_requests_dispatch(void *userdata, struct server_request *sreq, const char *line, size_t len)
{
        struct manager *m = userdata;
        _cleanup_(memleak_request_done) struct memleak_request req = {};
        _cleanup_json_ cJSON *warnings = NULL;
        const char *parse_error = NULL;
        uint64_t id = 0;
        int r;

        assert(sreq);
        assert(line);
        r = memleak_request_parse(line, len, &req, &id, &parse_error);
        if (r < 0) {
                reply_error(sreq, id, r, parse_error ? parse_error : "Malformed request");
                return;
        }
        req.id = id;
        warnings = memleak_request_warnings(&req);
        if (warnings) {
                /* names a client chose: the wire carries valid UTF-8 only */
                if (json_strings_map(warnings, utf8_needs_repair, utf8_repair) >= 0)
                        server_request_set_warnings(sreq, warnings);
                log_debug("A request of uid %u named fields this memleakd does not know: ignored",
                          (unsigned)server_request_peer(sreq)->uid);
        }
        manager_auto_sample_sync(m);
        /* each command answers only about what its sender may see (manager-access.c) */
        commands[req.cmd].fn(m, sreq, &req);
}
