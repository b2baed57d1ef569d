/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz the socket's server (daemon/ipc/server.c) as a client drives it: the input is the bytes a
 * client sends, written in pieces over a real Unix socket to a real server on an sd-event loop.
 * Each complete line reaches the request handler, which decodes it (memleak_request_parse) and
 * answers now or, for an odd id, on a later turn of the loop, as the manager answers a request
 * that needs work. Every byte that comes back is a reply frame that memleakctl accepts.
 *
 * The manager's own dispatch (manager-requests.c) is not reached: its handlers need a manager
 * with BPF loaded. This target's handler takes its place, after the same decoder. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-event.h>
#include "fuzz-util.h"
#include "json-util.h"
#include "protocol.h"
#include "server.h"

struct fuzz_state {
        struct server_request *later;   /* answered on the next turn of the loop */
        uint64_t later_id;
        unsigned requests;
};

static void answer(struct server_request *sreq, uint64_t id, int r, const char *message)
{
        server_request_reply(sreq, r < 0 ? memleak_response_new_error(id, r, message) : memleak_response_new_ok(id));
}

static void on_request(void *userdata, struct server_request *sreq, const char *line, size_t len)
{
        _cleanup_(memleak_request_done) struct memleak_request req = {};
        struct fuzz_state *st = userdata;
        const char *message = NULL;
        uint64_t id = 0;
        int r;

        st->requests++;
        FUZZ_CHECK(!st->later);         /* one request at a time per connection */
        FUZZ_CHECK(len > 0 && len <= MEMLEAK_MAX_REQUEST_BYTES && line[len - 1] == '\n');
        FUZZ_CHECK(!memchr(line, '\n', len - 1));
        r = memleak_request_parse(line, len, &req, &id, &message);
        if (r >= 0 && (id & 1)) {
                st->later = sreq;
                st->later_id = id;
                return;
        }
        answer(sreq, id, r, message);
}

static int listen_socket(struct sockaddr_un *ret, socklen_t *ret_len)
{
        static unsigned serial;
        int fd;

        *ret = (struct sockaddr_un) { .sun_family = AF_UNIX };
        /* abstract: nothing left in the file system */
        snprintf(ret->sun_path + 1, sizeof(ret->sun_path) - 1, "memleakd-fuzz-server-%d-%u", getpid(), serial++);
        *ret_len = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(ret->sun_path + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        FUZZ_CHECK(fd >= 0);
        FUZZ_CHECK(bind(fd, (struct sockaddr *) ret, *ret_len) == 0);
        FUZZ_CHECK(listen(fd, 4) == 0);
        return fd;
}

/* Each reply line: a JSON object that memleak_response_check() takes for a well-formed reply. */
static void check_replies(char *buf, size_t len, unsigned requests)
{
        unsigned replies = 0;
        char *p = buf;

        while (p < buf + len) {
                char *nl = memchr(p, '\n', buf + len - p);
                _cleanup_json_ cJSON *reply = NULL;
                const cJSON *id;
                const char *message = NULL;
                uint64_t v = 0;
                int r;

                FUZZ_CHECK(nl);         /* no partial frame once the server is done */
                *nl = '\0';
                reply = cJSON_Parse(p);
                FUZZ_CHECK(reply);
                id = cJSON_GetObjectItemCaseSensitive(reply, "id");
                FUZZ_CHECK(json_get_u64(id, MEMLEAK_MAX_ID, &v) == 0);
                r = memleak_response_check(reply, v, &message);
                /* ok, or an error naming its code and message (not one memleakctl finds malformed) */
                if (r < 0) {
                        const cJSON *error = cJSON_GetObjectItemCaseSensitive(reply, "error");

                        FUZZ_CHECK(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(reply, "ok")));
                        FUZZ_CHECK(message == cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, "message")));
                }
                replies++;
                p = nl + 1;
        }
        /* one per request, plus at most the error that closes the connection */
        FUZZ_CHECK(replies <= requests + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct fuzz_state st = {};
        struct sockaddr_un addr;
        socklen_t addr_len;
        sd_event *e = NULL;
        struct server *srv = NULL;
        _cleanup_close_ int client = -EBADF;
        _cleanup_free_ char *got = NULL;
        _cleanup_free_ uint8_t *long_input = NULL;
        size_t off = 0, got_len = 0, got_cap = 0;
        unsigned idle = 0;
        size_t input_size = size;
        int listen_fd;

        if (size > 3 * MEMLEAK_MAX_REQUEST_BYTES)
                return 0;
        /* an input whose second byte is 0xff goes on with a line longer than the limit, without
         * its newline: what only a 64 KiB seed would reach otherwise */
        if (size >= 2 && data[1] == 0xff) {
                long_input = malloc(size + MEMLEAK_MAX_REQUEST_BYTES);
                FUZZ_CHECK(long_input);
                memcpy(long_input, data, size);
                memset(long_input + size, 'a', MEMLEAK_MAX_REQUEST_BYTES);
                data = long_input;
                size += MEMLEAK_MAX_REQUEST_BYTES;
        }
        FUZZ_CHECK(sd_event_new(&e) >= 0);
        listen_fd = listen_socket(&addr, &addr_len);
        FUZZ_CHECK(server_new(e, listen_fd, on_request, NULL, &st, &srv) >= 0);
        client = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        FUZZ_CHECK(client >= 0);
        FUZZ_CHECK(connect(client, (struct sockaddr *) &addr, addr_len) == 0);

        /* pieces of a size the input's first byte picks: requests split and joined anyhow */
        for (unsigned turn = 0; turn < 100000 && idle < 3; turn++) {
                size_t piece = size > 0 ? 1 + data[0] * 37u : 1;

                if (off >= input_size)
                        piece = 16384;  /* the long line's padding: its pieces do not matter */
                bool progress = false;
                ssize_t n;

                if (st.later) {
                        struct server_request *r = st.later;

                        st.later = NULL;
                        answer(r, st.later_id, 0, NULL);
                        progress = true;
                }
                if (off < size) {
                        n = send(client, data + off, MIN(piece, size - off), MSG_NOSIGNAL);
                        if (n > 0) {
                                off += (size_t) n;
                                progress = true;
                        }
                }
                FUZZ_CHECK(sd_event_run(e, 0) >= 0);
                for (;;) {
                        if (got_cap - got_len < 4096) {
                                got_cap = got_cap * 2 + 8192;
                                got = realloc(got, got_cap);
                                FUZZ_CHECK(got);
                        }
                        n = recv(client, got + got_len, got_cap - got_len, MSG_DONTWAIT);
                        if (n <= 0)
                                break;
                        got_len += (size_t) n;
                        progress = true;
                }
                if (n == 0 && off == size)
                        break;          /* the server closed the connection */
                if (n < 0 && errno != EAGAIN)
                        break;          /* reset: what it sent before is checked */
                idle = progress || st.later ? 0 : idle + 1;
        }
        if (st.later) {
                struct server_request *r = st.later;

                st.later = NULL;
                answer(r, st.later_id, 0, NULL);
        }
        server_free(srv);
        sd_event_unref(e);
        check_replies(got, got_len, st.requests);
        return 0;
}
