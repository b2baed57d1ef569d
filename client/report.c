/* SPDX-License-Identifier: MIT */
/* memleakctl report: the call stacks holding the most outstanding memory. */
#include "call.h"
#include "commands.h"
#include "protocol.h"
#include "render-folded.h"
#include "render-gate.h"
#include "render.h"
#include "reply-fields.h"

enum {
        ARG_MIN_AGE = 0x100,
        ARG_SHOW_ADDRESSES,
        ARG_REACHABILITY,
        ARG_FOLDED,
};

static void help(void)
{
        printf("memleakctl report [--pid PID [--children] | --kernel | --unit NAME | --cgroup PATH] [--top N] [--min-age SECONDS] [--reachability]\n"
               "                  [--suppressions FILE] [--show-addresses | --folded | --json]\n\n"
               "Show the call stacks holding the most outstanding (allocated, not yet freed) memory.\n"
               "With --reachability, each running target's memory is first read, as valgrind and\n"
               "LeakSanitizer do at exit (from a copy-on-write snapshot taken in a pause of a few ms;\n"
               "where none can be taken, stopped all along for at most reachability_max_pause_ms):\n"
               "each stack's blocks are told apart as definitely lost (nothing points to them), indirectly\n"
               "lost (only lost blocks do) and still reachable, the lost ones listed first; then it runs on.\n"
               "The lost events are the reported targets' own. Where a target lost allocations within the\n"
               "snapshots its verdicts look at, its verdicts are marked as qualified (\"plateau?\").\n\n"
               "  -p --pid PID          Only this traced process (default: all)\n"
               "     --children         With --pid: the processes followed from it too\n"
               "  -k --kernel           Only the kernel target (pid 0)\n"
               "     --unit NAME        Only the processes of this watched unit (attach --unit), together\n"
               "     --cgroup PATH      Only the processes of this watched cgroup (attach --cgroup)\n"
               "  -t --top N            List N stacks, sum up the rest (default: %d)\n"
               "     --min-age SECONDS  Count only allocations at least this old (default: 0)\n"
               "     --reachability     Scan each running target's memory (see above)\n"
               "     --suppressions FILE\n"
               "                        Leave out the stacks LeakSanitizer's suppressions FILE names\n"
               "                        (see memleakctl run --help), counted as suppressed\n"
               "     --show-addresses   Also print each frame's raw address\n"
               "     --folded           Print folded stacks for flame graph tools (flamegraph.pl, inferno,\n"
               "                        speedscope): one line a stack, 'process;outermost;...;allocating BYTES';\n"
               "                        with --top as large as the stacks to draw them all\n"
               "  -j --json             Print the report as JSON\n"
               "  -h --help             Show this help\n", MEMLEAK_DEFAULT_TOP);
}

static int parse_option(const struct ctl_context *ctx, struct call_args *args, int c, const char *arg)
{
        struct memleak_request *req = &args->req;
        int r = ctl_parse_target_option(ctx, "report", req, c, arg);

        if (r >= 0)
                return r;
        r = gate_options_parse(ctx, "report", &args->gate, c, arg);
        if (r >= 0)
                return r;
        switch (c) {
        case ARG_MIN_AGE:
                if (ctl_parse_u64(arg, MEMLEAK_MAX_MIN_AGE_S, &req->min_age_s) < 0)
                        return ctl_usage_error(ctx, "report: --min-age must be a number of seconds "
                                               "between 0 and %u", MEMLEAK_MAX_MIN_AGE_S);
                break;
        case ARG_SHOW_ADDRESSES:
                args->show_addresses = true;
                break;
        case ARG_REACHABILITY:
                req->reachability = true;
                break;
        case ARG_FOLDED:
                args->folded = true;
                break;
        }
        return CTL_EXIT_OK;
}

static int check(const struct ctl_context *ctx, const struct call_args *args)
{
        if (ctl_targets_named(&args->req) > 1)
                return ctl_usage_error(ctx, "report: give one of --pid, --kernel, --unit and --cgroup");
        if (args->folded && (ctx->json || args->show_addresses))
                return ctl_usage_error(ctx, "report: --folded prints a format of its own: not with --json or "
                                       "--show-addresses");
        return CTL_EXIT_OK;
}

/* The report object, as text and as JSON alike. */
static void view(const struct call_args *args, cJSON *reply, struct call_view *ret)
{
        cJSON *report = cJSON_GetObjectItemCaseSensitive(reply, RF_REPORT);
        struct gate_result gate = {};
        int status = CTL_EXIT_OK;

        /* --suppressions: taken out, then --top applied */
        if (gate_options_active(&args->gate) && cJSON_IsObject(report)) {
                if (gate_options_apply(&args->gate, 0, report, args->keep, &gate) < 0) {
                        fputs("memleakctl: report: cannot apply the suppressions: out of memory\n", stderr);
                        status = CTL_EXIT_FAILURE;
                }
                gate_result_done(&gate);
        }
        *ret = (struct call_view) {
                .status = status,
                .what = "report",
                .text = report,
                .json = report,
                .render = args->folded ? render_folded :
                          args->show_addresses ? render_report_with_addresses_suppressed : render_report_suppressed,
        };
}

static const struct option long_options[] = {
        { "pid", required_argument, NULL, 'p' },
        { "children", no_argument, NULL, CTL_OPT_CHILDREN },
        { "kernel", no_argument, NULL, 'k' },
        { "unit", required_argument, NULL, CTL_OPT_UNIT },
        { "cgroup", required_argument, NULL, CTL_OPT_CGROUP },
        { "top", required_argument, NULL, 't' },
        { "min-age", required_argument, NULL, ARG_MIN_AGE },
        { "show-addresses", no_argument, NULL, ARG_SHOW_ADDRESSES },
        { "reachability", no_argument, NULL, ARG_REACHABILITY },
        { "folded", no_argument, NULL, ARG_FOLDED },
        { "suppressions", required_argument, NULL, GATE_OPT_SUPPRESSIONS },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        {}
};

static const struct call_command report = {
        .name = "report",
        .short_options = "+:p:t:kjh",
        .long_options = long_options,
        .help = help,
        .request = { .cmd = MEMLEAK_CMD_REPORT, .top = MEMLEAK_DEFAULT_TOP },
        .parse_option = parse_option,
        .check = check,
        .view = view,
};

int cmd_report(struct ctl_context *ctx, int argc, char *argv[])
{
        return call_command_run(&report, ctx, argc, argv);
}
