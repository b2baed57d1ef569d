/* SPDX-License-Identifier: GPL-2.0-only */
/* The state file: the targets a daemon left recording, encoded, decoded, written atomically. */
#include <assert.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fd-text.h"
#include "json-util.h"
#include "macro.h"
#include "state-file.h"

/* The file's members: its own format (not a reply; STATE_FILE_VERSION names it). */
#define SF_PID              "pid"
#define SF_KERNEL           "kernel"
#define SF_START_TIME       "start_time"
#define SF_SLOT             "slot"
#define SF_RING_DEPTH       "ring_depth"
#define SF_UNWIND           "unwind"
#define SF_TRACK_MMAP       "track_mmap"
#define SF_FOLLOW_FORKS     "follow_forks"
#define SF_ASKED_BY_USER    "asked_by_user"
#define SF_ASKER_UID        "asker_uid"
#define SF_ASKER_GID        "asker_gid"
#define SF_ATTACHED_USEC    "attached_usec"
#define SF_COUNTERS_BASE    "counters_base"
#define SF_OBJS             "objs"
#define SF_FORKED_FROM      "forked_from"
#define SF_PARENT_PID       "parent_pid"
#define SF_PARENT_START     "parent_start_time"
#define SF_VERSION          "version"
#define SF_LAYOUT           "layout"
#define SF_TARGETS          "targets"

void state_file_done(struct state_file *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n_targets; i++) {
                for (size_t j = 0; j < s->targets[i].n_objs; j++)
                        free(s->targets[i].objs[j]);
                free(s->targets[i].objs);
        }
        free(s->targets);
        *s = (struct state_file) {};
}

static cJSON *encode_target(const struct state_target *t)
{
        cJSON *o = cJSON_CreateObject(), *a;

        if (!o)
                return NULL;
        if (!json_add_u64(o, SF_PID, (uint64_t)t->pid) || !json_add_u64(o, SF_START_TIME, t->start_time) ||
            !json_add_u64(o, SF_SLOT, t->slot) || !json_add_u64(o, SF_RING_DEPTH, t->ring_depth) ||
            !cJSON_AddStringToObject(o, SF_UNWIND, memleak_unwind_to_string(t->unwind) ?: "auto") ||
            !cJSON_AddBoolToObject(o, SF_TRACK_MMAP, t->track_mmap) ||
            !cJSON_AddBoolToObject(o, SF_FOLLOW_FORKS, t->follow_forks) ||
            !cJSON_AddBoolToObject(o, SF_ASKED_BY_USER, t->asked_by_user) ||
            !json_add_u64(o, SF_ASKER_UID, t->asker_uid) || !json_add_u64(o, SF_ASKER_GID, t->asker_gid) ||
            !json_add_u64(o, SF_ATTACHED_USEC, t->attached_usec) ||
            (t->kernel && !cJSON_AddBoolToObject(o, SF_KERNEL, true)) ||
            (t->forked_from && !json_add_u64(o, SF_FORKED_FROM, (uint64_t)t->forked_from)) ||
            (t->parent_pid && (!json_add_u64(o, SF_PARENT_PID, (uint64_t)t->parent_pid) ||
                               !json_add_u64(o, SF_PARENT_START, t->parent_start_time))) ||
            !(a = cJSON_AddArrayToObject(o, SF_COUNTERS_BASE)))
                goto fail;
        for (size_t i = 0; i < _COUNTER_MAX; i++) {
                cJSON *n = cJSON_CreateString("");

                /* u64 as decimal strings: a double would round them */
                if (!n || !cJSON_AddItemToArray(a, n)) {
                        cJSON_Delete(n);
                        goto fail;
                }
                free(n->valuestring);
                if (asprintf(&n->valuestring, "%" PRIu64, t->counters_base[i]) < 0) {
                        n->valuestring = NULL;
                        goto fail;
                }
        }
        if (!(a = cJSON_AddArrayToObject(o, SF_OBJS)))
                goto fail;
        for (size_t i = 0; i < t->n_objs; i++) {
                cJSON *s = cJSON_CreateString(t->objs[i]);

                if (!s || !cJSON_AddItemToArray(a, s)) {
                        cJSON_Delete(s);
                        goto fail;
                }
        }
        return o;
fail:
        cJSON_Delete(o);
        return NULL;
}

char *state_file_encode(const struct state_file *s)
{
        cJSON *root = cJSON_CreateObject(), *a;
        char layout[17], *text = NULL;

        assert(s);
        if (!root)
                return NULL;
        snprintf(layout, sizeof(layout), "%016" PRIx64, s->layout);
        if (!json_add_u64(root, SF_VERSION, STATE_FILE_VERSION) || !cJSON_AddStringToObject(root, SF_LAYOUT, layout) ||
            !(a = cJSON_AddArrayToObject(root, SF_TARGETS)))
                goto out;
        for (size_t i = 0; i < s->n_targets; i++) {
                cJSON *t = encode_target(&s->targets[i]);

                if (!t || !cJSON_AddItemToArray(a, t)) {
                        cJSON_Delete(t);
                        goto out;
                }
        }
        text = cJSON_PrintUnformatted(root);
out:
        cJSON_Delete(root);
        return text;
}

