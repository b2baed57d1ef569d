/* SPDX-License-Identifier: GPL-2.0-only */
/* A report built on the worker thread, from what the event loop copied into the job. */
#include <assert.h>
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bpf-loader.h"
#include "counters.h"
#include "counters-json.h"
#include "export-files.h"
#include "fd-text.h"
#include "json-util.h"
#include "kernel-symbols.h"
#include "macro.h"
#include "jit-names.h"
#include "perf-map.h"
#include "protocol.h"
#include "leak-verdict.h"
#include "loss-window.h"
#include "reply-fields.h"
#include "report-job.h"
#include "report.h"
#include "stack-verdict.h"
#include "symbolizer.h"
#include "text-safe.h"
#include "util.h"

int report_job_new(size_t n_targets, struct report_job **ret)
{
        struct report_job *j = calloc(1, sizeof(*j));

        assert(ret);
        if (!j)
                return -ENOMEM;
        j->targets = calloc(MAX(n_targets, (size_t)1), sizeof(*j->targets));
        if (!j->targets) {
                free(j);
                return -ENOMEM;
        }
        j->n_targets = n_targets;
        *ret = j;
        return 0;
}

struct report_job *report_job_free(struct report_job *j)
{
        if (!j)
                return NULL;
        for (size_t i = 0; i < j->n_targets; i++) {
                stack_rows_done(&j->targets[i].frozen);
                for (size_t k = 0; j->targets[i].kept_build_ids && k < j->targets[i].modules.n; k++)
                        free(j->targets[i].kept_build_ids[k]);
                free(j->targets[i].kept_build_ids);
                module_map_done(&j->targets[i].modules);
                free(j->targets[i].build_ids);
                free(j->targets[i].forwarders);
                for (size_t k = 0; k < j->targets[i].n_history; k++)
                        snapshot_rows_unref(j->targets[i].history[k].rows);
                free(j->targets[i].history);
                exit_verdicts_free(j->targets[i].verdicts);
                kernel_symbols_unref(j->targets[i].kernel);
                reach_scan_result_free(j->targets[i].reach);
                free(j->targets[i].reach_unavailable);
                free(j->targets[i].watch_name);
                perf_map_unref(j->targets[i].perf_map);
                cJSON_Delete(j->targets[i].counted);
        }
        free(j->targets);
        free(j->frame);
        free(j->metrics_path);
        free(j->export_dir);
        free(j);
        return NULL;
}

static struct report_job_target *job_target(const struct report_job *j, pid_t pid)
{
        for (size_t i = 0; i < j->n_targets; i++)
                if (j->targets[i].pid == pid)
                        return &j->targets[i];
        return NULL;
}

/* The names a live target's perf map gives its JIT code, read once per job when a frame needs
 * them (its mappings, anonymous code included, were read when the job was made). An exited target
 * keeps the perf map the job copied: the one taken at its exit if it was held there, or the one
 * it left, read once it exited (core/manager-jit.c). */
static void look_at_jit(struct report_job *j, struct report_job_target *t)
{
        if (t->jit_looked || t->exited || t->kernel)
                return;
        t->jit_looked = true;
        if (t->modules.n_anon_code == 0 || t->perf_map || j->perf_map_bytes >= REPORT_JOB_PERF_MAP_BUDGET)
                return;
        if (jit_names_load(t->pid, &t->perf_map) >= 0)
                j->perf_map_bytes += perf_map_bytes(t->perf_map);
}

/* A frame in a target's JIT code: named by its perf map, if it wrote one that names it. */
static size_t resolve_jit_frame(struct report_job *j, struct report_job_target *t, uint64_t addr,
                                struct frame_symbol *ret)
{
        uint64_t offset = 0;
        const char *name;

        look_at_jit(j, t);
        /* a return address: the code of the call before it (a call may end its function) */
        name = t->perf_map && addr > 0 ? perf_map_find(t->perf_map, addr - 1, &offset) : NULL;
        *ret = (struct frame_symbol) {
                .symbol = name, .has_offset = name != NULL, .offset = offset + 1, .module = "[jit]",
        };
        return 1;
}

/* report_assess_fn: a live target's stack over its ring's snapshots, then now (this report's own
 * read); an exited one's as it was at its exit. */
