/* SPDX-License-Identifier: MIT */
/* Encode and validate protocol messages: table-driven request decoding, replies, error codes. */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json-util.h"
#include "macro.h"
#include "protocol.h"
#include "string-table.h"

static const char *const memleak_command_table[_MEMLEAK_CMD_MAX] = {
        [MEMLEAK_CMD_ATTACH] = "attach",
        [MEMLEAK_CMD_DETACH] = "detach",
        [MEMLEAK_CMD_STATUS] = "status",
        [MEMLEAK_CMD_REPORT] = "report",
        [MEMLEAK_CMD_HISTORY] = "history",
        [MEMLEAK_CMD_METRICS] = "metrics",
};

DEFINE_STRING_TABLE_LOOKUP(memleak_command, enum memleak_command);

static const char *const memleak_verdict_table[_MEMLEAK_VERDICT_MAX] = {
        [MEMLEAK_VERDICT_PENDING] = "pending",
        [MEMLEAK_VERDICT_GROWING] = "growing",
        [MEMLEAK_VERDICT_PLATEAU] = "plateau",
        [MEMLEAK_VERDICT_CHURN] = "churn",
};

DEFINE_STRING_TABLE_LOOKUP(memleak_verdict, enum memleak_verdict);

static const char *const memleak_unwind_table[_MEMLEAK_UNWIND_MAX] = {
        [MEMLEAK_UNWIND_AUTO] = "auto",
        [MEMLEAK_UNWIND_DWARF] = "dwarf",
        [MEMLEAK_UNWIND_FP] = "fp",
};

DEFINE_STRING_TABLE_LOOKUP(memleak_unwind, enum memleak_unwind);

/* The request fields: how each is typed, which commands allow it and which require it. */
enum field_type {
        FIELD_HEADER,   /* v and cmd: checked before the table runs */
        FIELD_U64,      /* integer in [0, max], stored at offset */
        FIELD_PID,      /* integer in [1, INT32_MAX], stored as int32_t at offset */
        FIELD_OBJS,     /* array of at most MEMLEAK_MAX_OBJS absolute paths */
        FIELD_BOOL,     /* true or false, stored as bool at offset */
        FIELD_COMM,     /* string of 1 to MEMLEAK_MAX_COMM_BYTES bytes, stored at offset */
        FIELD_PATH,     /* absolute path shorter than MEMLEAK_MAX_PATH_BYTES, strdup'd to a char * at offset */
        FIELD_UNWIND,   /* "auto", "dwarf" or "fp", stored as enum memleak_unwind at offset */
        FIELD_STACK_ID, /* integer in [0, max] at offset; has_stack_id set */
        FIELD_VERDICT,  /* "growing", "plateau", "churn" or "pending", stored as 1 + the enum at offset */
        FIELD_NAME,     /* string of 1 to MEMLEAK_MAX_PATH_BYTES - 1 printable bytes, strdup'd to a char * at offset */
};

#define CMD_BIT(c) (1u << (c))
#define ALL_CMDS   (CMD_BIT(_MEMLEAK_CMD_MAX) - 1)

struct field_spec {
        const char *name;
        enum field_type type;
        size_t offset;          /* FIELD_U64, FIELD_PID, FIELD_BOOL, FIELD_COMM: where in struct memleak_request */
        uint64_t max;           /* FIELD_U64: largest value accepted */
        unsigned allowed;       /* CMD_BIT()s of the commands that accept it */
        unsigned required;      /* CMD_BIT()s of the commands that need it */
        const char *invalid;    /* message for a wrong type or a value out of range */
        const char *missing;    /* message when a command requires it and it is absent */
};

