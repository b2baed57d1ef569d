/* SPDX-License-Identifier: GPL-2.0-only */
/* The dynamic loader's view of the system: /etc/ld.so.cache (parsed from the file, no ldconfig
 * -p) and the directories /etc/ld.so.conf lists, read through a root directory. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ld-cache.h"
#include "macro.h"
#include "safe-open.h"
#include "util.h"

/* glibc sysdeps/generic/dl-cache.h */
#define CACHE_MAGIC_OLD "ld.so-1.7.0"
#define CACHE_MAGIC_NEW "glibc-ld.so.cache"
#define CACHE_VERSION_NEW "1.1"
#define CACHE_FLAG_ELF_LIBC6 0x0003
#define CACHE_FLAG_X8664_LIB64 0x0300
#define CACHE_MAX_BYTES (64u << 20)     /* a real cache is well under a megabyte */
#define CONF_MAX_DEPTH 8                /* include nesting */
#define CONF_MAX_BYTES (1u << 20)       /* one ld.so.conf file */
#define CONF_MAX_INCLUDED_FILES 4096    /* files one include pattern takes */

struct cache_header_new {
        char magic[sizeof(CACHE_MAGIC_NEW) - 1];
        char version[sizeof(CACHE_VERSION_NEW) - 1];
        uint32_t nlibs;
        uint32_t len_strings;
        uint8_t flags;
        uint8_t padding[3];
        uint32_t extension_offset;
        uint32_t unused[3];
};

struct cache_entry_new {
        int32_t flags;
        uint32_t key, value;    /* string offsets from the start of the new header */
        uint32_t osversion;
        uint64_t hwcap;
};

struct cache_header_old {
        char magic[sizeof(CACHE_MAGIC_OLD) - 1];
        uint32_t nlibs;
};

_Static_assert(sizeof(struct cache_header_new) == 48, "ld.so.cache header layout");
_Static_assert(sizeof(struct cache_entry_new) == 24, "ld.so.cache entry layout");
_Static_assert(sizeof(struct cache_header_old) == 16, "old ld.so.cache header layout");

void ld_cache_done(struct ld_cache *c)
{
        assert(c);
        for (size_t i = 0; i < c->n; i++) {
                free(c->entries[i].name);
                free(c->entries[i].path);
        }
        free(c->entries);
        *c = (struct ld_cache) {};
}

/* The NUL-terminated string at offset inside [base, base + size); NULL if it runs off the end. */
static const char *string_at(const char *base, size_t size, uint32_t offset)
{
        if (offset >= size || !memchr(base + offset, '\0', size - offset))
                return NULL;
        return base + offset;
}

int ld_cache_parse(const void *data, size_t size, struct ld_cache *ret)
{
        const char *base = data;
        struct cache_header_new h;
        struct ld_cache c = {};
        size_t offset = 0;

        assert(ret);
        /* The old format may come first (ldconfig -c compat); the new one follows, 8-aligned. */
        if (size >= sizeof(struct cache_header_old) && memcmp(base, CACHE_MAGIC_OLD, strlen(CACHE_MAGIC_OLD)) == 0) {
                struct cache_header_old old;

                memcpy(&old, base, sizeof(old));
                if (old.nlibs > size / 12)
                        return -EBADMSG;
                offset = (sizeof(old) + (size_t)old.nlibs * 12 + 7) & ~(size_t)7;
        }
        if (offset > size || size - offset < sizeof(h))
                return -EBADMSG;
        base += offset;
        size -= offset;
        memcpy(&h, base, sizeof(h));
        if (memcmp(h.magic, CACHE_MAGIC_NEW, sizeof(h.magic)) != 0 ||
            memcmp(h.version, CACHE_VERSION_NEW, sizeof(h.version)) != 0 ||
            h.nlibs > (size - sizeof(h)) / sizeof(struct cache_entry_new))
                return -EBADMSG;

        c.entries = calloc(MAX(h.nlibs, 1u), sizeof(*c.entries));
        if (!c.entries)
                return -ENOMEM;
        for (uint32_t i = 0; i < h.nlibs; i++) {
                struct cache_entry_new e;
                const char *name, *path;

                memcpy(&e, base + sizeof(h) + (size_t)i * sizeof(e), sizeof(e));
                /* glibc's _dl_cache_check_flags for x86-64; hwcap entries serve other CPU levels */
                if (e.flags != (CACHE_FLAG_ELF_LIBC6 | CACHE_FLAG_X8664_LIB64) || e.hwcap != 0)
                        continue;
                name = string_at(base, size, e.key);
                path = string_at(base, size, e.value);
                if (!name || !path) {
                        ld_cache_done(&c);
                        return -EBADMSG;
                }
                c.entries[c.n] = (struct ld_cache_entry) { .name = strdup(name), .path = strdup(path) };
                if (!c.entries[c.n].name || !c.entries[c.n].path) {
                        c.n++;
                        ld_cache_done(&c);
                        return -ENOMEM;
                }
                c.n++;
        }
        *ret = c;
        return 0;
}

const char *ld_cache_lookup(const struct ld_cache *c, const char *name)
{
        assert(name);
        for (size_t i = 0; c && i < c->n; i++)
                if (strcmp(c->entries[i].name, name) == 0)
                        return c->entries[i].path;
        return NULL;
}

