/* SPDX-License-Identifier: GPL-2.0-only */
/* Mount tracefs and bpffs when they are absent: uprobes and pinning may need them. */
#pragma once

/* Failures are logged and ignored: uprobes attach through perf_event_open without either. */
void mounts_ensure(void);
