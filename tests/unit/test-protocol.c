/* SPDX-License-Identifier: MIT */
/* Unit tests for common/protocol.c: request validation order, encoding, replies, error codes. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "macro.h"
#include "protocol.h"
#include "test-util.h"

/* Parse a NUL-terminated line; *ret_error is the static message on failure. */
static int parse(const char *line, struct memleak_request *req, uint64_t *id, const char **error)
{
        return memleak_request_parse(line, strlen(line), req, id, error);
}

/* Expect line to be refused with error (a positive errno) and the id echoed as expected_id. */
static void assert_refused(const char *line, size_t len, int error, uint64_t expected_id)
{
        struct memleak_request req = { .pid = 777, .top = 555 };
        const char *message = NULL;
        uint64_t id = 12345;
        int r;

        r = memleak_request_parse(line, len, &req, &id, &message);
        if (r != -error)
                fprintf(stderr, "line %.200s: got %d (%s), expected %d\n", line, r,
                        message ? message : "no message", -error);
        ASSERT_EQ(r, -error);
        ASSERT_TRUE(message && *message);
        ASSERT_EQ(id, expected_id);
        /* Output parameters are written only on success. */
        ASSERT_EQ(req.pid, 777);
        ASSERT_EQ(req.top, 555);
        ASSERT_EQ(req.n_objs, 0);
}

static void refused(const char *line, int error, uint64_t expected_id)
{
        assert_refused(line, strlen(line), error, expected_id);
}

static void protocol_parses_attach_with_every_field(void)
{
        struct memleak_request req = {};
        const char *message = NULL;
        uint64_t id = 0;

        ASSERT_EQ(parse("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"pid\":1234,"
                        "\"objs\":[\"/usr/lib/libtcmalloc.so.4\",\"/opt/lib/libjemalloc.so\"],"
                        "\"min_size\":16,\"max_size\":4096}\n", &req, &id, &message), 0);
        ASSERT_EQ(id, 7);
        ASSERT_EQ(req.id, 7);
        ASSERT_EQ(req.cmd, MEMLEAK_CMD_ATTACH);
        ASSERT_TRUE(req.has_pid);
        ASSERT_EQ(req.pid, 1234);
        ASSERT_EQ(req.n_objs, 2);
        ASSERT_STREQ(req.objs[0], "/usr/lib/libtcmalloc.so.4");
        ASSERT_STREQ(req.objs[1], "/opt/lib/libjemalloc.so");
        ASSERT_EQ(req.min_size, 16);
        ASSERT_EQ(req.max_size, 4096);
        memleak_request_done(&req);
        ASSERT_EQ(req.n_objs, 0);
        memleak_request_done(&req);     /* twice is harmless */
}

static void protocol_parses_minimal_attach_detach_status(void)
{
        struct memleak_request req = {};
        const char *message = NULL;
        uint64_t id = 99;

        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"attach\",\"pid\":1}", &req, &id, &message), 0);
        ASSERT_EQ(id, 0);       /* id is optional and defaults to 0 */
        ASSERT_EQ(req.cmd, MEMLEAK_CMD_ATTACH);
        ASSERT_EQ(req.pid, 1);
        ASSERT_EQ(req.n_objs, 0);
        ASSERT_EQ(req.min_size, 0);
        ASSERT_EQ(req.max_size, 0);
        memleak_request_done(&req);

        ASSERT_EQ(parse("{\"v\":1,\"id\":8,\"cmd\":\"detach\",\"pid\":2147483647}\n", &req, &id, &message), 0);
        ASSERT_EQ(req.cmd, MEMLEAK_CMD_DETACH);
        ASSERT_EQ(req.pid, 2147483647);
        ASSERT_EQ(id, 8);
        memleak_request_done(&req);

        ASSERT_EQ(parse("  {\"cmd\" : \"status\", \"v\" : 1.0, \"id\" : 9}  \n", &req, &id, &message), 0);
        ASSERT_EQ(req.cmd, MEMLEAK_CMD_STATUS);
        ASSERT_TRUE(!req.has_pid);
        ASSERT_EQ(id, 9);
        memleak_request_done(&req);
}

static void protocol_parses_report_with_defaults_and_bounds(void)
{
        struct memleak_request req = {};
        const char *message = NULL;
        uint64_t id = 0;

        ASSERT_EQ(parse("{\"v\":1,\"id\":10,\"cmd\":\"report\"}\n", &req, &id, &message), 0);
        ASSERT_EQ(req.cmd, MEMLEAK_CMD_REPORT);
        ASSERT_TRUE(!req.has_pid);
        ASSERT_EQ(req.top, MEMLEAK_DEFAULT_TOP);
        ASSERT_EQ(req.min_age_s, 0);
        memleak_request_done(&req);

        ASSERT_EQ(parse("{\"v\":1,\"id\":11,\"cmd\":\"report\",\"pid\":1234,\"top\":1000000,"
                        "\"min_age_s\":315360000}\n", &req, &id, &message), 0);
        ASSERT_TRUE(req.has_pid);
        ASSERT_EQ(req.pid, 1234);
        ASSERT_EQ(req.top, MEMLEAK_MAX_TOP);
        ASSERT_EQ(req.min_age_s, MEMLEAK_MAX_MIN_AGE_S);
        memleak_request_done(&req);

        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"report\",\"top\":0}\n", &req, &id, &message), 0);
        ASSERT_EQ(req.top, 0);
        memleak_request_done(&req);
}

