/* SPDX-License-Identifier: MIT */
/* One conversation with memleakd: connect to its socket, send a request, read its reply. */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include "connection.h"
#include "json-raw.h"
#include "json-util.h"
#include "macro.h"
#include "reply-fields.h"
#include "text-safe.h"
#include "util.h"

#define READ_CHUNK_BYTES (64u * 1024u)

static int64_t now_ms(void)
{
        struct timespec ts;

        (void)clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int connection_open(const char *socket_path)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        size_t n;

        assert(socket_path);

        n = strlen(socket_path);
        if (n == 0 || n >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, socket_path, n);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* A Unix stream connect completes or fails at once; EAGAIN means the backlog is full. */
        if (connect(fd, (struct sockaddr *) &sa, offsetof(struct sockaddr_un, sun_path) + n + 1) < 0)
                return -errno;
        return TAKE_FD(fd);
}

char *connection_open_error(const char *socket_path, int r)
{
        char *m = NULL;
        int k;

        if (r == -ENOENT)
                k = asprintf(&m, "memleakd is not running (no socket at %s); start it with 'systemctl start "
                             "memleakd' or run 'memleakd' as root", socket_path);
        else if (r == -ECONNREFUSED)
                k = asprintf(&m, "memleakd is not running (nothing listens on %s); start it with "
                             "'systemctl start memleakd' or run 'memleakd' as root", socket_path);
        else if (r == -EACCES || r == -EPERM)
                k = asprintf(&m, "cannot connect to memleakd at %s: %s (run memleakctl as root, or as a member "
                             "of memleakd's socket_group)", socket_path, strerror(-r));
        else
                k = asprintf(&m, "cannot connect to memleakd at %s: %s (%s)", socket_path, strerror(-r),
                             memleak_errno_to_code(r));
        return k < 0 ? NULL : m;
}

/* Wait until fd is ready for events or the deadline passes. */
static int wait_fd(int fd, short events, int64_t deadline_ms)
{
        for (;;) {
                struct pollfd p = { .fd = fd, .events = events };
                int64_t left = deadline_ms - now_ms();
                int k;

                if (left <= 0)
                        return -ETIMEDOUT;
                k = poll(&p, 1, (int) MIN(left, (int64_t) 60 * 60 * 1000));
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k > 0)
                        return 0;
        }
}

static int send_all(int fd, const char *buf, size_t len, int64_t deadline_ms)
{
        while (len > 0) {
                ssize_t k = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
                int r;

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                return -errno;
                        r = wait_fd(fd, POLLOUT, deadline_ms);
                        if (r < 0)
                                return r;
                        continue;
                }
                buf += k;
                len -= k;
        }
        return 0;
}

/* Read until the first newline; returns the line's length (newline included) in *ret_len. */
static int read_line(int fd, int64_t deadline_ms, char **ret_buf, size_t *ret_len)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        for (;;) {
                size_t end;
                ssize_t k;
                int r;

                if (cap - len < READ_CHUNK_BYTES / 4) {
                        size_t ncap = MIN(MAX(cap * 2, (size_t) READ_CHUNK_BYTES), (size_t) MEMLEAK_MAX_RESPONSE_BYTES);
                        char *n;

                        if (ncap <= len)
                                return -E2BIG;
                        n = realloc(buf, ncap);
                        if (!n)
                                return -ENOMEM;
                        buf = n;
                        cap = ncap;
                }
                k = recv(fd, buf + len, cap - len, MSG_DONTWAIT);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno != EAGAIN)
                                return -errno;
                        r = wait_fd(fd, POLLIN, deadline_ms);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (k == 0)
                        return -ECONNRESET;
                end = memleak_frame_find_end(buf + len, k);
                if (end > 0) {
                        *ret_len = len + end;
                        *ret_buf = TAKE_PTR(buf);
                        return 0;
                }
                len += k;
        }
}

/* A random id in [1, MEMLEAK_MAX_ID], so a stale or foreign reply cannot pass for ours. */
static uint64_t new_request_id(void)
{
        uint64_t id = 0;

        if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t) sizeof(id))
                id = (uint64_t) now_ms() ^ ((uint64_t) getpid() << 32);
        id %= MEMLEAK_MAX_ID;
        return id + 1;
}

/* What memleakd ignored of the request (an older memleakd: fields it does not know), on stderr:
 * the command goes on. */
static void print_warnings(const cJSON *reply)
{
        const char *version = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(reply, F_SOFTWARE));
        const cJSON *w;

        cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(reply, F_WARNINGS)) {
                _cleanup_free_ char *safe = cJSON_IsString(w) ? text_escape_controls(w->valuestring) : NULL;

                if (safe)
                        fprintf(stderr, "memleakctl: warning: memleakd %s (memleakctl is %s): %s\n",
                                version ?: "(of an unknown version)", MEMLEAKD_VERSION, safe);
        }
}

