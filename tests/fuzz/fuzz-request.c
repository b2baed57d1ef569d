/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz the wire's decoders: a request line as memleakd reads it (memleak_request_parse), and
 * the same bytes as a reply as memleakctl checks it (memleak_response_check). A request that
 * parses must encode (memleak_request_to_json, the client's side) and parse back the same. */
#include <string.h>
#include "fuzz-util.h"
#include "json-util.h"
#include "protocol.h"

static void check_same(const struct memleak_request *a, const struct memleak_request *b)
{
        FUZZ_CHECK(a->id == b->id);
        FUZZ_CHECK(a->cmd == b->cmd);
        FUZZ_CHECK(a->has_pid == b->has_pid && a->pid == b->pid);
        FUZZ_CHECK(a->n_objs == b->n_objs);
        for (unsigned i = 0; i < a->n_objs; i++)
                FUZZ_CHECK(strcmp(a->objs[i], b->objs[i]) == 0);
        FUZZ_CHECK(!a->exec == !b->exec);
        FUZZ_CHECK(!a->exec || strcmp(a->exec, b->exec) == 0);
        FUZZ_CHECK(a->min_size == b->min_size && a->max_size == b->max_size);
        FUZZ_CHECK(a->sample_bytes == b->sample_bytes);
        FUZZ_CHECK(a->top == b->top && a->min_age_s == b->min_age_s);
        FUZZ_CHECK(a->kernel == b->kernel && a->kernel_pid == b->kernel_pid);
        FUZZ_CHECK(strcmp(a->kernel_comm, b->kernel_comm) == 0);
        FUZZ_CHECK(a->mmap == b->mmap && a->unwind == b->unwind);
        FUZZ_CHECK(a->has_stack_id == b->has_stack_id && a->stack_id == b->stack_id);
        FUZZ_CHECK(a->verdict == b->verdict);
        FUZZ_CHECK(a->reachability == b->reachability && a->snapshot_only == b->snapshot_only);
        FUZZ_CHECK(a->follow_forks == b->follow_forks && a->children == b->children);
}

static void fuzz_request(const char *line, size_t len)
{
        _cleanup_(memleak_request_done) struct memleak_request req = {}, again = {};
        _cleanup_json_ cJSON *encoded = NULL;
        _cleanup_free_ char *frame = NULL;
        const char *error_message = NULL;
        uint64_t id = 0, id_again = 0;
        size_t frame_len = 0;
        int r;

        r = memleak_request_parse(line, len, &req, &id, &error_message);
        if (r < 0) {
                /* every refusal says why, and is an errno the reply can name */
                FUZZ_CHECK(error_message);
                FUZZ_CHECK(memleak_errno_to_code(r));
                return;
        }
        FUZZ_CHECK(id == req.id);
        encoded = memleak_request_to_json(&req);
        FUZZ_CHECK(encoded);
        frame = memleak_frame_encode(encoded, &frame_len);
        FUZZ_CHECK(frame);
        FUZZ_CHECK(memleak_frame_find_end(frame, frame_len) == frame_len);
        r = memleak_request_parse(frame, frame_len, &again, &id_again, &error_message);
        if (r < 0)
                fprintf(stderr, "re-encoded request refused (%s): %s", error_message, frame);
        FUZZ_CHECK(r == 0);
        check_same(&req, &again);
}

static void fuzz_reply(const char *text)
{
        _cleanup_json_ cJSON *reply = cJSON_Parse(text);
        const char *error_message = NULL;
        int r;

        if (!reply)
                return;
        r = memleak_response_check(reply, 1, &error_message);
        FUZZ_CHECK(r <= 0);
        FUZZ_CHECK(r == 0 || error_message);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *text = NULL;
        size_t end;

        if (size > 2 * MEMLEAK_MAX_REQUEST_BYTES)
                return 0;
        /* The server hands over one line at a time, its newline included. */
        end = memleak_frame_find_end((const char *) data, size);
        fuzz_request((const char *) data, end > 0 ? end : size);

        text = strndup((const char *) data, size);
        if (text)
                fuzz_reply(text);
        return 0;
}
