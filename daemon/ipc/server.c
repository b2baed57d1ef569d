/* SPDX-License-Identifier: GPL-2.0-only */
/* The Unix socket's clients: accept them within limits, frame newline-delimited JSON, hand each
 * request on and send its answer, whenever it comes, in order. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "json-util.h"
#include "macro.h"
#include "protocol.h"
#include "server.h"

/* What a connection waits for, each with its own deadline (armed when the phase begins, never
 * pushed back by bytes trickling in). */
enum connection_phase {
        PHASE_NONE,             /* new, or just answered: the next phase's deadline is armed anew */
        PHASE_IDLE,             /* the next request: SERVER_IDLE_TIMEOUT_USEC */
        PHASE_REQUEST,          /* the rest of a request begun: SERVER_REQUEST_TIMEOUT_USEC */
        PHASE_WORKING,          /* its answer, being made: no deadline (the daemon's own work) */
        PHASE_REPLY,            /* the client reading its answer: SERVER_IDLE_TIMEOUT_USEC */
};

/* The peer's supplementary groups kept (SO_PEERGROUPS): those past it are not looked at. */
#define PEER_GROUPS_MAX 64

struct peer_groups {
        gid_t gids[PEER_GROUPS_MAX];
        size_t n;
};

struct connection {
        struct server *server;
        int fd;
        struct ucred peer;
        struct peer_groups groups;
        sd_event_source *io;
        sd_event_source *deadline;
        enum connection_phase phase;
        struct server_request *pending;         /* the request being answered */
        bool processing;                        /* inside connection_process() */
        bool broken;                            /* an answer could not be queued: close */
        char *in;
        size_t in_len, in_cap;
        char *out;
        size_t out_len, out_off;
        bool close_after_flush;
        struct connection *next, *prev;
};

struct server_request {
        struct connection *conn;                /* NULL once the client left */
        struct ucred peer;
        struct peer_groups groups;
        char *warnings;                         /* a JSON array the reply carries; NULL: none */
};

struct server {
        sd_event *event;
        int listen_fd;
        sd_event_source *listen_source;
        server_request_fn on_request;
        server_event_fn on_event;
        void *userdata;
        struct connection *conns;
        unsigned n_conns;
        sd_event_source *accept_retry;          /* armed while accept() is paused (EMFILE) */
        struct server_stats stats;
};

static void event(struct server *srv, enum server_event e, int error)
{
        if (srv->on_event)
                srv->on_event(srv->userdata, e, error);
}

static struct connection *connection_free(struct connection *c)
{
        if (!c)
                return NULL;
        if (c->server) {
                if (c->prev)
                        c->prev->next = c->next;
                else
                        c->server->conns = c->next;
                if (c->next)
                        c->next->prev = c->prev;
                c->server->n_conns--;
        }
        if (c->pending)
                c->pending->conn = NULL;        /* its answer, when it comes, is dropped */
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->deadline);
        closep(&c->fd);
        free(c->in);
        free(c->out);
        free(c);
        return NULL;
}

static bool connection_replying(const struct connection *c)
{
        return c->out_off < c->out_len;
}

/* Watch for what the phase needs, and arm its deadline when it begins. */
static int connection_set_phase(struct connection *c)
{
        enum connection_phase phase = c->pending ? PHASE_WORKING : connection_replying(c) ? PHASE_REPLY :
                                      c->in_len > 0 ? PHASE_REQUEST : PHASE_IDLE;
        uint32_t events = phase == PHASE_REPLY ? EPOLLOUT :
                          phase == PHASE_WORKING || c->close_after_flush ? 0 : EPOLLIN;
        uint64_t now;
        int r;

        /* Read the next request only once the last answer is out. */
        r = sd_event_source_set_io_events(c->io, events);
        if (r < 0 || phase == c->phase)
                return r;
        c->phase = phase;
        if (phase == PHASE_WORKING)
                return sd_event_source_set_enabled(c->deadline, SD_EVENT_OFF);
        if (sd_event_now(c->server->event, CLOCK_MONOTONIC, &now) < 0)
                return -EIO;
        r = sd_event_source_set_time(c->deadline, now + (phase == PHASE_REQUEST ? SERVER_REQUEST_TIMEOUT_USEC
                                                                                 : SERVER_IDLE_TIMEOUT_USEC));
        if (r >= 0)
                r = sd_event_source_set_enabled(c->deadline, SD_EVENT_ONESHOT);
        return r;
}

