/* SPDX-License-Identifier: GPL-2.0-only */
/* Unwind tables on disk: looked up by the file's key, checked whole before use, written through a
 * temporary file and a rename, the least recently used removed past the size bound. */
#include <assert.h>
#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "elf-file.h"
#include "macro.h"
#include "table-file.h"
#include "table-store.h"
#include "dir-stream.h"

#define TMP_PREFIX ".tmp-"

struct table_store {
        int dir_fd;                     /* directory/TABLE_STORE_SUBDIR */
        uint64_t max_bytes;
        uint64_t tmp_counter;
        /* read by table_store_get_stats() from the event loop while the worker writes them */
        _Atomic uint64_t hits, misses, rejected, written, write_failed, evicted, files, bytes;
};

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir)

/* A directory we may trust: not a symlink (O_NOFOLLOW), ours, and writable by no one else (mode
 * & mask == 0). Created with 0700 if absent. */
static int open_own_dir(int at_fd, const char *path, mode_t mask)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        if (mkdirat(at_fd, path, 0700) < 0 && errno != EEXIST)
                return -errno;
        fd = openat(at_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ELOOP || errno == ENOTDIR ? -EPERM : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & mask) != 0)
                return -EPERM;
        return TAKE_FD(fd);
}

struct stored_file {
        char *name;
        uint64_t bytes;
        struct timespec used;           /* mtime: set at each hit */
};

static int by_use(const void *a, const void *b)
{
        const struct stored_file *x = a, *y = b;

        if (x->used.tv_sec != y->used.tv_sec)
                return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
        if (x->used.tv_nsec != y->used.tv_nsec)
                return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
        return strcmp(x->name, y->name);
}

/* Count the store's files, remove temporary files other than those of writes now under way (none
 * when remove_tmp: at open), and remove the least recently used past max_bytes. */
