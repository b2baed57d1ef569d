/* SPDX-License-Identifier: GPL-2.0-only */
/* Build the report object from per-stack rows: sort, fold past --top, name every frame (pure). */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "bpf-types.h"
#include "id-table.h"
#include "json-util.h"
#include "macro.h"
#include "leak-verdict.h"
#include "reach-scan.h"
#include "reply-fields.h"
#include "report.h"
#include "target-json.h"
#include "text-safe.h"
#include "verdict-json.h"

/* A report's "locations" (report_params.locations): each frame once, under the index its stacks
 * refer to it by. The frames of one address in one process are made once, as consecutive
 * entries. */
struct location_table {
        cJSON *array;                   /* the report's "locations" (the report owns it) */
        cJSON **frames;                 /* its entries by index */
        size_t n, cap;
        struct id_table by_address;     /* (pid, address) -> first index | count << 40 */
        struct arena arena;
};

#define LOCATION_COUNT_SHIFT 40

static void location_table_done(struct location_table *t)
{
        free(t->frames);
        id_table_free(&t->by_address);
        arena_free(&t->arena);
}

const char *report_stack_error(int64_t stack_id, bool kernel)
{
        switch (-stack_id) {
        case EFAULT: return kernel ? "kernel stack unreadable (EFAULT)" : "user stack unreadable (EFAULT)";
        case ENOSPC: return "stack table full (ENOSPC)";
        case EEXIST: return "stack hash clash (EEXIST)";
        case ENOMEM: return "no buffer to capture the stack in (ENOMEM)";
        default: return "stack capture failed";
        }
}

static const char *const unwind_stop_table[_UNWIND_STOP_MAX] = {
        [UNWIND_STOP_DEPTH] = "depth",
        [UNWIND_STOP_NO_CFI] = "no_cfi",
        [UNWIND_STOP_UNCOMPUTABLE] = "uncomputable",
        [UNWIND_STOP_UNREADABLE] = "unreadable",
        [UNWIND_STOP_NO_TABLE] = "no_table",
};

/* Why a walk ended early, and where: the module and offset of its last frame (the pc it could
 * not step from); null when it ended at the outermost frame, and when addresses were cut from
 * the stack (the walk went on through data there: it ended among them, not at the last frame
 * shown, and addresses_cut says why the stack ends). */
static void add_unwind_stopped(cJSON *s, const struct stack_row *row, const cJSON *last)
{
        const char *reason = row->unwind_stop < _UNWIND_STOP_MAX && row->n_cut == 0 ?
                             unwind_stop_table[row->unwind_stop] : NULL;
        cJSON *o;

        if (!reason) {
                cJSON_AddNullToObject(s, RF_UNWIND_STOPPED);
                return;
        }
        o = cJSON_AddObjectToObject(s, RF_UNWIND_STOPPED);
        if (!o)
                return;
        cJSON_AddStringToObject(o, RF_REASON, reason);
        cJSON_AddItemToObject(o, RF_MODULE, last && cJSON_GetObjectItem(last, RF_MODULE) ?
                              cJSON_Duplicate(cJSON_GetObjectItem(last, RF_MODULE), false) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, RF_MODULE_OFFSET, last && cJSON_GetObjectItem(last, RF_MODULE_OFFSET) ?
                              cJSON_Duplicate(cJSON_GetObjectItem(last, RF_MODULE_OFFSET), false) : cJSON_CreateNull());
}

/* Is it leaking: "verdict" (growing, plateau, churn, pending) and what it rests on (a); null
 * where there is no history (a NULL). */
static void add_verdict(cJSON *s, const struct leak_assessment *a, const struct report_target *target)
{
        if (!a) {
                cJSON_AddNullToObject(s, RF_VERDICT);
                return;
        }
        verdict_json_add(s, a, target && target->verdicts_qualified);
}

/* The target whose stacks a row is. */
static const struct report_target *target_of(const struct report_target *targets, size_t n_targets, pid_t pid)
{
        for (size_t i = 0; i < n_targets; i++)
                if (targets[i].pid == pid)
                        return &targets[i];
        return NULL;
}

