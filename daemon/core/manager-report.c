/* SPDX-License-Identifier: GPL-2.0-only */
/* A report request: what the event loop owns copied into a job, the job built on the worker
 * thread, its reply sent when done. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "elf-inspect.h"
#include "exit-hold.h"
#include "exit-verdicts.h"
#include "exited-file.h"
#include "fork-watch.h"
#include "kernel-symbols.h"
#include "log.h"
#include "manager-report.h"
#include "manager.h"
#include "perf-map.h"
#include "protocol.h"
#include "reach-file.h"
#include "report-job.h"
#include "server.h"
#include "snapshot.h"
#include "target-files.h"
#include "util.h"
#include "worker.h"

/* A report's verdict filter names the daemon's verdicts by the wire's numbers. */
_Static_assert((int)LEAK_VERDICT_PENDING == (int)MEMLEAK_VERDICT_PENDING &&
               (int)LEAK_VERDICT_GROWING == (int)MEMLEAK_VERDICT_GROWING &&
               (int)LEAK_VERDICT_PLATEAU == (int)MEMLEAK_VERDICT_PLATEAU &&
               (int)LEAK_VERDICT_CHURN == (int)MEMLEAK_VERDICT_CHURN, "leak verdicts match the protocol's");

/* Growth over the snapshot ring: from the oldest snapshot to this report's own read for a live
 * target (so the trend ends at the value printed beside it), to the newest for an exited one. */
static void copy_trend(const struct target *t, struct report_job_target *jt)
{
        const struct snapshot *oldest = snapshot_ring_get(t->ring, 0);
        const struct snapshot *newest = snapshot_ring_newest(t->ring);

        if (oldest && !target_phase_exited(t->phase)) {
                jt->has_trend = jt->trend_to_now = true;
                jt->trend_oldest_bytes = oldest->bytes;
                jt->trend_oldest_usec = oldest->timestamp_usec;
                return;
        }
        if (!oldest || !newest || oldest == newest)
                return;
        jt->has_trend = true;
        jt->trend_window_s = (newest->timestamp_usec - oldest->timestamp_usec) / 1000000;
        jt->trend_bytes = (int64_t)newest->bytes - (int64_t)oldest->bytes;
}

/* A live target's snapshots for the verdicts: their rows are shared, not copied. An exited one's
 * sums and counters (its losses within its verdicts' window; its rows went at its exit) and the
 * verdicts kept then; while those are being made, its rows too, for the job to make them. */
static int copy_history(const struct target *t, struct report_job_target *jt)
{
        uint32_t n = snapshot_ring_count(t->ring);
        bool exited = target_phase_exited(t->phase), sums_only = exited && !t->verdicts_keeping;
        int r;

        if (exited) {
                jt->exited_usec = t->exited_usec;
                jt->verdicts_from_history = t->verdicts_keeping;
                r = exit_verdicts_copy(t->verdicts, &jt->verdicts);
                if (r < 0)
                        return r;
        }
        if (n == 0)
                return 0;
        jt->history = calloc(n, sizeof(*jt->history));
        if (!jt->history)
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
                const struct snapshot *s = snapshot_ring_get(t->ring, i);

                if (sums_only) {
                        jt->history[jt->n_history] = *s;
                        jt->history[jt->n_history].rows = NULL;
                        jt->history[jt->n_history++].n_rows = 0;
                        continue;
                }
                /* every snapshot of an exited one's, as its verdicts are kept from them */
                if (!s->rows && !exited)
                        continue;
                if (s->rows)
                        snapshot_rows_ref(s->rows);
                jt->history[jt->n_history++] = *s;
        }
        return 0;
}

