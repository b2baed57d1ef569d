/* SPDX-License-Identifier: GPL-2.0-only */
/* A report's live targets, each as a pprof profile file in export_dir, rotated. */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "dir-stream.h"
#include "export-files.h"
#include "fd-text.h"
#include "json-util.h"
#include "macro.h"
#include "pprof-export.h"
#include "reply-fields.h"

#define SUFFIX ".pb.gz"

void export_files_name(char *buf, size_t size, int64_t pid, const char *comm, uint64_t usec)
{
        char safe[17] = "", stamp[32] = "";
        time_t t = (time_t)(usec / 1000000);
        struct tm tm;
        size_t i;

        assert(buf);
        for (i = 0; comm && comm[i] && i < sizeof(safe) - 1; i++) {
                char c = comm[i];

                safe[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                          c == '.' || c == '_' || c == '-' ? c : '_';
        }
        safe[i] = 0;
        if (gmtime_r(&t, &tm))
                strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
        snprintf(buf, size, "memleakd-%" PRId64 "-%s-%s.%03" PRIu64 "Z" SUFFIX, pid, safe, stamp,
                 (usec / 1000) % 1000);
}

/* data (n bytes) as dir/name, whole: a temporary file beside it renamed. */
static int write_whole(int dir_fd, const char *name, const uint8_t *data, size_t n)
{
        char tmp[EXPORT_FILES_NAME_MAX + 16];
        int fd, r;

        snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return -errno;
        r = fd_text_write(fd, data, n);
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = -errno;
        if (r < 0)
                (void)unlinkat(dir_fd, tmp, 0);
        return r;
}

static int by_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* pid's files in dir past the newest keep removed (their names sort by time). */
static int rotate(int dir_fd, int64_t pid, uint32_t keep)
{
        char prefix[32];
        char **names = NULL;
        size_t n = 0, room = 0;
        struct dirent *de;
        DIR *d;
        int r;

        snprintf(prefix, sizeof(prefix), "memleakd-%" PRId64 "-", pid);
        r = dir_stream_open(dir_fd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);

                if (strncmp(de->d_name, prefix, strlen(prefix)) != 0 || len < strlen(SUFFIX) ||
                    strcmp(de->d_name + len - strlen(SUFFIX), SUFFIX) != 0)
                        continue;
                if (n == room) {
                        char **more = realloc(names, (room = room ? 2 * room : 16) * sizeof(*names));

                        if (!more) {
                                r = -ENOMEM;
                                break;
                        }
                        names = more;
                }
                if (!(names[n] = strdup(de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        closedir(d);
        if (r == 0 && n > keep) {
                qsort(names, n, sizeof(*names), by_name);
                for (size_t i = 0; i + keep < n; i++)
                        if (unlinkat(dir_fd, names[i], 0) < 0 && errno != ENOENT && r == 0)
                                r = -errno;
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return r;
}

/* The pid of a report's stack s: a raw one's text begins with it (report.c writes it first). */
static int stack_pid(const cJSON *s, uint64_t *ret)
{
        static const char prefix[] = "{\"" RF_PID "\":";
        _cleanup_json_ cJSON *parsed = NULL;
        char *end;

        if (!cJSON_IsRaw(s))
                return json_get_u64(cJSON_GetObjectItemCaseSensitive(s, RF_PID), UINT64_MAX, ret);
        if (strncmp(s->valuestring, prefix, strlen(prefix)) == 0) {
                errno = 0;
                *ret = strtoull(s->valuestring + strlen(prefix), &end, 10);
                if (errno == 0 && (*end == ',' || *end == '}'))
                        return 0;
        }
        parsed = cJSON_Parse(s->valuestring);
        return json_get_u64(cJSON_GetObjectItemCaseSensitive(parsed, RF_PID), UINT64_MAX, ret);
}

/* report with target t and its stacks alone, and the report's locations they refer to
 * (references: nothing copied). */
static cJSON *view_of(const cJSON *report, const cJSON *t, int64_t pid)
{
        _cleanup_json_ cJSON *v = cJSON_CreateObject();
        const cJSON *s, *locations = cJSON_GetObjectItemCaseSensitive(report, RF_LOCATIONS);
        cJSON *targets, *stacks;

        if (!v || !cJSON_AddItemReferenceToObject(v, RF_GENERATED_AT,
                                                  cJSON_GetObjectItemCaseSensitive(report, RF_GENERATED_AT)) ||
            !(targets = cJSON_AddArrayToObject(v, RF_TARGETS)) || !cJSON_AddItemReferenceToArray(targets, (cJSON *)t) ||
            (locations && !cJSON_AddItemReferenceToObject(v, RF_LOCATIONS, (cJSON *)locations)) ||
            !(stacks = cJSON_AddArrayToObject(v, RF_STACKS)))
                return NULL;
        cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(report, RF_STACKS)) {
                uint64_t spid;

                if (stack_pid(s, &spid) >= 0 && (int64_t)spid == pid &&
                    !cJSON_AddItemReferenceToArray(stacks, (cJSON *)s))
                        return NULL;
        }
        return TAKE_PTR(v);
}

int export_files_write(const char *dir, const cJSON *report, uint32_t keep, uint64_t usec)
{
        const cJSON *t;
        int dir_fd, written = 0, first = 0;

        assert(dir);
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;
        cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(report, RF_TARGETS)) {
                _cleanup_free_ uint8_t *packed = NULL, *gz = NULL;
                _cleanup_json_ cJSON *view = NULL;
                char name[EXPORT_FILES_NAME_MAX];
                size_t n_packed, n_gz;
                uint64_t pid;
                int r;

                if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, RF_EXITED)) ||
                    json_get_u64(cJSON_GetObjectItemCaseSensitive(t, RF_PID), UINT64_MAX, &pid) < 0)
                        continue;
                view = view_of(report, t, (int64_t)pid);
                r = view ? pprof_export_encode(view, &packed, &n_packed) : -ENOMEM;
                if (r >= 0)
                        r = pprof_export_gzip(packed, n_packed, &gz, &n_gz);
                if (r >= 0) {
                        export_files_name(name, sizeof(name), (int64_t)pid,
                                          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, RF_COMM)), usec);
                        r = write_whole(dir_fd, name, gz, n_gz);
                }
                if (r >= 0)
                        r = rotate(dir_fd, (int64_t)pid, keep);
                if (r < 0 && first == 0)
                        first = r;
                written += r >= 0;
        }
        close(dir_fd);
        return first < 0 ? first : written;
}
