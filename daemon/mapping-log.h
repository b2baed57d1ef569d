/* SPDX-License-Identifier: GPL-2.0-only */
/* The file mappings BPF recorded for a target as it made them (record_file_mapping). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "module-overlay.h"

struct memleak_bpf;

/* pid's recorded mappings, in no order, dev in makedev() form. */
int mapping_log_read(struct memleak_bpf *skel, pid_t pid, struct recorded_mapping **ret, size_t *n);
/* Forget pid's (at attach, and once its module map is final). */
void mapping_log_purge(struct memleak_bpf *skel, pid_t pid);
/* The recording programs are linked while one target needs them (each hold is released once):
 * their sys_exit tracepoint puts every process's system calls on the slow path. */
int mapping_log_hold(struct memleak_bpf *skel);
void mapping_log_release(void);

/* How many mappings of all targets did not fit in the map since the daemon started. */
uint64_t mapping_log_lost(struct memleak_bpf *skel);