int ld_cache_read(int root_fd, struct ld_cache *ret)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        void *data;
        int r;

        assert(ret);
        fd = safe_open_regular(root_fd, "/etc/ld.so.cache", 0, &st);
        if (fd < 0)
                return fd == -ENOTREG ? -EBADMSG : fd;
        if (st.st_size <= 0 || (uint64_t)st.st_size > CACHE_MAX_BYTES)
                return -EBADMSG;
        data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (data == MAP_FAILED)
                return -errno;
        r = ld_cache_parse(data, (size_t)st.st_size, ret);
        munmap(data, (size_t)st.st_size);
        return r;
}

static int conf_read_file(int root_fd, const char *path, unsigned depth, char ***dirs, size_t *n);

static int strcmp_ptr(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir_fd matching pattern, sorted as glob() sorts them. */
static int dir_matches(int dir_fd, const char *pattern, char ***ret, size_t *ret_n)
{
        DIR *d = fdopendir(dir_fd);
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        int r = 0;

        if (!d) {
                close(dir_fd);
                return -errno;
        }
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' && pattern[0] != '.')
                        continue;
                if (fnmatch(pattern, de->d_name, FNM_PERIOD) != 0)
                        continue;
                if (n >= CONF_MAX_INCLUDED_FILES) {
                        r = -E2BIG;
                        break;
                }
                r = strv_push_n(&names, &n, strdup(de->d_name));
                if (r < 0)
                        break;
        }
        closedir(d);
        if (r < 0) {
                strv_free_n(names, n);
                return r;
        }
        if (n > 0)
                qsort(names, n, sizeof(*names), strcmp_ptr);
        *ret = names;
        *ret_n = n;
        return 0;
}

/* "include PATTERN": every file it matches, in sorted order, like ldconfig. Wildcards are
 * matched in the last component only, which is how distributions write them (a directory, then
 * a pattern of file names). */
static int conf_include(int root_fd, const char *including, const char *pattern, unsigned depth,
                        char ***dirs, size_t *n)
{
        _cleanup_free_ char *full = NULL;
        char **names = NULL;
        size_t n_names = 0;
        char *slash;
        int dir_fd, r = 0;

        if (pattern[0] == '/')
                full = strdup(pattern);
        else {
                const char *last = strrchr(including, '/');

                if (asprintf(&full, "%.*s/%s", last ? (int)(last - including) : 0, including, pattern) < 0)
                        full = NULL;
        }
        if (!full)
                return -ENOMEM;
        slash = strrchr(full, '/');
        *slash = '\0';
        dir_fd = safe_open_dir(root_fd, *full ? full : "/");
        if (dir_fd < 0)
                return 0;       /* no such directory: nothing to add */
        r = dir_matches(dir_fd, slash + 1, &names, &n_names);
        if (r < 0)
                return r == -E2BIG ? 0 : r;
        for (size_t i = 0; i < n_names && r >= 0; i++) {
                _cleanup_free_ char *file = NULL;

                if (asprintf(&file, "%s/%s", full, names[i]) < 0)
                        r = -ENOMEM;
                else
                        r = conf_read_file(root_fd, file, depth + 1, dirs, n);
        }
        strv_free_n(names, n_names);
        return r;
}

static int conf_read_file(int root_fd, const char *path, unsigned depth, char ***dirs, size_t *n)
{
        _cleanup_free_ char *text = NULL;
        char *line, *next;
        int r;

        if (depth > CONF_MAX_DEPTH)
                return 0;
        r = safe_open_read_file(root_fd, path, CONF_MAX_BYTES, &text, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;       /* missing, not a regular file, too large: ldconfig skips it too */
        for (line = text; line; line = next) {
                char *s = line, *end;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                s[strcspn(s, "#")] = '\0';
                s += strspn(s, " \t");
                end = s + strlen(s);
                while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
                        *--end = '\0';
                if (!*s)
                        continue;
                if (strncmp(s, "include", 7) == 0 && (s[7] == ' ' || s[7] == '\t')) {
                        s += 7 + strspn(s + 7, " \t");
                        r = conf_include(root_fd, path, s, depth, dirs, n);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (strncmp(s, "hwcap", 5) == 0 && (s[5] == ' ' || s[5] == '\t'))
                        continue;
                /* "dir=TYPE" (old libc5 syntax) and "dir, dir" lists */
                for (char *save = NULL, *tok = strtok_r(s, " \t,:", &save); tok;
                     tok = strtok_r(NULL, " \t,:", &save)) {
                        tok[strcspn(tok, "=")] = '\0';
                        if (tok[0] != '/')
                                continue;
                        r = strv_push_n(dirs, n, strdup(tok));
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

int ld_cache_read_conf_dirs(int root_fd, char ***ret, size_t *n)
{
        char **dirs = NULL;
        size_t count = 0;
        int r;

        assert(ret);
        assert(n);
        r = conf_read_file(root_fd, "/etc/ld.so.conf", 0, &dirs, &count);
        if (r < 0) {
                strv_free_n(dirs, count);
                return r;
        }
        *ret = dirs;
        *n = count;
        return 0;
}
