/* SPDX-License-Identifier: MIT */
/* memleakctl metrics: memleakd's metrics once, in Prometheus' text format (what metrics_textfile
 * holds for node_exporter's textfile collector). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "call.h"
#include "commands.h"
#include "protocol.h"
#include "render.h"
#include "reply-fields.h"

static void help(void)
{
        printf("memleakctl metrics [--json]\n\n"
               "Print memleakd's metrics once, in Prometheus' text exposition format: per traced\n"
               "process (labels pid, comm, and unit or cgroup where it was found by one) its\n"
               "outstanding bytes and blocks, their growth, its stacks and the growing ones, what a\n"
               "reachability scan found lost, whether it is sampled, its lost events by reason; and\n"
               "memleakd's own (targets, memory, BPF maps, snapshot tick). memleakd writes the same\n"
               "to metrics_textfile (memleakd.conf) for node_exporter's textfile collector.\n\n"
               "  -j --json          Print {\"metrics\": TEXT} as JSON\n"
               "  -h --help          Show this help\n");
}

/* Its lines, each printed as it is once render_text_safely() spelled out any control
 * character in it (a process's name is the daemon's to escape; a hostile daemon's are ours). */
static int render_lines(FILE *f, const cJSON *obj)
{
        const cJSON *lines = cJSON_GetObjectItemCaseSensitive(obj, RF_METRICS), *line;

        if (!cJSON_IsArray(lines))
                return -EBADMSG;
        cJSON_ArrayForEach(line, lines) {
                if (!cJSON_IsString(line))
                        return -EBADMSG;
                fprintf(f, "%s\n", line->valuestring);
        }
        return ferror(f) ? -EIO : 0;
}

/* The text split into lines (the text view), the reply less its envelope (JSON). */
static void view(const struct call_args *args, cJSON *reply, struct call_view *ret)
{
        cJSON *body = call_reply_body(reply), *lines = cJSON_CreateArray();
        const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(body, RF_METRICS));

        for (const char *p = text; lines && p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t)(nl - p) : strlen(p);
                char *copy = strndup(p, n);

                if (!copy || !cJSON_AddItemToArray(lines, cJSON_CreateString(copy))) {
                        cJSON_Delete(lines);
                        lines = NULL;
                }
                free(copy);
                p += n + (nl != NULL);
        }
        cJSON *holder = cJSON_CreateObject();

        if (holder && lines)
                cJSON_AddItemToObject(holder, RF_METRICS, lines);
        else
                cJSON_Delete(lines);
        *ret = (struct call_view) {
                .what = "metrics",
                .text = text && lines ? holder : NULL,  /* NULL: said to be malformed */
                .json = body,
                .render = render_lines,
                .owned = holder,
        };
}

static const struct option long_options[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        {}
};

static const struct call_command metrics = {
        .name = "metrics",
        .short_options = "+:jh",
        .long_options = long_options,
        .help = help,
        .request = { .cmd = MEMLEAK_CMD_METRICS },
        .view = view,
};

int cmd_metrics(struct ctl_context *ctx, int argc, char *argv[])
{
        return call_command_run(&metrics, ctx, argc, argv);
}