/* The scan row's stack is in: its target's, when that scan finished. */
static const struct reach_stack *reach_of(const struct report_target *targets, size_t n_targets,
                                          const struct stack_row *row)
{
        const struct report_target *t = target_of(targets, n_targets, row->pid);

        if (!t || !t->reach || t->reach->error || row->space != 0)
                return NULL;
        return reach_scan_result_find(t->reach, row->stack_id);
}

/* A sampled stack's expected relative error: the estimate's standard error over the estimate,
 * sqrt(N * bytes) / bytes (each byte is a sample point with chance 1/N); null when exact. */
static void add_expected_error(cJSON *s, const struct report_target *targets, size_t n_targets,
                               const struct stack_row *row)
{
        const struct report_target *t = target_of(targets, n_targets, row->pid);

        if (!t || !t->sample_bytes || row->space != 0 || row->bytes == 0) {
                cJSON_AddNullToObject(s, RF_EXPECTED_ERROR);
                return;
        }
        cJSON_AddNumberToObject(s, RF_EXPECTED_ERROR,
                                round(sqrt((double)t->sample_bytes / (double)row->bytes) * 1000) / 1000);
}

static uint64_t lost_bytes(const struct reach_stack *s)
{
        return s ? s->by_class[REACHABILITY_DEFINITELY_LOST].bytes + s->by_class[REACHABILITY_INDIRECTLY_LOST].bytes : 0;
}

struct row_order {
        const struct report_target *targets;
        size_t n_targets;
};

