/* SPDX-License-Identifier: MIT */
/* memleakctl leaks: the stacks the snapshot ring says are still growing, worst first. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "commands.h"
#include "protocol.h"
#include "render-gate.h"
#include "render.h"
#include "reply-fields.h"
#include "report-stacks.h"

/* What fails leaks --error-exitcode without --fail-on: its suspects' two kinds of evidence. */
#define LEAKS_FAIL_ON (GATE_LOST | GATE_GROWING)

static void help(void)
{
        printf("memleakctl leaks [--pid PID [--children] | --unit NAME | --cgroup PATH] [--reachability | --no-reachability]\n"
               "                 [--error-exitcode N [--fail-on LIST]] [--suppressions FILE] [--json]\n\n"
               "List the leak suspects from two kinds of evidence: the call stacks whose outstanding\n"
               "bytes are still growing over memleakd's snapshots (\"growing\" in the report), and the\n"
               "blocks a reachability scan finds definitely lost (nothing points to them). By default\n"
               "each running target is scanned from a copy-on-write snapshot of its memory (it is\n"
               "frozen for a few milliseconds, not for the scan); one that cannot be snapshot, or is\n"
               "sampled, is judged by growth alone and says why. memleakctl run's targets keep the scan\n"
               "taken at their exit.\n\n"
               "Definitely lost blocks come first (a growing stack of them before the rest), then the\n"
               "growing stacks whose blocks are not all reachable, the fastest first. A growing stack\n"
               "whose every block is still reachable is a growing cache, listed apart: memory that\n"
               "grows but that the program still holds (a key store, a cache without eviction).\n"
               "Stacks that grew and stopped (a cache, start-up), that go up and down, or whose target\n"
               "has too few snapshots yet are left out; 'memleakctl report' shows every stack with its\n"
               "verdict.\n\n"
               "A sampled target's figures are estimates (~, with their expected error). Each\n"
               "target's own lost events are shown; where it lost allocations within the snapshots\n"
               "its verdicts look at (a table full), a stack may grow unseen: its verdicts are\n"
               "qualified, saying what was lost since when, and leaks never says no stack is growing.\n\n"
               "  -p --pid PID          Only this traced process (default: all)\n"
               "     --children         With --pid: the processes followed from it too\n"
               "     --unit NAME        Only the processes of this watched unit (attach --unit)\n"
               "     --cgroup PATH      Only the processes of this watched cgroup (attach --cgroup)\n"
               "     --reachability     Scan even a target that cannot be snapshot: it is stopped for\n"
               "                        the scan, up to reachability_max_pause_ms (memleakctl report\n"
               "                        --help)\n"
               "     --no-reachability  No scan: growth alone\n"
               "     --error-exitcode N A leak check for CI: exit with N (1-255) when a stack has lost\n"
               "                        blocks or grows, or as --fail-on says; a check that cannot be\n"
               "                        made fails too (a target not scanned, or whose verdicts are\n"
               "                        pending or qualified: the reasons go to stderr)\n"
               "     --fail-on LIST     What fails the check, a comma list: lost (definitely or\n"
               "                        indirectly lost blocks), growing (a stack whose verdict is\n"
               "                        growing, growing caches too); default: lost,growing\n"
               "     --suppressions FILE\n"
               "                        LeakSanitizer's suppressions: leave out every stack a\n"
               "                        leak:PATTERN line of FILE matches (a frame's function, module or\n"
               "                        source file; '*' any text, '^' and '$' anchor it): not checked,\n"
               "                        not listed, counted as suppressed\n"
               "  -j --json             Print {\"suspects\": [...], \"growing_caches\": [...],\n"
               "                        \"targets\": [...]}; a target has its \"reachability\", \"lost\",\n"
               "                        \"verdicts_qualified\", \"blind_since\", \"lost_in_window\"; with\n"
               "                        --suppressions \"suppressed\", with --error-exitcode \"gate\"\n"
               "  -h --help             Show this help\n");
}

enum {
        ARG_REACHABILITY = 0x100,
        ARG_NO_REACHABILITY,
};

static int parse_option(const struct ctl_context *ctx, struct call_args *args, int c, const char *arg)
{
        int r = ctl_parse_target_option(ctx, "leaks", &args->req, c, arg);

        if (r >= 0)
                return r;
        r = gate_options_parse(ctx, "leaks", &args->gate, c, arg);
        if (r >= 0) {
                /* a gate judges every stack, and suppressions count every one: all are asked for */
                if (gate_options_active(&args->gate))
                        args->req.verdict = 0;
                return r;
        }
        if (c == ARG_REACHABILITY || c == ARG_NO_REACHABILITY) {
                args->req.reachability = c == ARG_REACHABILITY;
                args->req.snapshot_only = false;
        }
        return CTL_EXIT_OK;
}