static void protocol_refuses_malformed_framing_and_json(void)
{
        static const char nul_line[] = "{\"v\":1,\"cmd\":\"status\"}\0\n";
        static const char nul_in_string[] = "{\"v\":1,\"id\":3,\"cmd\":\"st\0atus\"}\n";

        refused("", EINVAL, 0);
        refused("\n", EINVAL, 0);
        refused("not json\n", EINVAL, 0);
        refused("{\"v\":1,\"cmd\":\"status\"\n", EINVAL, 0);                       /* truncated */
        refused("{\"v\":1,\"cmd\":\"status\"} trailing\n", EINVAL, 0);
        refused("[{\"v\":1,\"cmd\":\"status\"}]\n", EINVAL, 0);                     /* array */
        refused("\"status\"\n", EINVAL, 0);
        refused("42\n", EINVAL, 0);
        refused("null\n", EINVAL, 0);
        /* Two lines in one frame. */
        refused("{\"v\":1,\"id\":3,\"cmd\":\"status\"}\n{\"v\":1,\"cmd\":\"status\"}\n", EINVAL, 0);
        /* An embedded NUL: the JSON before it is valid, so only the framing check catches it. */
        assert_refused(nul_line, sizeof(nul_line) - 1, EINVAL, 0);
        assert_refused(nul_in_string, sizeof(nul_in_string) - 1, EINVAL, 0);
}

static void protocol_refuses_oversized_line_before_parsing(void)
{
        size_t limit = MEMLEAK_MAX_REQUEST_BYTES;
        const char *head = "{\"v\":1,\"id\":3,\"cmd\":\"status\"}";
        struct memleak_request req = {};
        const char *message = NULL;
        _cleanup_free_ char *line = malloc(limit + 2);
        uint64_t id = 0;

        ASSERT_TRUE(line);
        /* Exactly at the limit (newline included): accepted. */
        memset(line, ' ', limit);
        memcpy(line, head, strlen(head));
        line[limit - 1] = '\n';
        line[limit] = '\0';
        ASSERT_EQ(memleak_request_parse(line, limit, &req, &id, &message), 0);
        ASSERT_EQ(id, 3);
        memleak_request_done(&req);

        /* One byte more: E2BIG, refused before it is read, so no id comes back. */
        memset(line, ' ', limit + 1);
        memcpy(line, head, strlen(head));
        line[limit] = '\n';
        line[limit + 1] = '\0';
        assert_refused(line, limit + 1, E2BIG, 0);
}

static void protocol_refuses_bad_version_and_command(void)
{
        refused("{\"id\":4,\"cmd\":\"status\"}\n", EINVAL, 4);                      /* no v */
        refused("{\"v\":2,\"id\":4,\"cmd\":\"status\"}\n", EPROTONOSUPPORT, 4);
        refused("{\"v\":0,\"id\":4,\"cmd\":\"status\"}\n", EPROTONOSUPPORT, 4);
        refused("{\"v\":\"1\",\"id\":4,\"cmd\":\"status\"}\n", EPROTONOSUPPORT, 4);
        refused("{\"v\":1.5,\"id\":4,\"cmd\":\"status\"}\n", EPROTONOSUPPORT, 4);
        /* The version is checked before the command. */
        refused("{\"v\":2,\"id\":4,\"cmd\":\"frobnicate\"}\n", EPROTONOSUPPORT, 4);
        refused("{\"v\":1,\"id\":5}\n", EINVAL, 5);                                 /* no cmd */
        refused("{\"v\":1,\"id\":5,\"cmd\":3}\n", EINVAL, 5);
        refused("{\"v\":1,\"id\":5,\"cmd\":\"frobnicate\"}\n", EOPNOTSUPP, 5);
        refused("{\"v\":1,\"id\":5,\"cmd\":\"ATTACH\",\"pid\":1}\n", EOPNOTSUPP, 5);
        /* The command is checked before its fields. */
        refused("{\"v\":1,\"id\":5,\"cmd\":\"frobnicate\",\"bogus\":true}\n", EOPNOTSUPP, 5);
}

static void protocol_refuses_bad_pid(void)
{
        refused("{\"v\":1,\"id\":6,\"cmd\":\"attach\"}\n", EINVAL, 6);             /* missing */
        refused("{\"v\":1,\"id\":6,\"cmd\":\"detach\"}\n", EINVAL, 6);             /* missing */
        refused("{\"v\":1,\"id\":6,\"cmd\":\"attach\",\"pid\":\"1234\"}\n", EINVAL, 6);
        refused("{\"v\":1,\"id\":6,\"cmd\":\"attach\",\"pid\":-1}\n", EINVAL, 6);
        refused("{\"v\":1,\"id\":6,\"cmd\":\"attach\",\"pid\":0}\n", EINVAL, 6);
        refused("{\"v\":1,\"id\":6,\"cmd\":\"attach\",\"pid\":12.5}\n", EINVAL, 6);
        refused("{\"v\":1,\"id\":6,\"cmd\":\"attach\",\"pid\":2147483648}\n", EINVAL, 6);
        refused("{\"v\":1,\"id\":6,\"cmd\":\"attach\",\"pid\":1e300}\n", EINVAL, 6);
        refused("{\"v\":1,\"id\":6,\"cmd\":\"attach\",\"pid\":null}\n", EINVAL, 6);
        refused("{\"v\":1,\"id\":6,\"cmd\":\"report\",\"pid\":true}\n", EINVAL, 6);
}

