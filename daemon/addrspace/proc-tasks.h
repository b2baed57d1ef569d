/* SPDX-License-Identifier: GPL-2.0-only */
/* The threads of a process, as /proc/PID/task lists them. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* The thread ids of pid now, into a malloc'd *ret of *ret_n (in the directory's order; a thread
 * may start or end as it is read): 0, -ESRCH (gone), -ENOMEM, -errno. */
int proc_tasks_list(pid_t pid, pid_t **ret, size_t *ret_n);
