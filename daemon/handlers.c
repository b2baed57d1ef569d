/* SPDX-License-Identifier: GPL-2.0-only */
/* Validate a request at the edge and dispatch it through the command table. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "bpf-loader.h"
#include "handlers.h"
#include "json-util.h"
#include "kernel-target.h"
#include "util.h"
#include "log.h"
#include "manager.h"
#include "protocol.h"
#include "report.h"
#include "server.h"
#include "snapshot.h"
#include "symbolize.h"
#include "text-safe.h"

/* Who may run a command. Non-root access rules arrive later and fit here. */
enum access {
        ACCESS_ANY,     /* anyone who can connect (the socket's mode decides) */
        ACCESS_ROOT,    /* uid 0 only: attaching, detaching and reading stacks */
};

typedef int (*handler_fn)(struct manager *m, const struct ucred *peer,
                          const struct memleak_request *req, cJSON *reply, char **error);

static cJSON *target_to_json(const struct target *t)
{
        cJSON *o = cJSON_CreateObject(), *objs;

        if (!o)
                return NULL;
        cJSON_AddNumberToObject(o, "pid", t->pid);
        cJSON_AddStringToObject(o, "comm", t->comm);
        cJSON_AddBoolToObject(o, "exited", t->exited);
        cJSON_AddBoolToObject(o, "mmap", t->track_mmap);
        json_add_u64(o, "attached_s", (now_realtime_usec() - t->attached_usec) / 1000000);
        json_add_string_or_null(o, "allocator", t->allocator);
        json_add_string_or_null(o, "allocator_reason", t->allocator_reason);
        objs = cJSON_AddArrayToObject(o, "objects");
        for (size_t i = 0; objs && i < t->n_objects; i++) {
                cJSON *ob = cJSON_CreateObject();

                cJSON_AddStringToObject(ob, "path", t->objects[i].path);
                cJSON_AddNumberToObject(ob, "probes", t->objects[i].probes);
                cJSON_AddStringToObject(ob, "role", object_role_to_string(t->objects[i].role));
                cJSON_AddItemToArray(objs, ob);
        }
        cJSON_AddNumberToObject(o, "snapshots", snapshot_ring_count(t->ring));
        return o;
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

static int handle_attach(struct manager *m, const struct ucred *peer,
                         const struct memleak_request *req, cJSON *reply, char **error)
{
        struct target_attach_params p = {
                .pid = req->pid,
                .objs = req->objs,
                .n_objs = req->n_objs,
                .filter = {
                        .min_size = req->min_size ? req->min_size : m->config.min_size,
                        .max_size = req->max_size ? req->max_size : m->config.max_size,
                },
                .ring_depth = m->config.ring_depth,
                .track_mmap = req->mmap,
        };
        pid_t pid = req->kernel ? KERNEL_TARGET_PID : req->pid;
        struct target *t = manager_find_target(m, pid);
        int r;

        if (t && !t->exited)
                return error_set(error, -EEXIST, "Already attached to pid %d (%s)", (int)t->pid, t->comm);
        if (manager_live_targets(m) >= m->config.max_targets)
                return error_set(error, -ENOSPC, "Already tracing %u processes (max_targets)", m->config.max_targets);
        if (p.filter.max_size && p.filter.min_size > p.filter.max_size)
                return error_set(error, -EINVAL, "min_size is larger than max_size");
        if (req->kernel)
                r = kernel_target_attach(&m->env, &(struct kernel_target_params) {
                        .filter = kernel_filter(req, &p.filter), .ring_depth = p.ring_depth }, &t, error);
        else if (req->exec)
                r = target_attach_exec(&m->env, &(struct target_exec_params) { .attach = p, .exec = req->exec },
                                       &t, error);
        else
                r = target_attach(&m->env, &p, &t, error);
        if (r < 0) {
                log_info("Refused to attach to pid %d for uid %u: %s", (int)pid, (unsigned)peer->uid,
                         *error ? *error : strerror(-r));
                return r;
        }
        r = manager_add_target(m, t);
        if (r < 0) {
                target_stop(&m->env, t, false, false);
                target_free(t);
                return error_set(error, r, "Cannot watch pid %d: %s", (int)pid, strerror(-r));
        }
        log_info("Attached to pid %d (%s) for uid %u: %s allocator, %zu object(s)%s%s", (int)t->pid, t->comm,
                 (unsigned)peer->uid, t->allocator, t->n_objects, t->exec_path ? ", before it execs " : "",
                 t->exec_path ? t->exec_path : "");
        cJSON_AddItemToObject(reply, F_TARGET, target_to_json(t));
        return 0;
}

static int handle_detach(struct manager *m, const struct ucred *peer,
                         const struct memleak_request *req, cJSON *reply, char **error)
{
        struct target *t = manager_find_target(m, req->kernel ? KERNEL_TARGET_PID : req->pid);

        if (!t && req->kernel)
                return error_set(error, -ESRCH, "Not tracing the kernel (memleakctl attach --kernel)");
        if (!t)
                return error_set(error, -ESRCH, "Not attached to pid %d", (int)req->pid);
        if (!t->exited)
                target_stop(&m->env, t, false, true);
        cJSON_AddItemToObject(reply, F_TARGET, target_to_json(t));
        log_info("Detached from pid %d (%s)", (int)t->pid, t->comm);
        manager_remove_target(m, t);
        return 0;
}

/* One consistent read of the per-CPU counters (zeros, logged, if they cannot be read). */
static bool read_counters(struct manager *m, uint64_t totals[_COUNTER_MAX])
{
        memset(totals, 0, _COUNTER_MAX * sizeof(uint64_t));
        if (bpf_loader_read_counters(m->env.skel, totals) < 0) {
                log_warning("Cannot read the BPF counters");
                return false;
        }
        return true;
}

/* The event counters (losses false) or the loss counters (losses true) of one read. */
static cJSON *counters_to_json(const uint64_t totals[_COUNTER_MAX], bool losses)
{
        cJSON *o = cJSON_CreateObject();

        if (!o)
                return NULL;
        for (int c = 0; c < _COUNTER_MAX; c++)
                if (memleak_counter_is_loss(c) == losses)
                        json_add_u64(o, memleak_counter_name(c), totals[c]);
        return o;
}

/* What the daemon holds against the bounds a traced process or a client could push it to. */
static cJSON *limits_to_json(const struct manager *m)
{
        struct symbolizer_stats syms;
        struct server_stats srv;
        cJSON *o = cJSON_CreateObject(), *x;

        if (!o)
                return NULL;
        symbolizer_get_stats(m->env.syms, &syms);
        server_get_stats(m->server, &srv);
        x = cJSON_AddObjectToObject(o, "exited");
        json_add_u64(x, "bytes", manager_exited_bytes(m));
        json_add_u64(x, "max_bytes", (uint64_t)m->config.exited_max_mb << 20);
        json_add_u64(x, "dropped", m->exited_dropped);
        x = cJSON_AddObjectToObject(o, "symbols");
        json_add_u64(x, "files", syms.files);
        json_add_u64(x, "distinct", syms.images);
        json_add_u64(x, "open", syms.open);
        json_add_u64(x, "max_open", syms.max_open);
        json_add_u64(x, "inflated_bytes", syms.open_bytes);
        json_add_u64(x, "cache_bytes", syms.cache_bytes);
        json_add_u64(x, "max_bytes", (uint64_t)m->config.symbols_max_mb << 20);
        json_add_u64(x, "closed_for_limits", syms.closed_for_limits);
        json_add_u64(x, "reopened", syms.reopened);
        json_add_u64(x, "reopen_failed", syms.reopen_failed);
        json_add_u64(x, "refused", syms.refused);
        x = cJSON_AddObjectToObject(o, "clients");
        json_add_u64(x, "connections", server_connections(m->server));
        json_add_u64(x, "refused", srv.refused_full);
        json_add_u64(x, "timed_out", srv.timed_out);
        json_add_u64(x, "accept_paused", srv.accept_backoffs);
        return o;
}

static int handle_status(struct manager *m, const struct ucred *peer,
                         const struct memleak_request *req, cJSON *reply, char **error)
{
        uint64_t totals[_COUNTER_MAX];
        cJSON *arr;

        cJSON_AddStringToObject(reply, "version", MEMLEAKD_VERSION);
        json_add_u64(reply, "uptime_s", (now_realtime_usec() - m->started_usec) / 1000000);
        json_add_u64(reply, "snapshot_interval_ms", m->config.snapshot_interval_ms);
        json_add_u64(reply, "ring_depth", m->config.ring_depth);
        arr = cJSON_AddArrayToObject(reply, "targets");
        for (size_t i = 0; arr && i < m->n_targets; i++)
                cJSON_AddItemToArray(arr, target_to_json(m->targets[i]));
        read_counters(m, totals);
        cJSON_AddItemToObject(reply, "counters", counters_to_json(totals, false));
        cJSON_AddItemToObject(reply, "lost", counters_to_json(totals, true));
        cJSON_AddItemToObject(reply, "limits", limits_to_json(m));
        return 0;
}

/* Resolve one frame against the mappings of the target that captured it. */
struct resolve_ctx {
        struct manager *m;
};

static size_t resolve_frame(void *userdata, pid_t pid, uint64_t addr, struct frame_symbol *ret, size_t max)
{
        struct resolve_ctx *ctx = userdata;
        struct target *t = manager_find_target(ctx->m, pid);
        const struct module_mapping *mm;
        struct symbol_frame frames[SYMBOLIZER_FRAMES_MAX] = {};
        uint64_t file_offset;
        size_t n = 0;

        if (t && t->kernel)
                return kernel_target_resolve(t, addr, ret, max);
        if (max == 0 || !t || !(mm = module_map_find(&t->modules, addr)))
                return 0;
        file_offset = addr - mm->start + mm->pgoff;
        if (symbolizer_resolve(ctx->m->env.syms, mm->dev, mm->ino, file_offset, true, frames,
                               MIN(max, ELEMENTSOF(frames)), &n) < 0 || n == 0) {
                /* an unknown module: its name and the offset are still worth showing */
                frames[0] = (struct symbol_frame) {};
                n = 1;
        }
        for (size_t i = 0; i < n; i++)
                ret[i] = (struct frame_symbol) {
                        .symbol = frames[i].symbol,
                        .has_offset = frames[i].has_offset,
                        .offset = frames[i].offset,
                        .inlined = frames[i].inlined,
                        .module = mm->path,
                        .has_module_offset = true,
                        .module_offset = file_offset,
                        .file = frames[i].file,
                        .line = frames[i].line,
                };
        return n;
}

/* A return address lies in code the process maps (the kernel target's are all kernel code). */
static bool address_is_code(void *userdata, pid_t pid, uint64_t addr)
{
        struct target *t = manager_find_target(userdata, pid);
        const struct module_mapping *mm;

        if (!t || pid == KERNEL_TARGET_PID)
                return true;
        mm = module_map_find(&t->modules, addr);
        return mm && !mm->not_code;
}

static void target_trend(const struct target *t, struct report_target *rt)
{
        const struct snapshot *oldest = snapshot_ring_get(t->ring, 0);
        const struct snapshot *newest = snapshot_ring_newest(t->ring);

        if (!oldest || !newest || oldest == newest)
                return;
        rt->has_trend = true;
        rt->trend_window_s = (newest->timestamp_usec - oldest->timestamp_usec) / 1000000;
        rt->trend_bytes = (int64_t)newest->bytes - (int64_t)oldest->bytes;
}

static int append_rows(struct stack_rows *all, struct stack_rows *more)
{
        struct stack_row *n;

        if (more->n == 0)
                return 0;
        n = realloc(all->rows, (all->n + more->n) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        all->rows = n;
        memcpy(all->rows + all->n, more->rows, more->n * sizeof(*n));
        all->n += more->n;
        free(more->rows);
        *more = (struct stack_rows) {};
        return 0;
}

static int handle_report(struct manager *m, const struct ucred *peer,
                         const struct memleak_request *req, cJSON *reply, char **error)
{
        _cleanup_(stack_rows_done) struct stack_rows rows = {};
        _cleanup_free_ struct report_target *rts = NULL;
        _cleanup_free_ pid_t *live = NULL;
        size_t n_rts = 0, n_live = 0;
        uint64_t min_age_ns = req->min_age_s * 1000000000ull;
        uint64_t totals[_COUNTER_MAX];
        struct resolve_ctx ctx = { .m = m };
        _cleanup_json_ cJSON *lost = NULL;
        cJSON *report;
        int r;

        /* A target that just exited (memleakctl run asks the moment its program exits) is
         * reported as exited, from its frozen allocations; a live one with its newest mappings. */
        manager_reap_exited_targets(m);
        for (size_t i = 0; i < m->n_targets; i++)
                if (!m->targets[i]->exited && (!req->has_pid || m->targets[i]->pid == req->pid))
                        target_refresh_modules(&m->env, m->targets[i], false);
        if (req->kernel && !manager_find_target(m, KERNEL_TARGET_PID))
                return error_set(error, -ESRCH, "Not tracing the kernel (memleakctl attach --kernel)");
        if (req->has_pid && !manager_find_target(m, req->pid))
                return error_set(error, -ESRCH, "Not attached to pid %d", (int)req->pid);
        rts = calloc(MAX(m->n_targets, (size_t)1), sizeof(*rts));
        live = calloc(MAX(m->n_targets, (size_t)1), sizeof(*live));
        if (!rts || !live)
                return error_set(error, -ENOMEM, "Out of memory");
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];

                if ((req->has_pid && t->pid != req->pid) || (req->kernel && t->pid != KERNEL_TARGET_PID))
                        continue;
                rts[n_rts] = (struct report_target) { .pid = t->pid, .comm = t->comm, .exited = t->exited };
                target_trend(t, &rts[n_rts]);
                n_rts++;
                if (!t->exited)
                        live[n_live++] = t->pid;
                else if (t->frozen) {
                        _cleanup_(stack_rows_done) struct stack_rows frozen = {};

                        r = stack_collect_frozen(t->frozen, &frozen);
                        if (r >= 0)
                                r = append_rows(&rows, &frozen);
                        if (r < 0)
                                return error_set(error, r, "Cannot build the report: %s", strerror(-r));
                }
        }
        if (n_live > 0) {
                _cleanup_(stack_rows_done) struct stack_rows fresh = {};

                /* Once the per-stack totals map overflowed, it misses stacks: sum the allocations. */
                bool overflowed = !read_counters(m, totals) || totals[COUNTER_LOST_COMBINED_MAP_FULL] > 0;

                r = stack_collect_live(m->env.skel, &m->env.limits, live, n_live, min_age_ns,
                                       overflowed, &fresh);
                if (r >= 0)
                        r = append_rows(&rows, &fresh);
                if (r < 0)
                        return error_set(error, r, "Cannot read the BPF maps: %s", strerror(-r));
        }
        stack_rows_cut_broken_chains(&rows, address_is_code, m);
        /* Read again after collecting: what was lost meanwhile belongs in this report. */
        read_counters(m, totals);
        lost = counters_to_json(totals, true);
        report = report_build(&rows, rts, n_rts, &(struct report_params) {
                .top = req->top,
                .min_age_s = req->min_age_s,
                .generated_at = now_realtime_usec() / 1000000,
                .max_stack_depth = m->config.max_stack_depth,
                .lost = lost,
                .resolve = resolve_frame,
                .userdata = &ctx,
        });
        if (!report)
                return error_set(error, -ENOMEM, "Out of memory");
        cJSON_AddItemToObject(reply, F_REPORT, report);
        return 0;
}