static int store_trim(struct table_store *s, bool remove_tmp)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct stored_file *files = NULL;
        size_t n = 0, allocated = 0, evicted = 0;
        uint64_t total = 0;
        struct dirent *de;
        int r = 0;

        r = dir_stream_open(s->dir_fd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                struct stat st;

                if (remove_tmp && strncmp(de->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0) {
                        (void)unlinkat(s->dir_fd, de->d_name, 0);
                        continue;
                }
                if (!table_file_name_is_table(de->d_name))
                        continue;
                if (fstatat(s->dir_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;
                if (!S_ISREG(st.st_mode)) {
                        (void)unlinkat(s->dir_fd, de->d_name, 0);  /* a symlink removes as a link */
                        continue;
                }
                if (n == allocated) {
                        size_t want = allocated ? 2 * allocated : 64;
                        struct stored_file *f = realloc(files, want * sizeof(*f));

                        if (!f) {
                                r = -ENOMEM;
                                break;
                        }
                        files = f;
                        allocated = want;
                }
                files[n].name = strdup(de->d_name);
                if (!files[n].name) {
                        r = -ENOMEM;
                        break;
                }
                files[n].bytes = (uint64_t)st.st_size;
                files[n].used = st.st_mtim;
                total += files[n].bytes;
                n++;
        }
        if (r >= 0 && total > s->max_bytes) {
                qsort(files, n, sizeof(*files), by_use);
                for (size_t i = 0; i < n && total > s->max_bytes; i++)
                        if (unlinkat(s->dir_fd, files[i].name, 0) >= 0) {
                                total -= files[i].bytes;
                                evicted++;
                        }
        }
        if (r >= 0) {
                s->evicted += evicted;
                s->files = n - evicted;
                s->bytes = total;
        }
        for (size_t i = 0; i < n; i++)
                free(files[i].name);
        free(files);
        return r;
}

int table_store_open(const char *directory, uint64_t max_bytes, struct table_store **ret)
{
        _cleanup_close_ int top = -EBADF;
        struct table_store *s;
        int r;

        assert(directory);
        assert(ret);
        top = open_own_dir(AT_FDCWD, directory, 022);
        if (top < 0)
                return top;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->max_bytes = max_bytes;
        s->dir_fd = open_own_dir(top, TABLE_STORE_SUBDIR, 077);
        if (s->dir_fd < 0) {
                r = s->dir_fd;
                free(s);
                return r;
        }
        r = store_trim(s, true);
        if (r < 0) {
                table_store_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

struct table_store *table_store_free(struct table_store *s)
{
        if (!s)
                return NULL;
        closep(&s->dir_fd);
        free(s);
        return NULL;
}

/* Take name's file (if a regular one) out of the count, before it is removed or replaced. */
static void forget(struct table_store *s, const char *name)
{
        struct stat st;

        if (fstatat(s->dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                return;
        if (s->files > 0)
                s->files--;
        s->bytes -= MIN(s->bytes, (uint64_t)st.st_size);
}

/* What the store knows fd's file by. */
static int key_of(Elf *elf, const struct stat *st, struct table_file_key *ret)
{
        const void *id = NULL;
        ssize_t len = dwelf_elf_gnu_build_id(elf, &id);

        if (len > 0 && len <= TABLE_FILE_KEY_BUILD_ID_MAX)
                return table_file_key_from_build_id(id, (size_t)len, (uint64_t)st->st_size, ret);
        table_file_key_from_identity(st->st_dev, st->st_ino, (uint64_t)st->st_size,
                                (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
                                (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec, ret);
        return 0;
}

static int read_all(int fd, void *buf, size_t size, off_t offset)
{
        size_t done = 0;

        while (done < size) {
                ssize_t n = pread(fd, (uint8_t *)buf + done, size - done, offset + (off_t)done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -TABLE_FILE_ESIZE;       /* shrank under us */
                done += (size_t)n;
        }
        return 0;
}

/* The stored table of key: 0 and *ret; -ENOENT: none; another -errno: a file there that cannot be
 * trusted (removed by the caller). */
static int store_load(struct table_store *s, const char *name, const struct table_file_key *key,
                      const struct unwind_table_limits *limits, struct unwind_table *ret)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ struct unwind_row *rows = NULL;
        struct table_file_header h;
        struct stat st;
        int r;

        /* O_NOFOLLOW: a symlink is ELOOP, never followed; O_NONBLOCK: a FIFO never blocks us */
        fd = openat(s->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ENOENT : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 || (st.st_mode & 077) != 0)
                return -EPERM;
        if ((uint64_t)st.st_size < sizeof(h))
                return -TABLE_FILE_EBADMAGIC;
        r = read_all(fd, &h, sizeof(h), 0);
        if (r < 0)
                return r;
        r = table_file_header_check(&h, key, limits->max_rows, (uint64_t)st.st_size);
        if (r < 0)
                return r;
        rows = malloc(h.n_rows > 0 ? h.n_rows * sizeof(*rows) : 1);
        if (!rows)
                return -ENOMEM;
        r = read_all(fd, rows, h.n_rows * sizeof(*rows), sizeof(h));
        if (r < 0)
                return r;
        r = table_file_rows_check(&h, rows);
        if (r < 0)
                return r;
        (void)futimens(fd, NULL);       /* used now: the last to go (store_trim) */
        table_file_to_table(&h, TAKE_PTR(rows), ret);
        return 0;
}

static int write_all(int fd, const struct table_file_header *h, const struct unwind_table *t)
{
        struct iovec iov[2] = {
                { .iov_base = (void *)h, .iov_len = sizeof(*h) },
                { .iov_base = t->rows, .iov_len = t->n_rows * sizeof(struct unwind_row) },
        };
        int n_iov = t->n_rows > 0 ? 2 : 1;

        for (int i = 0; i < n_iov;) {
                ssize_t n = writev(fd, iov + i, n_iov - i);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                while (i < n_iov && (size_t)n >= iov[i].iov_len) {
                        n -= (ssize_t)iov[i].iov_len;
                        i++;
                }
                if (i < n_iov) {
                        iov[i].iov_base = (uint8_t *)iov[i].iov_base + n;
                        iov[i].iov_len -= (size_t)n;
                }
        }
        return 0;
}

/* Write t as key's file: a temporary file renamed over the name, so a reader sees all of it or
 * nothing. */
static int store_save(struct table_store *s, const char *name, const struct table_file_key *key,
                      const struct unwind_table *t)
{
        char tmp[64];
        struct table_file_header h;
        uint64_t bytes = sizeof(h) + t->n_rows * sizeof(struct unwind_row);
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (bytes > s->max_bytes)
                return -EFBIG;
        r = table_file_header_make(key, t, &h);
        if (r < 0)
                return r;
        (void)snprintf(tmp, sizeof(tmp), TMP_PREFIX "%d-%llu", (int)getpid(), (unsigned long long)++s->tmp_counter);
        fd = openat(s->dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        r = write_all(fd, &h, t);
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r >= 0)
                forget(s, name);        /* a file it replaces */
        if (r >= 0 && renameat(s->dir_fd, tmp, s->dir_fd, name) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlinkat(s->dir_fd, tmp, 0);
                return r;
        }
        s->files++;
        s->bytes += bytes;
        if (s->bytes > s->max_bytes)
                (void)store_trim(s, false);
        return 0;
}

int table_store_build(struct table_store *s, int fd, const struct unwind_table_limits *limits,
                      struct unwind_table *ret)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        char name[TABLE_FILE_KEY_NAME_MAX];
        struct table_file_key key;
        struct stat st;
        int r;

        assert(fd >= 0);
        assert(limits);
        assert(ret);
        if (!s)
                return unwind_table_build(fd, limits, ret);
        if (fstat(fd, &st) < 0)
                return -errno;
        r = elf_file_open(fd, &elf);
        if (r < 0)
                return r;
        r = key_of(elf, &st, &key);
        if (r >= 0)
                r = table_file_key_name(&key, name, sizeof(name));
        if (r < 0)
                return unwind_table_build_elf(elf, limits, ret);        /* no name: not stored */

        r = store_load(s, name, &key, limits, ret);
        if (r >= 0) {
                s->hits++;
                return 0;
        }
        if (r == -ENOMEM)
                return r;
        if (r == -ENOENT)
                s->misses++;
        else {
                s->rejected++;
                forget(s, name);
                (void)unlinkat(s->dir_fd, name, 0);     /* a symlink goes as a link */
        }

        r = unwind_table_build_elf(elf, limits, ret);
        if (r < 0)
                return r;
        if (store_save(s, name, &key, ret) >= 0)
                s->written++;
        else
                s->write_failed++;
        return 0;
}

void table_store_get_stats(struct table_store *s, struct table_store_stats *ret)
{
        assert(ret);
        *ret = (struct table_store_stats) {};
        if (!s)
                return;
        *ret = (struct table_store_stats) {
                .hits = s->hits, .misses = s->misses, .rejected = s->rejected, .written = s->written,
                .write_failed = s->write_failed, .evicted = s->evicted, .files = s->files, .bytes = s->bytes,
                .max_bytes = s->max_bytes,
        };
}
