/* SPDX-License-Identifier: GPL-2.0-only */
/* A number from a process's /proc/PID/status ("Tgid:", "TracerPid:", ...). */
#pragma once

#include <sys/types.h>

/* The value of field (its name with the colon, as the file spells it) for pid, a process or a
 * thread: 0 and *ret, or -ENOENT when pid or the field is not there (-errno reading the file). */
int proc_status_int(pid_t pid, const char *field, int *ret);

/* pid's number in its own pid namespace, the one it knows itself by (the last of "NSpid:"):
 * 0 and *ret, -ENOENT when pid is gone, -errno. */
int proc_status_ns_pid(pid_t pid, pid_t *ret);