/* A newer client's fields are ignored and named back (mixed versions talk); the first few names
 * kept, each cut short; the rest counted. */
static void protocol_ignores_unknown_fields_and_names_them(void)
{
        _cleanup_(memleak_request_done) struct memleak_request req = {}, many = {}, none = {};
        _cleanup_json_ cJSON *w = NULL, *wm = NULL;
        _cleanup_free_ char *line = NULL, *text = NULL;
        const char *message = NULL;
        uint64_t id = 0;
        size_t n;
        FILE *f;

        ASSERT_EQ(parse("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"pid\":1,\"Pid\":2,\"verbose\":true}\n",
                        &req, &id, &message), 0);
        ASSERT_EQ(req.pid, 1);
        ASSERT_EQ(req.n_unknown_total, 2);
        w = memleak_request_warnings(&req);
        ASSERT_TRUE(w);
        text = cJSON_PrintUnformatted(w);
        ASSERT_STREQ(text, "[\"unknown field \\\"Pid\\\" ignored\",\"unknown field \\\"verbose\\\" ignored\"]");

        ASSERT_EQ(parse("{\"v\":1,\"id\":7,\"cmd\":\"status\"}\n", &none, &id, &message), 0);
        ASSERT_TRUE(memleak_request_warnings(&none) == NULL);

        /* eleven, one of 300 bytes: eight named (that one cut to 64 bytes), three counted */
        f = open_memstream(&line, &n);
        ASSERT_TRUE(f);
        fputs("{\"v\":1,\"cmd\":\"status\"", f);
        fprintf(f, ",\"%0300d\":1", 0);
        for (int i = 1; i < 11; i++)
                fprintf(f, ",\"new_%d\":[1,{\"x\":2}]", i);
        fputs("}\n", f);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(parse(line, &many, &id, &message), 0);
        ASSERT_EQ(many.n_unknown_total, 11);
        ASSERT_EQ(many.n_unknown, MEMLEAK_MAX_UNKNOWN_NAMED);
        ASSERT_EQ(strlen(many.unknown[0]), MEMLEAK_MAX_UNKNOWN_NAME_BYTES);
        wm = memleak_request_warnings(&many);
        ASSERT_EQ(cJSON_GetArraySize(wm), MEMLEAK_MAX_UNKNOWN_NAMED + 1);
        ASSERT_STREQ(cJSON_GetArrayItem(wm, MEMLEAK_MAX_UNKNOWN_NAMED)->valuestring, "3 more unknown fields ignored");
}

static void protocol_refuses_unknown_and_misplaced_fields(void)
{
        /* Known fields that do not belong to the command. */
        refused("{\"v\":1,\"id\":7,\"cmd\":\"status\",\"pid\":1}\n", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"detach\",\"pid\":1,\"objs\":[\"/lib/libc.so.6\"]}\n", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"report\",\"min_size\":1}\n", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"pid\":1,\"top\":5}\n", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"pid\":1,\"min_age_s\":5}\n", EINVAL, 7);
        /* A field given twice. */
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"pid\":1,\"pid\":2}\n", EINVAL, 7);
        /* An unreadable id is refused too (and not echoed). */
        refused("{\"v\":1,\"id\":\"7\",\"cmd\":\"status\"}\n", EINVAL, 0);
        refused("{\"v\":1,\"id\":-7,\"cmd\":\"status\"}\n", EINVAL, 0);
        refused("{\"v\":1,\"id\":4294967296,\"cmd\":\"status\"}\n", EINVAL, 0);
        refused("{\"v\":1,\"id\":0.5,\"cmd\":\"status\"}\n", EINVAL, 0);
}