/* Where a report reply's stacks are: kept as text (json-raw.h). */
static const char *const report_stacks_path[] = { RF_REPORT, RF_STACKS, NULL };

/* The stacks kept as text made valid UTF-8 too (the text of one whose strings are valid is). */
static int raw_stacks_repair(cJSON *reply)
{
        cJSON *stack;

        cJSON_ArrayForEach(stack, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(reply, RF_REPORT),
                                                                  RF_STACKS)) {
                _cleanup_json_ cJSON *parsed = NULL;
                char *text;

                if (!cJSON_IsRaw(stack) || !utf8_needs_repair(stack->valuestring))
                        continue;
                parsed = cJSON_Parse(stack->valuestring);
                if (!parsed)
                        continue;       /* malformed: said when it is read */
                if (json_strings_map(parsed, utf8_needs_repair, utf8_repair) < 0)
                        return -ENOMEM;
                text = cJSON_PrintUnformatted(parsed);
                if (!text)
                        return -ENOMEM;
                free(stack->valuestring);
                stack->valuestring = text;
        }
        return 0;
}

int connection_call(int fd, const struct memleak_request *req, int timeout_ms,
                    cJSON **ret_reply, char **ret_error)
{
        int64_t deadline_ms = now_ms() + timeout_ms;
        struct memleak_request r_req;
        _cleanup_json_ cJSON *msg = NULL, *reply = NULL;
        _cleanup_free_ char *frame = NULL, *line = NULL;
        const char *message = NULL;
        size_t frame_len, line_len = 0;
        int r, r_send;

        assert(req);
        assert(ret_reply);
        assert(ret_error);

        *ret_error = NULL;
        r_req = *req;                   /* shallow: only the id and locations change */
        r_req.id = new_request_id();
        /* a report of any size: each frame once, each stack kept as its text until it is read
         * (report-stacks.h reads both this and an older memleakd's whole stacks) */
        r_req.locations = req->cmd == MEMLEAK_CMD_REPORT;
        msg = memleak_request_to_json(&r_req);
        if (!msg)
                return -ENOMEM;
        frame = memleak_frame_encode(msg, &frame_len);
        if (!frame)
                return -ENOMEM;
        if (frame_len > MEMLEAK_MAX_REQUEST_BYTES)
                return error_set(ret_error, -E2BIG, "Request of %zu bytes exceeds the protocol's limit of %u bytes",
                                 frame_len, MEMLEAK_MAX_REQUEST_BYTES);

        /* If sending fails the daemon may still have answered (and closed): read that first. */
        r_send = send_all(fd, frame, frame_len, deadline_ms);
        if (r_send == -ETIMEDOUT)
                return error_set(ret_error, r_send, "memleakd did not take the request within %d s",
                                 timeout_ms / 1000);
        r = read_line(fd, deadline_ms, &line, &line_len);
        if (r < 0 && r_send < 0)
                return error_set(ret_error, r_send, "Cannot send the request to memleakd: %s", strerror(-r_send));
        if (r == -ETIMEDOUT)
                return error_set(ret_error, r, "No reply from memleakd within %d s", timeout_ms / 1000);
        if (r == -ECONNRESET)
                return error_set(ret_error, r, "memleakd closed the connection without replying");
        if (r == -E2BIG)
                return error_set(ret_error, r, "Reply from memleakd larger than %u bytes", MEMLEAK_MAX_RESPONSE_BYTES);
        if (r < 0)
                return error_set(ret_error, r, "Cannot read the reply from memleakd: %s", strerror(-r));

        r = json_parse_raw_array(line, line_len, report_stacks_path, &reply);
        if (r == -ENOMEM)
                return error_set(ret_error, r, "Out of memory");
        if (r < 0)
                return error_set(ret_error, -EBADMSG, "Malformed reply from memleakd (not JSON)");
        free(line);            /* the stacks' texts are copies: the reply's bytes go now */
        line = NULL;
        /* What memleakctl prints is valid UTF-8, whatever a daemon sends (--json stays parseable). */
        if (json_strings_map(reply, utf8_needs_repair, utf8_repair) < 0 || raw_stacks_repair(reply) < 0)
                return error_set(ret_error, -ENOMEM, "Out of memory");
        r = memleak_response_check(reply, r_req.id, &message);
        if (r < 0)
                return error_set(ret_error, r, "%s", message);
        print_warnings(reply);
        *ret_reply = TAKE_PTR(reply);
        return 0;
}
