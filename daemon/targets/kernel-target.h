/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel target: tp_btf programs on the kmem and percpu tracepoints, kernel stacks via kallsyms. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf-types.h"
#include "target.h"

struct bpf_object;

/* The kernel target's pid in reports and in the daemon's target list (its tgid in the maps). */
#define KERNEL_TARGET_PID ((pid_t)MEMLEAK_KERNEL_TGID)
#define KERNEL_TARGET_COMM "[kernel]"

struct kernel_target_params {
        struct target_config filter;    /* sizes, and the allocating pid/comm (0 / "": any) */
        uint32_t ring_depth;
};

/* The kmem and percpu tracepoints the kernel target links (in pairs). */
#define KERNEL_TRACEPOINTS_MAX 8

/* A tracepoint this kernel lacks (-ENOENT) or passes fewer arguments to (-EINVAL). */
struct kernel_tracepoint_gap {
        const char *name;               /* "kmem:kmalloc" */
        int error;
};

/* Before the BPF object is loaded: turn off the programs of tracepoints this kernel lacks or
 * passes fewer arguments to (with their pair), so the rest still load (and the uprobes with
 * them). Returns how many it found missing, described in gaps[]. */
size_t kernel_target_prepare(struct bpf_object *obj, struct kernel_tracepoint_gap gaps[KERNEL_TRACEPOINTS_MAX]);

/* Link the kernel programs and start recording (pid KERNEL_TARGET_PID). On failure returns
 * -errno and a malloc'd message for the client in *error. target_stop() detaches it. */
int kernel_target_attach(const struct target_env *env, const struct kernel_target_params *p,
                         struct target **ret, char **error);

/* Take back the kernel target an earlier daemon left recording (its links pinned, at adopt's
 * slot): its settings read back from BPF, its links reopened from their pins, recording at once.
 * On failure returns -errno and a malloc'd message in *error (the pins are left to the caller's
 * sweep). */
int kernel_target_adopt(const struct target_env *env, uint32_t ring_depth, const struct target_adoption *adopt,
                        struct target **ret, char **error);
