/* SPDX-License-Identifier: MIT */
/* memleakctl's subcommands, one file each (attach.c, detach.c, status.c, report.c, leaks.c, history.c, top.c, run.c,
 * html.c): what
 * main.c's command table dispatches to. */
#pragma once

#include "ctl.h"

/* Each takes the subcommand's own argv (argv[0] is its name) and returns an exit status. */
typedef int (*ctl_command_fn)(struct ctl_context *ctx, int argc, char *argv[]);

int cmd_attach(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_detach(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_status(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_metrics(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_report(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_leaks(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_history(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_top(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_run(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_html(struct ctl_context *ctx, int argc, char *argv[]);
/* memleakctl html's page of report (a report request: its target and top) and its history, to
 * output (NULL: stdout); report --format html. Returns an exit status. */
int cmd_html_write(struct ctl_context *ctx, const struct memleak_request *report, const char *output);
/* memleakctl html's --top by default */
#define CMD_HTML_DEFAULT_TOP 100
