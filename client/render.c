/* SPDX-License-Identifier: MIT */
/* Turn memleakd's replies into text or JSON on a stream (pure: cJSON in, text out). */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include "json-util.h"
#include "macro.h"
#include "protocol.h"
#include "render.h"
#include "reply-fields.h"
#include "report-stacks.h"
#include "text-safe.h"
#include "util.h"

static int stream_result(FILE *f)
{
        return ferror(f) ? -EIO : 0;
}

/* A member that is a non-negative integer, 0 when absent or ill-typed. */
static uint64_t get_u64(const cJSON *o, const char *name)
{
        uint64_t v;

        if (json_get_u64(cJSON_GetObjectItemCaseSensitive(o, name), UINT64_MAX, &v) < 0)
                return 0;
        return v;
}

/* A number member, 0 when absent or not a number. */
static double get_double(const cJSON *o, const char *name)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

        return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

/* A string member, NULL when absent, null or not a string. */
static const char *get_str(const cJSON *o, const char *name)
{
        return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

static const char *str_or(const char *s, const char *fallback)
{
        return s ? s : fallback;
}

/* A module's short name: a file's base name, or a kernel module as it comes ("[kernel]",
 * "[bpf]"), without its brackets, which the frame adds. */
static int module_label(const char *module, const char **ret)
{
        size_t n = strlen(module);

        if (n >= 2 && module[0] == '[' && module[n - 1] == ']') {
                *ret = module + 1;
                return (int)(n - 2);
        }
        *ret = path_base_name(module);
        return (int)strlen(*ret);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
        return n == 1 ? one : many;
}

/* "3d 4h 5m 6s", leading zero units left out. */
static void print_duration(FILE *f, uint64_t s)
{
        static const struct {
                uint64_t seconds;
                const char *unit;
        } units[] = { { 86400, "d" }, { 3600, "h" }, { 60, "m" } };
        bool any = false;

        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (s >= units[i].seconds || any) {
                        fprintf(f, "%" PRIu64 "%s ", s / units[i].seconds, units[i].unit);
                        s %= units[i].seconds;
                        any = true;
                }
        fprintf(f, "%" PRIu64 "s", s);
}

/* "pid 1234 (leaky" with ", exited" when so; the caller closes the parenthesis. */
/* "10:31:04", local time, of a time in seconds since the epoch. */
static void print_clock(FILE *f, uint64_t s)
{
        time_t when = (time_t)s;
        struct tm tm;
        char clock[16] = "??:??:??";

        if (localtime_r(&when, &tm))
                strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
        fputs(clock, f);
}

/* "sampled since 10:31:04 (its share of the allocation table 85% full), 1 in ~16384 bytes,
 * raised 2 times (last at 10:31:09)": memleakd turned the target to sampling (auto_sample);
 * nothing when it did not. Returns whether it printed. */
static bool print_auto_sample(FILE *f, const cJSON *target, const char *before, const char *after)
{
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(target, RF_AUTO_SAMPLE);
        const cJSON *changes = cJSON_GetObjectItemCaseSensitive(a, RF_CHANGES);
        const cJSON *last = cJSON_GetArrayItem(changes, cJSON_GetArraySize(changes) - 1);
        uint64_t raised = get_u64(a, RF_CHANGES_TOTAL);

        if (!cJSON_IsObject(a))
                return false;
        fprintf(f, "%ssampled since ", before);
        print_clock(f, get_u64(a, RF_SINCE));
        fprintf(f, " (its share of the allocation table %" PRIu64 "%% full), 1 in ~%" PRIu64 " bytes",
                get_u64(a, RF_TABLE_PERCENT), get_u64(a, RF_SAMPLE_BYTES));
        if (raised > 1 && cJSON_IsObject(last)) {
                fprintf(f, ", raised %" PRIu64 " %s (last at ", raised - 1, plural(raised - 1, "time", "times"));
                print_clock(f, get_u64(last, RF_AT));
                fputc(')', f);
        }
        fputs(after, f);
        return true;
}

static void print_target_name(FILE *f, const cJSON *target)
{
        fprintf(f, "pid %" PRIu64 " (%s", get_u64(target, RF_PID), str_or(get_str(target, RF_COMM), "?"));
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(target, RF_EXITED)))
                fputs(", exited", f);
        if (get_u64(target, RF_FORKED_FROM) > 0)
                fprintf(f, ", forked by pid %" PRIu64, get_u64(target, RF_FORKED_FROM));
        if (get_str(target, RF_UNIT))
                fprintf(f, ", unit %s", get_str(target, RF_UNIT));
        else if (get_str(target, RF_CGROUP))
                fprintf(f, ", cgroup %s", get_str(target, RF_CGROUP));
}

/* "unit nginx.service (/sys/fs/cgroup/system.slice/nginx.service): 5 processes traced, 7 attached
 * since it is watched, 1 gone before it could be, ..." */
static void print_watch(FILE *f, const cJSON *w)
{
        uint64_t missed = get_u64(w, RF_MISSED), failed = get_u64(w, RF_FAILED), lost = get_u64(w, RF_EVENTS_LOST);
        uint64_t processes = get_u64(w, RF_PROCESSES);

        if (get_str(w, RF_UNIT))
                fprintf(f, "unit %s", get_str(w, RF_UNIT));
        else
                fprintf(f, "cgroup %s", str_or(get_str(w, RF_CGROUP), "?"));
        if (get_str(w, RF_PATH))
                fprintf(f, " (%s)", get_str(w, RF_PATH));
        else
                fputs(" (no cgroup now: looked for again at each snapshot)", f);
        fprintf(f, ": %" PRIu64 " %s traced, %" PRIu64 " attached since it is watched", processes,
                plural(processes, "process", "processes"), get_u64(w, RF_ATTACHED));
        if (missed)
                fprintf(f, ", %" PRIu64 " gone before %s could be attached", missed, missed == 1 ? "it" : "they");
        if (failed)
                fprintf(f, ", %" PRIu64 " could not be attached (memleakd's log says why)", failed);
        if (lost)
                fprintf(f, ", %" PRIu64 " %s of new processes lost (found by the next snapshot if still there)",
                        lost, plural(lost, "event", "events"));
}

static int render_watch(FILE *f, const cJSON *reply, const char *verb, const char *each)
{
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(reply, RF_WATCH), *t;

        assert(f);
        if (!cJSON_IsObject(w))
                return -EBADMSG;
        fprintf(f, "%s ", verb);
        print_watch(f, w);
        fputc('\n', f);
        cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(reply, RF_TARGETS)) {
                fprintf(f, "  %s ", each);
                print_target_name(f, t);
                fputs(")\n", f);
        }
        return stream_result(f);
}

int render_watch_attach(FILE *f, const cJSON *reply)
{
        return render_watch(f, reply, "Watching", "attached to");
}

int render_watch_detach(FILE *f, const cJSON *reply)
{
        return render_watch(f, reply, "Stopped watching", "detached from");
}