static int connection_queue_frame(struct connection *c, const char *frame, size_t len)
{
        char *n = realloc(c->out, c->out_len + len);

        if (!n)
                return -ENOMEM;
        c->out = n;
        memcpy(c->out + c->out_len, frame, len);
        c->out_len += len;
        return 0;
}

static int connection_queue(struct connection *c, const cJSON *msg)
{
        _cleanup_free_ char *frame = NULL;
        size_t len;

        frame = memleak_frame_encode(msg, &len);
        if (!frame)
                return -ENOMEM;
        return connection_queue_frame(c, frame, len);
}

/* Write what the socket takes; returns < 0 when the connection is finished (error, or done and
 * closing), 1 when everything is out, 0 when some waits. */
static int connection_flush(struct connection *c)
{
        while (connection_replying(c)) {
                ssize_t k = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (k < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return 0;
                        return -errno;  /* the client hung up */
                }
                c->out_off += k;
        }
        free(c->out);
        c->out = NULL;
        c->out_len = c->out_off = 0;
        return c->close_after_flush ? -ECONNRESET : 1;
}

static int connection_answer_error(struct connection *c, int error, const char *message)
{
        _cleanup_json_ cJSON *reply = memleak_response_new_error(0, error, message);

        if (!reply)
                return -ENOMEM;
        c->close_after_flush = true;
        return connection_queue(c, reply);
}

/* Drop the answered line (the first in the buffer). */
static void connection_consume_line(struct connection *c)
{
        char *nl = memchr(c->in, '\n', c->in_len);
        size_t len = nl ? (size_t)(nl - c->in + 1) : c->in_len;

        memmove(c->in, c->in + len, c->in_len - len);
        c->in_len -= len;
}

/* Hand the complete requests in the input buffer on one at a time, each only once the answer
 * before it is out: a client that sends many and reads none holds one answer, not all of them.
 * Returns < 0 when the connection is finished. */
static int connection_process(struct connection *c)
{
        int r = 0;

        c->processing = true;
        while (!c->close_after_flush && !c->pending && !c->broken) {
                char *nl;

                if (connection_replying(c)) {
                        r = connection_flush(c);
                        if (r <= 0)
                                break;  /* the socket is full (EPOLLOUT goes on), or the client left */
                }
                nl = memchr(c->in, '\n', c->in_len);
                if (!nl) {
                        if (c->in_len < MEMLEAK_MAX_REQUEST_BYTES)
                                break;
                        /* No newline within the limit: the frame boundary is lost, so answer and close. */
                        r = connection_answer_error(c, E2BIG, "Request larger than 65536 bytes");
                        if (r < 0)
                                break;
                        continue;
                }
                c->pending = calloc(1, sizeof(*c->pending));
                if (!c->pending) {
                        r = -ENOMEM;
                        break;
                }
                *c->pending = (struct server_request) { .conn = c, .peer = c->peer, .groups = c->groups };
                c->phase = PHASE_NONE;          /* what follows gets its own deadline */
                /* Answered now (server_request_reply() inside) or later: the line stays until then. */
                c->server->on_request(c->server->userdata, c->pending, c->in, nl - c->in + 1);
        }
        c->processing = false;
        if (r >= 0 && !c->broken && connection_replying(c))
                r = connection_flush(c);
        if (r < 0 || c->broken)
                return r < 0 ? r : -ENOMEM;
        if (c->close_after_flush && !connection_replying(c))
                return -ECONNRESET;
        return connection_set_phase(c);
}

/* frame (a reply: a JSON object and its newline) with "warnings": warnings as its last member;
 * frame as it was when there is no memory for more (the reply goes without them). */
static char *frame_add_warnings(char *frame, size_t *len, const char *warnings)
{
        static const char key[] = ",\"" F_WARNINGS "\":";
        size_t n = *len, w = strlen(warnings), grown = n + sizeof(key) - 1 + w;
        char *more;

        /* a reply always has members ("v" first): the key goes after the last one */
        if (n < 3 || frame[n - 1] != '\n' || frame[n - 2] != '}' || frame[n - 3] == '{')
                return frame;
        more = realloc(frame, grown + 1);
        if (!more)
                return frame;
        memcpy(more + n - 2, key, sizeof(key) - 1);
        memcpy(more + n - 2 + sizeof(key) - 1, warnings, w);
        memcpy(more + grown - 2, "}\n", 3);
        *len = grown;
        return more;
}

void server_request_set_warnings(struct server_request *r, const cJSON *warnings)
{
        assert(r);
        if (!warnings)
                return;
        free(r->warnings);
        r->warnings = cJSON_PrintUnformatted(warnings);        /* NULL: the reply goes without */
}

