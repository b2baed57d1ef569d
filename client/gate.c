/* SPDX-License-Identifier: MIT */
/* A CI gate over a report: suppressions applied, then pass or fail on what is left. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gate.h"
#include "json-util.h"
#include "macro.h"
#include "reply-fields.h"
#include "report-stacks.h"

#define GATE_MAX_REASONS 16     /* reasons listed; the rest are counted */

static const struct {
        unsigned kind;
        const char *name;
} kinds[] = {
        { GATE_LOST, "lost" },
        { GATE_GROWING, "growing" },
        { GATE_OUTSTANDING, "outstanding" },
};

int gate_kinds_parse(const char *list, unsigned *ret)
{
        unsigned mask = 0;
        const char *p = list;

        assert(ret);

        if (!list || !*list)
                return -EINVAL;
        for (;;) {
                size_t len = strcspn(p, ",");
                unsigned kind = 0;

                for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                        if (strlen(kinds[i].name) == len && strncmp(p, kinds[i].name, len) == 0)
                                kind = kinds[i].kind;
                if (!kind || (mask & kind))
                        return -EINVAL;
                mask |= kind;
                if (!p[len])
                        break;
                p += len + 1;
        }
        *ret = mask;
        return 0;
}

const char *gate_kinds_to_string(unsigned mask, char *buf, size_t size)
{
        size_t used = 0;

        assert(buf);
        assert(size > 0);

        buf[0] = '\0';
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (mask & kinds[i].kind) {
                        int n = snprintf(buf + used, size - used, "%s%s", used ? "," : "", kinds[i].name);

                        if (n < 0 || (size_t)n >= size - used)
                                break;
                        used += (size_t)n;
                }
        return buf;
}

void gate_result_done(struct gate_result *r)
{
        if (!r)
                return;
        cJSON_Delete(r->undecided);
        r->undecided = NULL;
        free(r->patterns);
        r->patterns = NULL;
}

static uint64_t u64_of(const cJSON *obj, const char *name)
{
        uint64_t v;

        return json_get_u64(cJSON_GetObjectItemCaseSensitive(obj, name), UINT64_MAX, &v) < 0 ? 0 : v;
}

static void tally_add(struct gate_tally *t, uint64_t stacks, uint64_t allocs, uint64_t bytes)
{
        t->stacks += stacks;
        t->allocs += allocs;
        t->bytes += bytes;
}

/* Why a verdict could not be decided, once per distinct reason. */
__attribute__((format(printf, 2, 3)))
static int undecided(struct gate_result *r, const char *fmt, ...)
{
        _cleanup_free_ char *why = NULL;
        const cJSON *item;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&why, fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        r->failed = true;
        cJSON_ArrayForEach(item, r->undecided)
                if (cJSON_IsString(item) && strcmp(item->valuestring, why) == 0)
                        return 0;
        if (cJSON_GetArraySize(r->undecided) >= GATE_MAX_REASONS)
                return 0;
        return cJSON_AddItemToArray(r->undecided, cJSON_CreateString(why)) ? 0 : -ENOMEM;
}

static const cJSON *target_of(const cJSON *targets, uint64_t pid)
{
        const cJSON *t;

        cJSON_ArrayForEach(t, targets)
                if (u64_of(t, RF_PID) == pid)
                        return t;
        return NULL;
}

static const char *comm_of(const cJSON *target)
{
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(target, RF_COMM);

        return cJSON_IsString(c) ? c->valuestring : "?";
}

static uint64_t class_of(const cJSON *reach, const char *class, const char *what)
{
        return u64_of(cJSON_GetObjectItemCaseSensitive(reach, class), what);
}