/* " (20 operators left to the malloc or free they call)": the C++ runtime's, unprobed */
static void print_forwarded(FILE *f, const cJSON *object)
{
        uint64_t forwarded = get_u64(object, RF_FORWARDED);

        if (forwarded > 0)
                fprintf(f, " (%" PRIu64 " %s left to the malloc or free %s)", forwarded,
                        plural(forwarded, "operator", "operators"), forwarded == 1 ? "it calls" : "they call");
}

/* ", 10 probes in /lib/libc.so.6, 3 probes in /lib/libfoo.so" */
static void print_objects(FILE *f, const cJSON *target)
{
        const cJSON *objects = cJSON_GetObjectItemCaseSensitive(target, RF_OBJECTS), *o;

        if (cJSON_GetArraySize(objects) == 0) {
                fputs(", no probes", f);
                return;
        }
        cJSON_ArrayForEach(o, objects) {
                uint64_t probes = get_u64(o, RF_PROBES);

                fprintf(f, ", %" PRIu64 " %s in %s", probes, plural(probes, "probe", "probes"),
                        str_or(get_str(o, RF_PATH), "?"));
                if (get_str(o, RF_ROLE))
                        fprintf(f, " (%s)", get_str(o, RF_ROLE));
                print_forwarded(f, o);
        }
}

int render_attach(FILE *f, const cJSON *target)
{
        assert(f);

        if (!cJSON_IsObject(target))
                return -EBADMSG;
        fputs("Attached to ", f);
        print_target_name(f, target);
        fprintf(f, "): %s allocator", str_or(get_str(target, RF_ALLOCATOR), "unknown"));
        print_objects(f, target);
        if (get_u64(target, RF_SAMPLE_BYTES) > 0)
                fprintf(f, ", sampled every %" PRIu64 " bytes on average", get_u64(target, RF_SAMPLE_BYTES));
        fputc('\n', f);
        return stream_result(f);
}

int render_detach(FILE *f, const cJSON *reply)
{
        const cJSON *target = cJSON_GetObjectItemCaseSensitive(reply, RF_TARGET), *child;
        uint64_t left = get_u64(reply, RF_CHILDREN_LEFT);

        assert(f);

        if (!cJSON_IsObject(target))
                return -EBADMSG;
        fputs("Detached from ", f);
        print_target_name(f, target);
        fputs(")", f);
        if (left > 0)
                fprintf(f, "; the %" PRIu64 " %s followed from it %s (detach --children takes them too)", left,
                        plural(left, "process", "processes"), left == 1 ? "stays" : "stay");
        fputs("\n", f);
        cJSON_ArrayForEach(child, cJSON_GetObjectItemCaseSensitive(reply, RF_CHILDREN)) {
                fputs("Detached from ", f);
                print_target_name(f, child);
                fputs(")\n", f);
        }
        return stream_result(f);
}

/* "Lost events: allocs_map_full=3, stack_eexist=1" or "Lost events: none"; then the frees of
 * blocks the process did not allocate while traced, on a line of their own: every process attached
 * as it runs frees some, which is no loss to worry about. */
static void print_lost_as(FILE *f, const char *indent, const char *label, const cJSON *lost)
{
        const cJSON *c;
        bool any = false;
        uint64_t unknown = 0;

        fprintf(f, "%s%s:", indent, label);
        cJSON_ArrayForEach(c, lost) {
                uint64_t v = 0;

                if (!c->string || json_get_u64(c, UINT64_MAX, &v) < 0 || v == 0)
                        continue;
                if (strcmp(c->string, RF_FREE_UNKNOWN) == 0) {
                        unknown = v;
                        continue;
                }
                fprintf(f, "%s %s=%" PRIu64, any ? "," : "", c->string, v);
                any = true;
        }
        fputs(any ? "\n" : " none\n", f);
        if (unknown > 0)
                fprintf(f, "%sFrees of blocks not seen allocated: free_unknown=%" PRIu64 " (allocated before the "
                        "attach, or by a parent before its fork)\n", indent, unknown);
}

static void print_lost(FILE *f, const cJSON *lost)
{
        print_lost_as(f, "", "Lost events", lost);
}

/* "12:01:02" for seconds since the epoch, in local time. */
static void format_clock(uint64_t epoch_s, char buf[16])
{
        time_t t = (time_t)epoch_s;
        struct tm tm;

        snprintf(buf, 16, "??:??:??");
        if (localtime_r(&t, &tm))
                strftime(buf, 16, "%H:%M:%S", &tm);
}

static bool verdicts_qualified(const cJSON *target)
{
        return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(target, RF_VERDICTS_QUALIFIED));
}

/* A target that lost allocations (or their stacks) within the snapshots its verdicts look at: say
 * what and from when, since a stack may grow where none is seen growing. */
static void print_verdicts_qualified(FILE *f, const cJSON *target, const char *indent)
{
        const cJSON *lost = cJSON_GetObjectItemCaseSensitive(target, RF_LOST_IN_WINDOW), *c;
        char since[16];

        if (!verdicts_qualified(target))
                return;
        format_clock(get_u64(target, RF_BLIND_SINCE), since);
        fprintf(f, "%sVerdicts qualified: since %s it lost", indent, since);
        cJSON_ArrayForEach(c, lost)
                fprintf(f, " %s=%" PRIu64, str_or(c->string, "?"), get_u64(lost, c->string));
        fputs(" (allocations dropped or stored without their stack: a stack may grow unseen; raise the "
              "table's size in memleakd.conf, or trace with --sample-bytes)\n", f);
}

static void print_counters(FILE *f, const cJSON *counters)
{
        const cJSON *c;

        fputs("Counters (every target since memleakd started):", f);
        if (cJSON_GetArraySize(counters) == 0)
                fputs(" none", f);
        cJSON_ArrayForEach(c, counters) {
                uint64_t v = 0;

                if (c->string && json_get_u64(c, UINT64_MAX, &v) >= 0)
                        fprintf(f, " %s=%" PRIu64, c->string, v);
        }
        fputc('\n', f);
}

/* A target's forked children are processes of their own, which are not traced: say so where the
 * leaks a user looks for may be theirs (a wrapper script's program, a server's workers). */