static void protocol_refuses_bad_objs(void)
{
        _cleanup_free_ char *many = NULL, *sixteen = NULL, *long_path = NULL, *max_path = NULL;
        struct memleak_request req = {};
        const char *message = NULL;
        uint64_t id = 0;
        size_t n;
        FILE *f;

        refused("{\"v\":1,\"id\":8,\"cmd\":\"attach\",\"pid\":1,\"objs\":\"/lib/libc.so.6\"}\n", EINVAL, 8);
        refused("{\"v\":1,\"id\":8,\"cmd\":\"attach\",\"pid\":1,\"objs\":[42]}\n", EINVAL, 8);
        refused("{\"v\":1,\"id\":8,\"cmd\":\"attach\",\"pid\":1,\"objs\":[null]}\n", EINVAL, 8);
        refused("{\"v\":1,\"id\":8,\"cmd\":\"attach\",\"pid\":1,\"objs\":[\"lib/libc.so.6\"]}\n", EINVAL, 8);
        refused("{\"v\":1,\"id\":8,\"cmd\":\"attach\",\"pid\":1,\"objs\":[\"/ok\",\"\"]}\n", EINVAL, 8);
        refused("{\"v\":1,\"id\":8,\"cmd\":\"attach\",\"pid\":1,\"objs\":{\"a\":\"/x\"}}\n", EINVAL, 8);

        /* 16 objects pass, 17 do not. */
        f = open_memstream(&sixteen, &n);
        ASSERT_TRUE(f);
        fputs("{\"v\":1,\"id\":8,\"cmd\":\"attach\",\"pid\":1,\"objs\":[", f);
        for (int i = 0; i < MEMLEAK_MAX_OBJS; i++)
                fprintf(f, "%s\"/lib/obj%d.so\"", i ? "," : "", i);
        fputs("]}\n", f);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(parse(sixteen, &req, &id, &message), 0);
        ASSERT_EQ(req.n_objs, MEMLEAK_MAX_OBJS);
        ASSERT_STREQ(req.objs[15], "/lib/obj15.so");
        memleak_request_done(&req);

        f = open_memstream(&many, &n);
        ASSERT_TRUE(f);
        fputs("{\"v\":1,\"id\":8,\"cmd\":\"attach\",\"pid\":1,\"objs\":[", f);
        for (int i = 0; i < MEMLEAK_MAX_OBJS + 1; i++)
                fprintf(f, "%s\"/lib/obj%d.so\"", i ? "," : "", i);
        fputs("]}\n", f);
        ASSERT_EQ(fclose(f), 0);
        refused(many, EINVAL, 8);

        /* A path of 4095 bytes passes, 4096 does not. */
        f = open_memstream(&max_path, &n);
        ASSERT_TRUE(f);
        fputs("{\"v\":1,\"id\":8,\"cmd\":\"attach\",\"pid\":1,\"objs\":[\"", f);
        for (int i = 0; i < MEMLEAK_MAX_PATH_BYTES - 1; i++)
                fputc('/', f);
        fputs("\"]}\n", f);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_EQ(parse(max_path, &req, &id, &message), 0);
        ASSERT_EQ(strlen(req.objs[0]), MEMLEAK_MAX_PATH_BYTES - 1);
        memleak_request_done(&req);

        f = open_memstream(&long_path, &n);
        ASSERT_TRUE(f);
        fputs("{\"v\":1,\"id\":8,\"cmd\":\"attach\",\"pid\":1,\"objs\":[\"", f);
        for (int i = 0; i < MEMLEAK_MAX_PATH_BYTES; i++)
                fputc('/', f);
        fputs("\"]}\n", f);
        ASSERT_EQ(fclose(f), 0);
        refused(long_path, EINVAL, 8);
}

static void protocol_refuses_out_of_range_numbers(void)
{
        refused("{\"v\":1,\"id\":9,\"cmd\":\"report\",\"top\":1000001}\n", EINVAL, 9);
        refused("{\"v\":1,\"id\":9,\"cmd\":\"report\",\"top\":-1}\n", EINVAL, 9);
        refused("{\"v\":1,\"id\":9,\"cmd\":\"report\",\"top\":\"10\"}\n", EINVAL, 9);
        refused("{\"v\":1,\"id\":9,\"cmd\":\"report\",\"min_age_s\":315360001}\n", EINVAL, 9);
        refused("{\"v\":1,\"id\":9,\"cmd\":\"report\",\"min_age_s\":0.5}\n", EINVAL, 9);
        refused("{\"v\":1,\"id\":9,\"cmd\":\"attach\",\"pid\":1,\"min_size\":-4}\n", EINVAL, 9);
        refused("{\"v\":1,\"id\":9,\"cmd\":\"attach\",\"pid\":1,\"max_size\":1e20}\n", EINVAL, 9);
        refused("{\"v\":1,\"id\":9,\"cmd\":\"attach\",\"pid\":1,\"max_size\":281474976710657}\n", EINVAL, 9);
}

static void protocol_parses_kernel_target_requests(void)
{
        struct memleak_request req = {};
        const char *message = NULL;
        uint64_t id = 0;

        ASSERT_EQ(parse("{\"v\":1,\"id\":3,\"cmd\":\"attach\",\"kernel\":true,\"kernel_pid\":4321,"
                        "\"kernel_comm\":\"kworker/0:1-ev\",\"min_size\":64}", &req, &id, &message), 0);
        ASSERT_EQ(req.cmd, MEMLEAK_CMD_ATTACH);
        ASSERT_TRUE(req.kernel);
        ASSERT_TRUE(!req.has_pid);
        ASSERT_EQ(req.kernel_pid, 4321);
        ASSERT_STREQ(req.kernel_comm, "kworker/0:1-ev");
        ASSERT_EQ(req.min_size, 64);
        memleak_request_done(&req);

        req = (struct memleak_request) {};
        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"detach\",\"kernel\":true}", &req, &id, &message), 0);
        ASSERT_TRUE(req.kernel && !req.has_pid && req.kernel_pid == 0 && req.kernel_comm[0] == '\0');
        req = (struct memleak_request) {};
        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"report\",\"kernel\":true,\"top\":3}", &req, &id, &message), 0);
        ASSERT_TRUE(req.kernel && req.top == 3);
        /* "kernel": false is no kernel target: a pid is then needed where one is required */
        req = (struct memleak_request) {};
        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"attach\",\"kernel\":false,\"pid\":5}", &req, &id, &message), 0);
        ASSERT_TRUE(!req.kernel && req.has_pid && req.pid == 5);
}