/* "lost" for one stack of a heap: its definitely and indirectly lost blocks, or why not known. */
static int judge_lost(struct gate_result *r, const cJSON *stack, const cJSON *target, uint64_t pid)
{
        const cJSON *scan = cJSON_GetObjectItemCaseSensitive(target, RF_REACHABILITY);
        const cJSON *error = cJSON_GetObjectItemCaseSensitive(scan, RF_ERROR);
        const cJSON *reach = cJSON_GetObjectItemCaseSensitive(stack, RF_REACHABILITY);
        uint64_t bytes, allocs;

        if (!target)
                return undecided(r, "lost: pid %" PRIu64 " is not among the report's targets", pid);
        if (!cJSON_IsObject(scan))
                return undecided(r, "lost: pid %" PRIu64 " (%s) was not scanned (no reachability scan: "
                                 "--no-reachability, a sampled target, or the kernel)", pid, comm_of(target));
        if (cJSON_IsString(error))
                return undecided(r, "lost: pid %" PRIu64 " (%s) was not scanned: %s", pid, comm_of(target),
                                 error->valuestring);
        /* A live target's stack the scan has nothing of: its blocks are newer than the scan (a
         * churn refilled meanwhile), none of them lost evidence yet. At an exit every block was
         * there to scan. */
        if (!cJSON_IsObject(reach) && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(scan, RF_AT_EXIT)))
                return 0;
        if (!cJSON_IsObject(reach))
                return undecided(r, "lost: a stack of pid %" PRIu64 " (%s) has no classes from its scan", pid,
                                 comm_of(target));
        if (class_of(reach, RF_UNDECIDED, RF_BYTES) > 0) {
                const cJSON *partial = cJSON_GetObjectItemCaseSensitive(scan, RF_PARTIAL);

                return undecided(r, "lost: pid %" PRIu64 " (%s) was scanned in part%s%s", pid, comm_of(target),
                                 cJSON_IsString(partial) ? ": " : "",
                                 cJSON_IsString(partial) ? partial->valuestring : "");
        }
        bytes = class_of(reach, RF_DEFINITELY_LOST, RF_BYTES) + class_of(reach, RF_INDIRECTLY_LOST, RF_BYTES);
        allocs = class_of(reach, RF_DEFINITELY_LOST, RF_ALLOCS) + class_of(reach, RF_INDIRECTLY_LOST, RF_ALLOCS);
        if (bytes > 0 || allocs > 0)
                tally_add(&r->lost, 1, allocs, bytes);
        return 0;
}

/* "growing" for one stack of a heap: its verdict, or why it has none. */
static int judge_growing(struct gate_result *r, const cJSON *stack, const cJSON *target, uint64_t pid)
{
        const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(stack, RF_VERDICT);
        bool exited = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(target, RF_EXITED));

        if (!target)
                return undecided(r, "growing: pid %" PRIu64 " is not among the report's targets", pid);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(target, RF_VERDICTS_QUALIFIED)))
                return undecided(r, "growing: pid %" PRIu64 " (%s) lost allocations within the snapshots its "
                                 "verdicts rest on: a stack may grow unseen", pid, comm_of(target));
        if (exited && !cJSON_IsString(verdict))
                return undecided(r, "growing: a stack of pid %" PRIu64 " (%s) has no verdict kept from its exit "
                                 "(its stack was not captured, or an earlier memleakd kept its report)", pid,
                                 comm_of(target));
        if (!cJSON_IsString(verdict))
                return undecided(r, "growing: pid %" PRIu64 " (%s) has no snapshot yet (snapshot_interval_ms)",
                                 pid, comm_of(target));
        /* a program that ran shorter than a verdict needs: its growth cannot be told, whatever
         * its stacks hold at its exit (the reachability scan judges those: --fail-on lost) */
        if (exited && strcmp(verdict->valuestring, "pending") == 0)
                return undecided(r, "growing: pid %" PRIu64 " (%s) exited after %" PRIu64 " snapshots: a growth "
                                 "verdict needed %" PRIu64 " more (verdict_min_snapshots, one every "
                                 "snapshot_interval_ms): it ran too short to judge its growth", pid,
                                 comm_of(target), u64_of(target, RF_SNAPSHOTS), u64_of(stack, RF_SNAPSHOTS_MISSING));
        if (strcmp(verdict->valuestring, "pending") == 0)
                return undecided(r, "growing: pid %" PRIu64 " (%s) has too few snapshots (%" PRIu64
                                 " more needed: verdict_min_snapshots)", pid, comm_of(target),
                                 u64_of(stack, RF_SNAPSHOTS_MISSING));
        if (strcmp(verdict->valuestring, "growing") == 0)
                tally_add(&r->growing, 1, u64_of(stack, RF_ALLOCS), u64_of(stack, RF_BYTES));
        return 0;
}