static bool assess_stack(void *userdata, const struct stack_row *row, struct leak_assessment *ret)
{
        const struct report_job *j = userdata;
        const struct report_job_target *t = job_target(j, row->pid);
        const struct exit_verdict *kept;

        if (!t || row->space != 0)
                return false;
        /* just exited, its verdicts still being kept: made here the same way, its exit the read */
        if (t->exited && t->verdicts_from_history)
                return t->n_history > 0 && row->stack_id >= 0 &&
                       stack_verdict_assess(t->history, t->n_history, row->stack_id, t->exited_usec, row->bytes,
                                            row->allocs, t->sample_bytes, &j->thresholds, ret) >= 0;
        if (t->exited) {
                kept = exit_verdicts_find(t->verdicts, row->stack_id);
                if (kept)
                        stack_verdict_from_kept(kept, ret);
                return kept != NULL;
        }
        if (t->n_history == 0)
                return false;
        return stack_verdict_assess(t->history, t->n_history, row->stack_id, now_realtime_usec(), row->bytes,
                                    row->allocs, t->sample_bytes, &j->thresholds, ret) >= 0;
}

/* The build ID of the file of t's mapping mm, as hex: the one its kept record says (an exited
 * target read back: its file may have been rebuilt since), else looked up once a job per mapping;
 * NULL when it has none (or the file is not registered: then nothing says which build it was). */
static const char *mapping_build_id(struct report_job *j, struct report_job_target *t,
                                    const struct module_mapping *mm)
{
        size_t i = (size_t)(mm - t->modules.mappings);
        const char *id;

        if (t->kept_build_ids)
                return t->kept_build_ids[i];
        if (!t->build_ids && t->modules.n > 0)
                t->build_ids = calloc(t->modules.n, sizeof(*t->build_ids));
        if (!t->build_ids)      /* no memory to keep it: looked up for this frame alone */
                return symbolizer_build_id(j->syms, mm->dev, mm->ino);
        if (!t->build_ids[i]) {
                id = symbolizer_build_id(j->syms, mm->dev, mm->ino);
                t->build_ids[i] = id ?: "";
        }
        return t->build_ids[i][0] ? t->build_ids[i] : NULL;
}

/* report_resolve_fn: a kernel frame through kallsyms, a process's through the file it maps there. */
static size_t resolve_frame(void *userdata, pid_t pid, uint64_t addr, struct frame_symbol *ret, size_t max)
{
        struct report_job *j = userdata;
        struct report_job_target *t = job_target(j, pid);
        struct symbol_frame frames[SYMBOLIZER_FRAMES_MAX] = {};
        const struct module_mapping *mm;
        struct kallsyms_info info;
        const char *build_id;
        uint64_t file_offset;
        size_t n = 0;
        int r;

        if (max == 0 || !t)
                return 0;
        if (t->kernel) {
                if (kernel_symbols_resolve(t->kernel, addr, &info) < 0)
                        return 0;
                ret[0] = (struct frame_symbol) {
                        .symbol = info.symbol, .has_offset = true, .offset = info.offset, .module = info.module,
                        /* the image's; a module's or a BPF program's: none known */
                        .build_id = info.module && strcmp(info.module, "[kernel]") == 0 ?
                                    kernel_symbols_build_id(t->kernel) : NULL,
                };
                return 1;
        }
        mm = module_map_find(&t->modules, addr);
        if (!mm)
                return module_map_is_anon_code(&t->modules, addr) ? resolve_jit_frame(j, t, addr, ret) : 0;
        file_offset = addr - mm->start + mm->pgoff;
        r = symbolizer_resolve(j->syms, mm->dev, mm->ino, file_offset, true, frames, MIN(max, ELEMENTSOF(frames)), &n);
        /* A return address is looked up at the call before it; the one a signal handler returns
         * to is the first byte of the trampoline (__restore_rt), which no call precedes. */
        if (r >= 0 && n >= 1 && !frames[0].symbol)
                r = symbolizer_resolve(j->syms, mm->dev, mm->ino, file_offset, false, frames,
                                       MIN(max, ELEMENTSOF(frames)), &n);
        if (r < 0 || n == 0) {
                /* an unknown module: its name and the offset are still worth showing */
                frames[0] = (struct symbol_frame) {};
                n = 1;
        }
        build_id = mapping_build_id(j, t, mm);
        for (size_t i = 0; i < n; i++)
                ret[i] = (struct frame_symbol) {
                        .symbol = frames[i].symbol,
                        .has_offset = frames[i].has_offset,
                        .offset = frames[i].offset,
                        .inlined = frames[i].inlined,
                        .module = mm->path,
                        .has_module_offset = true,
                        .module_offset = file_offset,
                        .build_id = build_id,
                        .file = frames[i].file,
                        .line = frames[i].line,
                };
        return n;
}

/* stack_rows_is_code_fn: a return address lies in code the process maps, a file's or a JIT's (all
 * of the kernel's is code). */
