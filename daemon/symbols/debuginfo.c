/* SPDX-License-Identifier: GPL-2.0-only */
/* Find an object's separate debug file, opening only regular files and checking each. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include "debuginfo.h"
#include "elf-file.h"
#include "elf-inspect.h"
#include "macro.h"
#include "safe-open.h"
#include "util.h"

/* A debuglink CRC is over the whole file: never read more than this to check one. */
#define DEBUGLINK_CRC_MAX_FILE_BYTES (4ULL << 30)

static char *printf_alloc(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *printf_alloc(const char *fmt, ...)
{
        va_list ap;
        char *s;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        return r < 0 ? NULL : s;
}

int debuginfo_candidates(const struct debuginfo_request *req, char ***ret, size_t *ret_n)
{
        char **v = NULL;
        size_t n = 0;
        int r = 0;

        assert(req);
        assert(ret);
        assert(ret_n);
        if (req->build_id_len > 1) {
                char hex[2 * ELF_BUILD_ID_MAX + 1];

                for (size_t i = 0; i < req->build_id_len && i < ELF_BUILD_ID_MAX; i++)
                        snprintf(hex + 2 * i, 3, "%02x", req->build_id[i]);
                r = strv_push_n(&v, &n, printf_alloc(DEBUGINFO_ROOT "/.build-id/%.2s/%s.debug", hex, hex + 2));
        }
        /* A debuglink is a file name; one with a '/' in it would reach anywhere. */
        if (r >= 0 && req->debuglink && *req->debuglink && !strchr(req->debuglink, '/') && req->object_path) {
                _cleanup_free_ char *copy = strdup(req->object_path);
                const char *dir;

                if (!copy)
                        r = -ENOMEM;
                else {
                        dir = dirname(copy);
                        if (strcmp(dir, "/") == 0)
                                dir = "";
                        r = strv_push_n(&v, &n, printf_alloc("%s/%s", dir, req->debuglink));
                        if (r >= 0)
                                r = strv_push_n(&v, &n, printf_alloc("%s/.debug/%s", dir, req->debuglink));
                        if (r >= 0)
                                r = strv_push_n(&v, &n, printf_alloc(DEBUGINFO_ROOT "%s/%s", dir, req->debuglink));
                }
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        free(v[i]);
                free(v);
                return r;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

static int file_crc32(int fd, uint64_t size, uint32_t *ret)
{
        uLong crc = crc32(0L, Z_NULL, 0);
        void *data;

        if (size == 0) {
                *ret = (uint32_t)crc;
                return 0;
        }
        if (size > DEBUGLINK_CRC_MAX_FILE_BYTES)
                return -EFBIG;
        data = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (data == MAP_FAILED)
                return -errno;
        for (uint64_t off = 0; off < size; off += 1u << 30)
                crc = crc32(crc, (const Bytef *)data + off, (uInt)MIN(size - off, (uint64_t)1 << 30));
        munmap(data, size);
        *ret = (uint32_t)crc;
        return 0;
}

/* Whether the file open on fd is req's debug file: 1 yes, 0 no, < 0 error. Its inflation goes
 * into *ret_inflated either way. */
static int candidate_matches(const struct debuginfo_request *req, int fd, const struct stat *st,
                             uint64_t *ret_inflated, uint64_t *ret_largest)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        struct elf_inspection in;
        int r;

        if ((uint64_t)st->st_dev == req->object_dev && (uint64_t)st->st_ino == req->object_ino)
                return 0;
        r = elf_file_open(fd, &elf);
        if (r == -ENOEXEC)
                return 0;
        if (r < 0)
                return r;
        r = elf_inspect(elf, &in);
        if (r == -ENOEXEC)
                return 0;
        if (r < 0)
                return r;
        *ret_inflated = in.inflated_debug_bytes;
        *ret_largest = in.largest_inflated_bytes;
        if (req->build_id_len > 0)
                return in.build_id_len == req->build_id_len &&
                       memcmp(in.build_id, req->build_id, req->build_id_len) == 0;
        if (req->debuglink) {
                uint32_t crc = 0;

                r = file_crc32(fd, st->st_size, &crc);
                if (r == -ENOMEM)
                        return r;
                return r >= 0 && crc == req->debuglink_crc;
        }
        return 0;
}

int debuginfo_find(const struct debuginfo_request *req, struct debuginfo_found *found)
{
        char **paths = NULL;
        size_t n = 0;
        int r;

        assert(req);
        assert(found);
        *found = (struct debuginfo_found) { .fd = -1 };
        r = debuginfo_candidates(req, &paths, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0 && found->fd < 0; i++) {
                _cleanup_close_ int fd = -EBADF;
                uint64_t inflated = 0, largest = 0;
                struct stat st;

                fd = safe_open_regular(AT_FDCWD, paths[i], 0, &st);
                if (fd < 0)
                        continue;       /* missing, a FIFO, a device: not a debug file */
                r = candidate_matches(req, fd, &st, &inflated, &largest);
                if (r <= 0)
                        continue;
                if (largest > req->max_section_bytes || inflated > req->max_bytes) {
                        if (!found->refused_path) {
                                found->refused_path = TAKE_PTR(paths[i]);
                                found->refused_bytes = inflated;
                        }
                        continue;
                }
                found->fd = TAKE_FD(fd);
                found->path = TAKE_PTR(paths[i]);
                found->inflated_bytes = inflated;
        }
        for (size_t i = 0; i < n; i++)
                free(paths[i]);
        free(paths);
        if (r < 0) {
                debuginfo_found_done(found);
                return r;
        }
        return 0;
}

void debuginfo_found_done(struct debuginfo_found *found)
{
        assert(found);
        closep(&found->fd);
        free(found->path);
        free(found->refused_path);
        *found = (struct debuginfo_found) { .fd = -1 };
}