static const struct {
        handler_fn fn;
        enum access access;
} handlers[_MEMLEAK_CMD_MAX] = {
        [MEMLEAK_CMD_ATTACH] = { handle_attach, ACCESS_ROOT },
        [MEMLEAK_CMD_DETACH] = { handle_detach, ACCESS_ROOT },
        [MEMLEAK_CMD_STATUS] = { handle_status, ACCESS_ANY },
        [MEMLEAK_CMD_REPORT] = { handle_report, ACCESS_ROOT },
};

static bool peer_allowed(const struct ucred *peer, enum access access)
{
        return access == ACCESS_ANY || peer->uid == 0;
}

cJSON *handlers_dispatch(void *userdata, const struct ucred *peer, const char *line, size_t len)
{
        struct manager *m = userdata;
        struct memleak_request req = {};
        _cleanup_free_ char *error = NULL;
        const char *parse_error = NULL;
        _cleanup_json_ cJSON *reply = NULL;
        uint64_t id = 0;
        int r;

        r = memleak_request_parse(line, len, &req, &id, &parse_error);
        if (r < 0)
                return memleak_response_new_error(id, -r, parse_error ? parse_error : "Malformed request");
        if (!peer_allowed(peer, handlers[req.cmd].access)) {
                memleak_request_done(&req);
                return memleak_response_new_error(id, EPERM, "Only root may do this");
        }
        reply = memleak_response_new_ok(id);
        if (!reply) {
                memleak_request_done(&req);
                return NULL;
        }
        r = handlers[req.cmd].fn(m, peer, &req, reply, &error);
        memleak_request_done(&req);
        if (r < 0) {
                cJSON_Delete(reply);
                reply = memleak_response_new_error(id, -r, error ? error : strerror(-r));
        }
        /* Names a traced process chose (its comm, its paths, its symbols) may be any bytes: the
         * wire carries valid UTF-8 only. */
        if (reply && json_strings_map(reply, utf8_needs_repair, utf8_repair) < 0)
                return memleak_response_new_error(id, ENOMEM, "Out of memory");
        return TAKE_PTR(reply);
}