static void request_answer(struct server_request *r, char *frame, size_t len)
{
        struct connection *c = r->conn;
        int k;

        if (frame && r->warnings)
                frame = frame_add_warnings(frame, &len, r->warnings);
        free(r->warnings);
        free(r);
        if (!c) {
                free(frame);
                return;         /* the client left */
        }
        c->pending = NULL;
        if (frame && !connection_replying(c)) {
                /* Nothing else waits to go out: send the frame itself, a large report uncopied. */
                free(c->out);
                c->out = frame;
                c->out_len = len;
                c->out_off = 0;
                k = 0;
        } else {
                k = frame ? connection_queue_frame(c, frame, len) : -ENOMEM;
                free(frame);
        }
        if (k < 0) {
                c->broken = true;
                if (!c->processing)
                        connection_free(c);
                return;
        }
        connection_consume_line(c);
        /* Answered from within connection_process(): it goes on by itself. Answered later: send it
         * and go on with the next request now. */
        if (!c->processing && connection_process(c) < 0)
                connection_free(c);
}

const struct ucred *server_request_peer(const struct server_request *r)
{
        assert(r);
        return &r->peer;
}

bool server_request_peer_in_group(const struct server_request *r, gid_t gid)
{
        assert(r);
        if (r->peer.gid == gid)
                return true;
        for (size_t i = 0; i < r->groups.n; i++)
                if (r->groups.gids[i] == gid)
                        return true;
        return false;
}

/* The supplementary groups of the peer on fd, the first PEER_GROUPS_MAX of them; none when the
 * kernel will not say. */
static void read_peer_groups(int fd, struct peer_groups *ret)
{
        socklen_t len = sizeof(ret->gids);
        _cleanup_free_ gid_t *all = NULL;

        *ret = (struct peer_groups) {};
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, ret->gids, &len) == 0) {
                ret->n = len / sizeof(gid_t);
                return;
        }
        if (errno != ERANGE || !(all = malloc(len)))
                return;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, all, &len) < 0)
                return;
        ret->n = MIN(len / sizeof(gid_t), (size_t)PEER_GROUPS_MAX);
        memcpy(ret->gids, all, ret->n * sizeof(gid_t));
}

void server_request_reply(struct server_request *r, cJSON *reply)
{
        char *frame = NULL;
        size_t len = 0;

        assert(r);
        if (reply)
                frame = memleak_frame_encode(reply, &len);
        cJSON_Delete(reply);
        request_answer(r, frame, len);
}

void server_request_reply_frame(struct server_request *r, char *frame, size_t len)
{
        assert(r);
        request_answer(r, frame, len);
}

static int connection_read(struct connection *c)
{
        if (c->in_cap - c->in_len < 4096) {
                size_t ncap = MIN((size_t)MEMLEAK_MAX_REQUEST_BYTES + 4096, MAX(c->in_cap * 2, (size_t)8192));
                char *n;

                if (ncap <= c->in_cap)
                        return -E2BIG;
                n = realloc(c->in, ncap);
                if (!n)
                        return -ENOMEM;
                c->in = n;
                c->in_cap = ncap;
        }
        for (;;) {
                ssize_t k = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, MSG_DONTWAIT);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return -errno;
                }
                if (k == 0)
                        return -ECONNRESET;     /* hung up, maybe mid-request: nothing to answer */
                c->in_len += k;
                return 1;
        }
}

static int on_connection_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct connection *c = userdata;
        int r = 0;

        if (revents & (EPOLLERR | EPOLLHUP) && !(revents & EPOLLIN)) {
                connection_free(c);
                return 0;
        }
        if (revents & EPOLLOUT) {
                r = connection_flush(c);
                if (r > 0)
                        r = connection_process(c);      /* a request read with the last one */
                else if (r == 0)
                        r = connection_set_phase(c);
        }
        if (r >= 0 && (revents & EPOLLIN)) {
                r = connection_read(c);
                if (r > 0)
                        r = connection_process(c);
        }
        if (r < 0)
                connection_free(c);     /* hung up, or broke a rule: nothing to answer */
        return 0;
}

static int on_connection_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct connection *c = userdata;

        c->server->stats.timed_out++;
        connection_free(c);
        return 0;
}

static int on_accept_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct server *srv = userdata;

        srv->accept_retry = sd_event_source_disable_unref(srv->accept_retry);
        (void)sd_event_source_set_enabled(srv->listen_source, SD_EVENT_ON);
        return 0;
}

