/* SPDX-License-Identifier: MIT */
/* memleakctl attach: start tracing a process's allocations, or the kernel's. */
#include <errno.h>
#include <string.h>
#include "call.h"
#include "commands.h"
#include "protocol.h"
#include "render.h"
#include "reply-fields.h"

enum {
        ARG_MIN_SIZE = 0x100,
        ARG_MAX_SIZE,
        ARG_KERNEL_FILTER,
        ARG_MMAP,
        ARG_UNWIND,
        ARG_SAMPLE_BYTES,
        ARG_FOLLOW_FORKS,
};

static void help(void)
{
        printf("memleakctl attach --pid PID [--obj PATH]... [--mmap] [--unwind MODE] [--min-size N] [--max-size N]\n"
               "                  [--sample-bytes N] [--follow-forks] [--json]\n"
               "memleakctl attach --unit NAME | --cgroup PATH [--obj PATH]... [--mmap] [--unwind MODE] [--min-size N]\n"
               "                  [--max-size N] [--sample-bytes N] [--json]\n"
               "memleakctl attach --kernel [--kernel-filter pid=N|comm=NAME]... [--min-size N] [--max-size N] [--json]\n\n"
               "Start tracing the allocations of a process. memleakd probes the allocator that serves\n"
               "the process (found in its maps: glibc, tcmalloc, jemalloc, mimalloc, or one linked into\n"
               "the executable), or the objects named with --obj. With --kernel, trace the\n"
               "kernel's allocations instead (slab objects, pages, percpu memory) through the kmem and\n"
               "percpu tracepoints; the kernel target is reported as pid 0 ([kernel]). With --unit or\n"
               "--cgroup, trace a whole service: every process in that cgroup (and the cgroups below it)\n"
               "now and every one that enters it later (forked, exec'd, moved in; a restarted unit's new\n"
               "processes too), each as a target of its own with these options, following its forks;\n"
               "report --unit NAME (or --cgroup PATH) reports them together. Root and admin_group only.\n\n"
               "  -p --pid PID       The process to trace\n"
               "  -o --obj PATH      Probe this object's allocator functions instead (up to %d times;\n"
               "                     a relative path is taken from the current directory)\n"
               "     --mmap          Also track the anonymous mappings the process makes itself with\n"
               "                     mmap/munmap/mremap (not those its allocator makes inside malloc);\n"
"                     reported apart from heap bytes\n"
               "     --unwind MODE   How its stacks are walked: auto (the default unless memleakd.conf\n"
               "                     says otherwise) or dwarf: by the call-frame information (.eh_frame)\n"
               "                     of the objects that have it, complete through code built without\n"
               "                     frame pointers; fp: by frame pointers only (no tables to load, but\n"
               "                     each allocation's stack is walked afresh, and cut short in code\n"
               "                     without them)\n"
               "     --follow-forks  Trace its child processes too, those running now and those it forks\n"
               "                     from now on, and theirs, each as a target of its own with these\n"
               "                     options (report --pid PID --children\n"
               "                     reports them together); what a child allocates before its\n"
               "                     probes are in (about a millisecond, longer under a fork storm)\n"
               "                     is not seen, and one that exits sooner is counted as missed\n"
               "     --unit NAME     Trace every process of this systemd unit (NAME.service, .scope or\n"
               "                     .slice), its cgroup found by name below the cgroup2 mount\n"
               "     --cgroup PATH   Trace every process of this cgroup v2 directory (a path under the\n"
               "                     cgroup2 mount, or one relative to it)\n"
               "  -k --kernel        Trace the kernel's allocations\n"
               "     --kernel-filter pid=N|comm=NAME\n"
               "                     With --kernel: only allocations made while process N (or a task\n"
               "                     named NAME, at most %d bytes) runs; both may be given\n"
               "     --min-size N   Record only allocations of at least N bytes\n"
               "     --max-size N   Record only allocations of at most N bytes\n"
               "     --sample-bytes N\n"
               "                     Sample instead of recording every allocation: each thread records\n"
               "                     those that cross a sample point, drawn every N bytes on average,\n"
               "                     weighted so each stack's bytes are estimated without bias (the\n"
               "                     report says how close: about sqrt(N / bytes)); much cheaper for\n"
               "                     programs that allocate a lot. Default: memleakd.conf's sample_bytes\n"
               "                     (0, exact); 1 records every allocation. An exact target that\n"
               "                     fills its share of memleakd's allocation table is sampled from\n"
               "                     then on (memleakd.conf's auto_sample_percent); status and the\n"
               "                     reports say since when and at what mean\n"
               "  -j --json          Print the reply as JSON: {\"target\": {...}}; with --unit or --cgroup\n"
               "                     {\"watch\": {...}, \"targets\": [{...}, ...]}\n"
               "  -h --help          Show this help\n", MEMLEAK_MAX_OBJS, MEMLEAK_MAX_COMM_BYTES);
}

