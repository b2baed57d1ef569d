/* SPDX-License-Identifier: MIT */
/* What every memleakctl subcommand shares: its context, its exit statuses, how it reports an
 * error, and how it reads an option's value. */
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

/* "memleakctl: <message>" on stderr (control characters spelled out), or with --json the JSON
 * error on stdout; error is the errno the JSON names (and the message when fmt's fails). */
void ctl_error(const struct ctl_context *ctx, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ctl_error(EINVAL, ...) and a hint; returns CTL_EXIT_USAGE. */
int ctl_usage_error(const struct ctl_context *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What getopt_long() refused in cmd's options ('?' unknown option, ':' missing argument), as a
 * usage error; returns CTL_EXIT_USAGE. */
int ctl_option_error(const struct ctl_context *ctx, const char *cmd, int c, char *argv[]);

/* A decimal integer in [0, max]: no sign, no spaces, no suffix. -EINVAL or -ERANGE. */
int ctl_parse_u64(const char *s, uint64_t max, uint64_t *ret);

/* A pid: a decimal integer in [1, INT32_MAX]. -EINVAL. */
int ctl_parse_pid(const char *s, int32_t *ret);

struct memleak_request;

/* The long-only option --children (the processes followed from --pid too), as getopt returns it. */
#define CTL_OPT_CHILDREN 'C'
/* The long-only options --unit NAME and --cgroup PATH (every process of a watched service). */
#define CTL_OPT_UNIT 'U'
#define CTL_OPT_CGROUP 'G'

/* The options that pick targets and stacks, shared by report and history: -p PID, -k (the kernel
 * target), -t N (stacks listed), --children, --unit NAME, --cgroup PATH. Returns CTL_EXIT_OK, a usage error's status, or -1 when c is
 * none of them. */
int ctl_parse_target_option(const struct ctl_context *ctx, const char *cmd, struct memleak_request *req, int c,
                            const char *arg);

/* How many of --pid, --kernel, --unit and --cgroup req names: a command takes one at most. */
unsigned ctl_targets_named(const struct memleak_request *req);

/* path made absolute against the working directory (the daemon opens it, from its own), malloc'd. */
int ctl_make_absolute(const char *path, char **ret);
