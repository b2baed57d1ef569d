/* SPDX-License-Identifier: GPL-2.0-only */
/* The requests the manager answers: validated at the edge, checked against who asks, dispatched
 * through the command table, the reply serialised. Thin: the work is the manager's. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

struct manager;
struct server_request;

/* server_request_fn, for a struct manager. */
void manager_requests_dispatch(void *userdata, struct server_request *req, const char *line, size_t len);

/* pid's previous probes are gone: an attach waiting for that goes on. */
/* Answer the attaches whose program's unwind tables are all built now. */
void manager_requests_tables_loaded(struct manager *m);
void manager_requests_pid_idle(struct manager *m, pid_t pid);

/* Answer what still waits, at shutdown. */
void manager_requests_done(struct manager *m);
