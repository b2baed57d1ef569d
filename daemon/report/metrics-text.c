/* SPDX-License-Identifier: GPL-2.0-only */
/* The metrics in Prometheus' text exposition format (version 0.0.4): each family's HELP and TYPE
 * once, then its samples; names memleakd_*, in base units, counters ending in _total. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json-util.h"
#include "macro.h"
#include "metrics-text.h"
#include "reply-fields.h"

/* One per-target family: its name, type, help, and its value for a target (false: none). */
struct family {
        const char *name;
        const char *type;
        const char *help;
        bool (*value)(const cJSON *t, const struct report_summary *sum, double *ret);
};

static bool number(const cJSON *o, const char *name, double *ret)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        if (!cJSON_IsNumber(v))
                return false;
        *ret = v->valuedouble;
        return true;
}

static bool outstanding_bytes(const cJSON *t, const struct report_summary *s, double *ret)
{
        (void)s;
        return number(t, RF_OUTSTANDING_BYTES, ret);
}

static bool outstanding_allocs(const cJSON *t, const struct report_summary *s, double *ret)
{
        (void)s;
        return number(t, RF_OUTSTANDING_ALLOCS, ret);
}

static bool outstanding_mmap_bytes(const cJSON *t, const struct report_summary *s, double *ret)
{
        (void)s;
        return number(t, RF_OUTSTANDING_MMAP_BYTES, ret);
}

/* Its outstanding bytes' growth over the snapshot ring (report_summarize()). */
static bool growth(const cJSON *t, const struct report_summary *s, double *ret)
{
        (void)t;
        *ret = s->growth_bytes_per_s;
        return s->has_growth;
}

static bool stacks(const cJSON *t, const struct report_summary *s, double *ret)
{
        (void)t;
        *ret = (double)s->stacks;
        return true;
}

static bool growing_stacks(const cJSON *t, const struct report_summary *s, double *ret)
{
        (void)t;
        *ret = (double)s->growing;
        return true;
}

/* Whether its reachability scan is there (lost blocks are known only then). */
static bool scanned(const cJSON *t)
{
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(t, RF_REACHABILITY);

        return cJSON_IsObject(r) && !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(r, RF_ERROR));
}

static bool lost_block_stacks(const cJSON *t, const struct report_summary *s, double *ret)
{
        *ret = (double)s->lost_stacks;
        return scanned(t);
}

static bool lost_bytes(const cJSON *t, const struct report_summary *s, double *ret)
{
        *ret = (double)s->lost_bytes;
        return scanned(t);
}

static bool sampled(const cJSON *t, const struct report_summary *s, double *ret)
{
        double mean = 0;

        (void)s;
        (void)number(t, RF_SAMPLE_BYTES, &mean);
        *ret = mean > 0;
        return true;
}

static bool sample_bytes(const cJSON *t, const struct report_summary *s, double *ret)
{
        (void)s;
        return number(t, RF_SAMPLE_BYTES, ret);
}

static bool qualified(const cJSON *t, const struct report_summary *s, double *ret)
{
        (void)s;
        *ret = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, RF_VERDICTS_QUALIFIED));
        return true;
}

static bool snapshots(const cJSON *t, const struct report_summary *s, double *ret)
{
        (void)s;
        return number(t, RF_SNAPSHOTS, ret);
}

static const struct family families[] = {
        { "memleakd_target_outstanding_bytes", "gauge",
          "Heap bytes the target holds outstanding (an estimate when it is sampled).", outstanding_bytes },
        { "memleakd_target_outstanding_allocations", "gauge",
          "Heap blocks the target holds outstanding (an estimate when it is sampled).", outstanding_allocs },
        { "memleakd_target_outstanding_mmap_bytes", "gauge",
          "Bytes of anonymous mappings the target made itself and holds (attach --mmap; else 0).",
          outstanding_mmap_bytes },
        { "memleakd_target_growth_bytes_per_second", "gauge",
          "The target's outstanding bytes' growth over the snapshot ring.", growth },
        { "memleakd_target_stacks", "gauge", "Call stacks holding the target's outstanding heap blocks.", stacks },
        { "memleakd_target_growing_stacks", "gauge",
          "Of those, the stacks whose verdict is growing (leak suspects).", growing_stacks },
        { "memleakd_target_lost_block_stacks", "gauge",
          "Stacks its last reachability scan found definitely or indirectly lost blocks in (only once scanned).",
          lost_block_stacks },
        { "memleakd_target_lost_bytes", "gauge",
          "Bytes its last reachability scan found definitely or indirectly lost (only once scanned).", lost_bytes },
        { "memleakd_target_sampled", "gauge",
          "1 when the target's blocks are sampled (figures are estimates), 0 when every allocation is recorded.",
          sampled },
        { "memleakd_target_sample_mean_bytes", "gauge", "The mean bytes between two sample points; 0: exact.",
          sample_bytes },
        { "memleakd_target_verdicts_qualified", "gauge",
          "1 when the target lost allocations within the window its verdicts rest on (they may miss growth).",
          qualified },
        { "memleakd_target_snapshots", "gauge", "The snapshots its verdicts rest on.", snapshots },
};

