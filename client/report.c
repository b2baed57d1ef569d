/* SPDX-License-Identifier: MIT */
/* memleakctl report: the call stacks holding the most outstanding memory. */
#include <string.h>
#include <unistd.h>
#include "call.h"
#include "commands.h"
#include "pprof-export.h"
#include "protocol.h"
#include "render-folded.h"
#include "render-gate.h"
#include "render.h"
#include "reply-fields.h"
#include "string-table.h"

enum {
        ARG_MIN_AGE = 0x100,
        ARG_SHOW_ADDRESSES,
        ARG_REACHABILITY,
        ARG_FOLDED,
        ARG_FORMAT,
        ARG_VALUE,
};

/* --format's names. */
static const char *const report_format_table[] = {
        [CALL_FORMAT_TEXT] = "text",
        [CALL_FORMAT_JSON] = "json",
        [CALL_FORMAT_FOLDED] = "folded",
        [CALL_FORMAT_PPROF] = "pprof",
        [CALL_FORMAT_HTML] = "html",
};
static DEFINE_STRING_TABLE_LOOKUP_TO_STRING(report_format, enum call_format);
static DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(report_format, int);

static void help(void)
{
        printf("memleakctl report [--pid PID [--children] | --kernel | --unit NAME | --cgroup PATH] [--top N] [--min-age SECONDS] [--reachability]\n"
               "                  [--suppressions FILE] [--show-addresses] [--format text|json|folded|pprof|html]\n"
               "                  [--output FILE] [--value bytes|allocs] [--folded | --json]\n\n"
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
               "  -t --top N            List N stacks, sum up the rest (default: %d; pprof, and folded\n"
               "                        stacks to a file or pipe: all)\n"
               "     --min-age SECONDS  Count only allocations at least this old (default: 0)\n"
               "     --reachability     Scan each running target's memory (see above)\n"
               "     --suppressions FILE\n"
               "                        Leave out the stacks LeakSanitizer's suppressions FILE names\n"
               "                        (see memleakctl run --help), counted as suppressed\n"
               "     --show-addresses   Also print each frame's raw address (text only)\n"
               "  -f --format FORMAT    text (default); json (as --json); folded: folded stacks for flame\n"
               "                        graph tools (flamegraph.pl, inferno, speedscope), one line a stack,\n"
               "                        'process;outermost;...;allocating BYTES'; pprof: a gzip'd pprof\n"
               "                        profile (go tool pprof, Pyroscope, Parca: inuse_space and\n"
               "                        inuse_objects, file:line, inlined frames; pid, comm, unit labels),\n"
               "                        only with --output or stdout sent to a file; every stack unless\n"
               "                        --top is given (then the rest is one [other] sample); html:\n"
               "                        the page 'memleakctl html' writes (its --top %d by default)\n"
               "     --value bytes|allocs\n"
               "                        folded: each stack's outstanding bytes (default) or allocations\n"
               "  -o --output FILE      Write to FILE (whole or not at all) instead of stdout\n"
               "     --folded           Same as --format folded\n"
               "  -j --json             Same as --format json\n"
               "  -h --help             Show this help\n", MEMLEAK_DEFAULT_TOP, CMD_HTML_DEFAULT_TOP);
}

/* --top's default for what is parsed so far: every stack for a profile, and for folded stacks
 * that go to a file or a pipe (a flame graph wants them whole); MEMLEAK_DEFAULT_TOP else. */
static void set_default_top(struct call_args *args)
{
        bool whole = args->format == CALL_FORMAT_PPROF ||
                     (args->format == CALL_FORMAT_FOLDED && (args->output || !isatty(STDOUT_FILENO)));

        if (!args->top_given)
                args->req.top = whole ? MEMLEAK_MAX_TOP :
                                args->format == CALL_FORMAT_HTML ? CMD_HTML_DEFAULT_TOP : MEMLEAK_DEFAULT_TOP;
}

