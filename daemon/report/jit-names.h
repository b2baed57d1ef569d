/* SPDX-License-Identifier: GPL-2.0-only */
/* The names a running process gives its JIT code: its perf map, found as it sees it. */
#pragma once

#include <sys/types.h>

struct perf_map;

/* The perf map of pid (perf-map.h): /tmp/perf-N.map inside its root, N its pid in its own
 * namespace, its user's or root's. -ENOENT when it writes none or is gone, -errno. */
int jit_names_load(pid_t pid, struct perf_map **ret);