/* A live process's resident memory (/proc/PID/statm); 0 when it cannot be read. */
static uint64_t rss_of(const struct target *t)
{
        _cleanup_fclose_ FILE *f = NULL;
        char path[64];
        unsigned long long size, resident;

        if (target_phase_exited(t->phase) || t->kernel)
                return 0;
        snprintf(path, sizeof(path), "/proc/%d/statm", (int)t->pid);
        f = fopen(path, "re");
        if (!f || fscanf(f, "%llu %llu", &size, &resident) != 2)
                return 0;
        return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

#define SAMPLED_NO_SCAN "memleakd sampled it once its share of the allocation table filled: a scan needs every " \
        "block recorded"

int manager_report_exit_scan(const struct manager *m, const struct target *t, struct reach_result **ret,
                             char **ret_why)
{
        struct exit_hold *family = t->exit_hold ? NULL : manager_family_hold(m, t);
        int r = 0;

        assert(m);
        assert(t);
        assert(ret);
        assert(ret_why);
        *ret = NULL;
        *ret_why = NULL;
        /* its blocks since are sampled: a mark through them would call blocks lost that only
         * unrecorded ones point to */
        if (t->auto_sample.n_changes > 0 && (t->exit_hold || (family && target_phase_exited(t->phase)))) {
                *ret_why = strdup(SAMPLED_NO_SCAN);
                return *ret_why ? 0 : -ENOMEM;
        }
        if (t->exit_hold)
                r = exit_hold_result(t->exit_hold, ret, ret_why);
        else if (family)
                r = exit_hold_child_result(family, t->pid, ret, ret_why);
        else if (t->exit_scan) {
                /* kept across a restart (checked when it was read back) */
                r = reach_file_decode(t->exit_scan, t->exit_scan_bytes, ret, ret_why);
                if (r == -EBADMSG)
                        r = 0;
        }
        return MIN(r, 0);
}

/* Its reachability scan: the one taken at its exit (memleakctl run: the program's, or a child's it
 * followed; kept across a restart), or one to take now (report --reachability), or why there is
 * none. */
static int copy_reachability(const struct manager *m, const struct target *t, bool wanted_now,
                             struct report_job_target *jt)
{
        struct exit_hold *family = t->exit_hold ? NULL : manager_family_hold(m, t);
        const char *why = NULL;
        int r;

        r = manager_report_exit_scan(m, t, &jt->reach, &jt->reach_unavailable);
        if (r < 0)
                return r;
        if (!wanted_now || jt->reach || jt->reach_unavailable)
                return 0;
        if (t->kernel)
                why = "the kernel's memory is not scanned";
        else if (t->auto_sample.n_changes > 0)
                why = SAMPLED_NO_SCAN;
        else if (t->filter.sample_bytes > 1)
                why = "its allocations are sampled (sample_bytes): a scan needs every block recorded";
        else if (t->exit_hold && !target_phase_exited(t->phase))
                why = "memleakd holds it for the scan at its exit (memleakctl run): it is scanned then";
        else if (family && !target_phase_exited(t->phase))
                why = "memleakctl run's tracer holds it, followed: it is scanned at its exit";
        else if (family)
                why = "it exited before a scan: memleakd did not hold it at its exit";
        else if (target_phase_exited(t->phase))
                why = "it exited before a scan: only a program started by memleakctl run (and the children it "
                      "forks, with --follow-forks) is scanned at its exit";
        else {
                jt->scan_live = true;
                return 0;
        }
        jt->reach_unavailable = strdup(why);
        return jt->reach_unavailable ? 0 : -ENOMEM;
}

/* An exited target whose pid a later one took (the targets are in the order they came) keys its
 * rows by a pid below 0 of its own in the job: each target's rows stay its own. */
static void key_reused_pids(struct report_job *job)
{
        for (size_t i = 0; i < job->n_targets; i++)
                for (size_t k = i + 1; job->targets[i].exited && k < job->n_targets; k++)
                        if (job->targets[k].shown_pid == job->targets[i].shown_pid) {
                                job->targets[i].pid = -(pid_t)(i + 1);
                                break;
                        }
}

/* An exited target read back from its record: the build ID its record kept of each file (after
 * its modules were copied: one for each of jt->modules' mappings). */
static int copy_kept_build_ids(const struct target *t, struct report_job_target *jt)
{
        if (!t->kept_file_ids || t->n_kept_file_ids != jt->modules.n || jt->modules.n == 0)
                return 0;
        jt->kept_build_ids = calloc(jt->modules.n, sizeof(*jt->kept_build_ids));
        if (!jt->kept_build_ids)
                return -ENOMEM;
        for (size_t i = 0; i < jt->modules.n; i++) {
                const struct exited_file_id *id = &t->kept_file_ids[i];
                char hex[ELF_BUILD_ID_HEX_MAX];

                if (!id->known || id->build_id_len == 0)
                        continue;
                elf_inspect_build_id_hex(id->build_id, id->build_id_len, hex);
                jt->kept_build_ids[i] = strdup(hex);
                if (!jt->kept_build_ids[i])
                        return -ENOMEM;
        }
        return 0;
}

static int copy_target(const struct manager *m, const struct target *t, bool scan, struct report_job_target *jt)
{
        int r;

        jt->pid = jt->shown_pid = t->pid;
        memcpy(jt->comm, t->comm, sizeof(jt->comm));
        jt->exited = target_phase_exited(t->phase);
        jt->rss_bytes = rss_of(t);
        /* 1 records every allocation of a byte or more: exact */
        jt->sample_bytes = t->filter.sample_bytes > 1 ? t->filter.sample_bytes : 0;
        jt->auto_sample = t->auto_sample;
        jt->children_forked = t->children_forked;
        jt->children_followed = t->children_followed;
        jt->children_missed = t->children_missed;
        jt->children_missed_exited = t->children_missed_exited;
        jt->forked_from = t->parent_pid;
        jt->follow_forks = t->follow_forks;
        jt->watch_is_unit = t->watch_is_unit;
        if (t->watch_name && !(jt->watch_name = strdup(t->watch_name)))
                return -ENOMEM;
        jt->traced_from_start = t->exec != NULL;
        /* its own counters: read by the job for a live target (what it lost meanwhile counts) */
        jt->counter_row = t->counters.row;
        jt->counters_final = t->counters.stopped;
        memcpy(jt->counters_base, t->counters.base, sizeof(jt->counters_base));
        if (t->counters.stopped)
                memcpy(jt->counters, t->counters.final, sizeof(jt->counters));
        copy_trend(t, jt);
        r = copy_history(t, jt);
        if (r < 0)
                return r;
        if (target_phase_exited(t->phase) && t->frozen) {
                r = stack_collect_frozen(t->frozen, &jt->frozen);
                if (r < 0)
                        return r;
        }
        jt->kernel = kernel_symbols_ref(t->kernel);
        r = copy_reachability(m, t, scan, jt);
        if (r < 0)
                return r;
        if (t->n_forwarders > 0) {
                jt->forwarders = malloc(t->n_forwarders * sizeof(*t->forwarders));
                if (!jt->forwarders)
                        return -ENOMEM;
                memcpy(jt->forwarders, t->forwarders, t->n_forwarders * sizeof(*t->forwarders));
                jt->n_forwarders = t->n_forwarders;
        }
        jt->perf_map = perf_map_ref(t->perf_map);
        r = module_map_copy(&jt->modules, &t->modules);
        if (r < 0)
                return r;
        return copy_kept_build_ids(t, jt);
}

struct report_request {
        struct manager *m;
        struct report_job *job;
        struct server_request *request;         /* NULL: the metrics textfile's */
};

static void run(void *data)
{
        report_job_run(((struct report_request *)data)->job);
}

static void done(void *data, bool cancelled)
{
        struct report_request *rr = data;

        if (!rr->request && rr->job->export_dir) {
                manager_export_written(rr->m, cancelled ? -ECANCELED : rr->job->export_result);
                report_job_free(rr->job);
                free(rr);
                return;
        }
        if (!rr->request) {
                manager_metrics_written(rr->m, cancelled ? -ECANCELED : -rr->job->metrics_errno);
                report_job_free(rr->job);
                free(rr);
                return;
        }
        if (cancelled)
                server_request_reply(rr->request, memleak_response_new_error(rr->job->id, ECANCELED,
                                                                              "memleakd is shutting down"));
        else
                server_request_reply_frame(rr->request, TAKE_PTR(rr->job->frame), rr->job->frame_len);
        report_job_free(rr->job);
        free(rr);
}

int manager_report_start(struct manager *m, struct server_request *sreq, const struct memleak_request *req,
                         char **error)
{
        _cleanup_free_ bool *shown = NULL;
        /* the metrics textfile (no request) has every target */
        struct peer_view view = sreq ? manager_peer_view(m, sreq) : (struct peer_view) { .admin = true };
        struct report_request *rr;
        struct report_job *job;
        size_t n = 0, k = 0, refused = 0;
        int r;

        assert(m);
        assert(sreq || req->cmd == MEMLEAK_CMD_METRICS || req->cmd == MEMLEAK_CMD_REPORT);
        assert(req);
        assert(error);
        /* A target that just exited (memleakctl run asks the moment its program exits) is reported
         * as exited, from its frozen rows; a live one with its newest mappings; each with the
         * children it forked that the ring still holds. */
        fork_watch_drain(m->forks);
        manager_reap_exited_targets(m);
        if (req->kernel && !manager_find_kernel_target(m))
                return error_set(error, -ESRCH, "Not tracing the kernel (memleakctl attach --kernel)");
        if (req->has_pid && !manager_find_target(m, req->pid))
                return error_set(error, -ESRCH, "Not attached to pid %d", (int)req->pid);
        if ((req->unit || req->cgroup) && !manager_watch_id(m, req))
                return error_set(error, -ESRCH, "Not watching %s %s (memleakctl attach --%s)",
                                 req->unit ? "unit" : "cgroup", req->unit ?: req->cgroup, req->unit ? "unit" : "cgroup");
        /* which ones, decided once: its sender sees only the processes it could trace */
        shown = calloc(MAX(m->n_targets, (size_t)1), sizeof(*shown));
        if (!shown)
                return error_set(error, -ENOMEM, "Out of memory");
        for (size_t i = 0; i < m->n_targets; i++) {
                if (!manager_request_names_target(m, req, m->targets[i]))
                        continue;
                if (!manager_peer_view_sees(&view, m->targets[i])) {
                        refused++;
                        continue;
                }
                shown[i] = true;
                if (!target_phase_exited(m->targets[i]->phase))
                        (void)target_files_refresh(&m->env, m->targets[i], false);
                n++;
        }
        if (n == 0 && refused > 0 && (req->has_pid || req->kernel)) {
                log_info("Refused uid %u a report on %s", (unsigned)server_request_peer(sreq)->uid,
                         req->kernel ? "the kernel" : "a process it could not trace");
                return error_set(error, -EPERM, "Not permitted: not a process you could trace");
        }
        r = report_job_new(n, &job);
        if (r < 0)
                return error_set(error, r, "Out of memory");
        *job = (struct report_job) {
                .skel = m->env.skel, .limits = m->env.limits, .syms = m->env.syms,
                .targets = job->targets, .n_targets = n, .id = req->id, .top = req->top,
                .min_age_s = req->min_age_s, .max_stack_depth = m->config.max_stack_depth,
                .thresholds = manager_verdict_thresholds(m),
                .only_verdict = req->verdict,   /* the same encoding: 0, or 1 + the verdict */
                /* export_dir's too: every stack, each distinct frame once */
                .locations = req->locations || !sreq,
                .max_pause_ms = m->config.reachability_max_pause_ms,
                .concurrent_stop_ms = m->config.reachability_concurrent ?
                                      m->config.reachability_concurrent_max_stop_ms : 0,
                .snapshot_only = req->snapshot_only,
                .metrics = req->cmd == MEMLEAK_CMD_METRICS,
        };
        if (job->metrics) {
                job->metrics_daemon = manager_metrics_daemon(m);
                if (!sreq && !(job->metrics_path = strdup(m->config.metrics_textfile)))
                        r = -ENOMEM;
        } else if (!sreq) {
                /* no one asked: export_dir's */
                job->export_keep = m->config.export_keep;
                if (!(job->export_dir = strdup(m->config.export_dir)))
                        r = -ENOMEM;
        }
        for (size_t i = 0; i < m->n_targets && r >= 0; i++)
                if (shown[i]) {
                        target_refresh_comm(m->targets[i]);
                        r = copy_target(m, m->targets[i], req->reachability, &job->targets[k++]);
                }
        key_reused_pids(job);
        rr = r >= 0 ? malloc(sizeof(*rr)) : NULL;
        if (rr)
                *rr = (struct report_request) { .m = m, .job = job, .request = sreq };
        if (!rr || worker_submit(m->worker, rr, run, done) < 0) {
                free(rr);
                report_job_free(job);
                return error_set(error, -ENOMEM, "Out of memory");
        }
        return 0;
}

struct leak_verdict_thresholds manager_verdict_thresholds(const struct manager *m)
{
        assert(m);
        return (struct leak_verdict_thresholds) {
                .min_points = m->config.verdict_min_snapshots,
                .noise_factor = m->config.verdict_noise_factor,
                .flat_bytes = m->config.verdict_flat_bytes,
                .flat_ratio = m->config.verdict_flat_percent / 100.0,
        };
}
