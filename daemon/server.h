/* SPDX-License-Identifier: GPL-2.0-only */
/* The Unix socket: accept clients, frame newline-delimited JSON, enforce limits, answer in order. */
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include <cjson/cJSON.h>

#define SERVER_MAX_CONNECTIONS 64
#define SERVER_IDLE_TIMEOUT_USEC (30ull * 1000000ull)

/* Answer one request line; returns the response (owned by the caller) or NULL on OOM. A line
 * that cannot be a request (too long) never reaches it. */
typedef cJSON *(*server_request_fn)(void *userdata, const struct ucred *peer, const char *line, size_t len);

struct server;

int server_new(sd_event *e, int listen_fd, server_request_fn fn, void *userdata, struct server **ret);
struct server *server_free(struct server *s);
unsigned server_connections(const struct server *s);

/* The listening socket: the one systemd passed us, else bind path (its directory is created
 * 0755 if missing and refused if writable by others). Returns the fd or -errno. */
int server_open_listen_fd(const char *path, mode_t mode, const char *group, char **error);
