/* SPDX-License-Identifier: MIT */
/* memleakctl's subcommands: parse their options, ask memleakd, print the answer. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "connection.h"
#include "json-util.h"
#include "macro.h"
#include "protocol.h"
#include "render.h"
#include "text-safe.h"

enum {
        ARG_MIN_SIZE = 0x100,
        ARG_MAX_SIZE,
        ARG_MIN_AGE,
        ARG_SHOW_ADDRESSES,
        ARG_KERNEL,
        ARG_KERNEL_FILTER,
        ARG_MMAP,
};

static void print_error_va(const struct ctl_context *ctx, int error, const char *fmt, va_list ap)
{
        _cleanup_free_ char *message = NULL;

        if (vasprintf(&message, fmt, ap) < 0)
                message = NULL;
        if (ctx->json) {
                render_error_json(stdout, error, message);
                fflush(stdout);
        } else {
                /* A message may quote what a traced process named (its comm, a path). */
                _cleanup_free_ char *safe = message ? text_escape_controls(message) : NULL;

                fprintf(stderr, "memleakctl: %s\n", safe ? safe : message ? message : strerror(error));
        }
}

/* An error in the shape the output mode wants: a line on stderr, or JSON on stdout. */
static void print_error(const struct ctl_context *ctx, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void print_error(const struct ctl_context *ctx, int error, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        print_error_va(ctx, error, fmt, ap);
        va_end(ap);
}

int ctl_usage_error(const struct ctl_context *ctx, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        print_error_va(ctx, EINVAL, fmt, ap);
        va_end(ap);
        if (!ctx->json)
                fputs("Try 'memleakctl --help'.\n", stderr);
        return CTL_EXIT_USAGE;
}

/* A decimal integer in [0, max]: no sign, no spaces, no suffix. */
static int parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
        unsigned long long v;
        char *end;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno != 0 || *end != '\0' || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

static int parse_pid(const char *s, int32_t *ret)
{
        uint64_t v;

        if (parse_u64(s, INT32_MAX, &v) < 0 || v == 0)
                return -EINVAL;
        *ret = (int32_t) v;
        return 0;
}

/* --kernel-filter pid=N or comm=NAME (given once each at most). */
static int parse_kernel_filter(const char *s, struct memleak_request *req)
{
        if (strncmp(s, "pid=", 4) == 0) {
                if (req->kernel_pid || parse_pid(s + 4, &req->kernel_pid) < 0)
                        return -EINVAL;
                return 0;
        }
        if (strncmp(s, "comm=", 5) == 0) {
                size_t n = strlen(s + 5);

                if (req->kernel_comm[0] || n == 0 || n > MEMLEAK_MAX_COMM_BYTES)
                        return -EINVAL;
                memcpy(req->kernel_comm, s + 5, n + 1);
                return 0;
        }
        return -EINVAL;
}

/* The daemon opens --obj paths itself, so a relative one is made absolute against our cwd. */
static int make_absolute(const char *path, char **ret)
{
        _cleanup_free_ char *cwd = NULL;
        char *p;

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

/* Explain what getopt_long() refused ('?' unknown option, ':' missing argument). */
static int option_error(const struct ctl_context *ctx, const char *cmd, int c, char *argv[])
{
        if (c == ':')
                return ctl_usage_error(ctx, "%s: option '%s' needs an argument", cmd, argv[optind - 1]);
        if (optopt > 0 && optopt < 0x100)
                return ctl_usage_error(ctx, "%s: unknown option '-%c'", cmd, optopt);
        return ctl_usage_error(ctx, "%s: unknown option '%s'", cmd, argv[optind - 1]);
}

static int extra_arguments(const struct ctl_context *ctx, const char *cmd, int argc, char *argv[])
{
        if (optind < argc)
                return ctl_usage_error(ctx, "%s: unexpected argument '%s'", cmd, argv[optind]);
        return 0;
}

/* Send req to memleakd; on failure say why (once) and return the exit status. */
static int call_daemon(const struct ctl_context *ctx, const struct memleak_request *req, cJSON **ret_reply)
{
        const char *what = memleak_command_to_string(req->cmd);
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        fd = connection_open(ctx->socket_path);
        if (fd == -ENOENT || fd == -ECONNREFUSED) {
                print_error(ctx, -fd, "memleakd is not running (no socket at %s); start it with "
                            "'systemctl start memleakd' or run 'memleakd' as root", ctx->socket_path);
                return CTL_EXIT_FAILURE;
        }
        if (fd < 0) {
                print_error(ctx, -fd, "cannot connect to memleakd at %s: %s (%s)", ctx->socket_path,
                            strerror(-fd), memleak_errno_to_code(fd));
                return CTL_EXIT_FAILURE;
        }
        r = connection_call(fd, req, CONNECTION_TIMEOUT_MS, ret_reply, &error);
        if (r < 0) {
                const char *message = error ? error : strerror(-r);

                if (ctx->json)
                        print_error(ctx, -r, "%s", message);
                else
                        print_error(ctx, -r, "%s failed: %s (%s)", what, message, memleak_errno_to_code(r));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

/* The reply less its envelope (v, id, ok): what --json prints for attach, detach and status. */
static cJSON *reply_body(cJSON *reply)
{
        cJSON_DeleteItemFromObjectCaseSensitive(reply, F_VERSION);
        cJSON_DeleteItemFromObjectCaseSensitive(reply, F_ID);
        cJSON_DeleteItemFromObjectCaseSensitive(reply, F_RESULT_OK);
        return reply;
}

/* Print obj with the text renderer, or json_obj as JSON; then make sure it reached stdout. */
static int print_result(const struct ctl_context *ctx, const char *cmd, const char *what,
                        const cJSON *obj, const cJSON *json_obj,
                        int (*render_text)(FILE *f, const cJSON *obj))
{
        int r;

        if (!cJSON_IsObject(obj)) {
                print_error(ctx, EBADMSG, "%s failed: Malformed reply from memleakd (no %s)", cmd, what);
                return CTL_EXIT_FAILURE;
        }
        r = ctx->json ? render_json(stdout, json_obj) : render_text_safely(stdout, obj, render_text);
        if (r >= 0 && fflush(stdout) != 0)
                r = -errno;
        if (r == -EBADMSG) {
                print_error(ctx, -r, "%s failed: Malformed %s in the reply from memleakd", cmd, what);
                return CTL_EXIT_FAILURE;
        }
        if (r < 0) {
                fprintf(stderr, "memleakctl: cannot print the %s: %s\n", what, strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

static void help_attach(void)
{
        printf("memleakctl attach --pid PID [--obj PATH]... [--mmap] [--min-size N] [--max-size N] [--json]\n"
               "memleakctl attach --kernel [--kernel-filter pid=N|comm=NAME]... [--min-size N] [--max-size N] [--json]\n\n"
               "Start tracing the allocations of a process. memleakd probes the allocator that serves\n"
               "the process (found in its maps: glibc, tcmalloc, jemalloc, mimalloc, or one linked into\n"
               "the executable), or the objects named with --obj. With --kernel, trace the\n"
               "kernel's allocations instead (slab objects, pages, percpu memory) through the kmem and\n"
               "percpu tracepoints; the kernel target is reported as pid 0 ([kernel]).\n\n"
               "  -p --pid PID       The process to trace\n"
               "  -o --obj PATH      Probe this object's allocator functions instead (up to %d times;\n"
               "                     a relative path is taken from the current directory)\n"
               "     --mmap          Also track the anonymous mappings the process makes itself with\n"
               "                     mmap/munmap/mremap (not those its allocator makes inside malloc);\n"
               "                     reported apart from heap bytes\n"
               "  -k --kernel        Trace the kernel's allocations\n"
               "     --kernel-filter pid=N|comm=NAME\n"
               "                     With --kernel: only allocations made while process N (or a task\n"
               "                     named NAME, at most %d bytes) runs; both may be given\n"
               "     --min-size N   Record only allocations of at least N bytes\n"
               "     --max-size N   Record only allocations of at most N bytes\n"
               "  -j --json          Print the reply as JSON: {\"target\": {...}}\n"
               "  -h --help          Show this help\n", MEMLEAK_MAX_OBJS, MEMLEAK_MAX_COMM_BYTES);
}

int cmd_attach(struct ctl_context *ctx, int argc, char *argv[])
{
        static const struct option options[] = {
                { "pid", required_argument, NULL, 'p' },
                { "obj", required_argument, NULL, 'o' },
                { "kernel", no_argument, NULL, 'k' },
                { "kernel-filter", required_argument, NULL, ARG_KERNEL_FILTER },
                { "mmap", no_argument, NULL, ARG_MMAP },
                { "min-size", required_argument, NULL, ARG_MIN_SIZE },
                { "max-size", required_argument, NULL, ARG_MAX_SIZE },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        _cleanup_(memleak_request_done) struct memleak_request req = { .cmd = MEMLEAK_CMD_ATTACH };
        _cleanup_json_ cJSON *reply = NULL;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+:p:o:kjh", options, NULL)) >= 0)
                switch (c) {
                case 'p':
                        if (parse_pid(optarg, &req.pid) < 0)
                                return ctl_usage_error(ctx, "attach: invalid --pid '%s'", optarg);
                        req.has_pid = true;
                        break;
                case 'o':
                        if (req.n_objs >= MEMLEAK_MAX_OBJS)
                                return ctl_usage_error(ctx, "attach: at most %d --obj", MEMLEAK_MAX_OBJS);
                        r = make_absolute(optarg, &req.objs[req.n_objs]);
                        if (r < 0) {
                                print_error(ctx, -r, "attach: cannot make '%s' absolute: %s", optarg, strerror(-r));
                                return CTL_EXIT_FAILURE;
                        }
                        req.n_objs++;
                        if (strlen(req.objs[req.n_objs - 1]) >= MEMLEAK_MAX_PATH_BYTES)
                                return ctl_usage_error(ctx, "attach: --obj path longer than %d bytes",
                                                       MEMLEAK_MAX_PATH_BYTES - 1);
                        break;
                case 'k':
                        req.kernel = true;
                        break;
                case ARG_KERNEL_FILTER:
                        if (parse_kernel_filter(optarg, &req) < 0)
                                return ctl_usage_error(ctx, "attach: invalid --kernel-filter '%s' (pid=N or "
                                                       "comm=NAME of 1 to %d bytes, each once)", optarg,
                                                       MEMLEAK_MAX_COMM_BYTES);
                        break;
                case ARG_MMAP:
                        req.mmap = true;
                        break;
                case ARG_MIN_SIZE:
                        if (parse_u64(optarg, MEMLEAK_MAX_SIZE_BYTES, &req.min_size) < 0)
                                return ctl_usage_error(ctx, "attach: invalid --min-size '%s'", optarg);
                        break;
                case ARG_MAX_SIZE:
                        if (parse_u64(optarg, MEMLEAK_MAX_SIZE_BYTES, &req.max_size) < 0)
                                return ctl_usage_error(ctx, "attach: invalid --max-size '%s'", optarg);
                        break;
                case 'j':
                        ctx->json = true;
                        break;
                case 'h':
                        help_attach();
                        return CTL_EXIT_OK;
                default:
                        return option_error(ctx, "attach", c, argv);
                }
        r = extra_arguments(ctx, "attach", argc, argv);
        if (r != 0)
                return r;
        if (req.has_pid && req.kernel)
                return ctl_usage_error(ctx, "attach: give --pid or --kernel, not both");
        if (!req.has_pid && !req.kernel)
                return ctl_usage_error(ctx, "attach: --pid (or --kernel) is required");
        if (!req.kernel && (req.kernel_pid || req.kernel_comm[0]))
                return ctl_usage_error(ctx, "attach: --kernel-filter needs --kernel");
        if (req.kernel && req.n_objs > 0)
                return ctl_usage_error(ctx, "attach: --obj names a process's objects, not the kernel's");
        if (req.max_size && req.min_size > req.max_size)
                return ctl_usage_error(ctx, "attach: --min-size is larger than --max-size");

        r = call_daemon(ctx, &req, &reply);
        if (r != CTL_EXIT_OK)
                return r;
        return print_result(ctx, "attach", "target", cJSON_GetObjectItemCaseSensitive(reply, F_TARGET),
                            reply_body(reply), render_attach);
}

static void help_detach(void)
{
        printf("memleakctl detach --pid PID [--json]\n"
               "memleakctl detach --kernel [--json]\n\n"
               "Stop tracing a process, or the kernel, and forget what was recorded for it.\n\n"
               "  -p --pid PID       The traced process\n"
               "  -k --kernel        The kernel target: its tracepoints are detached\n"
               "  -j --json          Print the reply as JSON: {\"target\": {...}}\n"
               "  -h --help          Show this help\n");
}

int cmd_detach(struct ctl_context *ctx, int argc, char *argv[])
{
        static const struct option options[] = {
                { "pid", required_argument, NULL, 'p' },
                { "kernel", no_argument, NULL, 'k' },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        struct memleak_request req = { .cmd = MEMLEAK_CMD_DETACH };
        _cleanup_json_ cJSON *reply = NULL;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+:p:kjh", options, NULL)) >= 0)
                switch (c) {
                case 'p':
                        if (parse_pid(optarg, &req.pid) < 0)
                                return ctl_usage_error(ctx, "detach: invalid --pid '%s'", optarg);
                        req.has_pid = true;
                        break;
                case 'k':
                        req.kernel = true;
                        break;
                case 'j':
                        ctx->json = true;
                        break;
                case 'h':
                        help_detach();
                        return CTL_EXIT_OK;
                default:
                        return option_error(ctx, "detach", c, argv);
                }
        r = extra_arguments(ctx, "detach", argc, argv);
        if (r != 0)
                return r;
        if (req.has_pid && req.kernel)
                return ctl_usage_error(ctx, "detach: give --pid or --kernel, not both");
        if (!req.has_pid && !req.kernel)
                return ctl_usage_error(ctx, "detach: --pid (or --kernel) is required");

        r = call_daemon(ctx, &req, &reply);
        if (r != CTL_EXIT_OK)
                return r;
        return print_result(ctx, "detach", "target", cJSON_GetObjectItemCaseSensitive(reply, F_TARGET),
                            reply_body(reply), render_detach);
}

static void help_status(void)
{
        printf("memleakctl status [--json]\n\n"
               "Show memleakd's version and uptime, the processes it traces, its counters and the\n"
               "events it lost.\n\n"
               "  -j --json          Print the status as JSON\n"
               "  -h --help          Show this help\n");
}

int cmd_status(struct ctl_context *ctx, int argc, char *argv[])
{
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        struct memleak_request req = { .cmd = MEMLEAK_CMD_STATUS };
        _cleanup_json_ cJSON *reply = NULL;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+:jh", options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        ctx->json = true;
                        break;
                case 'h':
                        help_status();
                        return CTL_EXIT_OK;
                default:
                        return option_error(ctx, "status", c, argv);
                }
        r = extra_arguments(ctx, "status", argc, argv);
        if (r != 0)
                return r;

        r = call_daemon(ctx, &req, &reply);
        if (r != CTL_EXIT_OK)
                return r;
        reply_body(reply);
        return print_result(ctx, "status", "status", reply, reply, render_status);
}

static void help_report(void)
{
        printf("memleakctl report [--pid PID | --kernel] [--top N] [--min-age SECONDS] [--show-addresses] [--json]\n\n"
               "Show the call stacks holding the most outstanding (allocated, not yet freed) memory.\n\n"
               "  -p --pid PID          Only this traced process (default: all)\n"
               "  -k --kernel           Only the kernel target (pid 0)\n"
               "  -t --top N            List N stacks, sum up the rest (default: %d)\n"
               "     --min-age SECONDS  Count only allocations at least this old (default: 0)\n"
               "     --show-addresses   Also print each frame's raw address\n"
               "  -j --json             Print the report as JSON\n"
               "  -h --help             Show this help\n", MEMLEAK_DEFAULT_TOP);
}

int cmd_report(struct ctl_context *ctx, int argc, char *argv[])
{
        static const struct option options[] = {
                { "pid", required_argument, NULL, 'p' },
                { "kernel", no_argument, NULL, 'k' },
                { "top", required_argument, NULL, 't' },
                { "min-age", required_argument, NULL, ARG_MIN_AGE },
                { "show-addresses", no_argument, NULL, ARG_SHOW_ADDRESSES },
                { "json", no_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        struct memleak_request req = { .cmd = MEMLEAK_CMD_REPORT, .top = MEMLEAK_DEFAULT_TOP };
        _cleanup_json_ cJSON *reply = NULL;
        const cJSON *report;
        bool show_addresses = false;
        int c, r;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+:p:t:kjh", options, NULL)) >= 0)
                switch (c) {
                case 'p':
                        if (parse_pid(optarg, &req.pid) < 0)
                                return ctl_usage_error(ctx, "report: invalid --pid '%s'", optarg);
                        req.has_pid = true;
                        break;
                case 'k':
                        req.kernel = true;
                        break;
                case 't':
                        if (parse_u64(optarg, MEMLEAK_MAX_TOP, &req.top) < 0)
                                return ctl_usage_error(ctx, "report: --top must be an integer between 0 and %d",
                                                       MEMLEAK_MAX_TOP);
                        break;
                case ARG_MIN_AGE:
                        if (parse_u64(optarg, MEMLEAK_MAX_MIN_AGE_S, &req.min_age_s) < 0)
                                return ctl_usage_error(ctx, "report: --min-age must be a number of seconds "
                                                       "between 0 and %u", MEMLEAK_MAX_MIN_AGE_S);
                        break;
                case ARG_SHOW_ADDRESSES:
                        show_addresses = true;
                        break;
                case 'j':
                        ctx->json = true;
                        break;
                case 'h':
                        help_report();
                        return CTL_EXIT_OK;
                default:
                        return option_error(ctx, "report", c, argv);
                }
        r = extra_arguments(ctx, "report", argc, argv);
        if (r != 0)
                return r;
        if (req.has_pid && req.kernel)
                return ctl_usage_error(ctx, "report: give --pid or --kernel, not both");

        r = call_daemon(ctx, &req, &reply);
        if (r != CTL_EXIT_OK)
                return r;
        report = cJSON_GetObjectItemCaseSensitive(reply, F_REPORT);
        return print_result(ctx, "report", "report", report, report,
                            show_addresses ? render_report_with_addresses : render_report);
}

int ctl_parse_u64(const char *s, uint64_t max, uint64_t *ret)
{
        return parse_u64(s, max, ret);
}

int ctl_make_absolute(const char *path, char **ret)
{
        return make_absolute(path, ret);
}

int ctl_option_error(const struct ctl_context *ctx, const char *cmd, int c, char *argv[])
{
        return option_error(ctx, cmd, c, argv);
}
