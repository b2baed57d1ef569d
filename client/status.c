/* SPDX-License-Identifier: MIT */
/* memleakctl status: the daemon, the traced processes and the counters. */
#include "call.h"
#include "commands.h"
#include "protocol.h"
#include "render.h"

static void help(void)
{
        printf("memleakctl status [--unit NAME | --cgroup PATH] [--json]\n\n"
               "Show memleakd's version and uptime, the processes it traces with the events each lost,\n"
               "the units and cgroups it watches (attach --unit, --cgroup) with the processes each\n"
               "traces and those gone before they could be attached, and memleakd's counters and lost\n"
               "events (every target's since it started).\n\n"
               "     --unit NAME     Only this watched unit and its processes\n"
               "     --cgroup PATH   Only this watched cgroup and its processes\n"
               "  -j --json          Print the status as JSON\n"
               "  -h --help          Show this help\n");
}

static int parse_option(const struct ctl_context *ctx, struct call_args *args, int c, const char *arg)
{
        int r = ctl_parse_target_option(ctx, "status", &args->req, c, arg);

        return r >= 0 ? r : CTL_EXIT_OK;
}

static int check(const struct ctl_context *ctx, const struct call_args *args)
{
        if (ctl_targets_named(&args->req) > 1)
                return ctl_usage_error(ctx, "status: give --unit or --cgroup, not both");
        return CTL_EXIT_OK;
}

/* The reply less its envelope, as text and as JSON alike. */
static void view(const struct call_args *args, cJSON *reply, struct call_view *ret)
{
        const cJSON *status = call_reply_body(reply);

        *ret = (struct call_view) {
                .what = "status",
                .text = status,
                .json = status,
                .render = render_status,
        };
}

static const struct option long_options[] = {
        { "unit", required_argument, NULL, CTL_OPT_UNIT },
        { "cgroup", required_argument, NULL, CTL_OPT_CGROUP },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        {}
};

static const struct call_command status = {
        .name = "status",
        .short_options = "+:jh",
        .long_options = long_options,
        .help = help,
        .request = { .cmd = MEMLEAK_CMD_STATUS },
        .parse_option = parse_option,
        .check = check,
        .view = view,
};

int cmd_status(struct ctl_context *ctx, int argc, char *argv[])
{
        return call_command_run(&status, ctx, argc, argv);
}
