/* SPDX-License-Identifier: MIT */
/* memleakctl leaks: the stacks the snapshot ring says are still growing, worst first. */
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "commands.h"
#include "protocol.h"
#include "render.h"

static void help(void)
{
        printf("memleakctl leaks [--pid PID [--children]] [--reachability] [--json]\n\n"
               "List the leak suspects: the call stacks whose outstanding bytes are still growing over\n"
               "memleakd's snapshots (\"growing\" in the report), and those a reachability scan found\n"
               "definitely lost blocks in (nothing points to them: memleakctl run's scan at exit, or\n"
               "--reachability). A growing stack of lost blocks is the strongest suspect and comes\n"
               "first, then the fastest growing, then the most bytes lost. Stacks that grew and\n"
               "stopped (a cache, start-up), that go up and down, or whose target has too few snapshots\n"
               "yet are left out; 'memleakctl report' shows every stack with its verdict.\n\n"
               "  -p --pid PID       Only this traced process (default: all)\n"
               "     --children      With --pid: the processes followed from it too\n"
               "     --reachability  Stop each running target briefly and scan its memory first\n"
               "                     (memleakctl report --help)\n"
               "  -j --json          Print {\"suspects\": [...], \"targets\": [...]}\n"
               "  -h --help          Show this help\n");
}

enum {
        ARG_REACHABILITY = 0x100,
};

static int parse_option(const struct ctl_context *ctx, struct call_args *args, int c, const char *arg)
{
        int r = ctl_parse_target_option(ctx, "leaks", &args->req, c, arg);

        if (r >= 0)
                return r;
        if (c == ARG_REACHABILITY)
                args->req.reachability = true;
        return CTL_EXIT_OK;
}

static bool is_growing(const cJSON *stack)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(stack, "verdict");

        return cJSON_IsString(v) && strcmp(v->valuestring, "growing") == 0;
}

static uint64_t lost_of(const cJSON *stack, const char *class)
{
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(stack, "reachability");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, class), "bytes");

        return cJSON_IsNumber(b) && b->valuedouble > 0 ? (uint64_t)b->valuedouble : 0;
}

/* 2: growing and definitely lost; 1: one of them; 0: neither (not a suspect). */
static int evidence_of(const cJSON *stack)
{
        return is_growing(stack) + (lost_of(stack, "definitely_lost") > 0);
}

static double growth_of(const cJSON *stack)
{
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(stack, "growth_bytes_per_s");

        return cJSON_IsNumber(g) ? g->valuedouble : 0;
}

static int by_evidence(const void *a, const void *b)
{
        const cJSON *p = *(cJSON *const *)a, *q = *(cJSON *const *)b;
        int ep = evidence_of(p), eq = evidence_of(q);
        double x = growth_of(p), y = growth_of(q);
        uint64_t lp = lost_of(p, "definitely_lost"), lq = lost_of(q, "definitely_lost");

        if (ep != eq)
                return ep > eq ? -1 : 1;
        if (x != y)
                return x > y ? -1 : 1;
        return lp > lq ? -1 : lp < lq;
}

static const char *const suspect_fields[] = {
        "pid", "stack_id", "verdict", "bytes", "allocs", "expected_error", "growth_bytes_per_s", "first_bytes",
        "reachability", "frames",
};

/* A suspect: the report's stack, its fields in the order leaks prints them, and last_bytes. */
static cJSON *suspect_of(const cJSON *stack)
{
        cJSON *s = cJSON_CreateObject();

        for (size_t i = 0; s && i < sizeof(suspect_fields) / sizeof(*suspect_fields); i++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(stack, suspect_fields[i]);

                cJSON_AddItemToObject(s, suspect_fields[i], v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
                if (strcmp(suspect_fields[i], "first_bytes") == 0)
                        cJSON_AddItemToObject(s, "last_bytes",
                                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(stack, "bytes"), false));
        }
        return s;
}

/* {"suspects": [growing stacks, fastest first], "targets": the report's}: built into reply. */
static cJSON *leaks_of(cJSON *reply)
{
        const cJSON *report = cJSON_GetObjectItemCaseSensitive(reply, F_REPORT);
        const cJSON *stacks = cJSON_GetObjectItemCaseSensitive(report, "stacks"), *stack;
        cJSON *leaks = cJSON_AddObjectToObject(reply, "leaks"), *suspects, **sorted;
        size_t n = 0;

        if (!leaks || !cJSON_IsArray(stacks))
                return NULL;
        sorted = calloc((size_t)cJSON_GetArraySize(stacks) + 1, sizeof(*sorted));
        if (!sorted)
                return NULL;
        cJSON_ArrayForEach(stack, stacks) {
                if (evidence_of(stack) > 0)
                        sorted[n++] = (cJSON *)stack;
        }
        qsort(sorted, n, sizeof(*sorted), by_evidence);
        suspects = cJSON_AddArrayToObject(leaks, "suspects");
        for (size_t i = 0; suspects && i < n; i++)
                cJSON_AddItemToArray(suspects, suspect_of(sorted[i]));
        free(sorted);
        cJSON_AddItemToObject(leaks, "targets",
                              cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(report, "targets"), true));
        return leaks;
}

static void view(const struct call_args *args, cJSON *reply, struct call_view *ret)
{
        const cJSON *leaks = leaks_of(reply);

        *ret = (struct call_view) { .what = "report", .text = leaks, .json = leaks, .render = render_leaks };
}

static const struct option long_options[] = {
        { "pid", required_argument, NULL, 'p' },
        { "children", no_argument, NULL, CTL_OPT_CHILDREN },
        { "reachability", no_argument, NULL, ARG_REACHABILITY },
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
        .request = { .cmd = MEMLEAK_CMD_REPORT, .top = MEMLEAK_MAX_TOP, .verdict = 1 + MEMLEAK_VERDICT_GROWING },
        .parse_option = parse_option,
        .view = view,
};

int cmd_leaks(struct ctl_context *ctx, int argc, char *argv[])
{
        return call_command_run(&leaks, ctx, argc, argv);
}
