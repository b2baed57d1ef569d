/* SPDX-License-Identifier: GPL-2.0-only */
/* The Unix socket: accept clients, frame newline-delimited JSON, enforce limits, answer in order. */
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include <cjson/cJSON.h>

/* Connections at once; those of any uid but root's leave SERVER_ROOT_RESERVED of them free, and
 * each such uid may hold SERVER_MAX_CONNECTIONS_PER_USER: no socket_group member can lock root
 * (or another member) out. */
#define SERVER_MAX_CONNECTIONS 64
#define SERVER_ROOT_RESERVED 8
#define SERVER_MAX_CONNECTIONS_PER_USER 8
/* A connection with no request under way closes after this long without one. */
#define SERVER_IDLE_TIMEOUT_USEC (30ull * 1000000ull)
/* A request must be complete this long after its first byte arrived, however it trickles in;
 * and a reply must have been read by then too. */
#define SERVER_REQUEST_TIMEOUT_USEC (10ull * 1000000ull)
/* accept() failing for want of fds (EMFILE, ENFILE, ENOBUFS, ENOMEM): wait this long before
 * trying again, instead of spinning on a socket that stays readable. */
#define SERVER_ACCEPT_BACKOFF_USEC (250ull * 1000ull)

/* Answer one request line; returns the response (owned by the caller) or NULL on OOM. A line
 * that cannot be a request (too long) never reaches it. */
typedef cJSON *(*server_request_fn)(void *userdata, const struct ucred *peer, const char *line, size_t len);

struct server;

int server_new(sd_event *e, int listen_fd, server_request_fn fn, void *userdata, struct server **ret);
struct server *server_free(struct server *s);
unsigned server_connections(const struct server *s);

/* What the limits cost clients so far, for status. */
struct server_stats {
        uint64_t refused_full;          /* connections refused: no slot (per uid, or at all) */
        uint64_t timed_out;             /* closed: a request or reply not done in time, or idle */
        uint64_t accept_backoffs;       /* accept() failed for want of fds: paused */
};
void server_get_stats(const struct server *s, struct server_stats *ret);

/* The listening socket: the one systemd passed us, else bind path (its directory is created
 * 0755 if missing and refused if writable by others). Returns the fd or -errno. */
int server_open_listen_fd(const char *path, mode_t mode, const char *group, char **error);