static bool is_growing(const cJSON *stack)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(stack, RF_VERDICT);

        return cJSON_IsString(v) && strcmp(v->valuestring, "growing") == 0;
}

static uint64_t class_bytes(const cJSON *stack, const char *class)
{
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(stack, RF_REACHABILITY);
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, class), RF_BYTES);

        return cJSON_IsNumber(b) && b->valuedouble > 0 ? (uint64_t)b->valuedouble : 0;
}

static bool scanned(const cJSON *stack)
{
        return cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(stack, RF_REACHABILITY));
}

/* Growing, and a scan found every block of it still reachable (none lost, none undecided). */
static bool is_growing_cache(const cJSON *stack)
{
        return is_growing(stack) && scanned(stack) && class_bytes(stack, RF_STILL_REACHABLE) > 0 &&
               class_bytes(stack, RF_DEFINITELY_LOST) == 0 && class_bytes(stack, RF_INDIRECTLY_LOST) == 0 &&
               class_bytes(stack, RF_UNDECIDED) == 0;
}

/* 3: growing and definitely lost; 2: definitely lost; 1: growing; 0: neither (not a suspect). */
static int evidence_of(const cJSON *stack)
{
        return 2 * (class_bytes(stack, RF_DEFINITELY_LOST) > 0) + is_growing(stack);
}

static double growth_of(const cJSON *stack)
{
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(stack, RF_GROWTH_BYTES_PER_S);

        return cJSON_IsNumber(g) ? g->valuedouble : 0;
}

static int by_evidence(const void *a, const void *b)
{
        const cJSON *p = *(cJSON *const *)a, *q = *(cJSON *const *)b;
        int ep = evidence_of(p), eq = evidence_of(q);
        double x = growth_of(p), y = growth_of(q);
        uint64_t lp = class_bytes(p, RF_DEFINITELY_LOST), lq = class_bytes(q, RF_DEFINITELY_LOST);

        if (ep != eq)
                return ep > eq ? -1 : 1;
        if (x != y)
                return x > y ? -1 : 1;
        return lp > lq ? -1 : lp < lq;
}

static const char *const suspect_fields[] = { REPLY_SUSPECT(REPLY_FIELD_NAME) };

/* A suspect: the report's stack, its fields in the order leaks prints them, and last_bytes. */
static cJSON *suspect_of(const cJSON *stack)
{
        cJSON *s = cJSON_CreateObject();

        for (size_t i = 0; s && i < sizeof(suspect_fields) / sizeof(*suspect_fields); i++) {
                /* last_bytes is the stack's bytes, beside first_bytes */
                const char *from = strcmp(suspect_fields[i], RF_LAST_BYTES) == 0 ? RF_BYTES : suspect_fields[i];
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(stack, from);

                cJSON_AddItemToObject(s, suspect_fields[i], v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
        }
        return s;
}

/* stacks[n] sorted by evidence, as an array of suspects added to leaks under name. */
static void add_sorted(cJSON *leaks, const char *name, cJSON **stacks, size_t n)
{
        cJSON *arr;

        qsort(stacks, n, sizeof(*stacks), by_evidence);
        arr = cJSON_AddArrayToObject(leaks, name);
        for (size_t i = 0; arr && i < n; i++)
                cJSON_AddItemToArray(arr, suspect_of(stacks[i]));
}

/* {"suspects": [lost or growing stacks, the strongest first], "growing_caches": [growing stacks
 * every block of which is still reachable], "targets": the report's}: built into reply. */
static cJSON *leaks_of(cJSON *reply)
{
        const cJSON *report = cJSON_GetObjectItemCaseSensitive(reply, RF_REPORT);
        const cJSON *stacks = cJSON_GetObjectItemCaseSensitive(report, RF_STACKS), *stack;
        cJSON *leaks = cJSON_AddObjectToObject(reply, RF_LEAKS), **suspects, **caches;
        size_t n = 0, n_caches = 0, size;

        if (!leaks || !cJSON_IsArray(stacks))
                return NULL;
        /* the version of the memleakd that answered, as in every document memleakctl prints */
        if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(reply, F_SOFTWARE)))
                cJSON_AddItemToObject(leaks, F_SOFTWARE,
                                      cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(reply, F_SOFTWARE), false));
        size = (size_t)cJSON_GetArraySize(stacks) + 1;
        suspects = calloc(size, sizeof(*suspects));
        caches = calloc(size, sizeof(*caches));
        if (!suspects || !caches) {
                free(suspects);
                free(caches);
                return NULL;
        }
        cJSON_ArrayForEach(stack, stacks) {
                if (is_growing_cache(stack))
                        caches[n_caches++] = (cJSON *)stack;
                else if (evidence_of(stack) > 0)
                        suspects[n++] = (cJSON *)stack;
        }
        add_sorted(leaks, RF_SUSPECTS, suspects, n);
        add_sorted(leaks, RF_GROWING_CACHES, caches, n_caches);
        free(suspects);
        free(caches);
        cJSON_AddItemToObject(leaks, RF_TARGETS,
                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(report, RF_TARGETS), true));
        return leaks;
}

