/* SPDX-License-Identifier: GPL-2.0-only */
/* The Unix socket: accept clients, frame newline-delimited JSON, enforce limits, answer in order. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "util.h"
#include "protocol.h"
#include "server.h"

/* What a connection waits for, each with its own deadline (armed when the phase begins, never
 * pushed back by bytes trickling in). */
enum connection_phase {
        PHASE_NONE,             /* just answered, or new: the next phase's deadline is armed anew */
        PHASE_IDLE,             /* the next request: SERVER_IDLE_TIMEOUT_USEC */
        PHASE_REQUEST,          /* the rest of a request begun: SERVER_REQUEST_TIMEOUT_USEC */
        PHASE_REPLY,            /* the client reading its reply: SERVER_IDLE_TIMEOUT_USEC */
};

struct connection {
        struct server *server;
        int fd;
        struct ucred peer;
        sd_event_source *io;
        sd_event_source *deadline;
        enum connection_phase phase;
        char *in;
        size_t in_len, in_cap;
        char *out;
        size_t out_len, out_off;
        bool close_after_flush;
        struct connection *next, *prev;
};

struct server {
        sd_event *event;
        int listen_fd;
        sd_event_source *listen_source;
        server_request_fn fn;
        void *userdata;
        struct connection *conns;
        unsigned n_conns;
        sd_event_source *accept_retry;  /* armed while accept() is paused (EMFILE) */
        struct server_stats stats;
};

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
        enum connection_phase phase = connection_replying(c) ? PHASE_REPLY :
                                      c->in_len > 0 ? PHASE_REQUEST : PHASE_IDLE;
        uint64_t now;
        int r;

        /* Read the next request only once the last answer is out. */
        r = sd_event_source_set_io_events(c->io, connection_replying(c) ? EPOLLOUT :
                                                 c->close_after_flush ? 0 : EPOLLIN);
        if (r < 0 || phase == c->phase)
                return r;
        c->phase = phase;
        if (sd_event_now(c->server->event, CLOCK_MONOTONIC, &now) < 0)
                return -EIO;
        return sd_event_source_set_time(c->deadline, now + (phase == PHASE_REQUEST ? SERVER_REQUEST_TIMEOUT_USEC
                                                                                     : SERVER_IDLE_TIMEOUT_USEC));
}

static int connection_queue(struct connection *c, const cJSON *msg)
{
        _cleanup_free_ char *frame = NULL;
        size_t len;
        char *n;

        frame = memleak_frame_encode(msg, &len);
        if (!frame)
                return -ENOMEM;
        n = realloc(c->out, c->out_len + len);
        if (!n)
                return -ENOMEM;
        c->out = n;
        memcpy(c->out + c->out_len, frame, len);
        c->out_len += len;
        return 0;
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

/* Answer the complete requests in the input buffer one at a time, each only once the reply before
 * it is out: a client that sends many and reads none holds one reply, not all of them. */
static int connection_process(struct connection *c)
{
        int r;

        while (!c->close_after_flush && !connection_replying(c)) {
                char *nl = memchr(c->in, '\n', c->in_len);
                _cleanup_json_ cJSON *reply = NULL;
                size_t len;

                if (!nl) {
                        if (c->in_len < MEMLEAK_MAX_REQUEST_BYTES)
                                break;
                        /* No newline within the limit: the frame boundary is lost, so answer and close. */
                        r = connection_answer_error(c, E2BIG, "Request larger than 65536 bytes");
                } else {
                        len = nl - c->in + 1;
                        reply = c->server->fn(c->server->userdata, &c->peer, c->in, len);
                        if (!reply)
                                return -ENOMEM;
                        memmove(c->in, c->in + len, c->in_len - len);
                        c->in_len -= len;
                        c->phase = PHASE_NONE;  /* a request done: what follows gets its own deadline */
                        r = connection_queue(c, reply);
                }
                if (r < 0)
                        return r;
                r = connection_flush(c);
                if (r < 0)
                        return r;
        }
        return connection_set_phase(c);
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
        int r;

        if (revents & (EPOLLERR | EPOLLHUP) && !(revents & EPOLLIN)) {
                connection_free(c);
                return 0;
        }
        if (revents & EPOLLOUT) {
                r = connection_flush(c);
                if (r > 0)
                        r = connection_process(c);      /* a request read with the last one */
                if (r < 0)
                        goto close;
        }
        if (revents & EPOLLIN) {
                r = connection_read(c);
                if (r < 0)
                        goto close;
                if (r > 0) {
                        r = connection_process(c);
                        if (r < 0)
                                goto close;
                }
        }
        return 0;
close:
        if (r != -ECONNRESET && r != -EPIPE)
                log_debug_errno(r, "Closing connection of pid %d: %m", (int)c->peer.pid);
        connection_free(c);
        return 0;
}

static int on_connection_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct connection *c = userdata;

        c->server->stats.timed_out++;
        log_debug("Closing the connection of pid %d (uid %u): %s", (int)c->peer.pid, (unsigned)c->peer.uid,
                  c->phase == PHASE_REQUEST ? "its request was not complete within 10 s" :
                  c->phase == PHASE_REPLY ? "it did not read its reply within 30 s" : "idle for 30 s");
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
        log_warning_errno(error, "Cannot accept clients (%m): pausing for 250 ms");
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
                        log_warning_errno(errno, "Failed to accept a client, ignoring: %m");
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
        if (r >= 0 && refusal) {
                /* Said to the client (who may be about to send), then closed. */
                srv->stats.refused_full++;
                log_debug("Refusing a client, pid %d uid %u: %s", (int)c->peer.pid, (unsigned)c->peer.uid, refusal);
                r = connection_answer_error(c, EUSERS, refusal);
                if (r >= 0)
                        r = connection_flush(c);
                if (r == -EPIPE)
                        r = -ECONNRESET;
        }
        if (r >= 0)
                r = connection_set_phase(c);
        if (r < 0) {
                if (r != -ECONNRESET)
                        log_warning_errno(r, "Failed to watch a client, dropping it: %m");
                connection_free(c);
        }
        return 0;
}

