/* SPDX-License-Identifier: GPL-2.0-only */
/* Mount tracefs, bpffs and cgroup2 when they are absent: uprobes, pinning and watching units and
 * cgroups may need them. */
#pragma once

/* Where cgroup2 is mounted when none is (the tests mount it there too). */
#define MOUNTS_CGROUP2_FALLBACK_PARENT "/run/memleakd"
#define MOUNTS_CGROUP2_FALLBACK MOUNTS_CGROUP2_FALLBACK_PARENT "/cgroup2"

/* Failures are logged and ignored: uprobes attach through perf_event_open without either. */
void mounts_ensure(void);
