/* SPDX-License-Identifier: GPL-2.0-only */
/* uprobe_multi links (Linux 6.6) by raw bpf(2), which neither libbpf 1.1 nor the 6.1 uapi headers
 * know: one link places a program at many offsets of one file, and removes them all with one
 * grace period, where classic perf-event uprobes cost one each (~0.1 s per probe on detach). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UPROBE_MULTI_ATTACH_TYPE 48U    /* BPF_TRACE_UPROBE_MULTI */
#define UPROBE_SESSION_ATTACH_TYPE 57U  /* BPF_TRACE_UPROBE_SESSION (Linux 6.12) */

/* Link prog_fd at each of offsets in path (any path the kernel resolves, /proc/self/fd/N
 * included), as return probes if is_return; only for pid's threads unless pid is 0. cookies:
 * NULL, or each offset's attach cookie (bpf_get_attach_cookie()). The link's fd, or -errno. */
int uprobe_multi_link(int prog_fd, bool is_return, pid_t pid, const char *path, const uint64_t *offsets,
                      const uint64_t *cookies, size_t n);

/* The same for an uprobe session (Linux 6.12): prog_fd runs at each offset's entry and, when it
 * returned 0 there, at the call's return. */
int uprobe_multi_session_link(int prog_fd, pid_t pid, const char *path, const uint64_t *offsets, const uint64_t *cookies,
                        size_t n);

/* A program that does nothing (returns 0), loaded to be linked as above: its fd, or -errno. */
int uprobe_multi_empty_program(void);

/* Whether this kernel has uprobe_multi links; uprobe sessions. */
bool uprobe_multi_supported(void);
bool uprobe_multi_session_supported(void);