/* --kernel-filter pid=N or comm=NAME (given once each at most). */
static int parse_kernel_filter(const char *s, struct memleak_request *req)
{
        if (strncmp(s, "pid=", 4) == 0) {
                if (req->kernel_pid || ctl_parse_pid(s + 4, &req->kernel_pid) < 0)
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

static int parse_option(const struct ctl_context *ctx, struct call_args *args, int c, const char *arg)
{
        struct memleak_request *req = &args->req;
        int r;

        switch (c) {
        case 'p':
                if (ctl_parse_pid(arg, &req->pid) < 0)
                        return ctl_usage_error(ctx, "attach: invalid --pid '%s'", arg);
                req->has_pid = true;
                break;
        case 'o':
                if (req->n_objs >= MEMLEAK_MAX_OBJS)
                        return ctl_usage_error(ctx, "attach: at most %d --obj", MEMLEAK_MAX_OBJS);
                r = ctl_make_absolute(arg, &req->objs[req->n_objs]);
                if (r < 0) {
                        ctl_error(ctx, -r, "attach: cannot make '%s' absolute: %s", arg, strerror(-r));
                        return CTL_EXIT_FAILURE;
                }
                req->n_objs++;
                if (strlen(req->objs[req->n_objs - 1]) >= MEMLEAK_MAX_PATH_BYTES)
                        return ctl_usage_error(ctx, "attach: --obj path longer than %d bytes",
                                               MEMLEAK_MAX_PATH_BYTES - 1);
                break;
        case 'k':
                req->kernel = true;
                break;
        case CTL_OPT_UNIT:
        case CTL_OPT_CGROUP:
                return ctl_parse_target_option(ctx, "attach", req, c, arg);
        case ARG_KERNEL_FILTER:
                if (parse_kernel_filter(arg, req) < 0)
                        return ctl_usage_error(ctx, "attach: invalid --kernel-filter '%s' (pid=N or "
                                               "comm=NAME of 1 to %d bytes, each once)", arg,
                                               MEMLEAK_MAX_COMM_BYTES);
                break;
        case ARG_MMAP:
                req->mmap = true;
                break;
        case ARG_FOLLOW_FORKS:
                req->follow_forks = true;
                break;
        case ARG_UNWIND:
                req->unwind = memleak_unwind_from_string(arg);
                if (req->unwind <= MEMLEAK_UNWIND_DEFAULT)
                        return ctl_usage_error(ctx, "attach: --unwind must be auto, dwarf or fp, not '%s'", arg);
                break;
        case ARG_MIN_SIZE:
                if (ctl_parse_u64(arg, MEMLEAK_MAX_SIZE_BYTES, &req->min_size) < 0)
                        return ctl_usage_error(ctx, "attach: invalid --min-size '%s'", arg);
                break;
        case ARG_MAX_SIZE:
                if (ctl_parse_u64(arg, MEMLEAK_MAX_SIZE_BYTES, &req->max_size) < 0)
                        return ctl_usage_error(ctx, "attach: invalid --max-size '%s'", arg);
                break;
        case ARG_SAMPLE_BYTES:
                if (ctl_parse_u64(arg, MEMLEAK_MAX_SAMPLE_BYTES, &req->sample_bytes) < 0)
                        return ctl_usage_error(ctx, "attach: --sample-bytes must be an integer between 0 and "
                                               "4294967296, not '%s'", arg);
                break;
        }
        return CTL_EXIT_OK;
}

static int check(const struct ctl_context *ctx, const struct call_args *args)
{
        const struct memleak_request *req = &args->req;

        if (ctl_targets_named(req) > 1)
                return ctl_usage_error(ctx, "attach: give one of --pid, --kernel, --unit and --cgroup");
        if (ctl_targets_named(req) == 0)
                return ctl_usage_error(ctx, "attach: --pid (or --kernel, --unit, --cgroup) is required");
        if (!req->kernel && (req->kernel_pid || req->kernel_comm[0]))
                return ctl_usage_error(ctx, "attach: --kernel-filter needs --kernel");
        if (req->kernel && req->sample_bytes)
                return ctl_usage_error(ctx, "attach: --sample-bytes samples a process's allocations, not the "
                                       "kernel's");
        if (req->kernel && req->follow_forks)
                return ctl_usage_error(ctx, "attach: --follow-forks follows a process's children, not the kernel's");
        if (req->kernel && req->n_objs > 0)
                return ctl_usage_error(ctx, "attach: --obj names a process's objects, not the kernel's");
        if (req->max_size && req->min_size > req->max_size)
                return ctl_usage_error(ctx, "attach: --min-size is larger than --max-size");
        return CTL_EXIT_OK;
}

/* The target as text; with --json the reply less its envelope: {"target": {...}}. */
static void view(const struct call_args *args, cJSON *reply, struct call_view *ret)
{
        const cJSON *target = cJSON_GetObjectItemCaseSensitive(reply, RF_TARGET);
        bool watch = args->req.unit || args->req.cgroup;

        *ret = (struct call_view) {
                .what = watch ? "watch" : "target",
                .text = watch ? call_reply_body(reply) : target,
                .json = call_reply_body(reply),
                .render = watch ? render_watch_attach : render_attach,
        };
}

static const struct option long_options[] = {
        { "pid", required_argument, NULL, 'p' },
        { "obj", required_argument, NULL, 'o' },
        { "kernel", no_argument, NULL, 'k' },
        { "unit", required_argument, NULL, CTL_OPT_UNIT },
        { "cgroup", required_argument, NULL, CTL_OPT_CGROUP },
        { "kernel-filter", required_argument, NULL, ARG_KERNEL_FILTER },
        { "mmap", no_argument, NULL, ARG_MMAP },
        { "follow-forks", no_argument, NULL, ARG_FOLLOW_FORKS },
        { "unwind", required_argument, NULL, ARG_UNWIND },
        { "min-size", required_argument, NULL, ARG_MIN_SIZE },
        { "max-size", required_argument, NULL, ARG_MAX_SIZE },
        { "sample-bytes", required_argument, NULL, ARG_SAMPLE_BYTES },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        {}
};

static const struct call_command attach = {
        .name = "attach",
        .short_options = "+:p:o:kjh",
        .long_options = long_options,
        .help = help,
        .request = { .cmd = MEMLEAK_CMD_ATTACH },
        .parse_option = parse_option,
        .check = check,
        .view = view,
};

int cmd_attach(struct ctl_context *ctx, int argc, char *argv[])
{
        return call_command_run(&attach, ctx, argc, argv);
}