__attribute__((format(printf, 2, 3)))
static int bad(char **error, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        if (error && vasprintf(error, fmt, ap) < 0)
                *error = NULL;
        va_end(ap);
        return -EBADMSG;
}

static int get_u64(const cJSON *o, const char *name, uint64_t max, uint64_t *ret, char **error)
{
        if (json_get_u64(cJSON_GetObjectItemCaseSensitive(o, name), max, ret) < 0)
                return bad(error, "\"%s\" is missing or not an integer up to %" PRIu64, name, max);
        return 0;
}

/* As get_u64, 0 when absent (a member a later version added). */
static int get_u64_or_0(const cJSON *o, const char *name, uint64_t max, uint64_t *ret, char **error)
{
        *ret = 0;
        return cJSON_GetObjectItemCaseSensitive(o, name) ? get_u64(o, name, max, ret, error) : 0;
}

static int get_bool(const cJSON *o, const char *name, bool *ret, char **error)
{
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, name);

        if (!cJSON_IsBool(b))
                return bad(error, "\"%s\" is missing or not a boolean", name);
        *ret = cJSON_IsTrue(b);
        return 0;
}

static int decode_target(const cJSON *o, struct state_target *t, char **error)
{
        const cJSON *a, *e;
        uint64_t v;
        size_t i;
        int r;

        if (!cJSON_IsObject(o))
                return bad(error, "a target is not an object");
        if ((r = get_u64(o, SF_PID, INT32_MAX, &v, error)) < 0)
                return r;
        /* the kernel target: "kernel": true, its pid MEMLEAK_KERNEL_TGID (absent: a process) */
        e = cJSON_GetObjectItemCaseSensitive(o, SF_KERNEL);
        if (e && !cJSON_IsBool(e))
                return bad(error, "\"kernel\" is not a boolean");
        t->kernel = cJSON_IsTrue(e);
        if (t->kernel && v != MEMLEAK_KERNEL_TGID)
                return bad(error, "the kernel target's \"pid\" is not %d", MEMLEAK_KERNEL_TGID);
        if (!t->kernel && v == 0)
                return bad(error, "\"pid\" is 0");
        t->pid = (pid_t)v;
        if ((r = get_u64(o, SF_START_TIME, UINT64_MAX, &t->start_time, error)) < 0 ||
            (r = get_u64(o, SF_SLOT, UINT32_MAX - 1, &v, error)) < 0)
                return r;
        t->slot = (uint32_t)v;
        if ((r = get_u64(o, SF_RING_DEPTH, UINT32_MAX, &v, error)) < 0)
                return r;
        t->ring_depth = (uint32_t)v;
        e = cJSON_GetObjectItemCaseSensitive(o, SF_UNWIND);
        t->unwind = cJSON_IsString(e) ? memleak_unwind_from_string(e->valuestring) : _MEMLEAK_UNWIND_INVALID;
        if (t->unwind < 0)
                return bad(error, "\"unwind\" is missing or not known");
        if ((r = get_bool(o, SF_TRACK_MMAP, &t->track_mmap, error)) < 0 ||
            (r = get_bool(o, SF_FOLLOW_FORKS, &t->follow_forks, error)) < 0 ||
            (r = get_bool(o, SF_ASKED_BY_USER, &t->asked_by_user, error)) < 0 ||
            (r = get_u64(o, SF_ATTACHED_USEC, UINT64_MAX, &t->attached_usec, error)) < 0)
                return r;
        if ((r = get_u64(o, SF_ASKER_UID, UINT32_MAX, &v, error)) < 0)
                return r;
        t->asker_uid = (uint32_t)v;
        if ((r = get_u64(o, SF_ASKER_GID, UINT32_MAX, &v, error)) < 0)
                return r;
        t->asker_gid = (uint32_t)v;
        if ((r = get_u64_or_0(o, SF_FORKED_FROM, INT32_MAX, &v, error)) < 0)
                return r;
        t->forked_from = (pid_t)v;
        if ((r = get_u64_or_0(o, SF_PARENT_PID, INT32_MAX, &v, error)) < 0 ||
            (r = get_u64_or_0(o, SF_PARENT_START, UINT64_MAX, &t->parent_start_time, error)) < 0)
                return r;
        t->parent_pid = (pid_t)v;
        a = cJSON_GetObjectItemCaseSensitive(o, SF_COUNTERS_BASE);
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != _COUNTER_MAX)
                return bad(error, "\"counters_base\" is not an array of %d counters", (int)_COUNTER_MAX);
        i = 0;
        cJSON_ArrayForEach(e, a) {
                char *end;

                if (!cJSON_IsString(e) || !e->valuestring[0] || e->valuestring[0] == '-')
                        return bad(error, "a counter is not a decimal string");
                errno = 0;
                t->counters_base[i++] = strtoull(e->valuestring, &end, 10);
                if (errno != 0 || *end)
                        return bad(error, "a counter is not a decimal string");
        }
        a = cJSON_GetObjectItemCaseSensitive(o, SF_OBJS);
        if (!cJSON_IsArray(a) || (size_t)cJSON_GetArraySize(a) > STATE_FILE_MAX_OBJS)
                return bad(error, "\"objs\" is not an array of at most %u paths", STATE_FILE_MAX_OBJS);
        if (cJSON_GetArraySize(a) > 0 && !(t->objs = calloc((size_t)cJSON_GetArraySize(a), sizeof(char *))))
                return -ENOMEM;
        cJSON_ArrayForEach(e, a) {
                if (!cJSON_IsString(e) || e->valuestring[0] != '/')
                        return bad(error, "an object is not an absolute path");
                if (!(t->objs[t->n_objs] = strdup(e->valuestring)))
                        return -ENOMEM;
                t->n_objs++;
        }
        return 0;
}

