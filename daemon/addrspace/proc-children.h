/* SPDX-License-Identifier: GPL-2.0-only */
/* The processes a process forked that run now, as /proc/PID/task/TID/children lists them. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Append the pids of one children file's text ("12 34 56 ", separated by spaces) to *pids (a
 * malloc'd array of *n, grown): 0, -EINVAL on a word that is no pid, -ENOMEM. */
int proc_children_parse(const char *text, pid_t **pids, size_t *n);
/* Sort pids and leave each once: how many remain. */
size_t proc_children_unique(pid_t *pids, size_t n);

/* The children of every thread of pid, each once (sorted), into a malloc'd *ret of *ret_n: 0,
 * -ENOENT (gone), -errno. */
int proc_children(pid_t pid, pid_t **ret, size_t *ret_n);