static void print_children_forked(FILE *f, const cJSON *t, const char *indent)
{
        uint64_t n = get_u64(t, RF_CHILDREN_FORKED), followed = get_u64(t, RF_CHILDREN_FOLLOWED), missed, exited;

        if (n == 0)
                return;
        if (followed == 0 && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, RF_FOLLOW_FORKS))) {
                fprintf(f, "%sIt forked %" PRIu64 " %s while traced, which %s not traced: attach to a child's "
                        "pid, run the program that leaks itself, or trace with --follow-forks\n", indent, n,
                        plural(n, "process", "processes"), n == 1 ? "is" : "are");
                return;
        }
        /* with follow_forks, the children it had running as it was attached count too */
        fprintf(f, "%sIt had %" PRIu64 " child %s while traced, %" PRIu64 " of them followed (report --pid %" PRIu64
                " --children shows them with it)", indent, n, plural(n, "process", "processes"), followed,
                get_u64(t, RF_PID));
        if (!cJSON_GetObjectItemCaseSensitive(t, RF_CHILDREN_MISSED)) {
                /* a daemon that did not count them */
                if (followed < n)
                        fputs("; the others were gone before they could be attached, or could not be (memleakd's "
                              "log says why)", f);
                fputc('\n', f);
                return;
        }
        missed = get_u64(t, RF_CHILDREN_MISSED);
        exited = MIN(get_u64(t, RF_CHILDREN_MISSED_EXITED), missed);
        if (exited > 0)
                fprintf(f, "; %" PRIu64 " exited before %s could be followed", exited, exited == 1 ? "it" : "they");
        if (missed > exited)
                fprintf(f, "; %" PRIu64 " could not be (memleakd's log says why)", missed - exited);
        if (followed + missed < n)
                fprintf(f, "; %" PRIu64 " not attached yet", n - followed - missed);
        fputc('\n', f);
}

static void print_status_target(FILE *f, const cJSON *t)
{
        const cJSON *objects = cJSON_GetObjectItemCaseSensitive(t, RF_OBJECTS), *o;
        const char *reason = get_str(t, RF_ALLOCATOR_REASON), *phase = get_str(t, RF_PHASE);
        uint64_t snapshots = get_u64(t, RF_SNAPSHOTS);

        fputs("  ", f);
        print_target_name(f, t);
        fputs("): ", f);
        /* where it is in its life ("exited" is in its name already) */
        if (phase && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, RF_EXITED)))
                fprintf(f, "%s, ", phase);
        fputs("attached ", f);
        print_duration(f, get_u64(t, RF_ATTACHED_S));
        fprintf(f, " ago, %s allocator", str_or(get_str(t, RF_ALLOCATOR), "unknown"));
        if (reason)
                fprintf(f, " (%s)", reason);
        fprintf(f, ", %" PRIu64 " %s\n", snapshots, plural(snapshots, "snapshot", "snapshots"));
        print_auto_sample(f, t, "    ", "\n");
        cJSON_ArrayForEach(o, objects) {
                uint64_t probes = get_u64(o, RF_PROBES);

                fprintf(f, "    %s: %" PRIu64 " %s", str_or(get_str(o, RF_PATH), "?"), probes,
                        plural(probes, "probe", "probes"));
                if (get_str(o, RF_ROLE))
                        fprintf(f, " (%s)", get_str(o, RF_ROLE));
                print_forwarded(f, o);
                fputc('\n', f);
        }
        print_children_forked(f, t, "    ");
        /* its own, the daemon's below */
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(t, RF_LOST)))
                print_lost_as(f, "    ", "Lost events", cJSON_GetObjectItemCaseSensitive(t, RF_LOST));
}

static double mib(uint64_t bytes)
{
        return bytes / 1048576.0;
}

/* What the daemon holds against its bounds (memleakd.conf), a line each; nothing from an older
 * daemon that does not say. */
static double percent_of(const cJSON *budget)
{
        uint64_t max = get_u64(budget, RF_MAX);

        return max ? 100.0 * (double)get_u64(budget, RF_HELD) / (double)max : 0;
}

/* "Tables: heap blocks 1200 of 1048576 (0.1%; a target's share 1048576), ...". */
static void print_table_budgets(FILE *f, const cJSON *tables)
{
        const cJSON *allocs = cJSON_GetObjectItemCaseSensitive(tables, RF_ALLOCS);
        const cJSON *stacks = cJSON_GetObjectItemCaseSensitive(tables, RF_STACKS);
        const cJSON *rows = cJSON_GetObjectItemCaseSensitive(tables, RF_PER_STACK_ROWS);

        if (!cJSON_IsObject(allocs) || !cJSON_IsObject(stacks) || !cJSON_IsObject(rows))
                return;
        fprintf(f, "Tables: heap blocks %" PRIu64 " of %" PRIu64 " (%.1f%%; a target's share %" PRIu64
                "), stacks %" PRIu64 " of %" PRIu64 " (%.1f%%), per-stack rows %" PRIu64 " of %" PRIu64 " (%.1f%%)\n",
                get_u64(allocs, RF_HELD), get_u64(allocs, RF_MAX), percent_of(allocs), get_u64(allocs, RF_SHARE),
                get_u64(stacks, RF_HELD), get_u64(stacks, RF_MAX), percent_of(stacks), get_u64(rows, RF_HELD),
                get_u64(rows, RF_MAX), percent_of(rows));
}

static void print_limits(FILE *f, const cJSON *limits)
{
        const cJSON *exited = cJSON_GetObjectItemCaseSensitive(limits, RF_EXITED);
        const cJSON *symbols = cJSON_GetObjectItemCaseSensitive(limits, RF_SYMBOLS);
        const cJSON *clients = cJSON_GetObjectItemCaseSensitive(limits, RF_CLIENTS);
        const cJSON *maps = cJSON_GetObjectItemCaseSensitive(limits, RF_MAPS);

        if (cJSON_IsObject(exited))
                fprintf(f, "Exited targets' reports: %.1f of %.0f MiB, %" PRIu64 " dropped for room\n",
                        mib(get_u64(exited, RF_BYTES)), mib(get_u64(exited, RF_MAX_BYTES)), get_u64(exited, RF_DROPPED));
        if (cJSON_IsObject(symbols))
                fprintf(f, "Symbols: %" PRIu64 " files (%" PRIu64 " distinct), %" PRIu64 " of %" PRIu64 " open, "
                        "%.1f of %.0f MiB inflated debug info, %" PRIu64 " refused as too large, %" PRIu64
                        " could not be reopened\n",
                        get_u64(symbols, RF_FILES), get_u64(symbols, RF_DISTINCT), get_u64(symbols, RF_OPEN),
                        get_u64(symbols, RF_MAX_OPEN), mib(get_u64(symbols, RF_INFLATED_BYTES)),
                        mib(get_u64(symbols, RF_MAX_BYTES)), get_u64(symbols, RF_REFUSED),
                        get_u64(symbols, RF_REOPEN_FAILED));
        print_table_budgets(f, cJSON_GetObjectItemCaseSensitive(limits, RF_TABLES));
        if (cJSON_IsObject(maps)) {
                const cJSON *now = cJSON_GetObjectItemCaseSensitive(maps, RF_KERNEL_BYTES);

                if (cJSON_IsNumber(now))
                        fprintf(f, "BPF maps: %.1f MiB of kernel memory, about %.0f MiB with every map full\n",
                                mib(get_u64(maps, RF_KERNEL_BYTES)), mib(get_u64(maps, RF_MAX_BYTES)));
                else
                        fprintf(f, "BPF maps: kernel memory unknown, about %.0f MiB with every map full\n",
                                mib(get_u64(maps, RF_MAX_BYTES)));
        }
        if (cJSON_IsObject(clients))
                fprintf(f, "Clients: %" PRIu64 " connected, %" PRIu64 " refused (no room), %" PRIu64 " timed out, "
                        "accepting paused %" PRIu64 " times (out of fds)\n",
                        get_u64(clients, RF_CONNECTIONS), get_u64(clients, RF_REFUSED), get_u64(clients, RF_TIMED_OUT),
                        get_u64(clients, RF_ACCEPT_PAUSED));
}

