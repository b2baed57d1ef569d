/* SPDX-License-Identifier: MIT */
/* memleakctl status: the daemon, the traced processes and the counters. */
#include "call.h"
#include "commands.h"
#include "protocol.h"
#include "render.h"

static void help(void)
{
        printf("memleakctl status [--json]\n\n"
               "Show memleakd's version and uptime, the processes it traces with the events each lost,\n"
               "and memleakd's counters and lost events (every target's since it started).\n\n"
               "  -j --json          Print the status as JSON\n"
               "  -h --help          Show this help\n");
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
        .view = view,
};

int cmd_status(struct ctl_context *ctx, int argc, char *argv[])
{
        return call_command_run(&status, ctx, argc, argv);
}