static const struct field_spec request_fields[] = {
        { F_VERSION, FIELD_HEADER, 0, 0, ALL_CMDS, ALL_CMDS, NULL, NULL },
        { F_CMD, FIELD_HEADER, 0, 0, ALL_CMDS, ALL_CMDS, NULL, NULL },
        { F_ID, FIELD_U64, offsetof(struct memleak_request, id), MEMLEAK_MAX_ID,
          ALL_CMDS, 0,
          "\"id\" must be an integer between 0 and 4294967295", NULL },
        /* attach and detach need "pid" or "kernel": check_target() */
        { F_PID, FIELD_PID, offsetof(struct memleak_request, pid), 0,
          CMD_BIT(MEMLEAK_CMD_ATTACH) | CMD_BIT(MEMLEAK_CMD_DETACH) | CMD_BIT(MEMLEAK_CMD_REPORT) |
          CMD_BIT(MEMLEAK_CMD_HISTORY), 0,
          "\"pid\" must be an integer between 1 and 2147483647", NULL },
        { F_OBJS, FIELD_OBJS, 0, 0, CMD_BIT(MEMLEAK_CMD_ATTACH), 0,
          "\"objs\" must be an array of at most 16 absolute paths, each shorter than 4096 bytes", NULL },
        { F_EXEC, FIELD_PATH, offsetof(struct memleak_request, exec), 0, CMD_BIT(MEMLEAK_CMD_ATTACH), 0,
          "\"exec\" must be an absolute path shorter than 4096 bytes", NULL },
        { F_MIN_SIZE, FIELD_U64, offsetof(struct memleak_request, min_size), MEMLEAK_MAX_SIZE_BYTES,
          CMD_BIT(MEMLEAK_CMD_ATTACH), 0,
          "\"min_size\" must be an integer between 0 and 2^48", NULL },
        { F_MAX_SIZE, FIELD_U64, offsetof(struct memleak_request, max_size), MEMLEAK_MAX_SIZE_BYTES,
          CMD_BIT(MEMLEAK_CMD_ATTACH), 0,
          "\"max_size\" must be an integer between 0 and 2^48", NULL },
        { F_SAMPLE_BYTES, FIELD_U64, offsetof(struct memleak_request, sample_bytes), MEMLEAK_MAX_SAMPLE_BYTES,
          CMD_BIT(MEMLEAK_CMD_ATTACH), 0,
          "\"sample_bytes\" must be an integer between 0 and 2^32", NULL },
        { F_TOP, FIELD_U64, offsetof(struct memleak_request, top), MEMLEAK_MAX_TOP,
          CMD_BIT(MEMLEAK_CMD_REPORT) | CMD_BIT(MEMLEAK_CMD_HISTORY), 0,
          "\"top\" must be an integer between 0 and 1000000", NULL },
        { F_MIN_AGE_S, FIELD_U64, offsetof(struct memleak_request, min_age_s), MEMLEAK_MAX_MIN_AGE_S,
          CMD_BIT(MEMLEAK_CMD_REPORT), 0,
          "\"min_age_s\" must be an integer between 0 and 315360000 (ten years)", NULL },
        { F_KERNEL, FIELD_BOOL, offsetof(struct memleak_request, kernel), 0,
          CMD_BIT(MEMLEAK_CMD_ATTACH) | CMD_BIT(MEMLEAK_CMD_DETACH) | CMD_BIT(MEMLEAK_CMD_REPORT) |
          CMD_BIT(MEMLEAK_CMD_HISTORY), 0,
          "\"kernel\" must be true or false", NULL },
        { F_KERNEL_PID, FIELD_PID, offsetof(struct memleak_request, kernel_pid), 0,
          CMD_BIT(MEMLEAK_CMD_ATTACH), 0,
          "\"kernel_pid\" must be an integer between 1 and 2147483647", NULL },
        { F_KERNEL_COMM, FIELD_COMM, offsetof(struct memleak_request, kernel_comm), 0,
          CMD_BIT(MEMLEAK_CMD_ATTACH), 0,
          "\"kernel_comm\" must be a string of 1 to 15 bytes", NULL },
        { F_MMAP, FIELD_BOOL, offsetof(struct memleak_request, mmap), 0,
          CMD_BIT(MEMLEAK_CMD_ATTACH), 0,
          "\"mmap\" must be true or false", NULL },
        { F_STACK_ID, FIELD_STACK_ID, offsetof(struct memleak_request, stack_id), MEMLEAK_MAX_STACK_ID,
          CMD_BIT(MEMLEAK_CMD_HISTORY), 0,
          "\"stack_id\" must be an integer between 0 and 2^53 - 1", NULL },
        { F_VERDICT, FIELD_VERDICT, offsetof(struct memleak_request, verdict), 0,
          CMD_BIT(MEMLEAK_CMD_REPORT), 0,
          "\"verdict\" must be \"growing\", \"plateau\", \"churn\" or \"pending\"", NULL },
        { F_REACHABILITY, FIELD_BOOL, offsetof(struct memleak_request, reachability), 0,
          CMD_BIT(MEMLEAK_CMD_ATTACH) | CMD_BIT(MEMLEAK_CMD_REPORT), 0,
          "\"reachability\" must be true or false", NULL },
        { F_SNAPSHOT_ONLY, FIELD_BOOL, offsetof(struct memleak_request, snapshot_only), 0,
          CMD_BIT(MEMLEAK_CMD_REPORT), 0,
          "\"reachability_snapshot_only\" must be true or false", NULL },
        { F_UNWIND, FIELD_UNWIND, offsetof(struct memleak_request, unwind), 0,
          CMD_BIT(MEMLEAK_CMD_ATTACH), 0,
          "\"unwind\" must be \"auto\", \"dwarf\" or \"fp\"", NULL },
        { F_FOLLOW_FORKS, FIELD_BOOL, offsetof(struct memleak_request, follow_forks), 0,
          CMD_BIT(MEMLEAK_CMD_ATTACH), 0,
          "\"follow_forks\" must be true or false", NULL },
        { F_CHILDREN, FIELD_BOOL, offsetof(struct memleak_request, children), 0,
          CMD_BIT(MEMLEAK_CMD_REPORT) | CMD_BIT(MEMLEAK_CMD_HISTORY) | CMD_BIT(MEMLEAK_CMD_DETACH), 0,
          "\"children\" must be true or false", NULL },
        { F_UNIT, FIELD_NAME, offsetof(struct memleak_request, unit), 0,
          CMD_BIT(MEMLEAK_CMD_ATTACH) | CMD_BIT(MEMLEAK_CMD_DETACH) | CMD_BIT(MEMLEAK_CMD_REPORT) |
          CMD_BIT(MEMLEAK_CMD_HISTORY) | CMD_BIT(MEMLEAK_CMD_STATUS), 0,
          "\"unit\" must be a unit's name (NAME.service, .scope or .slice)", NULL },
        { F_CGROUP, FIELD_NAME, offsetof(struct memleak_request, cgroup), 0,
          CMD_BIT(MEMLEAK_CMD_ATTACH) | CMD_BIT(MEMLEAK_CMD_DETACH) | CMD_BIT(MEMLEAK_CMD_REPORT) |
          CMD_BIT(MEMLEAK_CMD_HISTORY) | CMD_BIT(MEMLEAK_CMD_STATUS), 0,
          "\"cgroup\" must be a cgroup v2 directory's path shorter than 4096 bytes", NULL },
        { F_LOCATIONS, FIELD_BOOL, offsetof(struct memleak_request, locations), 0,
          CMD_BIT(MEMLEAK_CMD_REPORT), 0,
          "\"locations\" must be true or false", NULL },
};