int render_status(FILE *f, const cJSON *status)
{
        const cJSON *targets, *t, *cost, *probes, *reclaim, *pending;

        assert(f);

        if (!cJSON_IsObject(status))
                return -EBADMSG;
        targets = cJSON_GetObjectItemCaseSensitive(status, RF_TARGETS);
        fprintf(f, "memleakd %s, up ", str_or(get_str(status, RF_VERSION), "?"));
        print_duration(f, get_u64(status, RF_UPTIME_S));
        fprintf(f, ", snapshot every %" PRIu64 " ms, %" PRIu64 " kept per target\n",
                get_u64(status, RF_SNAPSHOT_INTERVAL_MS), get_u64(status, RF_RING_DEPTH));
        pending = cJSON_GetObjectItemCaseSensitive(status, RF_RESTART_PENDING);
        if (cJSON_GetArraySize(pending) > 0) {
                const cJSON *k;
                bool first = true;

                fprintf(f, "Changed in the configuration, in force only after a restart of memleakd: ");
                cJSON_ArrayForEach(k, pending) {
                        fprintf(f, "%s%s", first ? "" : ", ", str_or(cJSON_GetStringValue(k), "?"));
                        first = false;
                }
                fputc('\n', f);
        }
        probes = cJSON_GetObjectItemCaseSensitive(status, RF_PROBES);
        if (cJSON_IsObject(probes))
                fprintf(f, "Probes: %s, %s\n",
                        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(probes, RF_UPROBE_MULTI))
                                ? "uprobe_multi links" : "one perf-event uprobe per site",
                        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(probes, RF_ALLOC_SESSIONS))
                                ? "malloc's and calloc's returns run only when they record" : "every allocation's return runs");
        cost = cJSON_GetObjectItemCaseSensitive(status, RF_SNAPSHOT_COST);
        if (cJSON_IsObject(cost) && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(cost, RF_LAST_MS)))
                fprintf(f, "Snapshot tick: %.1f ms for %" PRIu64 " per-stack rows (longest %.1f ms)\n",
                        get_double(cost, RF_LAST_MS), get_u64(cost, RF_LAST_ROWS), get_double(cost, RF_MAX_MS));
        reclaim = cJSON_GetObjectItemCaseSensitive(status, RF_RECLAIM);
        if (cJSON_IsObject(reclaim))
                fprintf(f, "Stack table: about %" PRIu64 " stacks; given back while attached: %" PRIu64
                        " per-stack rows and %" PRIu64 " stacks no outstanding block used (%" PRIu64
                        " put back) in %" PRIu64 " %s\n",
                        get_u64(reclaim, RF_STACKS_HELD), get_u64(reclaim, RF_ROWS_FREED),
                        get_u64(reclaim, RF_STACKS_DELETED), get_u64(reclaim, RF_STACKS_RESTORED),
                        get_u64(reclaim, RF_PASSES), plural(get_u64(reclaim, RF_PASSES), "pass", "passes"));
        if (cJSON_GetArraySize(targets) == 0)
                fputs("Targets: none\n", f);
        else
                fputs("Targets:\n", f);
        cJSON_ArrayForEach(t, targets)
                print_status_target(f, t);
        if (cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(status, RF_WATCHES)) > 0) {
                fputs("Watched:\n", f);
                cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(status, RF_WATCHES)) {
                        fputs("  ", f);
                        print_watch(f, t);
                        fputc('\n', f);
                }
        }
        print_counters(f, cJSON_GetObjectItemCaseSensitive(status, RF_COUNTERS));
        print_lost_as(f, "", "Lost events (every target since memleakd started)",
                      cJSON_GetObjectItemCaseSensitive(status, RF_LOST));
        print_limits(f, cJSON_GetObjectItemCaseSensitive(status, RF_LIMITS));
        return stream_result(f);
}

/* "definitely lost: 100 bytes in 1 block, still reachable: ...": the classes with blocks in o. */
static void print_classes(FILE *f, const cJSON *o)
{
        static const struct { const char *name, *text; } classes[] = {
                { RF_DEFINITELY_LOST, "definitely lost" },
                { RF_INDIRECTLY_LOST, "indirectly lost" },
                { RF_STILL_REACHABLE, "still reachable" },
                { RF_UNDECIDED, "undecided" },
        };
        bool first = true;

        for (size_t i = 0; i < ELEMENTSOF(classes); i++) {
                const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, classes[i].name);
                uint64_t allocs = get_u64(c, RF_ALLOCS);

                if (allocs == 0)
                        continue;
                fprintf(f, "%s%s: %" PRIu64 " bytes in %" PRIu64 " %s", first ? "" : ", ", classes[i].text,
                        get_u64(c, RF_BYTES), allocs, plural(allocs, "block", "blocks"));
                first = false;
        }
        if (first)
                fputs("no blocks", f);
}

/* The target's reachability scan: when, how long it stopped the process, what it found. */
static void print_target_reachability(FILE *f, const cJSON *r)
{
        const char *error = get_str(r, RF_ERROR), *method = get_str(r, RF_METHOD), *partial = get_str(r, RF_PARTIAL);
        const char *no_snapshot = get_str(r, RF_NO_SNAPSHOT);
        const cJSON *paused = cJSON_GetObjectItemCaseSensitive(r, RF_PAUSED_MS);

        if (!cJSON_IsObject(r))
                return;
        if (error && !cJSON_IsNumber(paused)) {
                fprintf(f, "\tReachability: not scanned: %s\n", error);
                return;
        }
        fprintf(f, "\tReachability (%s, %" PRIu64 " %s stopped for %.1f ms, %.1f MiB read",
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, RF_AT_EXIT)) ? "scanned at its exit" : "scanned live",
                get_u64(r, RF_THREADS), plural(get_u64(r, RF_THREADS), "thread", "threads"),
                get_double(r, RF_PAUSED_MS), mib(get_u64(r, RF_BYTES_SCANNED)));
        if (get_double(r, RF_SCAN_MIB_PER_S) > 0)
                fprintf(f, " at %.0f MiB/s", get_double(r, RF_SCAN_MIB_PER_S));
        if (method && strcmp(method, "concurrent") == 0) {
                fprintf(f, ", concurrently: %" PRIu64 " %s over %.1f MiB written meanwhile",
                        get_u64(r, RF_ROUNDS), plural(get_u64(r, RF_ROUNDS), "pass", "passes"),
                        mib(get_u64(r, RF_WRITTEN_BYTES)));
                if (get_u64(r, RF_LAST_STOPS) > 1)
                        fprintf(f, ", %" PRIu64 " last stops (each let go for another round but the last), "
                                "the longest %.1f ms", get_u64(r, RF_LAST_STOPS),
                                get_double(r, RF_LONGEST_PAUSE_MS));
        } else if (method && strcmp(method, "snapshot") == 0)
                fputs(", from a snapshot", f);
        else if (method && strcmp(method, "stopped") == 0)
                fprintf(f, ", stopped all along: %s", no_snapshot ? no_snapshot : "no snapshot");
        fputs("): ", f);
        if (error)
                fprintf(f, "no verdict: %s\n", error);
        else {
                if (partial)
                        fprintf(f, "partial verdict (%s): ", partial);
                print_classes(f, r);
                fputc('\n', f);
        }
}