/* value, escaped as a label value: backslash, double quote and newline. */
static void put_label(FILE *f, const char *name, const char *value, bool *first)
{
        fprintf(f, "%s%s=\"", *first ? "" : ",", name);
        *first = false;
        for (const char *c = value; *c; c++)
                if (*c == '\\')
                        fputs("\\\\", f);
                else if (*c == '"')
                        fputs("\\\"", f);
                else if (*c == '\n')
                        fputs("\\n", f);
                else
                        fputc(*c, f);
        fputc('"', f);
}

/* {pid="..",comm="..",unit=".."} of t, then extra="value" when extra is set. */
static void put_labels(FILE *f, const cJSON *t, const char *extra, const char *extra_value)
{
        const char *comm = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, RF_COMM));
        const char *unit = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, RF_UNIT));
        const char *cgroup = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, RF_CGROUP));
        char pid[32];
        double v = 0;
        bool first = true;

        (void)number(t, RF_PID, &v);
        snprintf(pid, sizeof(pid), "%.0f", v);
        fputc('{', f);
        put_label(f, "pid", pid, &first);
        put_label(f, "comm", comm ?: "", &first);
        if (unit)
                put_label(f, "unit", unit, &first);
        if (cgroup)
                put_label(f, "cgroup", cgroup, &first);
        if (extra)
                put_label(f, extra, extra_value, &first);
        fputc('}', f);
}

static void put_value(FILE *f, double v)
{
        if (v == (double)(int64_t)v)
                fprintf(f, " %" PRId64 "\n", (int64_t)v);
        else
                fprintf(f, " %.6g\n", v);
}

static void put_family(FILE *f, const char *name, const char *type, const char *help)
{
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static bool live(const cJSON *t)
{
        return cJSON_IsObject(t) && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, RF_EXITED));
}

/* Each live target's loss counters, by reason: one family, a sample per target and reason. */
static void put_losses(FILE *f, const cJSON *targets)
{
        const cJSON *t, *c;

        put_family(f, "memleakd_target_lost_events_total", "counter",
                   "Events BPF could not record for the target, by reason (status and report say the same).");
        cJSON_ArrayForEach(t, targets) {
                if (!live(t))
                        continue;
                cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(t, RF_LOST)) {
                        if (!cJSON_IsNumber(c) || !c->string)
                                continue;
                        fputs("memleakd_target_lost_events_total", f);
                        put_labels(f, t, "reason", c->string);
                        put_value(f, c->valuedouble);
                }
        }
}

int metrics_text_build(const cJSON *targets, const struct report_summary *sums, const struct metrics_daemon *d,
                       char **ret)
{
        _cleanup_free_ char *text = NULL;
        uint64_t n_live = 0;
        size_t size = 0;
        const cJSON *t;
        FILE *f;

        assert(d);
        assert(ret);
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        cJSON_ArrayForEach(t, targets)
                n_live += live(t);
        for (size_t k = 0; k < ELEMENTSOF(families); k++) {
                size_t i = 0;

                put_family(f, families[k].name, families[k].type, families[k].help);
                cJSON_ArrayForEach(t, targets) {
                        double v;

                        if (live(t) && families[k].value(t, &sums[i], &v)) {
                                fputs(families[k].name, f);
                                put_labels(f, t, NULL, NULL);
                                put_value(f, v);
                        }
                        i++;
                }
        }
        put_losses(f, targets);
        put_family(f, "memleakd_build_info", "gauge", "The memleakd that wrote these metrics (always 1).");
        fputs("memleakd_build_info{", f);
        put_label(f, "version", d->version, &(bool) { true });
        fputs("} 1\n", f);
        put_family(f, "memleakd_targets", "gauge", "Processes (and the kernel) memleakd traces now.");
        fprintf(f, "memleakd_targets %" PRIu64 "\n", n_live);
        if (d->rss_bytes) {
                put_family(f, "memleakd_resident_memory_bytes", "gauge", "memleakd's own resident memory.");
                fprintf(f, "memleakd_resident_memory_bytes %" PRIu64 "\n", d->rss_bytes);
        }
        if (d->has_map_bytes) {
                put_family(f, "memleakd_bpf_map_bytes", "gauge", "Kernel memory memleakd's BPF maps hold.");
                fprintf(f, "memleakd_bpf_map_bytes %" PRIu64 "\n", d->map_bytes);
        }
        put_family(f, "memleakd_snapshot_tick_seconds", "gauge", "What the last snapshot tick took.");
        fprintf(f, "memleakd_snapshot_tick_seconds %.6f\n", d->snapshot_tick_s);
        put_family(f, "memleakd_metrics_generated_timestamp_seconds", "gauge", "When these metrics were made.");
        fprintf(f, "memleakd_metrics_generated_timestamp_seconds %" PRIu64 "\n", d->generated_at);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;
}
