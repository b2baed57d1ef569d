/* SPDX-License-Identifier: GPL-2.0-only */
/* The manager's BPF object: sizes checked against what the machine can hold, opened, the kernel
 * target's programs this kernel cannot run turned off, loaded; and libbpf's messages logged. */
#include <assert.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "kernel-target.h"
#include "log.h"
#include "manager-bpf.h"
#include "map-budget.h"

__attribute__((format(printf, 2, 0)))
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
        if (level == LIBBPF_DEBUG)
                return 0;
        fprintf(stderr, "<%d>libbpf: ", level == LIBBPF_WARN ? LOG_WARNING : LOG_INFO);
        return vfprintf(stderr, fmt, ap);
}

/* Open the BPF object, turn off the kernel target's programs this kernel cannot run, load. */
static int load(const struct bpf_sizes *sizes, struct pins *pins, struct memleak_bpf **ret)
{
        struct kernel_tracepoint_gap gaps[KERNEL_TRACEPOINTS_MAX];
        struct memleak_bpf *skel = NULL;
        size_t n_gaps;
        int r;

        libbpf_set_print(libbpf_log);
        r = bpf_loader_open(sizes, &skel);
        if (r < 0)
                return log_error_errno(r, "Failed to open the BPF object: %m");
        if (pins && (r = pins_prepare_maps(pins, bpf_loader_object(skel))) < 0) {
                bpf_loader_destroy(skel);
                return log_error_errno(r, "Cannot set where the BPF maps are pinned: %m");
        }
        n_gaps = kernel_target_prepare(bpf_loader_object(skel), gaps);
        for (size_t i = 0; i < n_gaps; i++)
                log_info("This kernel has no usable tracepoint %s (%s), the kernel target does without it",
                         gaps[i].name, gaps[i].error == -EINVAL ? "fewer arguments than expected" : strerror(-gaps[i].error));
        if (!bpf_loader_uprobe_multi(skel))
                log_info("No uprobe_multi links on this kernel (Linux < 6.6, or MEMLEAKD_UPROBE_MULTI=0): "
                         "one perf-event uprobe per probe site, slower to remove");
        else if (!bpf_loader_uprobe_session(skel))
                log_info("No uprobe sessions on this kernel (Linux < 6.12, or MEMLEAKD_UPROBE_SESSION=0): "
                         "malloc's and calloc's return probes run at every call, also where they have nothing to record");
        r = bpf_loader_load(skel);
        if (r < 0) {
                bpf_loader_destroy(skel);
                return log_error_errno(r, "Failed to load the BPF programs: %m "
                                       "(needs CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN, and a kernel with BTF)");
        }
        *ret = skel;
        return 0;
}

/* Refuse map sizes this machine cannot hold, before the kernel tries (the OOM killer would
 * answer, not an error). */
static int check_map_budget(const struct bpf_sizes *sizes)
{
        struct memory_limits limits;
        uint64_t need = map_budget_estimate(sizes), allowed;
        int r;

        r = map_budget_read_limits("/proc/meminfo", &limits);
        if (r < 0)
                return log_warning_errno(r, "Cannot read /proc/meminfo, not checking the map sizes: %m"), 0;
        allowed = map_budget_allowed(&limits);
        if (need <= allowed) {
                log_debug("The BPF maps take %" PRIu64 " MiB (%" PRIu64 " MiB allowed)", need >> 20, allowed >> 20);
                return 0;
        }
        return log_error_errno(ENOMEM, "The BPF maps would take %" PRIu64 " MiB of kernel memory at these sizes "
                               "(max_allocs=%u, max_stacks=%u, max_stack_depth=%u, max_combined=%u, "
                               "max_mmaps=%u), more than this machine can hold: %" PRIu64
                               " MiB (what is available, at most half the memory, 3/4 of the service's "
                               "MemoryMax=). Lower them in the configuration.",
                               need >> 20, sizes->max_allocs, sizes->max_stacks, sizes->max_stack_depth,
                               sizes->max_combined, sizes->max_mmaps, allowed >> 20);
}

struct bpf_sizes manager_bpf_sizes(const struct memleakd_config *config)
{
        assert(config);
        return (struct bpf_sizes) {
                .max_targets = config->max_targets,
                .max_allocs = config->max_allocs,
                .max_stacks = config->max_stacks,
                .max_combined = config->max_combined,
                .max_mmaps = config->max_mmaps,
                .max_stack_depth = config->max_stack_depth,
                .n_cpus = (uint32_t)MAX(libbpf_num_possible_cpus(), 1),
        };
}

int manager_bpf_load(const struct bpf_sizes *sizes, struct pins *pins, struct memleak_bpf **ret)
{
        int r = check_map_budget(sizes);

        assert(sizes);
        assert(ret);
        return r < 0 ? r : load(sizes, pins, ret);
}