static int check(const struct ctl_context *ctx, const struct call_args *args)
{
        if (ctl_targets_named(&args->req) > 1)
                return ctl_usage_error(ctx, "leaks: give one of --pid, --unit and --cgroup");
        return gate_options_check(ctx, "leaks", &args->gate, GATE_LOST | GATE_GROWING);
}

static int render_leaks_suppressed(FILE *f, const cJSON *leaks)
{
        int r = render_leaks(f, leaks);

        return r < 0 ? r : render_suppressed(f, leaks);
}

/* The gate's verdict and the suppressed stacks, from the report into leaks' object. */
static void move_gate(cJSON *report, cJSON *leaks)
{
        const char *const names[] = { RF_SUPPRESSED, RF_GATE };

        for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
                cJSON *item = cJSON_DetachItemFromObjectCaseSensitive(report, names[i]);

                if (item)
                        cJSON_AddItemToObject(leaks, names[i], item);
        }
}

static void view(const struct call_args *args, cJSON *reply, struct call_view *ret)
{
        cJSON *report = cJSON_GetObjectItemCaseSensitive(reply, RF_REPORT), *leaks;
        struct gate_result gate = {};
        int status = CTL_EXIT_OK, r;

        if (gate_options_active(&args->gate) && cJSON_IsObject(report)) {
                r = gate_options_apply(&args->gate, LEAKS_FAIL_ON, report, MEMLEAK_MAX_TOP, &gate);
                if (r < 0) {
                        fprintf(stderr, "memleakctl: leaks: cannot apply the leak check: %s\n", strerror(-r));
                        status = CTL_EXIT_FAILURE;
                } else
                        status = gate_options_verdict("leaks", &args->gate, &gate);
        }
        /* the suspects are few and sorted here: each stack made whole */
        leaks = !cJSON_IsObject(report) || report_stacks_expand(report) >= 0 ? leaks_of(reply) : NULL;
        if (leaks)
                move_gate(report, leaks);
        *ret = (struct call_view) { .what = "report", .text = leaks, .json = leaks, .render = render_leaks_suppressed,
                                    .status = status };
}

static const struct option long_options[] = {
        { "pid", required_argument, NULL, 'p' },
        { "children", no_argument, NULL, CTL_OPT_CHILDREN },
        { "unit", required_argument, NULL, CTL_OPT_UNIT },
        { "cgroup", required_argument, NULL, CTL_OPT_CGROUP },
        { "reachability", no_argument, NULL, ARG_REACHABILITY },
        { "no-reachability", no_argument, NULL, ARG_NO_REACHABILITY },
        GATE_LONG_OPTIONS,
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        {}
};

static const struct call_command leaks = {
        .name = "leaks",
        .short_options = "+:p:jh",
        .long_options = long_options,
        .help = help,
        /* every growing stack, and every stack with lost blocks (memleakd lists only those: the
         * rest are folded, not named): a suspect may hold few bytes yet */
        .request = { .cmd = MEMLEAK_CMD_REPORT, .top = MEMLEAK_MAX_TOP, .verdict = 1 + MEMLEAK_VERDICT_GROWING,
                     /* both kinds of evidence, the scan from a snapshot only: never a long stop */
                     .reachability = true, .snapshot_only = true },
        .parse_option = parse_option,
        .check = check,
        .view = view,
};

int cmd_leaks(struct ctl_context *ctx, int argc, char *argv[])
{
        return call_command_run(&leaks, ctx, argc, argv);
}