static void protocol_refuses_ambiguous_or_misplaced_kernel_fields(void)
{
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":true,\"pid\":5}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"report\",\"kernel\":true,\"pid\":5}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":false}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\"}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"detach\"}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":1}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":\"yes\"}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"status\",\"kernel\":true}\n", EINVAL, 4);
        /* the filter belongs to the kernel target, and to attach only */
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"pid\":5,\"kernel_pid\":6}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"pid\":5,\"kernel_comm\":\"x\"}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"detach\",\"kernel\":true,\"kernel_pid\":6}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"report\",\"kernel\":true,\"kernel_comm\":\"x\"}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":true,\"kernel_pid\":0}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":true,\"kernel_pid\":-3}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":true,\"kernel_comm\":\"\"}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":true,\"kernel_comm\":\"0123456789abcdef\"}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":true,\"kernel_comm\":7}\n", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":true,\"objs\":[\"/lib/libc.so.6\"]}\n", EINVAL, 4);
}

static void protocol_request_to_json_round_trips(void)
{
        static const char *const objs[] = { "/usr/lib/libtcmalloc.so.4", "/opt/a \"quoted\"\n path" };
        struct memleak_request in[] = {
                { .id = 1, .cmd = MEMLEAK_CMD_ATTACH, .has_pid = true, .pid = 42, .n_objs = 2,
                  .min_size = 8, .max_size = 1 << 20 },
                { .id = 0, .cmd = MEMLEAK_CMD_ATTACH, .has_pid = true, .pid = 1,
                  .min_size = MEMLEAK_MAX_SIZE_BYTES, .max_size = MEMLEAK_MAX_SIZE_BYTES },
                { .id = 2, .cmd = MEMLEAK_CMD_DETACH, .has_pid = true, .pid = 43 },
                { .id = 3, .cmd = MEMLEAK_CMD_STATUS },
                { .id = 4, .cmd = MEMLEAK_CMD_REPORT, .top = 0, .min_age_s = 30 },
                { .id = MEMLEAK_MAX_ID, .cmd = MEMLEAK_CMD_REPORT, .has_pid = true, .pid = 44, .top = 25 },
                { .id = 5, .cmd = MEMLEAK_CMD_ATTACH, .kernel = true, .kernel_pid = 45,
                  .kernel_comm = "eventfd-holder", .min_size = 32 },
                { .id = 6, .cmd = MEMLEAK_CMD_DETACH, .kernel = true },
                { .id = 7, .cmd = MEMLEAK_CMD_REPORT, .kernel = true, .top = 3 },
        };

        in[0].objs[0] = (char *) objs[0];
        in[0].objs[1] = (char *) objs[1];
        for (size_t i = 0; i < ELEMENTSOF(in); i++) {
                _cleanup_json_ cJSON *msg = memleak_request_to_json(&in[i]);
                _cleanup_free_ char *frame = NULL;
                struct memleak_request out = {};
                const char *message = NULL;
                uint64_t id = 0;
                size_t len = 0;

                ASSERT_TRUE(msg);
                frame = memleak_frame_encode(msg, &len);
                ASSERT_TRUE(frame);
                ASSERT_EQ(len, strlen(frame));
                ASSERT_EQ(memleak_frame_find_end(frame, len), len);     /* one line, ends in \n */
                ASSERT_EQ(memleak_request_parse(frame, len, &out, &id, &message), 0);
                ASSERT_EQ(id, in[i].id);
                ASSERT_EQ(out.id, in[i].id);
                ASSERT_EQ(out.cmd, in[i].cmd);
                ASSERT_EQ(out.has_pid, in[i].has_pid);
                ASSERT_EQ(out.pid, in[i].pid);
                ASSERT_EQ(out.n_objs, in[i].n_objs);
                for (unsigned j = 0; j < out.n_objs; j++)
                        ASSERT_STREQ(out.objs[j], in[i].objs[j]);
                ASSERT_EQ(out.min_size, in[i].min_size);
                ASSERT_EQ(out.max_size, in[i].max_size);
                ASSERT_EQ(out.kernel, in[i].kernel);
                ASSERT_EQ(out.kernel_pid, in[i].kernel_pid);
                ASSERT_STREQ(out.kernel_comm, in[i].kernel_comm);
                if (in[i].cmd == MEMLEAK_CMD_REPORT) {
                        ASSERT_EQ(out.top, in[i].top);
                        ASSERT_EQ(out.min_age_s, in[i].min_age_s);
                }
                memleak_request_done(&out);
        }
}

static void protocol_maps_errno_codes_both_ways(void)
{
        static const struct {
                int error;
                const char *code;
        } named[] = {
                { ESRCH, "ESRCH" }, { EINVAL, "EINVAL" }, { EPERM, "EPERM" }, { EACCES, "EACCES" },
                { EEXIST, "EEXIST" }, { E2BIG, "E2BIG" }, { EPROTONOSUPPORT, "EPROTONOSUPPORT" },
                { EOPNOTSUPP, "EOPNOTSUPP" }, { ENOSPC, "ENOSPC" }, { ENOENT, "ENOENT" },
                { ENOEXEC, "ENOEXEC" }, { EIO, "EIO" }, { ENOMEM, "ENOMEM" }, { EBUSY, "EBUSY" },
                { ENOTCONN, "ENOTCONN" }, { ETIMEDOUT, "ETIMEDOUT" }, { ECONNREFUSED, "ECONNREFUSED" },
                { EBADMSG, "EBADMSG" },
        };

        for (size_t i = 0; i < ELEMENTSOF(named); i++) {
                ASSERT_STREQ(memleak_errno_to_code(named[i].error), named[i].code);
                ASSERT_STREQ(memleak_errno_to_code(-named[i].error), named[i].code);
                ASSERT_EQ(memleak_errno_from_code(named[i].code), named[i].error);
        }
        /* Every errno round-trips or falls back to EIO, never to something else. */
        for (int e = 1; e < 200; e++) {
                const char *code = memleak_errno_to_code(e);

                ASSERT_TRUE(memleak_errno_from_code(code) == e || strcmp(code, "EIO") == 0);
        }
        ASSERT_STREQ(memleak_errno_to_code(0), "EIO");
        ASSERT_STREQ(memleak_errno_to_code(4095), "EIO");
        ASSERT_EQ(memleak_errno_from_code("EWHATEVER"), EIO);
        ASSERT_EQ(memleak_errno_from_code("esrch"), EIO);
        ASSERT_EQ(memleak_errno_from_code(NULL), EIO);
}