/* Lost bytes first (where a scan says), then bytes, allocations, pid, stack. */
static int row_by_bytes(const void *a, const void *b, void *userdata)
{
        const struct row_order *o = userdata;
        const struct stack_row *x = a, *y = b;
        uint64_t lx = lost_bytes(reach_of(o->targets, o->n_targets, x));
        uint64_t ly = lost_bytes(reach_of(o->targets, o->n_targets, y));

        if (lx != ly)
                return lx > ly ? -1 : 1;
        if (x->bytes != y->bytes)
                return x->bytes > y->bytes ? -1 : 1;
        if (x->allocs != y->allocs)
                return x->allocs > y->allocs ? -1 : 1;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

static void add_tally(cJSON *o, const char *name, const struct reach_tally *t)
{
        cJSON *c = cJSON_AddObjectToObject(o, name);

        if (!c)
                return;
        json_add_u64(c, RF_BYTES, t->bytes);
        json_add_u64(c, RF_ALLOCS, t->allocs);
}

static void add_classes(cJSON *o, const struct reach_tally by_class[_REACHABILITY_MAX])
{
        for (int c = REACHABILITY_DEFINITELY_LOST; c < _REACHABILITY_MAX; c++)
                add_tally(o, reachability_to_string(c), &by_class[c]);
        add_tally(o, reachability_to_string(REACHABILITY_STILL_REACHABLE), &by_class[REACHABILITY_STILL_REACHABLE]);
}

/* A stack's blocks by class; null where its target was not scanned, or it was not in the scan
 * (allocated after it). */
static void add_stack_reachability(cJSON *s, const struct reach_stack *r)
{
        cJSON *o;

        if (!r) {
                cJSON_AddNullToObject(s, RF_REACHABILITY);
                return;
        }
        o = cJSON_AddObjectToObject(s, RF_REACHABILITY);
        if (o)
                add_classes(o, r->by_class);
}

/* When and how the target was scanned, what it found in all; or why not. */
static void add_target_reachability(cJSON *t, const struct report_target *rt)
{
        const struct reach_result *r = rt->reach;
        cJSON *o;

        if (!r && !rt->reach_unavailable) {
                cJSON_AddNullToObject(t, RF_REACHABILITY);
                return;
        }
        o = cJSON_AddObjectToObject(t, RF_REACHABILITY);
        if (!o)
                return;
        if (!r) {
                cJSON_AddStringToObject(o, RF_ERROR, rt->reach_unavailable);
                return;
        }
        if (r->error)
                cJSON_AddStringToObject(o, RF_ERROR, r->message ? r->message : strerror(-r->error));
        else
                cJSON_AddNullToObject(o, RF_ERROR);
        cJSON_AddStringToObject(o, RF_METHOD, reach_scan_method_to_string(r->method));
        json_add_string_or_null(o, RF_NO_CONCURRENT, r->no_concurrent);
        json_add_string_or_null(o, RF_NO_SNAPSHOT, r->no_snapshot);
        json_add_string_or_null(o, RF_PARTIAL, r->partial);
        if (r->method == REACH_METHOD_SNAPSHOT)
                cJSON_AddBoolToObject(o, RF_COPY_REAPED, r->copy_reaped);
        else
                cJSON_AddNullToObject(o, RF_COPY_REAPED);
        cJSON_AddBoolToObject(o, RF_AT_EXIT, r->at_exit);
        if (r->method == REACH_METHOD_CONCURRENT) {
                json_add_u64(o, RF_ROUNDS, r->rounds);
                json_add_u64(o, RF_WRITTEN_BYTES, r->written_bytes);
                json_add_u64(o, RF_LAST_STOPS, r->last_stops);
        } else {
                cJSON_AddNullToObject(o, RF_ROUNDS);
                cJSON_AddNullToObject(o, RF_WRITTEN_BYTES);
                cJSON_AddNullToObject(o, RF_LAST_STOPS);
        }
        cJSON_AddBoolToObject(o, RF_TRACED_FROM_START, r->traced_from_start);
        json_add_u64(o, RF_SCANNED_AT, r->scanned_at_usec / 1000000);
        cJSON_AddNumberToObject(o, RF_PAUSED_MS, round((double)r->paused_usec / 100) / 10);
        cJSON_AddNumberToObject(o, RF_LONGEST_PAUSE_MS, round((double)r->longest_pause_usec / 100) / 10);
        cJSON_AddNumberToObject(o, RF_SCAN_MS, round((double)r->scan_usec / 100) / 10);
        json_add_u64(o, RF_THREADS, r->threads);
        json_add_u64(o, RF_ROOTS_BYTES, r->roots_bytes);
        json_add_u64(o, RF_BYTES_SCANNED, r->stats.bytes_scanned);
        json_add_u64(o, RF_BYTES_UNREADABLE, r->stats.bytes_unreadable);
        json_add_u64(o, RF_BLOCKS_UNREADABLE, r->stats.blocks_unreadable);
        json_add_u64(o, RF_BLOCKS_OVERLAPPING, r->blocks_overlapping);
        json_add_u64(o, RF_BLOCKS_AFTER_SNAPSHOT, r->blocks_after);
        json_add_u64(o, RF_BLOCKS_FREED, r->blocks_freed);
        json_add_u64(o, RF_BLOCKS_BYTES, r->blocks_bytes);
        cJSON_AddNumberToObject(o, RF_MARK_MS, round((double)r->mark_usec / 100) / 10);
        cJSON_AddNumberToObject(o, RF_MARK_CPU_MS, round((double)r->mark_cpu_usec / 100) / 10);
        cJSON_AddNumberToObject(o, RF_SCAN_MIB_PER_S, r->mark_usec ? round((double)r->stats.bytes_scanned /
                                (1 << 20) / ((double)r->mark_usec / 1e6)) : 0);
        if (!r->error)
                add_classes(o, r->totals);
}

static cJSON *frame_to_json(uint64_t addr, const struct frame_symbol *sym)
{
        cJSON *f = cJSON_CreateObject();
        char hex[32];

        if (!f)
                return NULL;
        snprintf(hex, sizeof(hex), "0x%" PRIx64, addr);
        cJSON_AddStringToObject(f, RF_ADDR, hex);
        json_add_string_or_null(f, RF_SYMBOL, sym->symbol);
        if (sym->symbol && sym->has_offset)
                json_add_u64(f, RF_OFFSET, sym->offset);
        else
                cJSON_AddNullToObject(f, RF_OFFSET);
        cJSON_AddBoolToObject(f, RF_INLINED, sym->inlined);
        json_add_string_or_null(f, RF_MODULE, sym->module);
        if (sym->module && sym->has_module_offset)
                json_add_u64(f, RF_MODULE_OFFSET, sym->module_offset);
        else
                cJSON_AddNullToObject(f, RF_MODULE_OFFSET);
        json_add_string_or_null(f, RF_BUILD_ID, sym->module ? sym->build_id : NULL);
        json_add_string_or_null(f, RF_FILE, sym->file);
        if (sym->file && sym->line > 0)
                cJSON_AddNumberToObject(f, RF_LINE, sym->line);
        else
                cJSON_AddNullToObject(f, RF_LINE);
        return f;
}

/* The frames one address stands for: the calls inlined there, then the function itself. Into
 * frames (NULL: none), or, with locs, into the table, their indices into ids. The last frame
 * added, NULL when none could be. */
static const cJSON *add_address_frames(cJSON *frames, struct location_table *locs, cJSON *ids,
                                       const struct report_params *p, pid_t pid, uint64_t addr)
{
        struct frame_symbol syms[REPORT_FRAMES_PER_ADDRESS_MAX] = {};
        struct { int64_t pid; uint64_t addr; } key = { pid, addr };
        const cJSON *last = NULL;
        size_t n = 0, added;
        int r;

        if (locs) {
                const size_t *found = id_table_find(&locs->by_address, &key, sizeof(key));

                if (found) {
                        size_t first = *found & ((UINT64_C(1) << LOCATION_COUNT_SHIFT) - 1);

                        for (size_t i = 0; i < *found >> LOCATION_COUNT_SHIFT && first + i < locs->n; i++) {
                                cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)(first + i)));
                                last = locs->frames[first + i];
                        }
                        return last;
                }
        }
        if (p->resolve)
                n = p->resolve(p->userdata, pid, addr, syms, ELEMENTSOF(syms));
        n = MIN(n, ELEMENTSOF(syms));
        if (n == 0)
                n = 1;  /* unresolved: the address alone */
        if (!locs) {
                for (size_t i = 0; frames && i < n; i++) {
                        cJSON *f = frame_to_json(addr, &syms[i]);

                        if (f) {
                                cJSON_AddItemToArray(frames, f);
                                last = f;
                        }
                }
                return last;
        }
        if (locs->n + n > locs->cap) {
                size_t cap = MAX(locs->cap * 2, locs->n + n + 64);
                cJSON **grown = reallocarray(locs->frames, cap, sizeof(*grown));

                if (!grown)
                        return NULL;
                locs->frames = grown;
                locs->cap = cap;
        }
        r = id_table_get_or_add(&locs->by_address, &locs->arena, &key, sizeof(key),
                                locs->n | n << LOCATION_COUNT_SHIFT, &added, NULL);
        if (r < 0)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                cJSON *f = frame_to_json(addr, &syms[i]);

                if (!f)
                        return NULL;
                cJSON_AddItemToArray(locs->array, f);
                locs->frames[locs->n++] = f;
                cJSON_AddItemToArray(ids, cJSON_CreateNumber((double)(locs->n - 1)));
                last = f;
        }
        return last;
}