static int judge(struct gate_result *r, const cJSON *stack, const cJSON *targets)
{
        uint64_t pid = u64_of(stack, RF_PID);
        const cJSON *target = target_of(targets, pid);
        bool mmap = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(stack, RF_MMAP));
        int k;

        if (u64_of(stack, RF_ALLOCS) == 0 && u64_of(stack, RF_BYTES) == 0)
                return 0;
        if (r->fail_on & GATE_OUTSTANDING)
                tally_add(&r->outstanding, 1, u64_of(stack, RF_ALLOCS), u64_of(stack, RF_BYTES));
        /* a scan reads the heap's blocks, and verdicts are the heap's: mappings fail only "outstanding" */
        if (mmap)
                return 0;
        if ((r->fail_on & GATE_LOST) && (k = judge_lost(r, stack, target, pid)) < 0)
                return k;
        if ((r->fail_on & GATE_GROWING) && (k = judge_growing(r, stack, target, pid)) < 0)
                return k;
        return 0;
}

/* The stacks past keep (folded) go into "other", as memleakd folds the stacks past its top. */
static int fold_past(cJSON *report, const struct gate_tally *folded)
{
        cJSON *other = cJSON_GetObjectItemCaseSensitive(report, RF_OTHER);
        uint64_t n = folded->stacks, bytes = folded->bytes, allocs = folded->allocs;

        if (n == 0)
                return 0;
        if (!cJSON_IsObject(other)) {
                cJSON_DeleteItemFromObjectCaseSensitive(report, RF_OTHER);
                other = cJSON_AddObjectToObject(report, RF_OTHER);
                if (!other)
                        return -ENOMEM;
        }
        n += u64_of(other, RF_STACKS);
        bytes += u64_of(other, RF_BYTES);
        allocs += u64_of(other, RF_ALLOCS);
        cJSON_DeleteItemFromObjectCaseSensitive(other, RF_STACKS);
        cJSON_DeleteItemFromObjectCaseSensitive(other, RF_BYTES);
        cJSON_DeleteItemFromObjectCaseSensitive(other, RF_ALLOCS);
        if (!json_add_u64(other, RF_STACKS, n) || !json_add_u64(other, RF_BYTES, bytes) ||
            !json_add_u64(other, RF_ALLOCS, allocs))
                return -ENOMEM;
        return 0;
}

static cJSON *tally_to_json(cJSON *obj, const char *name, const struct gate_tally *t)
{
        cJSON *o = cJSON_AddObjectToObject(obj, name);

        if (!o || !json_add_u64(o, RF_STACKS, t->stacks) || !json_add_u64(o, RF_ALLOCS, t->allocs) ||
            !json_add_u64(o, RF_BYTES, t->bytes))
                return NULL;
        return o;
}

static int add_suppressed(cJSON *report, const struct suppressions *sup, const struct gate_result *r)
{
        cJSON *o, *patterns;

        cJSON_DeleteItemFromObjectCaseSensitive(report, RF_SUPPRESSED);
        o = cJSON_AddObjectToObject(report, RF_SUPPRESSED);
        if (!o || !cJSON_AddStringToObject(o, RF_FILE, sup->path) || !json_add_u64(o, RF_STACKS, r->suppressed.stacks) ||
            !json_add_u64(o, RF_ALLOCS, r->suppressed.allocs) || !json_add_u64(o, RF_BYTES, r->suppressed.bytes))
                return -ENOMEM;
        patterns = cJSON_AddArrayToObject(o, RF_PATTERNS);
        if (!patterns)
                return -ENOMEM;
        for (size_t i = 0; i < sup->n; i++) {
                const struct suppression *s = &sup->items[i];
                const struct gate_tally *t = &r->patterns[i];
                cJSON *p = cJSON_CreateObject();

                if (!p || !cJSON_AddItemToArray(patterns, p))
                        return cJSON_Delete(p), -ENOMEM;
                if (!cJSON_AddStringToObject(p, RF_PATTERN, s->pattern) || !json_add_u64(p, RF_LINE, s->line) ||
                    !json_add_u64(p, RF_STACKS, t->stacks) || !json_add_u64(p, RF_ALLOCS, t->allocs) ||
                    !json_add_u64(p, RF_BYTES, t->bytes))
                        return -ENOMEM;
        }
        return 0;
}