static void protocol_command_names_round_trip(void)
{
        for (int c = 0; c < _MEMLEAK_CMD_MAX; c++)
                ASSERT_EQ(memleak_command_from_string(memleak_command_to_string(c)), c);
        ASSERT_STREQ(memleak_command_to_string(MEMLEAK_CMD_ATTACH), "attach");
        ASSERT_TRUE(memleak_command_to_string(_MEMLEAK_CMD_MAX) == NULL);
        ASSERT_TRUE(memleak_command_to_string(_MEMLEAK_CMD_INVALID) == NULL);
        ASSERT_EQ(memleak_command_from_string("nope"), _MEMLEAK_CMD_INVALID);
        ASSERT_EQ(memleak_command_from_string(NULL), _MEMLEAK_CMD_INVALID);
}

static cJSON *parse_json(const char *text)
{
        cJSON *j = cJSON_Parse(text);

        ASSERT_TRUE(j);
        return j;
}

static void protocol_builds_ok_and_error_replies(void)
{
        _cleanup_json_ cJSON *ok = memleak_response_new_ok(17), *err = memleak_response_new_error(18, -ESRCH, "gone");
        _cleanup_json_ cJSON *err2 = memleak_response_new_error(19, EEXIST, NULL);
        _cleanup_free_ char *ok_text = NULL, *frame = NULL;
        const char *message = NULL;
        size_t len = 0;

        ASSERT_TRUE(ok && err && err2);
        ok_text = cJSON_PrintUnformatted(ok);
        ASSERT_STREQ(ok_text, "{\"v\":1,\"version\":\"" MEMLEAKD_VERSION "\",\"id\":17,\"ok\":true}");
        frame = memleak_frame_encode(err, &len);
        ASSERT_STREQ(frame, "{\"v\":1,\"version\":\"" MEMLEAKD_VERSION "\",\"id\":18,\"ok\":false,\"error\":{\"code\":\"ESRCH\",\"message\":\"gone\"}}\n");
        ASSERT_EQ(len, strlen(frame));

        ASSERT_EQ(memleak_response_check(ok, 17, &message), 0);
        ASSERT_EQ(memleak_response_check(err, 18, &message), -ESRCH);
        ASSERT_STREQ(message, "gone");
        ASSERT_EQ(memleak_response_check(err2, 19, &message), -EEXIST);
        ASSERT_STREQ(message, strerror(EEXIST));
}

static void protocol_response_check_refuses_mismatched_or_malformed_replies(void)
{
        _cleanup_json_ cJSON *ok = memleak_response_new_ok(17), *err = memleak_response_new_error(18, ESRCH, "x");
        _cleanup_json_ cJSON *err0 = memleak_response_new_error(0, E2BIG, "Request larger than 65536 bytes");
        _cleanup_json_ cJSON *ok0 = memleak_response_new_ok(0);
        _cleanup_json_ cJSON *v2 = parse_json("{\"v\":2,\"id\":17,\"ok\":true}");
        _cleanup_json_ cJSON *no_ok = parse_json("{\"v\":1,\"id\":17}");
        _cleanup_json_ cJSON *no_id = parse_json("{\"v\":1,\"ok\":true}");
        _cleanup_json_ cJSON *arr = parse_json("[1]");
        _cleanup_json_ cJSON *bad_err = parse_json("{\"v\":1,\"id\":17,\"ok\":false}");
        _cleanup_json_ cJSON *unknown = parse_json("{\"v\":1,\"id\":17,\"ok\":false,"
                                                    "\"error\":{\"code\":\"EFUTURE\",\"message\":\"m\"}}");
        const char *message = NULL;

        ASSERT_EQ(memleak_response_check(ok, 18, &message), -EBADMSG);
        ASSERT_TRUE(strstr(message, "id"));
        ASSERT_EQ(memleak_response_check(err, 17, &message), -EBADMSG);
        ASSERT_EQ(memleak_response_check(ok0, 17, &message), -EBADMSG);
        /* An error about a request the daemon could not read carries id 0: it is ours. */
        ASSERT_EQ(memleak_response_check(err0, 17, &message), -E2BIG);
        ASSERT_STREQ(message, "Request larger than 65536 bytes");
        ASSERT_EQ(memleak_response_check(v2, 17, &message), -EPROTONOSUPPORT);
        ASSERT_EQ(memleak_response_check(no_ok, 17, &message), -EBADMSG);
        ASSERT_EQ(memleak_response_check(no_id, 17, &message), -EBADMSG);
        ASSERT_EQ(memleak_response_check(arr, 17, &message), -EBADMSG);
        ASSERT_EQ(memleak_response_check(bad_err, 17, &message), -EBADMSG);
        ASSERT_EQ(memleak_response_check(unknown, 17, &message), -EIO);
        ASSERT_STREQ(message, "m");
        ASSERT_EQ(memleak_response_check(NULL, 17, &message), -EBADMSG);
}