static bool address_is_code(void *userdata, pid_t pid, uint64_t addr)
{
        const struct report_job_target *t = job_target(userdata, pid);
        const struct module_mapping *mm;

        if (!t || t->kernel)
                return true;
        mm = module_map_find(&t->modules, addr);
        return mm ? !mm->not_code : module_map_is_anon_code(&t->modules, addr);
}

/* stack_rows_is_allocator_fn: the return address lies in an operator new that only called the
 * malloc whose return took the stack (the target's forwarders, targets/probes.c). */
static bool address_is_forwarder(void *userdata, pid_t pid, uint64_t addr)
{
        const struct report_job_target *t = job_target(userdata, pid);

        return t && !t->kernel && addr > 0 &&
               module_map_in_ranges(&t->modules, t->forwarders, t->n_forwarders, addr - 1);
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

/* Each target's own counters: a live one's row read now, less what the row held when it took
 * it; an exited one's as it left them. */
static void read_target_counters(struct report_job *j)
{
        for (size_t i = 0; i < j->n_targets; i++) {
                struct report_job_target *t = &j->targets[i];

                if (t->counters_final)
                        t->has_counters = true;
                else if (counters_read_row(j->skel, t->counter_row, t->counters) >= 0) {
                        counters_subtract(t->counters, t->counters_base);
                        t->has_counters = true;
                }
        }
}

/* What a target lost within its verdicts' window: its snapshots' counters, then now's (an exited
 * one's: its final counters, at its exit). */
static int assess_losses(const struct report_job_target *t, uint64_t now_usec, struct loss_window *ret)
{
        _cleanup_free_ struct loss_point *points = calloc(t->n_history + 1, sizeof(*points));

        if (!points)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_history; i++)
                points[i] = (struct loss_point) {
                        .timestamp_usec = t->history[i].timestamp_usec,
                        .counters = t->history[i].has_counters ? t->history[i].counters : NULL,
                };
        points[t->n_history] = (struct loss_point) {
                .timestamp_usec = now_usec, .counters = t->has_counters ? t->counters : NULL,
        };
        loss_window_assess(points, t->n_history + 1, ret);
        return 0;
}

/* Its counters as the report's target says them: "counters", "lost" (null when they could not be
 * read), "verdicts_qualified", "blind_since" (seconds since the epoch; null) and "lost_in_window"
 * (what its verdicts missed, per counter). */
static cJSON *counted_to_json(const struct report_job_target *t, const struct loss_window *w)
{
        cJSON *o = cJSON_CreateObject();

        if (!o)
                return NULL;
        cJSON_AddItemToObject(o, RF_COUNTERS, t->has_counters ? counters_json_new(t->counters, false) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, RF_LOST, t->has_counters ? counters_json_new(t->counters, true) : cJSON_CreateNull());
        loss_window_add_json(o, w);
        return o;
}

/* Each target's counted fields, and the report's "lost": the sum of its targets' own. */
static cJSON *count_targets(struct report_job *j)
{
        uint64_t now = now_realtime_usec(), sum[_COUNTER_MAX] = {};

        read_target_counters(j);
        for (size_t i = 0; i < j->n_targets; i++) {
                struct report_job_target *t = &j->targets[i];
                struct loss_window w = {};

                if (t->n_history > 0 && assess_losses(t, t->exited ? t->exited_usec : now, &w) < 0)
                        return NULL;
                t->verdicts_qualified = w.total > 0;
                t->counted = counted_to_json(t, &w);
                if (!t->counted)
                        return NULL;
                for (int c = 0; t->has_counters && c < _COUNTER_MAX; c++)
                        sum[c] += t->counters[c];
        }
        return counters_json_new(sum, true);
}

/* Every row the report shows: the live targets' from the maps, the exited targets' copies. */
static int collect_rows(struct report_job *j, struct stack_rows *ret, char **error)
{
        _cleanup_(stack_rows_done) struct stack_rows rows = {};
        _cleanup_free_ pid_t *live = calloc(MAX(j->n_targets, (size_t)1), sizeof(pid_t));
        uint64_t totals[_COUNTER_MAX] = {};
        size_t n_live = 0;
        int r;

        if (!live)
                return error_set(error, -ENOMEM, "Out of memory");
        for (size_t i = 0; i < j->n_targets; i++) {
                struct report_job_target *t = &j->targets[i];

                if (!t->exited) {
                        live[n_live++] = t->pid;
                        continue;
                }
                for (size_t k = 0; k < t->frozen.n; k++)
                        t->frozen.rows[k].pid = t->pid;         /* its key: a pid reused keys it apart */
                r = append_rows(&rows, &t->frozen);
                if (r < 0)
                        return error_set(error, r, "Out of memory");
        }
        if (n_live > 0) {
                _cleanup_(stack_rows_done) struct stack_rows fresh = {};
                /* Once the per-stack totals map overflowed, it misses stacks: sum the allocations. */
                bool overflowed = counters_read(j->skel, totals) < 0 ||
                                  totals[COUNTER_LOST_COMBINED_MAP_FULL] > 0;

                r = stack_collect_live(j->skel, &j->limits, live, n_live, j->min_age_s * 1000000000ull,
                                       overflowed, &fresh);
                if (r >= 0)
                        r = append_rows(&rows, &fresh);
                if (r < 0)
                        return error_set(error, r, "Cannot read the BPF maps: %s", strerror(-r));
        }
        *ret = rows;
        rows = (struct stack_rows) {};
        return 0;
}

