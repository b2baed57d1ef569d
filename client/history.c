/* SPDX-License-Identifier: MIT */
/* memleakctl history: the snapshot ring as time series, per target and per stack. */
#include "call.h"
#include "commands.h"
#include "protocol.h"
#include "render.h"
#include "reply-fields.h"

enum {
        ARG_STACK = 0x100,
};

static void help(void)
{
        printf("memleakctl history [--pid PID [--children] | --kernel | --unit NAME | --cgroup PATH] [--stack ID] [--top N] [--json]\n\n"
               "Show memleakd's snapshots of each traced process: its outstanding bytes and allocations\n"
               "at each one, and those of its largest stacks (in the newest snapshot), each with its\n"
               "verdict (growing, plateau, churn, pending; \"plateau?\" and a \"Verdicts qualified\" line\n"
               "when the target lost allocations meanwhile). A stack's ID is the stack_id of\n"
               "'memleakctl report --json' and 'memleakctl leaks --json'.\n\n"
               "  -p --pid PID       Only this traced process (default: all)\n"
               "     --children      With --pid: the processes followed from it too\n"
               "  -k --kernel        Only the kernel target\n"
               "     --unit NAME     Only the processes of this watched unit (attach --unit)\n"
               "     --cgroup PATH   Only the processes of this watched cgroup (attach --cgroup)\n"
               "     --stack ID      Only this stack\n"
               "  -t --top N         Stacks per process (default: %d, at most 1000)\n"
               "  -j --json          Print {\"targets\": [{\"totals\": [...], \"stacks\": [...]}]}\n"
               "  -h --help          Show this help\n", MEMLEAK_DEFAULT_TOP);
}

static int parse_option(const struct ctl_context *ctx, struct call_args *args, int c, const char *arg)
{
        struct memleak_request *req = &args->req;
        int r = ctl_parse_target_option(ctx, "history", req, c, arg);

        if (r >= 0)
                return r;
        switch (c) {
        case ARG_STACK:
                if (ctl_parse_u64(arg, MEMLEAK_MAX_STACK_ID, &req->stack_id) < 0)
                        return ctl_usage_error(ctx, "history: --stack must be a stack id (an integer below 2^53)");
                req->has_stack_id = true;
                break;
        }
        return CTL_EXIT_OK;
}

static int check(const struct ctl_context *ctx, const struct call_args *args)
{
        if (ctl_targets_named(&args->req) > 1)
                return ctl_usage_error(ctx, "history: give one of --pid, --kernel, --unit and --cgroup");
        return CTL_EXIT_OK;
}

static void view(const struct call_args *args, cJSON *reply, struct call_view *ret)
{
        const cJSON *history = cJSON_GetObjectItemCaseSensitive(reply, RF_HISTORY);

        *ret = (struct call_view) { .what = "history", .text = history, .json = history, .render = render_history };
}

static const struct option long_options[] = {
        { "pid", required_argument, NULL, 'p' },
        { "children", no_argument, NULL, CTL_OPT_CHILDREN },
        { "kernel", no_argument, NULL, 'k' },
        { "unit", required_argument, NULL, CTL_OPT_UNIT },
        { "cgroup", required_argument, NULL, CTL_OPT_CGROUP },
        { "stack", required_argument, NULL, ARG_STACK },
        { "top", required_argument, NULL, 't' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        {}
};

static const struct call_command history = {
        .name = "history",
        .short_options = "+:p:kt:jh",
        .long_options = long_options,
        .help = help,
        .request = { .cmd = MEMLEAK_CMD_HISTORY, .top = MEMLEAK_DEFAULT_TOP },
        .parse_option = parse_option,
        .check = check,
        .view = view,
};

int cmd_history(struct ctl_context *ctx, int argc, char *argv[])
{
        return call_command_run(&history, ctx, argc, argv);
}
