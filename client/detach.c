/* SPDX-License-Identifier: MIT */
/* memleakctl detach: stop tracing a process, or the kernel. */
#include "call.h"
#include "commands.h"
#include "protocol.h"
#include "render.h"

static void help(void)
{
        printf("memleakctl detach --pid PID [--children] [--json]\n"
               "memleakctl detach --kernel [--json]\n"
               "memleakctl detach --unit NAME | --cgroup PATH [--json]\n\n"
               "Stop tracing a process, or the kernel, and forget what was recorded for it.\n\n"
               "  -p --pid PID       The traced process\n"
               "     --children      With --pid: the processes followed from it (attach --follow-forks),\n"
               "                     and theirs, too; without it they stay, each a target of its own\n"
               "  -k --kernel        The kernel target: its tracepoints are detached\n"
               "     --unit NAME     Stop watching this unit (attach --unit) and detach its processes\n"
               "     --cgroup PATH   Stop watching this cgroup (attach --cgroup) and detach its processes\n"
               "  -j --json          Print the reply as JSON: {\"target\": {...}, \"children\": [{...}, ...]}\n"
               "                     with --children, else {\"target\": {...}, \"children_left\": N} (the\n"
               "                     processes followed from it that stay, running or exited); with\n"
               "                     --unit or --cgroup {\"watch\": {...}, \"targets\": [{...}, ...]}\n"
               "  -h --help          Show this help\n");
}

static int parse_option(const struct ctl_context *ctx, struct call_args *args, int c, const char *arg)
{
        switch (c) {
        case 'p':
                if (ctl_parse_pid(arg, &args->req.pid) < 0)
                        return ctl_usage_error(ctx, "detach: invalid --pid '%s'", arg);
                args->req.has_pid = true;
                break;
        case 'k':
                args->req.kernel = true;
                break;
        case CTL_OPT_CHILDREN:
                args->req.children = true;
                break;
        case CTL_OPT_UNIT:
        case CTL_OPT_CGROUP:
                return ctl_parse_target_option(ctx, "detach", &args->req, c, arg);
        }
        return CTL_EXIT_OK;
}

static int check(const struct ctl_context *ctx, const struct call_args *args)
{
        if (ctl_targets_named(&args->req) > 1)
                return ctl_usage_error(ctx, "detach: give one of --pid, --kernel, --unit and --cgroup");
        if (ctl_targets_named(&args->req) == 0)
                return ctl_usage_error(ctx, "detach: --pid (or --kernel, --unit, --cgroup) is required");
        if (args->req.children && !args->req.has_pid)
                return ctl_usage_error(ctx, "detach: --children takes the processes followed from --pid: give --pid");
        return CTL_EXIT_OK;
}

/* The targets as text; with --json the reply less its envelope. */
static void view(const struct call_args *args, cJSON *reply, struct call_view *ret)
{
        const cJSON *body = call_reply_body(reply);

        bool watch = args->req.unit || args->req.cgroup;

        *ret = (struct call_view) {
                .what = watch ? "watch" : "target",
                .text = body,
                .json = body,
                .render = watch ? render_watch_detach : render_detach,
        };
}

static const struct option long_options[] = {
        { "pid", required_argument, NULL, 'p' },
        { "kernel", no_argument, NULL, 'k' },
        { "children", no_argument, NULL, CTL_OPT_CHILDREN },
        { "unit", required_argument, NULL, CTL_OPT_UNIT },
        { "cgroup", required_argument, NULL, CTL_OPT_CGROUP },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        {}
};

static const struct call_command detach = {
        .name = "detach",
        .short_options = "+:p:kjh",
        .long_options = long_options,
        .help = help,
        .request = { .cmd = MEMLEAK_CMD_DETACH },
        .parse_option = parse_option,
        .check = check,
        .view = view,
};

int cmd_detach(struct ctl_context *ctx, int argc, char *argv[])
{
        return call_command_run(&detach, ctx, argc, argv);
}