static void protocol_frame_find_end_finds_first_line(void)
{
        ASSERT_EQ(memleak_frame_find_end("", 0), 0);
        ASSERT_EQ(memleak_frame_find_end("{\"v\":1", 6), 0);
        ASSERT_EQ(memleak_frame_find_end("{}\n{}\n", 6), 3);
        ASSERT_EQ(memleak_frame_find_end("\n", 1), 1);
        /* Only the first len bytes count. */
        ASSERT_EQ(memleak_frame_find_end("abc\n", 3), 0);
}

static void protocol_parses_and_checks_attach_before_exec(void)
{
        struct memleak_request req = {};
        const char *message = NULL;
        uint64_t id = 0;
        cJSON *o;

        ASSERT_EQ(parse("{\"v\":1,\"id\":3,\"cmd\":\"attach\",\"pid\":99,\"exec\":\"/usr/bin/prog\"}",
                        &req, &id, &message), 0);
        ASSERT_STREQ(req.exec, "/usr/bin/prog");
        o = memleak_request_to_json(&req);
        ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, F_EXEC)), "/usr/bin/prog");
        cJSON_Delete(o);
        memleak_request_done(&req);
        ASSERT_TRUE(req.exec == NULL);

        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"pid\":99,\"exec\":\"relative/prog\"}", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"pid\":99,\"exec\":7}", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"attach\",\"kernel\":true,\"exec\":\"/bin/x\"}", EINVAL, 4);
        refused("{\"v\":1,\"id\":4,\"cmd\":\"report\",\"pid\":99,\"exec\":\"/bin/x\"}", EINVAL, 4);
}

static void protocol_parses_history_and_unwind(void)
{
        struct memleak_request req = {};
        const char *message = NULL;
        uint64_t id = 0;
        cJSON *o;

        ASSERT_EQ(parse("{\"v\":1,\"id\":5,\"cmd\":\"history\",\"pid\":99,\"stack_id\":9007199254740991,\"top\":3}",
                        &req, &id, &message), 0);
        ASSERT_EQ(req.cmd, MEMLEAK_CMD_HISTORY);
        ASSERT_TRUE(req.has_stack_id);
        ASSERT_TRUE(req.stack_id == 9007199254740991ULL);
        ASSERT_EQ(req.top, 3);
        o = memleak_request_to_json(&req);
        {
                /* sent as its digits: cJSON's own printing would round 6474599761542939 */
                _cleanup_free_ char *text = NULL;

                req.stack_id = 6474599761542939ULL;
                cJSON_Delete(o);
                o = memleak_request_to_json(&req);
                text = cJSON_PrintUnformatted(o);
                ASSERT_TRUE(text && strstr(text, "\"stack_id\":6474599761542939"));
        }
        cJSON_Delete(o);
        memleak_request_done(&req);
        req = (struct memleak_request) {};
        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"history\"}", &req, &id, &message), 0);
        ASSERT_TRUE(!req.has_stack_id);
        memleak_request_done(&req);

        refused("{\"v\":1,\"id\":6,\"cmd\":\"history\",\"stack_id\":9007199254740992}", EINVAL, 6);
        refused("{\"v\":1,\"id\":6,\"cmd\":\"history\",\"stack_id\":-1}", EINVAL, 6);
        refused("{\"v\":1,\"id\":6,\"cmd\":\"report\",\"stack_id\":1}", EINVAL, 6);
        refused("{\"v\":1,\"id\":6,\"cmd\":\"history\",\"pid\":1,\"kernel\":true}", EINVAL, 6);

        req = (struct memleak_request) {};
        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"attach\",\"pid\":9,\"unwind\":\"fp\"}", &req, &id, &message), 0);
        ASSERT_EQ(req.unwind, MEMLEAK_UNWIND_FP);
        o = memleak_request_to_json(&req);
        ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, F_UNWIND)), "fp");
        cJSON_Delete(o);
        memleak_request_done(&req);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"pid\":9,\"unwind\":\"frame-pointers\"}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"pid\":9,\"unwind\":1}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"kernel\":true,\"unwind\":\"fp\"}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"report\",\"unwind\":\"fp\"}", EINVAL, 7);

        /* a report listing only the growing stacks (memleakctl leaks) */
        req = (struct memleak_request) {};
        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"report\",\"verdict\":\"growing\"}", &req, &id, &message), 0);
        ASSERT_EQ(req.verdict, 1 + MEMLEAK_VERDICT_GROWING);
        o = memleak_request_to_json(&req);
        ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, F_VERDICT)), "growing");
        cJSON_Delete(o);
        memleak_request_done(&req);
        req = (struct memleak_request) { .cmd = MEMLEAK_CMD_REPORT };
        o = memleak_request_to_json(&req);
        ASSERT_TRUE(!cJSON_GetObjectItemCaseSensitive(o, F_VERDICT));   /* 0: every stack, not sent */
        cJSON_Delete(o);
        refused("{\"v\":1,\"id\":8,\"cmd\":\"report\",\"verdict\":\"leaking\"}", EINVAL, 8);
        refused("{\"v\":1,\"id\":8,\"cmd\":\"history\",\"verdict\":\"growing\"}", EINVAL, 8);
}