int server_new(sd_event *e, int listen_fd, server_request_fn fn, void *userdata, struct server **ret)
{
        struct server *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(e);
        s->listen_fd = listen_fd;
        s->fn = fn;
        s->userdata = userdata;
        r = sd_event_add_io(e, &s->listen_source, listen_fd, EPOLLIN, on_accept, s);
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
        return s->n_conns;
}

void server_get_stats(const struct server *s, struct server_stats *ret)
{
        *ret = s->stats;
}

static int ensure_socket_dir(const char *path, char **error)
{
        _cleanup_free_ char *dir = strdup(path);
        char *slash;
        struct stat st;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = 0;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return error_set(error, -errno, "Cannot create %s: %m", dir);
        if (stat(dir, &st) < 0)
                return error_set(error, -errno, "Cannot stat %s: %m", dir);
        if (!S_ISDIR(st.st_mode))
                return error_set(error, -ENOTDIR, "%s is not a directory", dir);
        if ((st.st_mode & 0002) && !(st.st_mode & S_ISVTX))
                return error_set(error, -EPERM, "%s is writable by everyone: refusing to put the socket there", dir);
        return 0;
}

int server_open_listen_fd(const char *path, mode_t mode, const char *group, char **error)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        int n, r;

        *error = NULL;
        n = sd_listen_fds(true);
        if (n > 1)
                return error_set(error, -EINVAL, "Expected one socket from systemd, got %d", n);
        if (n == 1) {
                fd = SD_LISTEN_FDS_START;
                if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0)
                        return error_set(error, -EINVAL, "The socket systemd passed is not a listening stream Unix socket");
                if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
                        return error_set(error, -errno, "Cannot set up the passed socket: %m");
                return TAKE_FD(fd);
        }
        if (strlen(path) >= sizeof(sa.sun_path))
                return error_set(error, -ENAMETOOLONG, "Socket path %s is too long", path);
        r = ensure_socket_dir(path, error);
        if (r < 0)
                return r;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return error_set(error, -errno, "Cannot create a socket: %m");
        (void)unlink(path);     /* a stale socket from an earlier run */
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return error_set(error, -errno, "Cannot bind %s: %m", path);
        if (chmod(path, mode) < 0)
                return error_set(error, -errno, "Cannot chmod %s: %m", path);
        if (group) {
                struct group *g = getgrnam(group);

                if (!g)
                        return error_set(error, -ENOENT, "Unknown socket group '%s'", group);
                if (chown(path, 0, g->gr_gid) < 0)
                        return error_set(error, -errno, "Cannot chown %s: %m", path);
        }
        if (listen(fd, SOMAXCONN) < 0)
                return error_set(error, -errno, "Cannot listen on %s: %m", path);
        return TAKE_FD(fd);
}
