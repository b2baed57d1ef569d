/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel target: tp_btf programs on the kmem and percpu tracepoints, kernel stacks via kallsyms. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf-types.h"
#include "report.h"
#include "targets.h"

struct bpf_object;

/* The kernel target's pid in reports and in the daemon's target list (its tgid in the maps). */
#define KERNEL_TARGET_PID ((pid_t)MEMLEAK_KERNEL_TGID)
#define KERNEL_TARGET_COMM "[kernel]"

/* A kernel's symbols may change (modules, BPF programs): a frame no table knows reloads
 * /proc/kallsyms, at most this often. */
#define KERNEL_SYMBOLS_REFRESH_USEC (10ull * 1000000ull)

struct kernel_target_params {
        struct target_config filter;    /* sizes, and the allocating pid/comm (0 / "": any) */
        uint32_t ring_depth;
};

/* Before the BPF object is loaded: turn off the programs of tracepoints this kernel lacks or
 * passes fewer arguments to, so the rest still load (and the uprobes with them). */
void kernel_target_prepare(struct bpf_object *obj);

/* Link the kernel programs and start recording (pid KERNEL_TARGET_PID). On failure returns
 * -errno and a malloc'd message for the client in *error. target_stop() detaches it. */
int kernel_target_attach(const struct target_env *env, const struct kernel_target_params *p,
                         struct target **ret, char **error);

/* Resolve a kernel stack's return address through kallsyms into ret[0]: symbol+offset and
 * "[kernel]" or "[module]". Returns 1, or 0 when no symbol covers it (the address is shown). */
size_t kernel_target_resolve(struct target *t, uint64_t addr, struct frame_symbol *ret, size_t max);

/* Free what only the kernel target holds; accepts NULL. */
struct kernel_symbols *kernel_symbols_free(struct kernel_symbols *k);