/* The report's view of each target (rts[i] for j->targets[i]), but what count_targets() sets. */
static void fill_targets(const struct report_job *j, struct report_target *rts)
{
        for (size_t i = 0; i < j->n_targets; i++)
                rts[i] = (struct report_target) {
                        .pid = j->targets[i].pid, .shown_pid = j->targets[i].shown_pid, .comm = j->targets[i].comm,
                        .exited = j->targets[i].exited, .kernel = j->targets[i].kernel != NULL, .has_trend = j->targets[i].has_trend,
                        .trend_window_s = j->targets[i].trend_window_s, .trend_bytes = j->targets[i].trend_bytes,
                        .trend_to_now = j->targets[i].trend_to_now,
                        .trend_oldest_bytes = j->targets[i].trend_oldest_bytes,
                        .trend_oldest_usec = j->targets[i].trend_oldest_usec,
                        .snapshots = (uint32_t)j->targets[i].n_history,
                        .rss_bytes = j->targets[i].rss_bytes,
                        .sample_bytes = j->targets[i].sample_bytes,
                        .auto_sample = &j->targets[i].auto_sample,
                        .children_forked = j->targets[i].children_forked,
                        .children_followed = j->targets[i].children_followed,
                        .children_missed = j->targets[i].children_missed,
                        .children_missed_exited = j->targets[i].children_missed_exited,
                        .forked_from = j->targets[i].forked_from,
                        .follow_forks = j->targets[i].follow_forks,
                        .watch_name = j->targets[i].watch_name, .watch_is_unit = j->targets[i].watch_is_unit,
                        .reach = j->targets[i].reach,
                        .reach_unavailable = j->targets[i].reach_unavailable,
                };
}

static cJSON *build_reply(struct report_job *j, char **error)
{
        _cleanup_(stack_rows_done) struct stack_rows rows = {};
        _cleanup_free_ struct report_target *rts = calloc(MAX(j->n_targets, (size_t)1), sizeof(*rts));
        _cleanup_json_ cJSON *reply = NULL, *lost = NULL;
        cJSON *report;

        if (!rts || collect_rows(j, &rows, error) < 0)
                return rts ? NULL : (error_set(error, -ENOMEM, "Out of memory"), NULL);
        fill_targets(j, rts);
        /* Read after collecting: what was lost meanwhile belongs in this report. */
        lost = count_targets(j);
        if (!lost) {
                error_set(error, -ENOMEM, "Out of memory");
                return NULL;
        }
        for (size_t i = 0; i < j->n_targets; i++) {
                rts[i].counted = j->targets[i].counted;
                rts[i].verdicts_qualified = j->targets[i].verdicts_qualified;
        }
        stack_rows_drop_allocator_frames(&rows, address_is_forwarder, j);
        stack_rows_cut_broken_chains(&rows, address_is_code, j);
        report = report_build(&rows, rts, j->n_targets, &(struct report_params) {
                .top = j->top,
                .min_age_s = j->min_age_s,
                .generated_at = now_realtime_usec() / 1000000,
                .max_stack_depth = j->max_stack_depth,
                .lost = lost,
                .resolve = resolve_frame,
                .assess = assess_stack,
                .only_verdict = j->only_verdict,
                .locations = j->locations,
                .userdata = j,
        });
        reply = memleak_response_new_ok(j->id);
        if (!report || !reply) {
                cJSON_Delete(report);
                error_set(error, -ENOMEM, "Out of memory");
                return NULL;
        }
        cJSON_AddItemToObject(reply, RF_REPORT, report);
        return TAKE_PTR(reply);
}

/* text written to path atomically (a temporary file beside it, renamed): a reader sees the
 * old metrics or the new. Not fsync'd: they are remade at each interval. */
