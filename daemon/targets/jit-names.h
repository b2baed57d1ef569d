/* SPDX-License-Identifier: GPL-2.0-only */
/* The names a running process gives its JIT code: its perf map, found as it sees it. */
#pragma once

#include <sys/types.h>

struct perf_map;

/* The perf map of pid (perf-map.h): /tmp/perf-N.map inside its root, N its pid in its own
 * namespace, its user's or root's. -ENOENT when it writes none or is gone, -errno. */
int jit_names_load(pid_t pid, struct perf_map **ret);

/* Where a process's perf map is, taken while it runs: read once it is gone (a JIT runtime leaves
 * its map behind), its root no longer reachable through /proc. */
struct jit_names_source {
        int root_fd;            /* -EBADF: none */
        pid_t ns_pid;
        uid_t owner;
};

int jit_names_source_open(pid_t pid, struct jit_names_source *ret);
void jit_names_source_done(struct jit_names_source *s);
/* The perf map as jit_names_load() finds it, from a source taken earlier. */
int jit_names_load_from(const struct jit_names_source *s, struct perf_map **ret);
