/* SPDX-License-Identifier: GPL-2.0-only */
/* The file a process runs, as /proc/PID/exe names it. */
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

/* stat() of the program pid runs: 0, or -errno (-ENOENT: pid is gone). */
int proc_exe_stat(pid_t pid, struct stat *ret);