static int write_atomically(const char *path, const char *text)
{
        _cleanup_free_ char *tmp = NULL;
        size_t n = strlen(text);
        int fd, r = 0;

        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fchmod(fd, 0644) < 0)
                r = -errno;
        if (r == 0)
                r = fd_text_write(fd, text, n);
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void)unlink(tmp);
        return r;
}

/* The metrics of j's targets: its text, in a reply ({"metrics": text}) and, with
 * j->metrics_path, in that file. */
static cJSON *build_metrics(struct report_job *j, char **error)
{
        _cleanup_(stack_rows_done) struct stack_rows rows = {};
        _cleanup_free_ struct report_target *rts = calloc(MAX(j->n_targets, (size_t)1), sizeof(*rts));
        _cleanup_free_ struct report_summary *sums = calloc(MAX(j->n_targets, (size_t)1), sizeof(*sums));
        _cleanup_json_ cJSON *reply = NULL, *lost = NULL, *targets = NULL;
        _cleanup_free_ char *text = NULL;
        uint64_t now = now_realtime_usec();
        struct report_params p = {
                .generated_at = now / 1000000, .generated_at_usec = now, .assess = assess_stack, .userdata = j,
        };

        if (!rts || !sums)
                return error_set(error, -ENOMEM, "Out of memory"), NULL;
        if (collect_rows(j, &rows, error) < 0)
                return NULL;
        fill_targets(j, rts);
        lost = count_targets(j);
        if (!lost)
                return error_set(error, -ENOMEM, "Out of memory"), NULL;
        for (size_t i = 0; i < j->n_targets; i++) {
                rts[i].counted = j->targets[i].counted;
                rts[i].verdicts_qualified = j->targets[i].verdicts_qualified;
        }
        report_summarize(&rows, rts, j->n_targets, &p, sums);
        targets = report_targets_json(&rows, rts, j->n_targets, &p);
        j->metrics_daemon.generated_at = p.generated_at;
        /* label values are UTF-8 */
        if (!targets || json_strings_map(targets, utf8_needs_repair, utf8_repair) < 0 ||
            metrics_text_build(targets, sums, &j->metrics_daemon, &text) < 0)
                return error_set(error, -ENOMEM, "Out of memory"), NULL;
        if (j->metrics_path)
                j->metrics_errno = -write_atomically(j->metrics_path, text);
        reply = memleak_response_new_ok(j->id);
        if (!reply || !cJSON_AddStringToObject(reply, RF_METRICS, text))
                return error_set(error, -ENOMEM, "Out of memory"), NULL;
        return TAKE_PTR(reply);
}

void report_job_run(void *job)
{
        struct report_job *j = job;
        _cleanup_free_ char *error = NULL;
        _cleanup_json_ cJSON *reply = NULL;

        /* report --reachability: each live target stopped and scanned before its rows are read */
        for (size_t i = 0; i < j->n_targets; i++)
                if (j->targets[i].scan_live &&
                    reach_scan_live(j->skel, &j->limits, j->targets[i].pid, j->max_pause_ms, j->concurrent_stop_ms,
                                    j->snapshot_only,
                                    j->targets[i].traced_from_start, &j->targets[i].reach) < 0)
                        j->targets[i].reach_unavailable = strdup("out of memory for the scan");
        /* Names resolved here stay valid until the reply is encoded, whatever the loop releases. */
        symbolizer_read_begin(j->syms);
        reply = j->metrics ? build_metrics(j, &error) : build_reply(j, &error);
        if (j->export_dir) {
                /* export_dir: the files are the result, their names valid UTF-8; no one to reply to */
                cJSON *report = cJSON_GetObjectItemCaseSensitive(reply, RF_REPORT);

                j->export_result = report && json_strings_map(report, utf8_needs_repair, utf8_repair) >= 0 ?
                                   export_files_write(j->export_dir, report, j->export_keep, now_realtime_usec()) :
                                   -ENOMEM;
                symbolizer_read_end(j->syms);
                cJSON_Delete(TAKE_PTR(reply));
                (void)malloc_trim(0);   /* as below */
                return;
        }
        if (!reply)
                reply = memleak_response_new_error(j->id, ENOMEM, error ? error : "Out of memory");
        /* Names a traced process chose may be any bytes: the wire carries valid UTF-8 only. */
        if (reply && json_strings_map(reply, utf8_needs_repair, utf8_repair) >= 0)
                j->frame = memleak_frame_encode(reply, &j->frame_len);
        symbolizer_read_end(j->syms);
        /* a report of 100,000 stacks built and printed some 150 MB here: given back (the encoded
         * reply, mapped apart, goes once it is sent) */
        cJSON_Delete(TAKE_PTR(reply));
        (void)malloc_trim(0);
}