/* Whether the walk of row's stack stopped at the depth limit: counting the allocator's frames
 * the report dropped from its top, which the limit counted. */
static bool row_truncated(const struct report_params *p, const struct stack_row *row)
{
        return p->max_stack_depth && row->n_ips + row->n_allocator >= p->max_stack_depth;
}

/* The pid t shows (its rows' key, pid, where it has no other); pid when there is no t. */
static pid_t shown_pid(const struct report_target *t, pid_t pid)
{
        return t ? (t->shown_pid ?: t->pid) : pid;
}

static bool row_is_kernel(const struct stack_row *row, const struct report_target *targets, size_t n_targets)
{
        for (size_t i = 0; i < n_targets; i++)
                if (targets[i].pid == row->pid)
                        return targets[i].kernel;
        return false;
}

static cJSON *stack_to_json(const struct report_params *p, const struct stack_row *row,
                            const struct report_target *targets, size_t n_targets, const struct reach_stack *reach,
                            const struct leak_assessment *assessment, struct location_table *locs)
{
        bool kernel = row_is_kernel(row, targets, n_targets);
        cJSON *s = cJSON_CreateObject(), *frames;
        const cJSON *last = NULL;

        if (!s)
                return NULL;
        cJSON_AddNumberToObject(s, RF_PID, shown_pid(target_of(targets, n_targets, row->pid), row->pid));
        cJSON_AddBoolToObject(s, RF_MMAP, row->space == ALLOC_SPACE_MMAP);
        if (row->stack_id >= 0)
                json_add_u64_digits(s, RF_STACK_ID, (uint64_t)row->stack_id);
        else
                cJSON_AddNullToObject(s, RF_STACK_ID);
        json_add_u64(s, RF_BYTES, row->bytes);
        json_add_u64(s, RF_ALLOCS, row->allocs);
        add_expected_error(s, targets, n_targets, row);
        if (row->stack_id < 0)
                cJSON_AddStringToObject(s, RF_STACK_ERROR, report_stack_error(row->stack_id, kernel));
        else if (!row->ips || row->n_ips == 0)
                cJSON_AddStringToObject(s, RF_STACK_ERROR, "stack no longer in the stack table");
        else
                cJSON_AddNullToObject(s, RF_STACK_ERROR);
        cJSON_AddBoolToObject(s, RF_TRUNCATED, row_truncated(p, row));
        json_add_u64(s, RF_ADDRESSES_CUT, row->n_cut);
        frames = cJSON_AddArrayToObject(s, locs ? RF_LOCATIONS : RF_FRAMES);
        for (size_t i = 0; frames && i < row->n_ips; i++) {
                const cJSON *f = add_address_frames(locs ? NULL : frames, locs, frames, p, row->pid, row->ips[i]);

                last = f ?: last;
        }
        add_unwind_stopped(s, row, last);
        add_verdict(s, assessment, target_of(targets, n_targets, row->pid));
        add_stack_reachability(s, reach);
        return s;
}

