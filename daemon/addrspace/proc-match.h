/* SPDX-License-Identifier: GPL-2.0-only */
/* The processes running a given program, found in /proc: by the file they exec'd, or by name. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* The pids of the processes that run now whose name (/proc/PID/comm) is comm, or, comm NULL,
 * whose program file (/proc/PID/exe: the file exec'd, an interpreter's for a script) is the
 * inode (dev, ino); memleakd's own excluded, in a malloc'd *ret of *ret_n (sorted): 0 or -errno
 * (processes that exit meanwhile, or that memleakd may not look at, are left out). */
int proc_match_list(const char *comm, dev_t dev, ino_t ino, pid_t **ret, size_t *ret_n);
