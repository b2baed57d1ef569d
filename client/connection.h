/* SPDX-License-Identifier: MIT */
/* One conversation with memleakd: connect to its socket, send a request, read its reply. */
#pragma once

#include <cjson/cJSON.h>
#include "protocol.h"

/* How long memleakd may take to answer (a report symbolizes every frame: it can be slow). */
#define CONNECTION_TIMEOUT_MS (120 * 1000)

/* Connect to memleakd's stream socket; returns the fd, or -errno from socket()/connect()
 * (-ENOENT and -ECONNREFUSED mean that nothing listens there). */
int connection_open(const char *socket_path);
/* What a user is told when connection_open() failed with r: a malloc'd message (NULL without
 * memory). */
char *connection_open_error(const char *socket_path, int r);

/* Send req (under a fresh id) and wait up to timeout_ms for its reply, checked with
 * memleak_response_check(). On success *ret_reply holds the whole reply. On failure returns
 * -errno (the daemon's error code, or a local one) and sets *ret_error to a malloc'd message
 * when there is one (NULL otherwise). */
int connection_call(int fd, const struct memleak_request *req, int timeout_ms,
                    cJSON **ret_reply, char **ret_error);
