/* SPDX-License-Identifier: MIT */
/* memleakctl's subcommands: parse their options, ask memleakd, print the answer. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

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
int cmd_run(struct ctl_context *ctx, int argc, char *argv[]);     /* run.c */

/* Shared with run.c: a decimal integer in [0, max]; a path made absolute against the working
 * directory; what getopt_long() refused, as a usage error. */
int ctl_parse_u64(const char *s, uint64_t max, uint64_t *ret);
int ctl_make_absolute(const char *path, char **ret);
int ctl_option_error(const struct ctl_context *ctx, const char *cmd, int c, char *argv[]);

/* Print "memleakctl: <message>" and a hint (or, with --json, a JSON error on stdout);
 * returns CTL_EXIT_USAGE. */
int ctl_usage_error(const struct ctl_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
