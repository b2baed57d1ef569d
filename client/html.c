/* SPDX-License-Identifier: MIT */
/* memleakctl html: the report and the snapshot history as one self-contained HTML page. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "call.h"
#include "commands.h"
#include "html-report.h"
#include "json-util.h"
#include "macro.h"
#include "output-file.h"
#include "protocol.h"
#include "reply-fields.h"

#define HTML_DEFAULT_TOP CMD_HTML_DEFAULT_TOP
/* the history's stacks per process (its series, drawn and compared between two snapshots): as
 * many as the report lists, up to the most memleakd sends (HISTORY_STACKS_MAX) */
#define HTML_HISTORY_STACKS_MAX 1000

static void help(void)
{
        printf("memleakctl html [--pid PID [--children] | --kernel | --unit NAME | --cgroup PATH] [--top N]\n"
               "                [--output FILE]\n\n"
               "Write memleakd's report as one self-contained HTML page, to open in any browser and share:\n"
               "each process's outstanding memory and that of its largest stacks over the snapshots, the\n"
               "stacks still growing (and, after 'memleakctl run', those lost) called out, a flame graph of\n"
               "the outstanding bytes that zooms on the frame clicked, what grew between two snapshots of\n"
               "the ring, and a table of the stacks to sort, search by function, file or module, and open\n"
               "onto their frames. No server, no network: the data is in the page.\n\n"
               "  -p --pid PID          Only this traced process (default: all)\n"
               "     --children         With --pid: the processes followed from it too\n"
               "  -k --kernel           Only the kernel target (pid 0)\n"
               "     --unit NAME        Only the processes of this watched unit (attach --unit)\n"
               "     --cgroup PATH      Only the processes of this watched cgroup (attach --cgroup)\n"
               "  -t --top N            Stacks in the table and the flame graph, the rest summed up\n"
               "                        (default: %d); the snapshot diff compares as many (at most 1000)\n"
               "  -o --output FILE      Write the page to FILE (default: stdout, unless it is a terminal)\n"
               "  -h --help             Show this help\n", HTML_DEFAULT_TOP);
}

struct html_args {
        struct memleak_request report;
        const char *output;
};

static int parse_options(struct ctl_context *ctx, struct html_args *a, int argc, char *argv[])
{
        static const struct option options[] = {
                { "pid", required_argument, NULL, 'p' },
                { "children", no_argument, NULL, CTL_OPT_CHILDREN },
                { "kernel", no_argument, NULL, 'k' },
                { "unit", required_argument, NULL, CTL_OPT_UNIT },
                { "cgroup", required_argument, NULL, CTL_OPT_CGROUP },
                { "top", required_argument, NULL, 't' },
                { "output", required_argument, NULL, 'o' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+:p:kt:o:h", options, NULL)) >= 0) {
                r = ctl_parse_target_option(ctx, "html", &a->report, c, optarg);
                if (r >= 0) {
                        if (r != CTL_EXIT_OK)
                                return r;
                        continue;
                }
                switch (c) {
                case 'o':
                        a->output = optarg;
                        break;
                case 'h':
                        help();
                        return -1;
                default:
                        return ctl_option_error(ctx, "html", c, argv);
                }
        }
        if (optind < argc)
                return ctl_usage_error(ctx, "html: unexpected argument '%s'", argv[optind]);
        if (ctl_targets_named(&a->report) > 1)
                return ctl_usage_error(ctx, "html: give one of --pid, --kernel, --unit and --cgroup");
        if (!a->output && isatty(STDOUT_FILENO))
                return ctl_usage_error(ctx, "html: give --output FILE, or send stdout to a file");
        return CTL_EXIT_OK;
}

struct page {
        const cJSON *report, *history;
};

static int page_write(FILE *f, void *userdata)
{
        const struct page *page = userdata;

        return html_report_write(f, page->report, page->history);
}

/* The page into path, whole or not at all (output-file.h), or to stdout without one. */
static int write_page(const char *path, const cJSON *report, const cJSON *history)
{
        struct page page = { .report = report, .history = history };

        if (!path)
                return html_report_write(stdout, report, history) < 0 || fflush(stdout) != 0 ? -EIO : 0;
        return output_file_write(path, page_write, &page);
}

static void html_args_done(struct html_args *a)
{
        memleak_request_done(&a->report);
}

int cmd_html_write(struct ctl_context *ctx, const struct memleak_request *report, const char *output)
{
        _cleanup_json_ cJSON *report_reply = NULL, *history_reply = NULL;
        struct memleak_request history = {
                .cmd = MEMLEAK_CMD_HISTORY, .has_pid = report->has_pid, .pid = report->pid,
                .kernel = report->kernel, .top = MIN(report->top, (uint64_t)HTML_HISTORY_STACKS_MAX),
                .unit = report->unit, .cgroup = report->cgroup,       /* borrowed */
        };
        int r;

        r = call_daemon(ctx, "html", report, &report_reply);
        if (r != CTL_EXIT_OK)
                return r;
        r = call_daemon(ctx, "html", &history, &history_reply);
        if (r != CTL_EXIT_OK)
                return r;
        /* the stacks as memleakd sent them (each frame once): the page's script finds their frames */
        r = write_page(output, cJSON_GetObjectItemCaseSensitive(report_reply, RF_REPORT),
                       cJSON_GetObjectItemCaseSensitive(history_reply, RF_HISTORY));
        if (r < 0) {
                ctl_error(ctx, -r, "html: cannot write %s: %s", output ? output : "the page to stdout",
                          r == -EBADMSG ? "memleakd's reply is not a report" : strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        if (output && !ctx->json)
                fprintf(stderr, "Wrote %s\n", output);
        return CTL_EXIT_OK;
}

int cmd_html(struct ctl_context *ctx, int argc, char *argv[])
{
        _cleanup_(html_args_done) struct html_args a = {
                .report = { .cmd = MEMLEAK_CMD_REPORT, .top = HTML_DEFAULT_TOP } };
        int r;

        r = parse_options(ctx, &a, argc, argv);
        if (r != CTL_EXIT_OK)
                return r < 0 ? CTL_EXIT_OK : r;
        return cmd_html_write(ctx, &a.report, a.output);
}
