/* SPDX-License-Identifier: MIT */
/* memleakctl's subcommands: parse their options, ask memleakd, print the answer. */
#pragma once

#include <stdbool.h>

/* Exit statuses. */
#define CTL_EXIT_OK      0
#define CTL_EXIT_FAILURE 1      /* memleakd refused, is not running, or the conversation failed */
#define CTL_EXIT_USAGE   2      /* bad command line */

struct ctl_context {
        const char *socket_path;
        bool json;              /* --json: results and errors as JSON on stdout */
};

/* Each takes the subcommand's own argv (argv[0] is its name) and returns an exit status. */
typedef int (*ctl_command_fn)(struct ctl_context *ctx, int argc, char *argv[]);

int cmd_attach(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_detach(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_status(struct ctl_context *ctx, int argc, char *argv[]);
int cmd_report(struct ctl_context *ctx, int argc, char *argv[]);

/* Print "memleakctl: <message>" and a hint (or, with --json, a JSON error on stdout);
 * returns CTL_EXIT_USAGE. */
int ctl_usage_error(const struct ctl_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
