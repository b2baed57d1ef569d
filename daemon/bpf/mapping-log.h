/* SPDX-License-Identifier: GPL-2.0-only */
/* The file mappings BPF records for targets as they make them (record_exec, record_mmap_exit):
 * what names the frames of a program that exits before /proc/PID/maps could be read. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "module-overlay.h"

struct memleak_bpf;
struct mapping_log;

int mapping_log_new(struct memleak_bpf *skel, struct mapping_log **ret);
struct mapping_log *mapping_log_free(struct mapping_log *l);

/* pid's recorded mappings, in no order, dev in makedev() form. */
int mapping_log_read(struct mapping_log *l, pid_t pid, struct recorded_mapping **ret, size_t *n);
/* Forget pid's (at attach, and once its module map is final). Safe from any thread. */
void mapping_log_purge(struct mapping_log *l, pid_t pid);
/* The recording programs are linked while one target needs them (each hold is released once):
 * their sys_exit tracepoint puts every process's system calls on the slow path. */
int mapping_log_hold(struct mapping_log *l);
void mapping_log_release(struct mapping_log *l);
