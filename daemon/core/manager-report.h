/* SPDX-License-Identifier: GPL-2.0-only */
/* A report request: what the event loop owns copied into a job (targets' rows, mappings,
 * trends), the job built on the worker thread, its reply sent when done. */
#pragma once

struct manager;
struct server_request;
struct memleak_request;

/* Answers sreq later; -errno (with *error) when the request is refused at once. */
int manager_report_start(struct manager *m, struct server_request *sreq, const struct memleak_request *req,
                         char **error);