/* Its own counters' fields, as the job made them. */
static void add_target_counted(cJSON *t, const struct report_target *target)
{
        const cJSON *field;

        cJSON_ArrayForEach(field, target->counted)
                cJSON_AddItemToObject(t, field->string, cJSON_Duplicate(field, true));
}

static cJSON *targets_to_json(const struct stack_rows *rows, const struct report_target *targets,
                              size_t n_targets, const struct report_params *p)
{
        cJSON *arr = cJSON_CreateArray();

        for (size_t i = 0; arr && i < n_targets; i++) {
                struct target_json tj = {
                        .pid = shown_pid(&targets[i], targets[i].pid), .comm = targets[i].comm, .exited = targets[i].exited,
                        .has_outstanding = true, .snapshots = targets[i].snapshots,
                        .sample_bytes = targets[i].sample_bytes, .auto_sample = targets[i].auto_sample,
                        .children_forked = targets[i].children_forked, .follow_forks = targets[i].follow_forks,
                        .children_followed = targets[i].children_followed, .forked_from = targets[i].forked_from,
                        .children_missed = targets[i].children_missed,
                        .children_missed_exited = targets[i].children_missed_exited,
                        .watch_name = targets[i].watch_name, .watch_is_unit = targets[i].watch_is_unit,
                };
                cJSON *t;

                for (size_t j = 0; j < rows->n; j++) {
                        const struct stack_row *row = &rows->rows[j];

                        if (row->pid != targets[i].pid)
                                continue;
                        if (row->space == ALLOC_SPACE_MMAP) {
                                tj.outstanding_mmap_bytes += row->bytes;
                                tj.outstanding_mmaps += row->allocs;
                        } else {
                                tj.outstanding_bytes += row->bytes;
                                tj.outstanding_allocs += row->allocs;
                        }
                }
                t = target_json_new(&tj);
                if (targets[i].rss_bytes)
                        json_add_u64(t, RF_RSS_BYTES, targets[i].rss_bytes);
                else
                        cJSON_AddNullToObject(t, RF_RSS_BYTES);
                if (targets[i].has_trend && targets[i].trend_to_now) {
                        cJSON *tr = cJSON_AddObjectToObject(t, RF_TREND);
                        uint64_t oldest_s = targets[i].trend_oldest_usec / 1000000;

                        json_add_u64(tr, RF_WINDOW_S, p->generated_at > oldest_s ? p->generated_at - oldest_s : 0);
                        cJSON_AddNumberToObject(tr, RF_BYTES_DELTA, (double)tj.outstanding_bytes -
                                                (double)targets[i].trend_oldest_bytes);
                } else if (targets[i].has_trend) {
                        cJSON *tr = cJSON_AddObjectToObject(t, RF_TREND);

                        json_add_u64(tr, RF_WINDOW_S, targets[i].trend_window_s);
                        cJSON_AddNumberToObject(tr, RF_BYTES_DELTA, (double)targets[i].trend_bytes);
                } else
                        cJSON_AddNullToObject(t, RF_TREND);
                add_target_reachability(t, &targets[i]);
                add_target_counted(t, &targets[i]);
                cJSON_AddItemToArray(arr, t);
        }
        return arr;
}