static int add_gate(cJSON *report, const struct gate_result *r, int error_exitcode)
{
        cJSON *o, *fail_on;

        cJSON_DeleteItemFromObjectCaseSensitive(report, RF_GATE);
        o = cJSON_AddObjectToObject(report, RF_GATE);
        fail_on = o ? cJSON_AddArrayToObject(o, RF_FAIL_ON) : NULL;
        if (!fail_on)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if ((r->fail_on & kinds[i].kind) &&
                    !cJSON_AddItemToArray(fail_on, cJSON_CreateString(kinds[i].name)))
                        return -ENOMEM;
        if (!cJSON_AddNumberToObject(o, RF_ERROR_EXITCODE, error_exitcode) ||
            !cJSON_AddBoolToObject(o, RF_FAILED, r->failed) ||
            ((r->fail_on & GATE_LOST) && !tally_to_json(o, RF_LOST, &r->lost)) ||
            ((r->fail_on & GATE_GROWING) && !tally_to_json(o, RF_GROWING, &r->growing)) ||
            ((r->fail_on & GATE_OUTSTANDING) && !tally_to_json(o, RF_OUTSTANDING, &r->outstanding)))
                return -ENOMEM;
        cJSON_AddItemToObject(o, RF_UNDECIDED, cJSON_Duplicate(r->undecided, true));
        return cJSON_GetObjectItemCaseSensitive(o, RF_UNDECIDED) ? 0 : -ENOMEM;
}

int gate_apply(cJSON *report, const struct suppressions *sup, unsigned fail_on, int error_exitcode, uint64_t keep,
               struct gate_result *ret)
{
        _cleanup_(report_stacks_done) struct report_stacks rs = {};
        cJSON *stacks = cJSON_GetObjectItemCaseSensitive(report, RF_STACKS);
        const cJSON *targets = cJSON_GetObjectItemCaseSensitive(report, RF_TARGETS);
        struct gate_result r = { .fail_on = fail_on, .undecided = cJSON_CreateArray() };
        struct gate_tally folded = {};
        cJSON *item, *next;
        uint64_t unlisted, kept = 0;
        int k;

        assert(report);
        assert(ret);

        if (sup && sup->n > 0)
                r.patterns = calloc(sup->n, sizeof(*r.patterns));
        if (!r.undecided || (sup && sup->n > 0 && !r.patterns)) {
                gate_result_done(&r);
                return -ENOMEM;
        }
        k = report_stacks_init(&rs, report);
        if (k < 0) {
                gate_result_done(&r);
                return k;
        }
        /* stacks not listed cannot be judged, nor matched */
        unlisted = u64_of(cJSON_GetObjectItemCaseSensitive(report, RF_OTHER), RF_STACKS);
        if (fail_on && unlisted > 0 &&
            undecided(&r, "%" PRIu64 " stacks were not listed by memleakd: they could not be judged",
                      unlisted) < 0)
                goto oom;
        for (item = stacks->child; item; item = next) {
                _cleanup_json_ cJSON *stack = NULL;
                uint64_t allocs, bytes;
                ssize_t i;

                next = item->next;
                k = report_stacks_open(&rs, item, NULL, NULL, &stack);
                if (k == -ENOMEM)
                        goto oom;
                if (k < 0) {
                        gate_result_done(&r);
                        return k;
                }
                allocs = u64_of(stack, RF_ALLOCS);
                bytes = u64_of(stack, RF_BYTES);
                i = suppressions_match_frames(sup, cJSON_GetObjectItemCaseSensitive(stack, RF_FRAMES));
                if (i >= 0) {
                        tally_add(&r.suppressed, 1, allocs, bytes);
                        tally_add(&r.patterns[i], 1, allocs, bytes);
                        cJSON_Delete(cJSON_DetachItemViaPointer(stacks, item));
                        continue;
                }
                if (fail_on && judge(&r, stack, targets) < 0)
                        goto oom;
                /* judged, then past keep: folded into "other" */
                if (++kept > keep) {
                        tally_add(&folded, 1, allocs, bytes);
                        cJSON_Delete(cJSON_DetachItemViaPointer(stacks, item));
                }
        }
        if (r.lost.stacks || r.growing.stacks || r.outstanding.stacks)
                r.failed = true;
        k = fold_past(report, &folded);
        if (k >= 0 && sup)
                k = add_suppressed(report, sup, &r);
        if (k >= 0 && fail_on)
                k = add_gate(report, &r, error_exitcode);
        if (k < 0)
                goto oom;
        *ret = r;
        return 0;
oom:
        gate_result_done(&r);
        return -ENOMEM;
}