int state_file_decode(const char *text, size_t n, struct state_file *ret, char **error)
{
        _cleanup_(state_file_done) struct state_file s = {};
        cJSON *root;
        const cJSON *a, *e;
        uint64_t v;
        char *end;
        int r = 0;

        assert(text);
        assert(ret);
        root = cJSON_ParseWithLength(text, n);
        if (!root)
                return bad(error, "not JSON (truncated?)");
        if (!cJSON_IsObject(root)) {
                r = bad(error, "not a JSON object");
                goto out;
        }
        if ((r = get_u64(root, SF_VERSION, UINT32_MAX, &v, error)) < 0)
                goto out;
        if (v != STATE_FILE_VERSION) {
                r = bad(error, "version %" PRIu64 ", not %d", v, STATE_FILE_VERSION);
                goto out;
        }
        e = cJSON_GetObjectItemCaseSensitive(root, SF_LAYOUT);
        if (!cJSON_IsString(e) || strlen(e->valuestring) != 16 ||
            (errno = 0, s.layout = strtoull(e->valuestring, &end, 16), errno != 0 || *end)) {
                r = bad(error, "\"layout\" is not 16 hex digits");
                goto out;
        }
        a = cJSON_GetObjectItemCaseSensitive(root, SF_TARGETS);
        if (!cJSON_IsArray(a)) {
                r = bad(error, "\"targets\" is not an array");
                goto out;
        }
        if (cJSON_GetArraySize(a) > 0 &&
            !(s.targets = calloc((size_t)cJSON_GetArraySize(a), sizeof(*s.targets)))) {
                r = -ENOMEM;
                goto out;
        }
        cJSON_ArrayForEach(e, a) {
                s.n_targets++;
                r = decode_target(e, &s.targets[s.n_targets - 1], error);
                if (r < 0)
                        goto out;
                for (size_t i = 0; i + 1 < s.n_targets; i++)
                        if (s.targets[i].slot == s.targets[s.n_targets - 1].slot ||
                            s.targets[i].pid == s.targets[s.n_targets - 1].pid) {
                                r = bad(error, "two targets with slot %u or pid %d", s.targets[i].slot,
                                        (int)s.targets[i].pid);
                                goto out;
                        }
        }
        *ret = s;
        s = (struct state_file) {};
out:
        cJSON_Delete(root);
        return r;
}

int state_file_parse_start_time(const char *stat_text, uint64_t *ret)
{
        const char *p = strrchr(stat_text, ')');
        unsigned long long v;

        /* after the comm, field 3 (state) on: field 22 is the 20th */
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                         &v) != 1)
                return -EINVAL;
        *ret = v;
        return 0;
}

int state_file_write_bytes(const char *dir, const char *name, const void *data, size_t n, bool sync)
{
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        int fd, r;

        if (asprintf(&tmp, "%s/.%s.tmp", dir, name) < 0 || asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        r = fd_text_write(fd, data, n);
        if (r >= 0 && sync && fsync(fd) < 0)
                r = -errno;
        if (close(fd) < 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlink(tmp);
                return r;
        }
        if (sync && (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
                (void)fsync(fd);
                close(fd);
        }
        return 0;
}

int state_file_write(const char *dir, const char *name, const char *text)
{
        return state_file_write_bytes(dir, name, text, strlen(text), true);
}

int state_file_read(const char *dir, const char *name, uint64_t max, char **ret, size_t *ret_n)
{
        _cleanup_free_ char *path = NULL, *buf = NULL;
        struct stat st;
        size_t done = 0;
        int fd, r = 0;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = -EBADFD;
        else if ((uint64_t)st.st_size > max)
                r = -EFBIG;
        else if (!(buf = malloc((size_t)st.st_size + 1)))
                r = -ENOMEM;
        while (r >= 0 && done < (size_t)st.st_size) {
                ssize_t k = read(fd, buf + done, (size_t)st.st_size - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;  /* shrank: what was read is judged */
                done += (size_t)k;
        }
        close(fd);
        if (r < 0)
                return r;
        buf[done] = 0;
        *ret = TAKE_PTR(buf);
        *ret_n = done;
        return 0;
}
