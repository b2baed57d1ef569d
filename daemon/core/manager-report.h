/* SPDX-License-Identifier: GPL-2.0-only */
/* A report request: what the event loop owns copied into a job (targets' rows, mappings,
 * trends), the job built on the worker thread, its reply sent when done. */
#pragma once

struct manager;
struct server_request;
struct memleak_request;
struct reach_result;
struct target;

/* Answers sreq later; -errno (with *error) when the request is refused at once. */
int manager_report_start(struct manager *m, struct server_request *sreq, const struct memleak_request *req,
                         char **error);

/* t's scan at its exit (memleakctl run: the program's, a child's it followed, or the one its kept
 * report holds after a restart) into *ret (a copy; NULL: none, yet), or why it has none into
 * *ret_why (malloc'd; NULL: nothing to say). 0, -ENOMEM. */
int manager_report_exit_scan(const struct manager *m, const struct target *t, struct reach_result **ret,
                             char **ret_why);