static const struct field_spec *field_lookup(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(request_fields); i++)
                if (strcmp(request_fields[i].name, name) == 0)
                        return &request_fields[i];
        return NULL;
}

static void *field_at(const struct memleak_request *req, const struct field_spec *f)
{
        return (char *) req + f->offset;
}

static uint64_t *field_u64(struct memleak_request *req, const struct field_spec *f)
{
        return field_at(req, f);
}

static int parse_comm(const cJSON *item, char *ret)
{
        const char *s = cJSON_GetStringValue(item);
        size_t n;

        if (!s)
                return -EINVAL;
        n = strnlen(s, MEMLEAK_MAX_COMM_BYTES + 1);
        if (n == 0 || n > MEMLEAK_MAX_COMM_BYTES)
                return -EINVAL;
        memcpy(ret, s, n);
        ret[n] = '\0';
        return 0;
}

static int parse_objs(const cJSON *item, struct memleak_request *req)
{
        const cJSON *e;

        if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) > MEMLEAK_MAX_OBJS)
                return -EINVAL;
        cJSON_ArrayForEach(e, item) {
                const char *s = cJSON_GetStringValue(e);

                if (!s || s[0] != '/' || strnlen(s, MEMLEAK_MAX_PATH_BYTES) >= MEMLEAK_MAX_PATH_BYTES)
                        return -EINVAL;
                req->objs[req->n_objs] = strdup(s);
                if (!req->objs[req->n_objs])
                        return -ENOMEM;
                req->n_objs++;
        }
        return 0;
}