static void protocol_parses_follow_forks_and_children(void)
{
        struct memleak_request req = {};
        const char *message = NULL;
        uint64_t id = 0;
        _cleanup_free_ char *text = NULL;
        cJSON *o;

        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"attach\",\"pid\":9,\"follow_forks\":true}", &req, &id, &message), 0);
        ASSERT_TRUE(req.follow_forks);
        o = memleak_request_to_json(&req);
        text = cJSON_PrintUnformatted(o);
        ASSERT_TRUE(text && strstr(text, "\"follow_forks\":true"));
        cJSON_Delete(o);
        memleak_request_done(&req);
        req = (struct memleak_request) {};
        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"report\",\"pid\":9,\"children\":true}", &req, &id, &message), 0);
        ASSERT_TRUE(req.children);
        memleak_request_done(&req);
        req = (struct memleak_request) {};
        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"history\",\"pid\":9,\"children\":false}", &req, &id, &message), 0);
        ASSERT_TRUE(!req.children);
        memleak_request_done(&req);

        /* the kernel has no children; "children" adds to a pid; each on its commands only */
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"kernel\":true,\"follow_forks\":true}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"report\",\"children\":true}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"report\",\"kernel\":true,\"children\":true}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"pid\":9,\"follow_forks\":1}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"report\",\"pid\":9,\"follow_forks\":true}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"pid\":9,\"children\":true}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"detach\",\"kernel\":true,\"children\":true}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"status\",\"children\":true}", EINVAL, 7);
        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"detach\",\"pid\":9,\"children\":true}", &req, &id, &message), 0);
        ASSERT_TRUE(req.children);
        memleak_request_done(&req);
}

static void protocol_parses_unit_and_cgroup(void)
{
        struct memleak_request req = {};
        const char *message = NULL;
        uint64_t id = 0;
        _cleanup_free_ char *text = NULL;
        cJSON *o;

        ASSERT_EQ(parse("{\"v\":1,\"cmd\":\"attach\",\"unit\":\"nginx.service\",\"sample_bytes\":4096}", &req, &id,
                        &message), 0);
        ASSERT_STREQ(req.unit, "nginx.service");
        ASSERT_TRUE(!req.has_pid && !req.kernel && !req.cgroup);
        o = memleak_request_to_json(&req);
        text = cJSON_PrintUnformatted(o);
        ASSERT_TRUE(text && strstr(text, "\"unit\":\"nginx.service\""));
        cJSON_Delete(o);
        memleak_request_done(&req);
        ASSERT_TRUE(req.unit == NULL);
        for (const char *const *cmd = (const char *const[]) { "detach", "report", "history", NULL }; *cmd; cmd++) {
                _cleanup_free_ char *line = NULL;

                ASSERT_TRUE(asprintf(&line, "{\"v\":1,\"cmd\":\"%s\",\"cgroup\":\"system.slice/x.service\"}", *cmd) > 0);
                req = (struct memleak_request) {};
                ASSERT_EQ(parse(line, &req, &id, &message), 0);
                ASSERT_STREQ(req.cgroup, "system.slice/x.service");
                memleak_request_done(&req);
        }

        /* one target at most; names of text; not on status; no scan of a whole service */
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"pid\":9,\"unit\":\"a.service\"}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"report\",\"kernel\":true,\"cgroup\":\"a\"}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"unit\":\"a.service\",\"cgroup\":\"a\"}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"unit\":\"\"}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"unit\":5}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"cgroup\":\"a\\nb\"}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"attach\",\"cgroup\":\"a\",\"reachability\":true}", EINVAL, 7);
        refused("{\"v\":1,\"id\":7,\"cmd\":\"report\",\"unit\":\"a.service\",\"children\":true}", EINVAL, 7);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(protocol_parses_attach_with_every_field),
                TEST(protocol_parses_minimal_attach_detach_status),
                TEST(protocol_parses_report_with_defaults_and_bounds),
                TEST(protocol_refuses_malformed_framing_and_json),
                TEST(protocol_refuses_oversized_line_before_parsing),
                TEST(protocol_refuses_bad_version_and_command),
                TEST(protocol_refuses_bad_pid),
                TEST(protocol_ignores_unknown_fields_and_names_them),
        TEST(protocol_refuses_unknown_and_misplaced_fields),
                TEST(protocol_refuses_bad_objs),
                TEST(protocol_refuses_out_of_range_numbers),
                TEST(protocol_parses_kernel_target_requests),
                TEST(protocol_refuses_ambiguous_or_misplaced_kernel_fields),
                TEST(protocol_request_to_json_round_trips),
                TEST(protocol_maps_errno_codes_both_ways),
                TEST(protocol_command_names_round_trip),
                TEST(protocol_builds_ok_and_error_replies),
                TEST(protocol_response_check_refuses_mismatched_or_malformed_replies),
                TEST(protocol_frame_find_end_finds_first_line),
                TEST(protocol_parses_and_checks_attach_before_exec),
                TEST(protocol_parses_history_and_unwind),
                TEST(protocol_parses_follow_forks_and_children),
                TEST(protocol_parses_unit_and_cgroup),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
