/* SPDX-License-Identifier: GPL-2.0-only */
/* The Unix socket's clients: accept them within limits, frame newline-delimited JSON, hand each
 * request on and send its answer, whenever it comes, in order. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
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
/* A connection with no request under way closes after this long without one; a reply not read
 * this long after it was sent closes it too. */
#define SERVER_IDLE_TIMEOUT_USEC (30ull * 1000000ull)
/* A request must be complete this long after its first byte arrived, however it trickles in. */
#define SERVER_REQUEST_TIMEOUT_USEC (10ull * 1000000ull)
/* accept() failing for want of fds (EMFILE, ENFILE, ENOBUFS, ENOMEM): wait this long before
 * trying again, instead of spinning on a socket that stays readable. */
#define SERVER_ACCEPT_BACKOFF_USEC (250ull * 1000ull)

struct server;
/* One request of a client: answered now, or later (work done off the event loop). */
struct server_request;

/* Handle one request line. Answer it with server_request_reply() or _reply_frame(), now or
 * later; the connection reads nothing more meanwhile. A line that cannot be a request (too long)
 * never reaches it. */
typedef void (*server_request_fn)(void *userdata, struct server_request *req, const char *line, size_t len);

enum server_event {
        SERVER_EVENT_ACCEPT_PAUSED,     /* accept() failed for want of fds (error): paused */
        SERVER_EVENT_ACCEPT_FAILED,     /* accept() failed otherwise (error), ignored */
        SERVER_EVENT_CLIENT_DROPPED,    /* a client could not be watched (error) */
};
/* What the owner may want to log; the server itself does not. */
typedef void (*server_event_fn)(void *userdata, enum server_event event, int error);

int server_new(sd_event *e, int listen_fd, server_request_fn on_request, server_event_fn on_event, void *userdata,
               struct server **ret);
struct server *server_free(struct server *s);
unsigned server_connections(const struct server *s);

/* Who sent the request. */
const struct ucred *server_request_peer(const struct server_request *r);
/* Whether its sender is in group gid (its own, or among the first 64 of its supplementary). */
bool server_request_peer_in_group(const struct server_request *r, gid_t gid);
/* Answer r with reply (taken; NULL: out of memory, the connection is closed). r is gone after
 * this; if its client left meanwhile, the answer is dropped. */
void server_request_reply(struct server_request *r, cJSON *reply);
/* Answer r with an encoded frame (memleak_frame_encode()), taken. */
void server_request_reply_frame(struct server_request *r, char *frame, size_t len);
/* The reply to r, when it comes, carries warnings (a JSON array, copied) as "warnings". */
void server_request_set_warnings(struct server_request *r, const cJSON *warnings);

/* What the limits cost clients so far, for status. */
struct server_stats {
        uint64_t refused_full;          /* connections refused: no slot (per uid, or at all) */
        uint64_t timed_out;             /* closed: a request or reply not done in time, or idle */
        uint64_t accept_backoffs;       /* accept() failed for want of fds: paused */
};
void server_get_stats(const struct server *s, struct server_stats *ret);