/* Whether a row is listed under the report's verdict filter (memleakctl leaks: "growing", which
 * also lists the stacks a reachability scan found lost blocks in: both are leak evidence); a its
 * verdict, NULL where it has none. */
static bool verdict_wanted(const struct report_params *p, const struct leak_assessment *a,
                           const struct reach_stack *reach)
{
        if (p->only_verdict <= 0)
                return true;
        if (p->only_verdict == 1 + LEAK_VERDICT_GROWING && lost_bytes(reach) > 0)
                return true;
        return a && (int)a->verdict + 1 == p->only_verdict;
}

cJSON *report_targets_json(const struct stack_rows *rows, const struct report_target *targets, size_t n_targets,
                           const struct report_params *p)
{
        assert(rows);
        assert(p);
        return targets_to_json(rows, targets, n_targets, p);
}

void report_summarize(const struct stack_rows *rows, const struct report_target *targets, size_t n_targets,
                      const struct report_params *p, struct report_summary *ret)
{
        assert(rows);
        assert(p);
        assert(ret || n_targets == 0);
        uint64_t now_usec = p->generated_at_usec ?: p->generated_at * 1000000;
        uint64_t *bytes = calloc(MAX(n_targets, (size_t)1), sizeof(*bytes));

        for (size_t i = 0; i < n_targets; i++)
                ret[i] = (struct report_summary) {};
        for (size_t i = 0; i < rows->n; i++) {
                const struct stack_row *row = &rows->rows[i];
                const struct report_target *t = target_of(targets, n_targets, row->pid);
                struct report_summary *sum;
                struct leak_assessment a;
                uint64_t lost;

                if (!t || row->allocs == 0 || row->space != 0)
                        continue;
                sum = &ret[t - targets];
                sum->stacks++;
                if (bytes)
                        bytes[t - targets] += row->bytes;
                if (row->stack_id >= 0 && p->assess && p->assess(p->userdata, row, &a) &&
                    a.verdict == LEAK_VERDICT_GROWING)
                        sum->growing++;
                lost = lost_bytes(reach_of(targets, n_targets, row));
                if (lost > 0) {
                        sum->lost_stacks++;
                        sum->lost_bytes += lost;
                }
        }
        for (size_t i = 0; bytes && i < n_targets; i++)
                if (targets[i].has_trend && targets[i].trend_to_now && now_usec > targets[i].trend_oldest_usec + 500000) {
                        ret[i].has_growth = true;
                        ret[i].growth_bytes_per_s = ((double)bytes[i] - (double)targets[i].trend_oldest_bytes) /
                                                    ((double)(now_usec - targets[i].trend_oldest_usec) / 1e6);
                }
        free(bytes);
}