/* accept() fails while the daemon has no fd to spare: the socket stays readable, so wait. */
static void pause_accepting(struct server *srv, int error)
{
        int r;

        if (srv->accept_retry)
                return;
        srv->stats.accept_backoffs++;
        event(srv, SERVER_EVENT_ACCEPT_PAUSED, error);
        r = sd_event_add_time_relative(srv->event, &srv->accept_retry, CLOCK_MONOTONIC,
                                       SERVER_ACCEPT_BACKOFF_USEC, 0, on_accept_retry, srv);
        if (r >= 0)
                (void)sd_event_source_set_enabled(srv->listen_source, SD_EVENT_OFF);
}

static unsigned connections_of(const struct server *srv, uid_t uid)
{
        unsigned n = 0;

        for (const struct connection *c = srv->conns; c; c = c->next)
                n += c->peer.uid == uid;
        return n;
}

/* Why peer may not have one more connection (NULL: it may): root up to the total, any other uid
 * up to its own share and never into the slots kept for root. */
static const char *connection_refusal(const struct server *srv, uid_t uid)
{
        if (srv->n_conns >= SERVER_MAX_CONNECTIONS)
                return "Too many connections to memleakd";
        if (uid == 0)
                return NULL;
        if (srv->n_conns - connections_of(srv, 0) >= SERVER_MAX_CONNECTIONS - SERVER_ROOT_RESERVED)
                return "Too many connections to memleakd (the rest are kept for root)";
        if (connections_of(srv, uid) >= SERVER_MAX_CONNECTIONS_PER_USER)
                return "Too many connections from this user (8 at most)";
        return NULL;
}

/* Tell a client past the limits why (it may be about to send), then close it. */
static int connection_refuse(struct connection *c, const char *refusal)
{
        int r;

        c->server->stats.refused_full++;
        r = connection_answer_error(c, EUSERS, refusal);
        if (r >= 0)
                r = connection_flush(c);
        return r == -EPIPE ? -ECONNRESET : r;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct server *srv = userdata;
        struct connection *c;
        socklen_t len = sizeof(struct ucred);
        const char *refusal;
        int cfd, r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                        pause_accepting(srv, errno);
                else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        event(srv, SERVER_EVENT_ACCEPT_FAILED, errno);
                return 0;
        }
        c = calloc(1, sizeof(*c));
        if (!c) {
                close(cfd);
                return 0;
        }
        c->fd = cfd;
        if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &c->peer, &len) < 0) {
                connection_free(c);
                return 0;
        }
        read_peer_groups(cfd, &c->groups);
        refusal = connection_refusal(srv, c->peer.uid);
        c->server = srv;
        c->next = srv->conns;
        if (srv->conns)
                srv->conns->prev = c;
        srv->conns = c;
        srv->n_conns++;
        r = sd_event_add_io(srv->event, &c->io, cfd, EPOLLIN, on_connection_io, c);
        if (r >= 0)
                r = sd_event_add_time(srv->event, &c->deadline, CLOCK_MONOTONIC, UINT64_MAX, 0,
                                      on_connection_deadline, c);
        if (r >= 0 && refusal)
                r = connection_refuse(c, refusal);
        if (r >= 0)
                r = connection_set_phase(c);
        if (r < 0) {
                if (r != -ECONNRESET)
                        event(srv, SERVER_EVENT_CLIENT_DROPPED, -r);
                connection_free(c);
        }
        return 0;
}

int server_new(sd_event *e, int listen_fd, server_request_fn on_request, server_event_fn on_event, void *userdata,
               struct server **ret)
{
        struct server *s = calloc(1, sizeof(*s));
        int r;

        assert(e);
        assert(on_request);
        assert(ret);
        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(e);
        s->listen_fd = listen_fd;
        s->on_request = on_request;
        s->on_event = on_event;
        s->userdata = userdata;
        r = sd_event_add_io(e, &s->listen_source, listen_fd, EPOLLIN, on_accept, s);
        if (r >= 0)
                r = sd_event_source_set_description(s->listen_source, "server-accept");
        if (r < 0) {
                s->listen_fd = -1;      /* the caller still owns it */
                server_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

struct server *server_free(struct server *s)
{
        if (!s)
                return NULL;
        while (s->conns)
                connection_free(s->conns);
        sd_event_source_disable_unref(s->accept_retry);
        sd_event_source_disable_unref(s->listen_source);
        closep(&s->listen_fd);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}

unsigned server_connections(const struct server *s)
{
        assert(s);
        return s->n_conns;
}

void server_get_stats(const struct server *s, struct server_stats *ret)
{
        assert(s);
        assert(ret);
        *ret = s->stats;
}