/* A process followed from another's fork that exited leaving nothing outstanding: a script's
 * hundred commands would each take a line of the report to say nothing. */
static bool left_nothing(const cJSON *t)
{
        return get_u64(t, RF_FORKED_FROM) > 0 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, RF_EXITED)) &&
               get_u64(t, RF_OUTSTANDING_BYTES) == 0 && get_u64(t, RF_OUTSTANDING_ALLOCS) == 0 &&
               get_u64(t, RF_OUTSTANDING_MMAPS) == 0 && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(t, RF_REACHABILITY));
}

static void print_report_target(FILE *f, const cJSON *t)
{
        const cJSON *trend = cJSON_GetObjectItemCaseSensitive(t, RF_TREND);
        const cJSON *delta = cJSON_GetObjectItemCaseSensitive(trend, RF_BYTES_DELTA);
        uint64_t allocs = get_u64(t, RF_OUTSTANDING_ALLOCS);
        const char *about = get_u64(t, RF_SAMPLE_BYTES) > 0 ? "~" : "";        /* estimates */

        print_target_name(f, t);
        fprintf(f, "): %s%" PRIu64 " bytes in %s%" PRIu64 " %s outstanding", about, get_u64(t, RF_OUTSTANDING_BYTES),
                about, allocs, plural(allocs, "allocation", "allocations"));
        if (get_u64(t, RF_OUTSTANDING_MMAPS) > 0)
                fprintf(f, ", and %" PRIu64 " bytes in %" PRIu64 " anonymous %s", get_u64(t, RF_OUTSTANDING_MMAP_BYTES),
                        get_u64(t, RF_OUTSTANDING_MMAPS), plural(get_u64(t, RF_OUTSTANDING_MMAPS), "mapping", "mappings"));
        if (cJSON_IsNumber(delta))
                /* printed as the double it is: a cast of one past int64_t's range is undefined */
                fprintf(f, ", %+.0f bytes over the last %" PRIu64 " s",
                        delta->valuedouble, get_u64(trend, RF_WINDOW_S));
        fputc('\n', f);
        print_auto_sample(f, t, "\t", "\n");
        if (get_u64(t, RF_SAMPLE_BYTES) > 0)
                fprintf(f, "\tSampled (a sample point every %" PRIu64 " bytes on average): its heap bytes and "
                        "counts are estimates, each stack's expected error beside it\n", get_u64(t, RF_SAMPLE_BYTES));
        print_children_forked(f, t, "\t");
        print_target_reachability(f, cJSON_GetObjectItemCaseSensitive(t, RF_REACHABILITY));
        print_verdicts_qualified(f, t, "\t");
}

/* "fn+0x1c [module] file:line", "fn [inlined] [module] file:line", or for an address nothing
 * names, "?? [module+0xoffset]" (the offset in the file, for addr2line) or "0xaddr [unknown]". */
static void print_frame(FILE *f, const cJSON *frame, bool show_addresses)
{
        const char *symbol = get_str(frame, RF_SYMBOL), *module = get_str(frame, RF_MODULE);
        const char *file = get_str(frame, RF_FILE);
        const cJSON *offset = cJSON_GetObjectItemCaseSensitive(frame, RF_OFFSET);
        const cJSON *module_offset = cJSON_GetObjectItemCaseSensitive(frame, RF_MODULE_OFFSET);
        const cJSON *line = cJSON_GetObjectItemCaseSensitive(frame, RF_LINE);
        const char *label = "unknown";
        int label_len = (int)strlen(label);

        if (symbol && cJSON_IsNumber(offset))
                fprintf(f, "\t\t%s+0x%" PRIx64, symbol, get_u64(frame, RF_OFFSET));
        else if (symbol)
                fprintf(f, "\t\t%s", symbol);
        else if (module)
                fputs("\t\t??", f);
        else
                fprintf(f, "\t\t%s", str_or(get_str(frame, RF_ADDR), "0x?"));
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(frame, RF_INLINED)))
                fputs(" [inlined]", f);
        if (module)
                label_len = module_label(module, &label);
        if (!symbol && module && cJSON_IsNumber(module_offset))
                fprintf(f, " [%.*s+0x%" PRIx64 "]", label_len, label, get_u64(frame, RF_MODULE_OFFSET));
        else
                fprintf(f, " [%.*s]", label_len, label);
        if (file && cJSON_IsNumber(line))
                fprintf(f, " %s:%" PRIu64, file, get_u64(frame, RF_LINE));
        else if (file)
                fprintf(f, " %s", file);
        if (show_addresses && (symbol || module))
                fprintf(f, " (%s)", str_or(get_str(frame, RF_ADDR), "0x?"));
        fputc('\n', f);
}

/* "[unwind stopped: no CFI for /usr/lib/libfoo.so+0x1234]": where a walk could go no further. */
static void print_unwind_stopped(FILE *f, const cJSON *stopped)
{
        static const struct { const char *reason, *text; } reasons[] = {
                { "no_cfi", "no CFI for" },
                { "uncomputable", "a CFI rule the walker cannot follow at" },
                { "unreadable", "stack memory unreadable at" },
                { "no_table", "no unwind table loaded (yet) for" },
        };
        const char *reason = get_str(stopped, RF_REASON), *text = NULL, *module = get_str(stopped, RF_MODULE);

        if (!reason || strcmp(reason, "depth") == 0)
                return;         /* "depth" is the truncated line's */
        for (size_t i = 0; i < ELEMENTSOF(reasons); i++)
                if (strcmp(reasons[i].reason, reason) == 0)
                        text = reasons[i].text;
        if (!text) {
                fprintf(f, "\t\t[unwind stopped: %s]\n", reason);
                return;
        }
        if (module && cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(stopped, RF_MODULE_OFFSET)))
                fprintf(f, "\t\t[unwind stopped: %s %s+0x%" PRIx64 "]\n", text, module,
                        get_u64(stopped, RF_MODULE_OFFSET));
        else
                fprintf(f, "\t\t[unwind stopped: %s an address outside any file]\n", text);
}