static int parse_option(const struct ctl_context *ctx, struct call_args *args, int c, const char *arg)
{
        struct memleak_request *req = &args->req;
        int r = ctl_parse_target_option(ctx, "report", req, c, arg);

        if (c == 't' && r == CTL_EXIT_OK)
                args->top_given = true;
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
                args->format = CALL_FORMAT_FOLDED;
                set_default_top(args);
                break;
        case ARG_VALUE:
                if (strcmp(arg, "bytes") != 0 && strcmp(arg, "allocs") != 0)
                        return ctl_usage_error(ctx, "report: --value must be bytes or allocs");
                args->folded_allocs = strcmp(arg, "allocs") == 0;
                args->value_given = true;
                break;
        case 'f':
                r = report_format_from_string(arg);
                if (r < 0)
                        return ctl_usage_error(ctx, "report: --format must be text, json, folded, pprof or html");
                args->format = r;
                set_default_top(args);
                break;
        case 'o':
                args->output = arg;
                set_default_top(args);
                break;
        }
        return CTL_EXIT_OK;
}

static int check(const struct ctl_context *ctx, const struct call_args *args)
{
        if (ctl_targets_named(&args->req) > 1)
                return ctl_usage_error(ctx, "report: give one of --pid, --kernel, --unit and --cgroup");
        if (args->format != CALL_FORMAT_TEXT && args->format != CALL_FORMAT_JSON && ctx->json)
                return ctl_usage_error(ctx, "report: --format %s is not JSON: not with --json",
                                       report_format_to_string(args->format));
        if (args->value_given && args->format != CALL_FORMAT_FOLDED)
                return ctl_usage_error(ctx, "report: --value is for --format folded");
        if (args->format != CALL_FORMAT_TEXT && args->show_addresses)
                return ctl_usage_error(ctx, "report: --show-addresses is for the text report, not --format %s",
                                       ctx->json ? "json" : report_format_to_string(args->format));
        if (args->format == CALL_FORMAT_HTML && (gate_options_active(&args->gate) || args->req.reachability ||
                                                 args->req.min_age_s > 0))
                return ctl_usage_error(ctx, "report: --format html is memleakctl html's page: not with "
                                       "--suppressions, --reachability or --min-age");
        if (args->format == CALL_FORMAT_HTML && !args->output && isatty(STDOUT_FILENO))
                return ctl_usage_error(ctx, "report: --format html writes a page: give --output FILE, or send "
                                       "stdout to a file");
        /* a profile is bytes: a terminal would take them for its commands */
        if (args->format == CALL_FORMAT_PPROF && !args->output && isatty(STDOUT_FILENO))
                return ctl_usage_error(ctx, "report: --format pprof writes a binary profile: give --output FILE, "
                                       "or send stdout to a file");
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
                .render = args->format == CALL_FORMAT_PPROF ? pprof_export_write :
                          args->format == CALL_FORMAT_FOLDED ? (args->folded_allocs ? render_folded_allocs : render_folded) :
                          args->show_addresses ? render_report_with_addresses_suppressed : render_report_suppressed,
                .binary = args->format == CALL_FORMAT_PPROF,
                .output = args->output,
        };
}

/* --format html: memleakctl html's page */
static int instead(struct ctl_context *ctx, const struct call_args *args)
{
        return args->format == CALL_FORMAT_HTML ? cmd_html_write(ctx, &args->req, args->output) : -1;
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
        { "format", required_argument, NULL, 'f' },
        { "value", required_argument, NULL, ARG_VALUE },
        { "output", required_argument, NULL, 'o' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        {}
};

static const struct call_command report = {
        .name = "report",
        .short_options = "+:p:t:kf:o:jh",
        .long_options = long_options,
        .help = help,
        .request = { .cmd = MEMLEAK_CMD_REPORT, .top = MEMLEAK_DEFAULT_TOP },
        .parse_option = parse_option,
        .check = check,
        .view = view,
        .instead = instead,
};

int cmd_report(struct ctl_context *ctx, int argc, char *argv[])
{
        return call_command_run(&report, ctx, argc, argv);
}