static int parse_path(const cJSON *item, char **ret)
{
        const char *s = cJSON_GetStringValue(item);

        if (!s || s[0] != '/' || strnlen(s, MEMLEAK_MAX_PATH_BYTES) >= MEMLEAK_MAX_PATH_BYTES)
                return -EINVAL;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int parse_name(const cJSON *item, char **ret)
{
        const char *s = cJSON_GetStringValue(item);
        size_t n;

        if (!s)
                return -EINVAL;
        n = strnlen(s, MEMLEAK_MAX_PATH_BYTES);
        if (n == 0 || n >= MEMLEAK_MAX_PATH_BYTES)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return -EINVAL;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int parse_field(const struct field_spec *f, const cJSON *item, struct memleak_request *req)
{
        uint64_t v;
        int r;

        switch (f->type) {
        case FIELD_HEADER:
                return 0;
        case FIELD_U64:
                r = json_get_u64(item, f->max, &v);
                if (r < 0)
                        return r;
                *field_u64(req, f) = v;
                return 0;
        case FIELD_PID:
                r = json_get_u64(item, INT32_MAX, &v);
                if (r < 0 || v == 0)
                        return -EINVAL;
                *(int32_t *) field_at(req, f) = (int32_t) v;
                return 0;
        case FIELD_OBJS:
                return parse_objs(item, req);
        case FIELD_BOOL:
                if (!cJSON_IsBool(item))
                        return -EINVAL;
                *(bool *) field_at(req, f) = cJSON_IsTrue(item);
                return 0;
        case FIELD_COMM:
                return parse_comm(item, field_at(req, f));
        case FIELD_PATH:
                return parse_path(item, field_at(req, f));
        case FIELD_NAME:
                return parse_name(item, field_at(req, f));
        case FIELD_VERDICT: {
                enum memleak_verdict verdict = memleak_verdict_from_string(cJSON_GetStringValue(item));

                if (verdict < 0)
                        return -EINVAL;
                *(int *) field_at(req, f) = 1 + (int)verdict;
                return 0;
        }
        case FIELD_STACK_ID:
                r = json_get_u64(item, f->max, &v);
                if (r < 0)
                        return r;
                *field_u64(req, f) = v;
                req->has_stack_id = true;
                return 0;
        case FIELD_UNWIND: {
                enum memleak_unwind u = memleak_unwind_from_string(cJSON_GetStringValue(item));

                if (u <= MEMLEAK_UNWIND_DEFAULT)
                        return -EINVAL;
                *(enum memleak_unwind *) field_at(req, f) = u;
                return 0;
        }
        }
        return -EINVAL;
}

/* Which target a request names: attach and detach need "pid" or "kernel": true, never both;
 * report takes at most one; the kernel filter belongs to the kernel target only. */
static int check_target(const struct memleak_request *req, const char **error_message)
{
        bool targeted = req->cmd == MEMLEAK_CMD_ATTACH || req->cmd == MEMLEAK_CMD_DETACH;

        bool watch = req->unit || req->cgroup;

        if (req->has_pid + req->kernel + !!req->unit + !!req->cgroup > 1) {
                *error_message = "\"pid\", \"kernel\", \"unit\" and \"cgroup\" name different targets: give one";
                return -EINVAL;
        }
        if (targeted && !req->has_pid && !req->kernel && !watch) {
                *error_message = "Missing \"pid\" (or \"kernel\": true, \"unit\" or \"cgroup\")";
                return -EINVAL;
        }
        if (!req->kernel && (req->kernel_pid || req->kernel_comm[0])) {
                *error_message = "\"kernel_pid\" and \"kernel_comm\" filter the kernel target: they need \"kernel\": true";
                return -EINVAL;
        }
        if (req->kernel && req->mmap) {
                *error_message = "\"mmap\" tracks a process's mappings, not the kernel's";
                return -EINVAL;
        }
        if (req->kernel && req->unwind != MEMLEAK_UNWIND_DEFAULT) {
                *error_message = "\"unwind\" says how a process's stacks are walked, not the kernel's";
                return -EINVAL;
        }
        if (watch && req->reachability) {
                *error_message = "\"reachability\" holds one program memleakctl run starts; a unit or cgroup "
                                 "is scanned with memleakctl leaks --pid";
                return -EINVAL;
        }
        if (req->exec && !req->has_pid) {
                *error_message = "\"exec\" names the program a process is about to run: it needs \"pid\"";
                return -EINVAL;
        }
        if (req->kernel && req->follow_forks) {
                *error_message = "\"follow_forks\" follows a process's children; the kernel has none to follow";
                return -EINVAL;
        }
        if (req->children && !req->has_pid) {
                *error_message = "\"children\" adds the processes followed from \"pid\": it needs \"pid\"";
                return -EINVAL;
        }
        if (req->kernel && req->n_objs > 0) {
                *error_message = "\"objs\" name a process's objects, not the kernel's";
                return -EINVAL;
        }
        return 0;
}

/* Size and framing: at most one line, its newline optional here (the reader found the boundary). */
static int check_framing(const char *line, size_t len, const char **error_message)
{
        if (len > MEMLEAK_MAX_REQUEST_BYTES) {
                *error_message = "Request larger than 65536 bytes";
                return -E2BIG;
        }
        if (len > 0 && line[len - 1] == '\n')
                len--;
        if (memchr(line, '\0', len)) {
                *error_message = "Request contains a NUL byte";
                return -EINVAL;
        }
        if (memchr(line, '\n', len)) {
                *error_message = "Request spans more than one line";
                return -EINVAL;
        }
        return 0;
}

/* An unknown field of req (its name: NULL for an array element, which a request has not). */
static int note_unknown(struct memleak_request *req, const char *name)
{
        req->n_unknown_total++;
        if (req->n_unknown >= MEMLEAK_MAX_UNKNOWN_NAMED)
                return 0;
        req->unknown[req->n_unknown] = strndup(name ?: "", MEMLEAK_MAX_UNKNOWN_NAME_BYTES);
        if (!req->unknown[req->n_unknown])
                return -ENOMEM;
        req->n_unknown++;
        return 0;
}

cJSON *memleak_request_warnings(const struct memleak_request *req)
{
        _cleanup_json_ cJSON *a = NULL;
        char text[MEMLEAK_MAX_UNKNOWN_NAME_BYTES + 64];

        assert(req);
        if (req->n_unknown_total == 0)
                return NULL;
        a = cJSON_CreateArray();
        if (!a)
                return NULL;
        for (unsigned i = 0; i < req->n_unknown; i++) {
                snprintf(text, sizeof(text), "unknown field \"%s\" ignored", req->unknown[i]);
                if (!cJSON_AddItemToArray(a, cJSON_CreateString(text)))
                        return NULL;
        }
        if (req->n_unknown_total > req->n_unknown) {
                snprintf(text, sizeof(text), "%u more unknown fields ignored", req->n_unknown_total - req->n_unknown);
                if (!cJSON_AddItemToArray(a, cJSON_CreateString(text)))
                        return NULL;
        }
        return TAKE_PTR(a);
}

int memleak_request_parse(const char *line, size_t len, struct memleak_request *ret,
                          uint64_t *ret_id, const char **error_message)
{
        _cleanup_(memleak_request_done) struct memleak_request req = { .top = MEMLEAK_DEFAULT_TOP };
        _cleanup_json_ cJSON *root = NULL;
        _cleanup_free_ char *text = NULL;
        const cJSON *item, *version, *cmd;
        unsigned seen = 0;
        uint64_t v;
        int r;

        *ret_id = 0;
        *error_message = NULL;

        r = check_framing(line, len, error_message);
        if (r < 0)
                return r;

        /* A NUL-terminated copy lets cJSON refuse trailing garbage after the object. */
        text = strndup(line, len);
        if (!text) {
                *error_message = "Out of memory";
                return -ENOMEM;
        }
        root = cJSON_ParseWithOpts(text, NULL, true);
        if (!root) {
                *error_message = "Request is not valid JSON";
                return -EINVAL;
        }
        if (!cJSON_IsObject(root)) {
                *error_message = "Request is not a JSON object";
                return -EINVAL;
        }
        /* Echo the id in any error reply from here on, when it is readable. */
        if (json_get_u64(cJSON_GetObjectItemCaseSensitive(root, F_ID), MEMLEAK_MAX_ID, &v) >= 0)
                *ret_id = v;

        version = cJSON_GetObjectItemCaseSensitive(root, F_VERSION);
        if (!version) {
                *error_message = "Missing protocol version \"v\"";
                return -EINVAL;
        }
        if (json_get_u64(version, UINT64_MAX, &v) < 0 || v != MEMLEAK_PROTOCOL_VERSION) {
                *error_message = "Unsupported protocol version (this memleakd speaks version 1)";
                return -EPROTONOSUPPORT;
        }

        cmd = cJSON_GetObjectItemCaseSensitive(root, F_CMD);
        if (!cJSON_IsString(cmd)) {
                *error_message = "Missing command \"cmd\" (a string)";
                return -EINVAL;
        }
        req.cmd = memleak_command_from_string(cmd->valuestring);
        if (req.cmd == _MEMLEAK_CMD_INVALID) {
                *error_message = "Unknown command";
                return -EOPNOTSUPP;
        }

        cJSON_ArrayForEach(item, root) {
                const struct field_spec *f = item->string ? field_lookup(item->string) : NULL;
                unsigned bit;

                if (!f) {
                        /* a newer client's: ignored, and said so (mixed versions talk) */
                        r = note_unknown(&req, item->string);
                        if (r < 0) {
                                *error_message = "Out of memory";
                                return r;
                        }
                        continue;
                }
                bit = 1u << (f - request_fields);
                if (seen & bit) {
                        *error_message = "Field given twice in request";
                        return -EINVAL;
                }
                seen |= bit;
                if (!(f->allowed & CMD_BIT(req.cmd))) {
                        *error_message = "Field not allowed for this command";
                        return -EINVAL;
                }
                r = parse_field(f, item, &req);
                if (r < 0) {
                        *error_message = r == -ENOMEM ? "Out of memory" : f->invalid;
                        return r;
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(request_fields); i++)
                if ((request_fields[i].required & CMD_BIT(req.cmd)) && !(seen & (1u << i))) {
                        *error_message = request_fields[i].missing;
                        return -EINVAL;
                }
        req.has_pid = req.pid != 0;
        r = check_target(&req, error_message);
        if (r < 0)
                return r;

        *ret = req;
        req = (struct memleak_request) {};
        return 0;
}

void memleak_request_done(struct memleak_request *req)
{
        if (!req)
                return;
        for (unsigned i = 0; i < req->n_unknown && i < MEMLEAK_MAX_UNKNOWN_NAMED; i++) {
                free(req->unknown[i]);
                req->unknown[i] = NULL;
        }
        req->n_unknown = req->n_unknown_total = 0;
        for (unsigned i = 0; i < req->n_objs && i < MEMLEAK_MAX_OBJS; i++) {
                free(req->objs[i]);
                req->objs[i] = NULL;
        }
        req->n_objs = 0;
        free(req->exec);
        req->exec = NULL;
        free(req->unit);
        req->unit = NULL;
        free(req->cgroup);
        req->cgroup = NULL;
}

static bool field_encode(cJSON *o, const struct field_spec *f, const struct memleak_request *req)
{
        cJSON *arr;

        switch (f->type) {
        case FIELD_HEADER:
                return true;
        case FIELD_U64:
                return json_add_u64(o, f->name, *field_u64((struct memleak_request *) req, f));
        case FIELD_PID:
                /* 0 is no pid (has_pid is pid != 0) */
                return *(const int32_t *) field_at(req, f) == 0 ||
                       cJSON_AddNumberToObject(o, f->name, *(const int32_t *) field_at(req, f));
        case FIELD_BOOL:
                return !*(const bool *) field_at(req, f) || cJSON_AddBoolToObject(o, f->name, true);
        case FIELD_COMM:
                return !*(const char *) field_at(req, f) ||
                       cJSON_AddStringToObject(o, f->name, (const char *) field_at(req, f));
        case FIELD_PATH:
        case FIELD_NAME:
                return !*(char *const *) field_at(req, f) ||
                       cJSON_AddStringToObject(o, f->name, *(char *const *) field_at(req, f));
        case FIELD_VERDICT:
                return *(const int *) field_at(req, f) <= 0 ||
                       cJSON_AddStringToObject(o, f->name,
                                               memleak_verdict_to_string(*(const int *) field_at(req, f) - 1));
        case FIELD_STACK_ID:
                /* digits: cJSON would print 6474599761542939 as 6.47459976154294e+15 */
                return !req->has_stack_id || json_add_u64_digits(o, f->name, req->stack_id);
        case FIELD_UNWIND:
                return *(const enum memleak_unwind *) field_at(req, f) == MEMLEAK_UNWIND_DEFAULT ||
                       cJSON_AddStringToObject(o, f->name,
                                               memleak_unwind_to_string(*(const enum memleak_unwind *) field_at(req, f)));
        case FIELD_OBJS:
                if (req->n_objs == 0)
                        return true;
                arr = cJSON_AddArrayToObject(o, f->name);
                if (!arr)
                        return false;
                for (unsigned i = 0; i < req->n_objs && i < MEMLEAK_MAX_OBJS; i++) {
                        cJSON *s = cJSON_CreateString(req->objs[i]);

                        if (!s)
                                return false;
                        cJSON_AddItemToArray(arr, s);
                }
                return true;
        }
        return false;
}

cJSON *memleak_request_to_json(const struct memleak_request *req)
{
        _cleanup_json_ cJSON *o = NULL;
        const char *cmd = memleak_command_to_string(req->cmd);

        if (!cmd)
                return NULL;
        o = cJSON_CreateObject();
        if (!o ||
            !cJSON_AddNumberToObject(o, F_VERSION, MEMLEAK_PROTOCOL_VERSION) ||
            !cJSON_AddStringToObject(o, F_CMD, cmd))
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(request_fields); i++)
                if ((request_fields[i].allowed & CMD_BIT(req->cmd)) &&
                    !field_encode(o, &request_fields[i], req))
                        return NULL;
        return TAKE_PTR(o);
}

static cJSON *response_new(uint64_t id, bool ok)
{
        _cleanup_json_ cJSON *o = cJSON_CreateObject();

        if (!o ||
            !cJSON_AddNumberToObject(o, F_VERSION, MEMLEAK_PROTOCOL_VERSION) ||
            !cJSON_AddStringToObject(o, F_SOFTWARE, MEMLEAKD_VERSION) ||
            !json_add_u64(o, F_ID, id) ||
            !cJSON_AddBoolToObject(o, F_RESULT_OK, ok))
                return NULL;
        return TAKE_PTR(o);
}

cJSON *memleak_response_new_ok(uint64_t id)
{
        return response_new(id, true);
}

cJSON *memleak_response_new_error(uint64_t id, int error, const char *message)
{
        _cleanup_json_ cJSON *o = response_new(id, false);
        cJSON *e;

        if (error < 0)
                error = -error;
        if (!o || !(e = cJSON_AddObjectToObject(o, F_ERROR)) ||
            !cJSON_AddStringToObject(e, F_CODE, memleak_errno_to_code(error)) ||
            !cJSON_AddStringToObject(e, F_MESSAGE, message ? message : strerror(error)))
                return NULL;
        return TAKE_PTR(o);
}

static const struct {
        int error;
        const char *code;
} error_codes[] = {
        { EPERM, "EPERM" },
        { ENOENT, "ENOENT" },
        { ESRCH, "ESRCH" },
        { EINTR, "EINTR" },
        { EIO, "EIO" },
        { ENXIO, "ENXIO" },
        { E2BIG, "E2BIG" },
        { ENOEXEC, "ENOEXEC" },
        { EBADF, "EBADF" },
        { EAGAIN, "EAGAIN" },
        { ENOMEM, "ENOMEM" },
        { EACCES, "EACCES" },
        { EFAULT, "EFAULT" },
        { EBUSY, "EBUSY" },
        { EEXIST, "EEXIST" },
        { ENODEV, "ENODEV" },
        { ENOTDIR, "ENOTDIR" },
        { EISDIR, "EISDIR" },
        { EINVAL, "EINVAL" },
        { EMFILE, "EMFILE" },
        { ENFILE, "ENFILE" },
        { ENOSPC, "ENOSPC" },
        { ERANGE, "ERANGE" },
        { ENAMETOOLONG, "ENAMETOOLONG" },
        { ENOSYS, "ENOSYS" },
        { ELOOP, "ELOOP" },
        { EPROTO, "EPROTO" },
        { EBADMSG, "EBADMSG" },
        { EOVERFLOW, "EOVERFLOW" },
        { EPROTONOSUPPORT, "EPROTONOSUPPORT" },
        { EOPNOTSUPP, "EOPNOTSUPP" },
        { ECONNRESET, "ECONNRESET" },
        { ENOTCONN, "ENOTCONN" },
        { ETIMEDOUT, "ETIMEDOUT" },
        { ECONNREFUSED, "ECONNREFUSED" },
        { ECANCELED, "ECANCELED" },
        { EUSERS, "EUSERS" },
};

const char *memleak_errno_to_code(int error)
{
        if (error < 0)
                error = -error;
        for (size_t i = 0; i < ELEMENTSOF(error_codes); i++)
                if (error_codes[i].error == error)
                        return error_codes[i].code;
        return "EIO";
}

int memleak_errno_from_code(const char *code)
{
        if (!code)
                return EIO;
        for (size_t i = 0; i < ELEMENTSOF(error_codes); i++)
                if (strcmp(error_codes[i].code, code) == 0)
                        return error_codes[i].error;
        return EIO;
}

char *memleak_frame_encode(const cJSON *msg, size_t *ret_len)
{
        _cleanup_free_ char *text = cJSON_PrintUnformatted(msg);
        char *frame;
        size_t n;

        if (!text)
                return NULL;
        n = strlen(text);
        frame = malloc(n + 2);
        if (!frame)
                return NULL;
        memcpy(frame, text, n);
        frame[n] = '\n';
        frame[n + 1] = '\0';
        if (ret_len)
                *ret_len = n + 1;
        return frame;
}

size_t memleak_frame_find_end(const char *buf, size_t len)
{
        const char *nl = memchr(buf, '\n', len);

        return nl ? (size_t) (nl - buf) + 1 : 0;
}

int memleak_response_check(const cJSON *reply, uint64_t expected_id, const char **error_message)
{
        const cJSON *ok, *error;
        const char *code, *message;
        uint64_t v, id;

        if (!cJSON_IsObject(reply)) {
                *error_message = "Malformed reply from memleakd (not a JSON object)";
                return -EBADMSG;
        }
        if (json_get_u64(cJSON_GetObjectItemCaseSensitive(reply, F_VERSION), UINT64_MAX, &v) < 0 ||
            v != MEMLEAK_PROTOCOL_VERSION) {
                *error_message = "memleakd replied with an unsupported protocol version";
                return -EPROTONOSUPPORT;
        }
        if (json_get_u64(cJSON_GetObjectItemCaseSensitive(reply, F_ID), MEMLEAK_MAX_ID, &id) < 0) {
                *error_message = "Malformed reply from memleakd (no id)";
                return -EBADMSG;
        }
        ok = cJSON_GetObjectItemCaseSensitive(reply, F_RESULT_OK);
        if (!cJSON_IsBool(ok)) {
                *error_message = "Malformed reply from memleakd (no \"ok\")";
                return -EBADMSG;
        }
        /* An error about a request whose id could not be read (too large, not JSON) carries id 0. */
        if (id != expected_id && !(cJSON_IsFalse(ok) && id == 0)) {
                *error_message = "Reply from memleakd does not match the request (wrong id)";
                return -EBADMSG;
        }
        if (cJSON_IsTrue(ok))
                return 0;
        error = cJSON_GetObjectItemCaseSensitive(reply, F_ERROR);
        code = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, F_CODE));
        message = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(error, F_MESSAGE));
        if (!code || !message) {
                *error_message = "Malformed error reply from memleakd";
                return -EBADMSG;
        }
        *error_message = message;
        return -memleak_errno_from_code(code);
}