/* " [growing: +2220 B/s]", " [plateau]", " [pending: 3 more snapshots]"; "" without a verdict. */
static const char *verdict_text(const cJSON *stack, char *buf, size_t size)
{
        const char *verdict = get_str(stack, RF_VERDICT);
        const cJSON *growth = cJSON_GetObjectItemCaseSensitive(stack, RF_GROWTH_BYTES_PER_S);

        if (!verdict)
                return "";
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(stack, RF_VERDICT_QUALIFIED)) && strcmp(verdict, "pending") != 0)
                snprintf(buf, size, " [%s?: allocations were lost meanwhile]", verdict);
        else if (strcmp(verdict, "pending") == 0)
                snprintf(buf, size, " [pending: %" PRIu64 " more snapshots]", get_u64(stack, RF_SNAPSHOTS_MISSING));
        else if (strcmp(verdict, "growing") == 0 && cJSON_IsNumber(growth))
                snprintf(buf, size, " [growing: %+.0f B/s]", growth->valuedouble);
        else
                snprintf(buf, size, " [%s]", verdict);
        return buf;
}

static void print_stack(FILE *f, const cJSON *stack, bool show_addresses)
{
        char verdict[64];
        const char *error = get_str(stack, RF_STACK_ERROR);
        const cJSON *frames = cJSON_GetObjectItemCaseSensitive(stack, RF_FRAMES), *frame;
        const cJSON *reach = cJSON_GetObjectItemCaseSensitive(stack, RF_REACHABILITY);
        const cJSON *expected_error = cJSON_GetObjectItemCaseSensitive(stack, RF_EXPECTED_ERROR);
        uint64_t allocs = get_u64(stack, RF_ALLOCS);

        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(stack, RF_MMAP)))
                fprintf(f, "\t%" PRIu64 " bytes in %" PRIu64 " anonymous %s from stack (pid %" PRIu64 ", mmap)\n",
                        get_u64(stack, RF_BYTES), allocs, plural(allocs, "mapping", "mappings"),
                        get_u64(stack, RF_PID));
        else if (cJSON_IsNumber(expected_error))
                fprintf(f, "\t~%" PRIu64 " bytes (+/-%.1f%%) in ~%" PRIu64 " %s from stack (pid %" PRIu64 ")%s\n",
                        get_u64(stack, RF_BYTES), expected_error->valuedouble * 100, allocs,
                        plural(allocs, "allocation", "allocations"), get_u64(stack, RF_PID),
                        verdict_text(stack, verdict, sizeof(verdict)));
        else
                fprintf(f, "\t%" PRIu64 " bytes in %" PRIu64 " %s from stack (pid %" PRIu64 ")%s\n",
                        get_u64(stack, RF_BYTES), allocs, plural(allocs, "allocation", "allocations"),
                        get_u64(stack, RF_PID), verdict_text(stack, verdict, sizeof(verdict)));
        if (cJSON_IsObject(reach)) {
                fputs("\t  ", f);
                print_classes(f, reach);
                fputc('\n', f);
        }
        if (error) {
                fprintf(f, "\t\t[stack unavailable: %s]\n", error);
                return;
        }
        cJSON_ArrayForEach(frame, frames)
                print_frame(f, frame, show_addresses);
        if (get_u64(stack, RF_ADDRESSES_CUT) > 0)
                fprintf(f, "\t\t[%" PRIu64 " more %s not shown: the frame-pointer chain broke there "
                        "(code built without frame pointers)]\n", get_u64(stack, RF_ADDRESSES_CUT),
                        plural(get_u64(stack, RF_ADDRESSES_CUT), "address", "addresses"));
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(stack, RF_TRUNCATED)))
                fputs("\t\t[deeper frames cut: max_stack_depth reached]\n", f);
        print_unwind_stopped(f, cJSON_GetObjectItemCaseSensitive(stack, RF_UNWIND_STOPPED));
}

static int render_report_frames(FILE *f, const cJSON *report, bool show_addresses)
{
        _cleanup_(report_stacks_done) struct report_stacks rs = {};
        const cJSON *stacks, *targets, *other, *item;
        time_t generated_at;
        struct tm tm;
        char clock[16] = "??:??:??";
        uint64_t min_age_s, other_stacks, quiet_children = 0;

        if (!cJSON_IsObject(report))
                return -EBADMSG;
        stacks = cJSON_GetObjectItemCaseSensitive(report, RF_STACKS);
        targets = cJSON_GetObjectItemCaseSensitive(report, RF_TARGETS);
        other = cJSON_GetObjectItemCaseSensitive(report, RF_OTHER);
        if (!cJSON_IsArray(stacks) || !cJSON_IsArray(targets) || report_stacks_init(&rs, report) < 0)
                return -EBADMSG;

        generated_at = (time_t) get_u64(report, RF_GENERATED_AT);
        if (localtime_r(&generated_at, &tm))
                strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
        fprintf(f, "[%s] Top %d stacks with outstanding allocations:\n", clock, cJSON_GetArraySize(stacks));
        min_age_s = get_u64(report, RF_MIN_AGE_S);
        if (min_age_s > 0)
                fprintf(f, "Only allocations at least %" PRIu64 " s old are counted.\n", min_age_s);
        if (cJSON_GetArraySize(targets) == 0)
                fputs("No processes are traced; start with 'memleakctl attach --pid PID'.\n", f);
        cJSON_ArrayForEach(item, targets)
                if (!left_nothing(item))
                        print_report_target(f, item);
                else
                        quiet_children++;
        if (quiet_children > 0)
                fprintf(f, "%" PRIu64 " followed %s exited with nothing outstanding (report --json lists %s)\n",
                        quiet_children, plural(quiet_children, "process", "processes"),
                        quiet_children == 1 ? "it" : "them");
        cJSON_ArrayForEach(item, stacks) {
                _cleanup_json_ cJSON *stack = NULL;
                /* a stack kept as text: its strings spelt out as render_text_safely() did the rest */
                int r = report_stacks_open(&rs, item, text_has_controls, text_escape_controls, &stack);

                if (r < 0)
                        return r;
                print_stack(f, stack, show_addresses);
        }
        other_stacks = get_u64(other, RF_STACKS);
        if (other_stacks > 0) {
                uint64_t allocs = get_u64(other, RF_ALLOCS);

                fprintf(f, "\t... and %" PRIu64 " more %s: %" PRIu64 " bytes in %" PRIu64 " %s\n",
                        other_stacks, plural(other_stacks, "stack", "stacks"), get_u64(other, RF_BYTES),
                        allocs, plural(allocs, "allocation", "allocations"));
        }
        print_lost(f, cJSON_GetObjectItemCaseSensitive(report, RF_LOST));
        return stream_result(f);
}

