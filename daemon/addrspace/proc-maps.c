/* SPDX-License-Identifier: GPL-2.0-only */
/* Parse /proc/PID/maps text into an array of mappings, and look addresses and libc up in it. */
#include "proc-maps.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

#define DELETED_SUFFIX " (deleted)"

/* The entries parsed so far; grows by doubling. */
struct maps_builder {
        struct map_entry *entries;
        size_t n, allocated;
};

static void builder_done(struct maps_builder *b)
{
        for (size_t i = 0; i < b->n; i++)
                free(b->entries[i].path);
        free(b->entries);
        *b = (struct maps_builder) {};
}

static int builder_push(struct maps_builder *b, struct map_entry *e)
{
        /* Lookups bisect, so insist on the kernel's order: sorted, not overlapping (-EAGAIN: a
         * file read while the process changed its mappings may be out of order; read again). */
        if (b->n > 0 && e->start < b->entries[b->n - 1].end)
                return -EAGAIN;

        if (b->n == b->allocated) {
                size_t want = b->allocated ? b->allocated * 2 : 64;
                struct map_entry *p;

                if (want > SIZE_MAX / sizeof(*p))
                        return -ENOMEM;
                p = realloc(b->entries, want * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                b->entries = p;
                b->allocated = want;
        }
        b->entries[b->n++] = *e;
        return 0;
}

static int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Parse a number in base 16 or 10 at *p (before end), advancing *p past it. */
static int parse_number(const char **p, const char *end, unsigned base, uint64_t *ret)
{
        const char *s = *p;
        uint64_t v = 0;
        int d;

        while (s < end && (d = hex_digit(*s)) >= 0 && (unsigned)d < base) {
                if (v > (UINT64_MAX - (unsigned)d) / base)
                        return -EINVAL;
                v = v * base + (unsigned)d;
                s++;
        }
        if (s == *p)
                return -EINVAL;
        *p = s;
        *ret = v;
        return 0;
}

static int expect_char(const char **p, const char *end, char c)
{
        if (*p >= end || **p != c)
                return -EINVAL;
        (*p)++;
        return 0;
}

static bool char_in(char c, const char *set)
{
        return c != '\0' && strchr(set, c);
}

/* One or more spaces. */
static int skip_spaces(const char **p, const char *end)
{
        const char *s = *p;

        while (s < end && *s == ' ')
                s++;
        if (s == *p)
                return -EINVAL;
        *p = s;
        return 0;
}

/* "start-end perms pgoff major:minor inode [path]", without the newline. */
static int parse_line(const char *line, size_t len, struct map_entry *ret)
{
        const char *p = line, *end = line + len;
        struct map_entry e = {};
        size_t path_len;

        if (parse_number(&p, end, 16, &e.start) < 0 ||
            expect_char(&p, end, '-') < 0 ||
            parse_number(&p, end, 16, &e.end) < 0 ||
            skip_spaces(&p, end) < 0)
                return -EINVAL;
        if (e.start >= e.end)
                return -EINVAL;

        if (end - p < 4 ||
            !char_in(p[0], "r-") || !char_in(p[1], "w-") || !char_in(p[2], "x-") || !char_in(p[3], "ps"))
                return -EINVAL;
        memcpy(e.perms, p, 4);
        e.perms[4] = '\0';
        p += 4;

        if (skip_spaces(&p, end) < 0 ||
            parse_number(&p, end, 16, &e.pgoff) < 0 ||
            skip_spaces(&p, end) < 0 ||
            parse_number(&p, end, 16, &e.dev_major) < 0 ||
            expect_char(&p, end, ':') < 0 ||
            parse_number(&p, end, 16, &e.dev_minor) < 0 ||
            skip_spaces(&p, end) < 0 ||
            parse_number(&p, end, 10, &e.inode) < 0)
                return -EINVAL;

        /* The rest, after the padding, is the path; it may contain spaces. */
        if (p < end && skip_spaces(&p, end) < 0)
                return -EINVAL;
        path_len = (size_t)(end - p);
        if (path_len == 0) {
                *ret = e;
                return 0;
        }
        if (path_len > strlen(DELETED_SUFFIX) &&
            memcmp(end - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX)) == 0) {
                path_len -= strlen(DELETED_SUFFIX);
                e.deleted = true;
        }
        e.path = strndup(p, path_len);
        if (!e.path)
                return -ENOMEM;
        *ret = e;
        return 0;
}

static int builder_add_line(struct maps_builder *b, const char *line, size_t len)
{
        struct map_entry e;
        int r;

        if (len == 0)
                return 0;
        if (memchr(line, '\0', len))
                return -EINVAL;
        r = parse_line(line, len, &e);
        if (r < 0)
                return r;
        r = builder_push(b, &e);
        if (r < 0)
                free(e.path);
        return r;
}

static void builder_finish(struct maps_builder *b, struct proc_maps *ret)
{
        *ret = (struct proc_maps) { .entries = b->entries, .n = b->n };
        *b = (struct maps_builder) {};
}

int proc_maps_parse_string(const char *text, struct proc_maps *ret)
{
        _cleanup_(builder_done) struct maps_builder b = {};
        const char *p = text;
        int r;

        assert(text);
        assert(ret);
        while (*p) {
                const char *nl = strchrnul(p, '\n');

                r = builder_add_line(&b, p, (size_t)(nl - p));
                if (r < 0)
                        return r == -EAGAIN ? -EINVAL : r;
                p = *nl ? nl + 1 : nl;
        }
        builder_finish(&b, ret);
        return 0;
}

static int parse_file_once(const char *path, struct proc_maps *ret)
{
        _cleanup_(builder_done) struct maps_builder b = {};
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        ssize_t n;
        int r;

        assert(path);
        assert(ret);
        f = fopen(path, "re");
        if (!f)
                return -errno;

        errno = 0;
        while ((n = getline(&line, &size, f)) >= 0) {
                size_t len = (size_t)n;

                if (len > 0 && line[len - 1] == '\n')
                        len--;
                r = builder_add_line(&b, line, len);
                if (r < 0)
                        return r;
        }
        if (ferror(f))
                return errno > 0 ? -errno : -EIO;

        builder_finish(&b, ret);
        return 0;
}

/* Reads of a process that maps and unmaps while it is read: the kernel lists each mapping as it
 * is at the moment its part of the file is read, so one read may list a mapping that overlaps
 * the one before it (split or grown between two parts). Such a read is taken again. */
#define PARSE_FILE_TRIES 8

int proc_maps_parse_file(const char *path, struct proc_maps *ret)
{
        int r = -EINVAL;

        assert(path);
        assert(ret);
        for (unsigned i = 0; i < PARSE_FILE_TRIES; i++) {
                r = parse_file_once(path, ret);
                if (r != -EAGAIN)
                        return r;
        }
        return -EINVAL;         /* out of order every time: not a maps file as the kernel writes it */
}

void proc_maps_done(struct proc_maps *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < m->n; i++)
                free(m->entries[i].path);
        free(m->entries);
        *m = (struct proc_maps) {};
}
