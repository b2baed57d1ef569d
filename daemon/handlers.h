/* SPDX-License-Identifier: GPL-2.0-only */
/* Validate a request at the edge and dispatch it through the command table. */
#pragma once

#include <stddef.h>
#include <sys/socket.h>
#include <cjson/cJSON.h>

/* server_request_fn for struct manager *userdata. */
cJSON *handlers_dispatch(void *userdata, const struct ucred *peer, const char *line, size_t len);