static void print_suspect(FILE *f, const cJSON *item)
{
        print_stack(f, item, false);
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(item, RF_FIRST_BYTES)))
                fprintf(f, "\t\t(%s%" PRIu64 " bytes at the oldest snapshot)\n",
                        cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(item, RF_EXPECTED_ERROR)) ? "~" : "",
                        get_u64(item, RF_FIRST_BYTES));
}

/* The growing stacks a scan found every block of still reachable: apart from the leaks. */
static void print_growing_caches(FILE *f, const cJSON *caches)
{
        const cJSON *item;
        int n = cJSON_GetArraySize(caches);

        if (n <= 0)
                return;
        fprintf(f, "%d %s growing whose every block is still reachable (a growing cache, not a leak: the "
                "program still holds it), the fastest first:\n", n, plural((uint64_t)n, "stack", "stacks"));
        cJSON_ArrayForEach(item, caches)
                print_suspect(f, item);
}

int render_leaks(FILE *f, const cJSON *leaks)
{
        const cJSON *suspects = cJSON_GetObjectItemCaseSensitive(leaks, RF_SUSPECTS);
        const cJSON *caches = cJSON_GetObjectItemCaseSensitive(leaks, RF_GROWING_CACHES);
        const cJSON *targets = cJSON_GetObjectItemCaseSensitive(leaks, RF_TARGETS), *item;
        bool scanned = false, blind = false;

        if (!cJSON_IsArray(suspects) || !cJSON_IsArray(targets) || (caches && !cJSON_IsArray(caches)))
                return -EBADMSG;
        if (cJSON_GetArraySize(targets) == 0)
                fputs("No processes are traced; start with 'memleakctl attach --pid PID'.\n", f);
        cJSON_ArrayForEach(item, targets) {
                const cJSON *reach = cJSON_GetObjectItemCaseSensitive(item, RF_REACHABILITY);

                fprintf(f, "pid %" PRIu64 " (%s): %s%" PRIu64 " bytes outstanding, verdicts from %" PRIu64 " snapshots\n",
                        get_u64(item, RF_PID), str_or(get_str(item, RF_COMM), "?"),
                        get_u64(item, RF_SAMPLE_BYTES) > 0 ? "~" : "", get_u64(item, RF_OUTSTANDING_BYTES),
                        get_u64(item, RF_SNAPSHOTS));
                print_auto_sample(f, item, "\t", ": its figures below are estimates\n");
                print_target_reachability(f, reach);
                scanned = scanned || (cJSON_IsObject(reach) && !get_str(reach, RF_ERROR));
                /* its own losses, and whether they blind its verdicts */
                if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(item, RF_LOST)))
                        print_lost_as(f, "\t", "Lost events", cJSON_GetObjectItemCaseSensitive(item, RF_LOST));
                print_verdicts_qualified(f, item, "\t");
                blind = blind || verdicts_qualified(item);
        }
        if (cJSON_GetArraySize(suspects) == 0 && blind) {
                /* never "no stack is growing" while allocations are dropped */
                fputs(scanned ? "No stack is seen growing or holding lost blocks, but allocations were lost "
                                "meanwhile (above): a stack may be growing unseen.\n"
                              : "No stack is seen growing, but allocations were lost meanwhile (above): a stack "
                                "may be growing unseen.\n", f);
        } else if (cJSON_GetArraySize(suspects) == 0) {
                if (cJSON_GetArraySize(caches) > 0)
                        fputs("No leak: no stack holds lost blocks, and the growing ones are still reachable.\n", f);
                else
                        fputs(scanned ? "No stack is growing or holds lost blocks.\n" : "No stack is growing.\n", f);
        } else {
                if (scanned)
                        fprintf(f, "%d %s growing or holding lost blocks, the strongest suspects first:\n",
                                cJSON_GetArraySize(suspects),
                                plural((uint64_t)cJSON_GetArraySize(suspects), "stack", "stacks"));
                else
                        fprintf(f, "%d %s still growing, the fastest first:\n", cJSON_GetArraySize(suspects),
                                plural((uint64_t)cJSON_GetArraySize(suspects), "stack", "stacks"));
                cJSON_ArrayForEach(item, suspects)
                        print_suspect(f, item);
        }
        print_growing_caches(f, caches);
        return stream_result(f);
}

static double top_key(const cJSON *stack, enum render_top_sort sort)
{
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(stack, RF_GROWTH_BYTES_PER_S);

        switch (sort) {
        case RENDER_TOP_BY_BYTES:
                return (double)get_u64(stack, RF_BYTES);
        case RENDER_TOP_BY_COUNT:
                return (double)get_u64(stack, RF_ALLOCS);
        case RENDER_TOP_BY_GROWTH:
                break;
        }
        /* growing stacks first, by growth; then the rest by bytes */
        if (cJSON_IsNumber(g) && str_or(get_str(stack, RF_VERDICT), "")[0] == 'g')
                return 1e18 + g->valuedouble;
        return (double)get_u64(stack, RF_BYTES);
}

static int top_cmp(const void *a, const void *b, void *sort)
{
        enum render_top_sort by = *(const enum render_top_sort *)sort;
        double x = top_key(*(cJSON *const *)a, by), y = top_key(*(cJSON *const *)b, by);

        return x > y ? -1 : x < y;
}

/* "leak_steadily <- main <- __libc_start_call_main": the first frames' names on one line. */
static void print_stack_line(FILE *f, const cJSON *stack)
{
        const cJSON *frame;
        int shown = 0;

        if (get_str(stack, RF_STACK_ERROR)) {
                fprintf(f, "[%s]", get_str(stack, RF_STACK_ERROR));
                return;
        }
        cJSON_ArrayForEach(frame, cJSON_GetObjectItemCaseSensitive(stack, RF_FRAMES)) {
                if (shown == 4) {
                        fputs(" <- ...", f);
                        break;
                }
                fprintf(f, "%s%s", shown++ ? " <- " : "", str_or(get_str(frame, RF_SYMBOL), "??"));
        }
}