/* s as a raw JSON text in valid UTF-8 (the wire's), added to stacks; s is gone. */
static int add_stack_raw(cJSON *stacks, cJSON *s)
{
        _cleanup_json_ cJSON *stack = s;
        _cleanup_free_ char *text = NULL;
        cJSON *raw;

        if (json_strings_map(stack, utf8_needs_repair, utf8_repair) < 0)
                return -ENOMEM;
        text = cJSON_PrintUnformatted(stack);
        if (!text)
                return -ENOMEM;
        raw = cJSON_CreateRaw(text);
        if (!raw)
                return -ENOMEM;
        cJSON_AddItemToArray(stacks, raw);
        return 0;
}

cJSON *report_build(struct stack_rows *rows, const struct report_target *targets, size_t n_targets,
                    const struct report_params *p)
{
        _cleanup_json_ cJSON *r = cJSON_CreateObject();
        _cleanup_(location_table_done) struct location_table locs = {};
        cJSON *stacks, *other, *lost;
        uint64_t other_stacks = 0, other_bytes = 0, other_allocs = 0, listed = 0, truncated = 0;

        assert(rows);
        assert(p);
        if (!r)
                return NULL;
        if (rows->n > 0)
                qsort_r(rows->rows, rows->n, sizeof(*rows->rows), row_by_bytes,
                        &(struct row_order) { .targets = targets, .n_targets = n_targets });
        json_add_u64(r, RF_GENERATED_AT, p->generated_at);
        json_add_u64(r, RF_MIN_AGE_S, p->min_age_s);
        json_add_u64(r, RF_TOP, p->top);
        cJSON_AddItemToObject(r, RF_TARGETS, targets_to_json(rows, targets, n_targets, p));
        if (p->locations) {
                locs.array = cJSON_AddArrayToObject(r, RF_LOCATIONS);
                if (!locs.array)
                        return NULL;
        }
        stacks = cJSON_AddArrayToObject(r, RF_STACKS);
        if (!stacks)
                return NULL;
        for (size_t i = 0; i < rows->n; i++) {
                const struct stack_row *row = &rows->rows[i];

                if (row->allocs == 0)
                        continue;
                const struct reach_stack *reach = reach_of(targets, n_targets, row);
                struct leak_assessment a;
                /* its verdict, made once: for the filter and the stack alike (not past top) */
                bool assessed = listed < p->top && p->assess && row->stack_id >= 0 && p->assess(p->userdata, row, &a);

                if (listed < p->top && verdict_wanted(p, assessed ? &a : NULL, reach)) {
                        cJSON *s = stack_to_json(p, row, targets, n_targets, reach, assessed ? &a : NULL,
                                                 p->locations ? &locs : NULL);

                        if (!s)
                                return NULL;
                        /* with locations, each stack made into its text at once: a report of
                         * 100,000 stacks is then ~40 MB, not a tree of millions of nodes */
                        if (p->locations) {
                                if (add_stack_raw(stacks, s) < 0)
                                        return NULL;
                        } else
                                cJSON_AddItemToArray(stacks, s);
                        listed++;
                        continue;
                }
                other_stacks++;
                other_bytes += row->bytes;
                other_allocs += row->allocs;
        }
        other = cJSON_AddObjectToObject(r, RF_OTHER);
        if (!other)
                return NULL;
        json_add_u64(other, RF_STACKS, other_stacks);
        json_add_u64(other, RF_BYTES, other_bytes);
        json_add_u64(other, RF_ALLOCS, other_allocs);
        lost = p->lost ? cJSON_Duplicate(p->lost, true) : cJSON_CreateObject();
        if (!lost)
                return NULL;
        /* Stacks deeper than max_stack_depth lose their outer frames: count them with the rest. */
        for (size_t i = 0; i < rows->n; i++)
                truncated += row_truncated(p, &rows->rows[i]);
        json_add_u64(lost, RF_STACKS_TRUNCATED, truncated);
        cJSON_AddItemToObject(r, RF_LOST, lost);
        return TAKE_PTR(r);
}
