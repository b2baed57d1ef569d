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

struct connection {
        struct server *server;
        int fd;
        struct ucred peer;
        sd_event_source *io;
        sd_event_source *idle;
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
        sd_event_source_disable_unref(c->idle);
        closep(&c->fd);
        free(c->in);
        free(c->out);
        free(c);
        return NULL;
}

static int connection_update_events(struct connection *c)
{
        uint32_t ev = 0;

        if (c->out_off < c->out_len)
                ev |= EPOLLOUT;
        else if (!c->close_after_flush)
                ev |= EPOLLIN;  /* read the next request only once the last answer is out */
        return sd_event_source_set_io_events(c->io, ev);
}

static int connection_touch(struct connection *c)
{
        uint64_t now;

        if (sd_event_now(c->server->event, CLOCK_MONOTONIC, &now) < 0)
                return -EIO;
        return sd_event_source_set_time(c->idle, now + SERVER_IDLE_TIMEOUT_USEC);
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

/* Write what we can; returns < 0 when the connection is finished (error, or done and closing). */
static int connection_flush(struct connection *c)
{
        while (c->out_off < c->out_len) {
                ssize_t k = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (k < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return connection_update_events(c);
                        return -errno;  /* the client hung up */
                }
                c->out_off += k;
        }
        free(c->out);
        c->out = NULL;
        c->out_len = c->out_off = 0;
        if (c->close_after_flush)
                return -ECONNRESET;
        return connection_update_events(c);
}

static int connection_answer_error(struct connection *c, int error, const char *message)
{
        _cleanup_json_ cJSON *reply = memleak_response_new_error(0, error, message);

        if (!reply)
                return -ENOMEM;
        c->close_after_flush = true;
        return connection_queue(c, reply);
}

/* Answer every complete line in the input buffer. */
static int connection_process(struct connection *c)
{
        size_t start = 0;
        int r = 0;

        while (!c->close_after_flush) {
                char *nl = memchr(c->in + start, '\n', c->in_len - start);
                _cleanup_json_ cJSON *reply = NULL;
                size_t len;

                if (!nl)
                        break;
                len = nl - (c->in + start) + 1;
                reply = c->server->fn(c->server->userdata, &c->peer, c->in + start, len);
                if (!reply)
                        return -ENOMEM;
                r = connection_queue(c, reply);
                if (r < 0)
                        return r;
                start += len;
        }
        memmove(c->in, c->in + start, c->in_len - start);
        c->in_len -= start;
        if (c->in_len >= MEMLEAK_MAX_REQUEST_BYTES) {
                /* No newline within the limit: the frame boundary is lost, so answer and close. */
                r = connection_answer_error(c, E2BIG, "Request larger than 65536 bytes");
                if (r < 0)
                        return r;
        }
        return connection_flush(c);
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
                if (r < 0)
                        goto close;
        }
        if (revents & EPOLLIN) {
                r = connection_read(c);
                if (r < 0)
                        goto close;
                if (r > 0) {
                        connection_touch(c);
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

static int on_connection_idle(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct connection *c = userdata;

        log_debug("Closing idle connection of pid %d", (int)c->peer.pid);
        connection_free(c);
        return 0;
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct server *srv = userdata;
        struct connection *c;
        socklen_t len = sizeof(struct ucred);
        uint64_t now;
        int cfd, r;

        cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno != EAGAIN && errno != EINTR)
                        log_warning_errno(errno, "Failed to accept a client, ignoring: %m");
                return 0;
        }
        if (srv->n_conns >= SERVER_MAX_CONNECTIONS) {
                log_warning("Refusing a client: %u connections already open", srv->n_conns);
                close(cfd);
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
        c->server = srv;
        c->next = srv->conns;
        if (srv->conns)
                srv->conns->prev = c;
        srv->conns = c;
        srv->n_conns++;
        sd_event_now(srv->event, CLOCK_MONOTONIC, &now);
        r = sd_event_add_io(srv->event, &c->io, cfd, EPOLLIN, on_connection_io, c);
        if (r >= 0)
                r = sd_event_add_time(srv->event, &c->idle, CLOCK_MONOTONIC,
                                      now + SERVER_IDLE_TIMEOUT_USEC, 0, on_connection_idle, c);
        if (r < 0) {
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