int render_top(FILE *f, const cJSON *unsafe, enum render_top_sort sort, unsigned rows, unsigned expanded)
{
        /* names a traced process chose are printed, not obeyed (render_text_safely) */
        _cleanup_json_ cJSON *report = cJSON_Duplicate(unsafe, true);
        const cJSON *stacks = cJSON_GetObjectItemCaseSensitive(report, RF_STACKS);
        const cJSON *targets = cJSON_GetObjectItemCaseSensitive(report, RF_TARGETS), *item;
        _cleanup_free_ const cJSON **sorted = NULL;
        size_t n = 0;
        int r;

        if (unsafe && !report)
                return -ENOMEM;
        /* top's few stacks, each made whole, then spelt out */
        r = report ? report_stacks_expand(report) : -EBADMSG;
        if (r < 0)
                return r;
        if (json_strings_map(report, text_has_controls, text_escape_controls) < 0)
                return -ENOMEM;
        if (!cJSON_IsArray(stacks) || !cJSON_IsArray(targets))
                return -EBADMSG;
        cJSON_ArrayForEach(item, targets) {
                const cJSON *rss = cJSON_GetObjectItemCaseSensitive(item, RF_RSS_BYTES);

                print_report_target(f, item);
                if (cJSON_IsNumber(rss))
                        fprintf(f, "\tresident: %.1f MiB\n", rss->valuedouble / 1048576.0);
        }
        sorted = calloc((size_t)cJSON_GetArraySize(stacks) + 1, sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        cJSON_ArrayForEach(item, stacks)
                sorted[n++] = item;
        qsort_r(sorted, n, sizeof(*sorted), top_cmp, &sort);
        fprintf(f, "%12s %12s %8s %-8s %s\n", "GROWTH/s", "BYTES", "ALLOCS", "VERDICT", "STACK");
        for (size_t i = 0; i < n && i < rows; i++) {
                const cJSON *g = cJSON_GetObjectItemCaseSensitive(sorted[i], RF_GROWTH_BYTES_PER_S);
                /* a sampled stack's figures are estimates */
                const char *about = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(sorted[i], RF_EXPECTED_ERROR)) ?
                                    "~" : "";
                char growth[32] = "-", bytes[32], allocs[32], verdict[16];

                if (cJSON_IsNumber(g))
                        snprintf(growth, sizeof(growth), "%+.0f", g->valuedouble);
                snprintf(bytes, sizeof(bytes), "%s%" PRIu64, about, get_u64(sorted[i], RF_BYTES));
                snprintf(allocs, sizeof(allocs), "%s%" PRIu64, about, get_u64(sorted[i], RF_ALLOCS));
                /* "plateau?": its target lost allocations meanwhile (the target's line says what) */
                snprintf(verdict, sizeof(verdict), "%s%s", str_or(get_str(sorted[i], RF_VERDICT), "-"),
                         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(sorted[i], RF_VERDICT_QUALIFIED)) ? "?" : "");
                fprintf(f, "%12s %12s %8s %-8s ", growth, bytes, allocs, verdict);
                print_stack_line(f, sorted[i]);
                fputc('\n', f);
                if (expanded == i + 1)
                        print_stack(f, sorted[i], false);
        }
        return stream_result(f);
}

#define HISTORY_POINTS_SHOWN 12

/* "... 4096 8192 12288": the last points of a series' bytes. */
static void print_series(FILE *f, const cJSON *points)
{
        int n = cJSON_GetArraySize(points), i = 0;
        const cJSON *p;

        if (n > HISTORY_POINTS_SHOWN)
                fputs(" ...", f);
        cJSON_ArrayForEach(p, points)
                if (i++ >= n - HISTORY_POINTS_SHOWN)
                        fprintf(f, " %" PRIu64, get_u64(p, RF_BYTES));
        fputc('\n', f);
}

int render_history(FILE *f, const cJSON *history)
{
        const cJSON *targets = cJSON_GetObjectItemCaseSensitive(history, RF_TARGETS), *t;

        if (!cJSON_IsArray(targets))
                return -EBADMSG;
        if (cJSON_GetArraySize(targets) == 0)
                fputs("No processes are traced; start with 'memleakctl attach --pid PID'.\n", f);
        cJSON_ArrayForEach(t, targets) {
                const cJSON *totals = cJSON_GetObjectItemCaseSensitive(t, RF_TOTALS), *stack, *first, *last;
                const cJSON *stacks = cJSON_GetObjectItemCaseSensitive(t, RF_STACKS);
                char verdict[64];

                fprintf(f, "pid %" PRIu64 " (%s)%s: %" PRIu64 " snapshots", get_u64(t, RF_PID),
                        str_or(get_str(t, RF_COMM), "?"), cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, RF_EXITED)) ?
                        ", exited" : "", get_u64(t, RF_SNAPSHOTS));
                first = cJSON_GetArrayItem(totals, 0);
                last = cJSON_GetArrayItem(totals, cJSON_GetArraySize(totals) - 1);
                /* a reply is data from a socket: a point without its time is left out, not read */
                if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(first, RF_T)) &&
                    cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(last, RF_T)))
                        fprintf(f, " over %.0f s", get_double(last, RF_T) - get_double(first, RF_T));
                fputc('\n', f);
                print_verdicts_qualified(f, t, "\t");
                print_auto_sample(f, t, "\t", ": the bytes since are estimates\n");
                fputs("\toutstanding bytes:", f);
                print_series(f, totals);
                cJSON_ArrayForEach(stack, stacks) {
                        fprintf(f, "\tstack %" PRIu64 "%s:", get_u64(stack, RF_STACK_ID),
                                verdict_text(stack, verdict, sizeof(verdict)));
                        print_series(f, cJSON_GetObjectItemCaseSensitive(stack, RF_POINTS));
                }
        }
        return stream_result(f);
}

int render_json(FILE *f, const cJSON *obj)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ cJSON *copy = NULL;

        assert(f);
        assert(obj);

        /* ids (stack_id) as the digits memleakd sent, not 5.6e+15 */
        copy = cJSON_Duplicate(obj, true);
        if (!copy || json_integers_exact(copy) < 0)
                return -ENOMEM;
        /* every document says what made it: memleakd's version where it answered, else ours */
        if (cJSON_IsObject(copy) && !cJSON_HasObjectItem(copy, F_SOFTWARE) &&
            !cJSON_AddStringToObject(copy, F_SOFTWARE, MEMLEAKD_VERSION))
                return -ENOMEM;
        text = cJSON_Print(copy);
        if (!text)
                return -ENOMEM;
        fputs(text, f);
        fputc('\n', f);
        return stream_result(f);
}

int render_error_json(FILE *f, int error, const char *message)
{
        _cleanup_json_ cJSON *o = cJSON_CreateObject();
        _cleanup_free_ char *text = NULL;
        cJSON *e;

        assert(f);

        if (!o || !(e = cJSON_AddObjectToObject(o, F_ERROR)) ||
            !cJSON_AddStringToObject(e, F_CODE, memleak_errno_to_code(error)) ||
            !cJSON_AddStringToObject(e, F_MESSAGE, message ? message : strerror(error < 0 ? -error : error)))
                return -ENOMEM;
        text = cJSON_PrintUnformatted(o);
        if (!text)
                return -ENOMEM;
        fprintf(f, "%s\n", text);
        return stream_result(f);
}

int render_report(FILE *f, const cJSON *report)
{
        assert(f);

        return render_report_frames(f, report, false);
}

int render_report_with_addresses(FILE *f, const cJSON *report)
{
        assert(f);

        return render_report_frames(f, report, true);
}

int render_text_safely(FILE *f, const cJSON *obj, int (*render)(FILE *f, const cJSON *obj))
{
        _cleanup_json_ cJSON *safe = NULL;

        assert(f);
        assert(render);

        safe = cJSON_Duplicate(obj, true);
        if (!safe || json_strings_map(safe, text_has_controls, text_escape_controls) < 0)
                return -ENOMEM;
        return render(f, safe);
}
