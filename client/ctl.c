/* SPDX-License-Identifier: MIT */
/* What every memleakctl subcommand shares: error output, option errors, option values. */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ctl.h"
#include "protocol.h"
#include "macro.h"
#include "render.h"
#include "text-safe.h"

__attribute__((format(printf, 3, 0)))
static void error_va(const struct ctl_context *ctx, int error, const char *fmt, va_list ap)
{
        _cleanup_free_ char *message = NULL;

        if (vasprintf(&message, fmt, ap) < 0)
                message = NULL;
        if (ctx->json) {
                (void)render_error_json(stdout, error, message);
                (void)fflush(stdout);
        } else {
                /* A message may quote what a traced process named (its comm, a path). */
                _cleanup_free_ char *safe = message ? text_escape_controls(message) : NULL;

                fprintf(stderr, "memleakctl: %s\n", safe ? safe : message ? message : strerror(error));
        }
}

void ctl_error(const struct ctl_context *ctx, int error, const char *fmt, ...)
{
        va_list ap;

        assert(ctx);
        assert(fmt);

        va_start(ap, fmt);
        error_va(ctx, error, fmt, ap);
        va_end(ap);
}

int ctl_usage_error(const struct ctl_context *ctx, const char *fmt, ...)
{
        va_list ap;

        assert(ctx);
        assert(fmt);

        va_start(ap, fmt);
        error_va(ctx, EINVAL, fmt, ap);
        va_end(ap);
        if (!ctx->json)
                fputs("Try 'memleakctl --help'.\n", stderr);
        return CTL_EXIT_USAGE;
}

int ctl_option_error(const struct ctl_context *ctx, const char *cmd, int c, char *argv[])
{
        assert(ctx);
        assert(cmd);
        assert(argv);

        if (c == ':')
                return ctl_usage_error(ctx, "%s: option '%s' needs an argument", cmd, argv[optind - 1]);
        if (optopt > 0 && optopt < 0x100)
                return ctl_usage_error(ctx, "%s: unknown option '-%c'", cmd, optopt);
        return ctl_usage_error(ctx, "%s: unknown option '%s'", cmd, argv[optind - 1]);
}

int ctl_parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
        unsigned long long v;
        char *end;

        assert(ret);

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int ctl_parse_pid(const char *s, int32_t *ret)
{
        uint64_t v;

        assert(ret);

        if (ctl_parse_u64(s, INT32_MAX, &v) < 0 || v == 0)
                return -EINVAL;
        *ret = (int32_t) v;
        return 0;
}

int ctl_make_absolute(const char *path, char **ret)
{
        _cleanup_free_ char *cwd = NULL;
        char *p;

        assert(path);
        assert(ret);

        if (path[0] == '/')
                p = strdup(path);
        else {
                cwd = getcwd(NULL, 0);
                if (!cwd)
                        return -errno;
                if (asprintf(&p, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", path) < 0)
                        p = NULL;
        }
        if (!p)
                return -ENOMEM;
        *ret = p;
        return 0;
}

unsigned ctl_targets_named(const struct memleak_request *req)
{
        assert(req);
        return req->has_pid + req->kernel + !!req->unit + !!req->cgroup;
}

int ctl_parse_target_option(const struct ctl_context *ctx, const char *cmd, struct memleak_request *req, int c,
                            const char *arg)
{
        assert(ctx);
        assert(req);
        switch (c) {
        case 'p':
                if (ctl_parse_pid(arg, &req->pid) < 0)
                        return ctl_usage_error(ctx, "%s: invalid --pid '%s'", cmd, arg);
                req->has_pid = true;
                return CTL_EXIT_OK;
        case 'k':
                req->kernel = true;
                return CTL_EXIT_OK;
        case CTL_OPT_CHILDREN:
                req->children = true;
                return CTL_EXIT_OK;
        case CTL_OPT_UNIT:
        case CTL_OPT_CGROUP: {
                char **name = c == CTL_OPT_UNIT ? &req->unit : &req->cgroup;

                if (*name || !arg[0] || strlen(arg) >= MEMLEAK_MAX_PATH_BYTES)
                        return ctl_usage_error(ctx, "%s: give --%s once, a name shorter than %d bytes", cmd,
                                               c == CTL_OPT_UNIT ? "unit" : "cgroup", MEMLEAK_MAX_PATH_BYTES);
                *name = strdup(arg);
                if (!*name) {
                        ctl_error(ctx, ENOMEM, "%s: out of memory", cmd);
                        return CTL_EXIT_FAILURE;
                }
                return CTL_EXIT_OK;
        }
        case 't':
                if (ctl_parse_u64(arg, MEMLEAK_MAX_TOP, &req->top) < 0)
                        return ctl_usage_error(ctx, "%s: --top must be an integer between 0 and %d", cmd,
                                               MEMLEAK_MAX_TOP);
                return CTL_EXIT_OK;
        }
        return -1;
}
