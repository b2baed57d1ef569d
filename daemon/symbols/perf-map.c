/* SPDX-License-Identifier: GPL-2.0-only */
/* A process's perf map: the names of its JIT code. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "macro.h"
#include "perf-map.h"
#include "safe-open.h"

struct perf_map_symbol {
        uint64_t start, end;
        uint32_t seq;           /* its line's order: a later line wins where they overlap */
        uint32_t name;          /* offset into names */
};

struct perf_map {
        unsigned n_ref;
        struct perf_map_symbol *symbols;        /* by start, then seq */
        size_t n, allocated;
        char *names;
        size_t names_len, names_allocated;
        bool truncated;
};

/* How far before addr's last starting entry to look for an earlier, longer one covering it. */
#define OVERLAP_LOOKBACK 16

struct perf_map *perf_map_ref(struct perf_map *m)
{
        if (m)
                __atomic_add_fetch(&m->n_ref, 1, __ATOMIC_RELAXED);
        return m;
}

struct perf_map *perf_map_unref(struct perf_map *m)
{
        if (!m || __atomic_sub_fetch(&m->n_ref, 1, __ATOMIC_ACQ_REL) > 0)
                return NULL;
        free(m->symbols);
        free(m->names);
        free(m);
        return NULL;
}

size_t perf_map_bytes(const struct perf_map *m)
{
        return m ? sizeof(*m) + m->allocated * sizeof(*m->symbols) + m->names_allocated : 0;
}

bool perf_map_truncated(const struct perf_map *m)
{
        assert(m);
        return m->truncated;
}

/* "START SIZE NAME": 0, or -EINVAL. name points into line, its end trimmed. */
static int parse_line(char *line, uint64_t *start, uint64_t *size, const char **name)
{
        char *p = line, *end;
        size_t len;

        errno = 0;
        *start = strtoull(p, &end, 16);
        if (errno || end == p || (*end != ' ' && *end != '\t'))
                return -EINVAL;
        p = end;
        *size = strtoull(p, &end, 16);
        if (errno || end == p || (*end != ' ' && *end != '\t'))
                return -EINVAL;
        p = end + strspn(end, " \t");
        len = strcspn(p, "\r\n");
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t'))
                len--;
        if (len == 0 || *size == 0 || *start + *size < *start)
                return -EINVAL;
        p[len] = '\0';
        *name = p;
        return 0;
}

static int add_symbol(struct perf_map *m, uint64_t start, uint64_t size, const char *name)
{
        size_t len = strlen(name) + 1;

        if (m->n == m->allocated) {
                size_t want = MIN(MAX(m->allocated * 2, (size_t)256), (size_t)PERF_MAP_SYMBOLS_MAX);
                struct perf_map_symbol *n = realloc(m->symbols, want * sizeof(*n));

                if (!n)
                        return -ENOMEM;
                m->symbols = n;
                m->allocated = want;
        }
        if (m->names_len + len > m->names_allocated) {
                /* (the caller keeps names_len + len within PERF_MAP_NAME_BYTES_MAX) */
                size_t want = MIN(MAX(m->names_allocated * 2, m->names_len + len + 4096),
                                  (size_t)PERF_MAP_NAME_BYTES_MAX);
                char *n = realloc(m->names, want);

                if (!n)
                        return -ENOMEM;
                m->names = n;
                m->names_allocated = want;
        }
        memcpy(m->names + m->names_len, name, len);
        m->symbols[m->n] = (struct perf_map_symbol) {
                .start = start, .end = start + size, .seq = (uint32_t)m->n, .name = (uint32_t)m->names_len,
        };
        m->n++;
        m->names_len += len;
        return 0;
}

static int by_start_then_seq(const void *a, const void *b)
{
        const struct perf_map_symbol *x = a, *y = b;

        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* One line of f (its '\n' consumed, not kept) into buf, NUL-terminated, at most size - 1 of its
 * bytes (*whole false when it had more), reading at most budget bytes: how many it read, 0 at EOF.
 * Byte by byte, so that NUL bytes in the file (a sparse file of zeros) count as read too. */
static uint64_t read_line(FILE *f, char *buf, size_t size, uint64_t budget, bool *whole)
{
        uint64_t consumed = 0;
        size_t n = 0;
        int c;

        *whole = true;
        while (consumed < budget && (c = getc_unlocked(f)) != EOF) {
                consumed++;
                if (c == '\n')
                        break;
                if (n + 1 < size)
                        buf[n++] = (char)c;
                else
                        *whole = false;
        }
        buf[n] = '\0';
        return consumed;
}

int perf_map_parse(FILE *f, struct perf_map **ret)
{
        _cleanup_(perf_map_unrefp) struct perf_map *m = calloc(1, sizeof(*m));
        char line[PERF_MAP_LINE_MAX];
        uint64_t read_bytes = 0, k;
        bool whole;
        int r;

        assert(f);
        assert(ret);
        if (!m)
                return -ENOMEM;
        m->n_ref = 1;
        while ((k = read_line(f, line, sizeof(line), PERF_MAP_READ_BYTES_MAX - read_bytes, &whole)) > 0) {
                const char *name;
                uint64_t start, size;

                read_bytes += k;
                if (m->n >= PERF_MAP_SYMBOLS_MAX || m->names_len + strlen(line) + 1 > PERF_MAP_NAME_BYTES_MAX ||
                    read_bytes >= PERF_MAP_READ_BYTES_MAX) {
                        m->truncated = true;
                        break;
                }
                /* a line longer than any name a runtime writes is not one of its lines */
                if (!whole || parse_line(line, &start, &size, &name) < 0)
                        continue;
                r = add_symbol(m, start, size, name);
                if (r < 0)
                        return r;
        }
        if (ferror(f))
                return -EIO;
        if (m->n > 1)
                qsort(m->symbols, m->n, sizeof(*m->symbols), by_start_then_seq);
        *ret = TAKE_PTR(m);
        return 0;
}

int perf_map_load(int root_fd, pid_t ns_pid, uid_t owner, struct perf_map **ret)
{
        _cleanup_fclose_ FILE *f = NULL;
        struct stat st;
        char path[64];
        int fd;

        assert(ret);
        snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)ns_pid);
        fd = safe_open_regular(root_fd, path, SAFE_OPEN_NOFOLLOW, &st);
        if (fd < 0)
                return fd;
        if (st.st_uid != owner && st.st_uid != 0) {
                close(fd);
                return -EPERM;
        }
        f = fdopen(fd, "re");
        if (!f) {
                int r = -errno;

                close(fd);
                return r;
        }
        return perf_map_parse(f, ret);
}

/* The entry naming addr (the one written last of those covering it), or NULL. */
static const struct perf_map_symbol *find_symbol(const struct perf_map *m, uint64_t addr)
{
        const struct perf_map_symbol *best = NULL;
        size_t lo = 0, hi = m->n;

        /* the first entry starting past addr */
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;

                if (m->symbols[mid].start <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t i = lo, looked = 0; i > 0 && looked < OVERLAP_LOOKBACK; i--, looked++) {
                const struct perf_map_symbol *s = &m->symbols[i - 1];

                if (addr < s->end && (!best || s->seq > best->seq))
                        best = s;
        }
        return best;
}

const char *perf_map_find(const struct perf_map *m, uint64_t addr, uint64_t *ret_offset)
{
        const struct perf_map_symbol *best;

        assert(m);
        best = find_symbol(m, addr);
        if (!best)
                return NULL;
        if (ret_offset)
                *ret_offset = addr - best->start;
        return m->names + best->name;
}

static int by_seq(const void *a, const void *b)
{
        const struct perf_map_symbol *x = *(const struct perf_map_symbol *const *)a;
        const struct perf_map_symbol *y = *(const struct perf_map_symbol *const *)b;

        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int perf_map_entries_at(const struct perf_map *m, const uint64_t *addrs, size_t n, struct perf_map_entry **ret,
                        size_t *ret_n)
{
        _cleanup_free_ const struct perf_map_symbol **found = NULL;
        struct perf_map_entry *entries;
        size_t n_found = 0, k = 0;

        assert(m);
        assert(addrs || n == 0);
        assert(ret);
        assert(ret_n);
        found = calloc(MAX(n, (size_t)1), sizeof(*found));
        if (!found)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct perf_map_symbol *s = find_symbol(m, addrs[i]);

                if (s)
                        found[n_found++] = s;
        }
        if (n_found == 0) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        qsort(found, n_found, sizeof(*found), by_seq);
        entries = calloc(n_found, sizeof(*entries));
        if (!entries)
                return -ENOMEM;
        for (size_t i = 0; i < n_found; i++)
                if (i == 0 || found[i] != found[i - 1])
                        entries[k++] = (struct perf_map_entry) {
                                .start = found[i]->start, .end = found[i]->end, .name = m->names + found[i]->name,
                        };
        *ret = entries;
        *ret_n = k;
        return 0;
}

int perf_map_new_from(const struct perf_map_entry *entries, size_t n, struct perf_map **ret)
{
        _cleanup_(perf_map_unrefp) struct perf_map *m = calloc(1, sizeof(*m));
        size_t names = 0;
        int r;

        assert(entries || n == 0);
        assert(ret);
        if (!m)
                return -ENOMEM;
        m->n_ref = 1;
        if (n > PERF_MAP_SYMBOLS_MAX)
                return -E2BIG;
        for (size_t i = 0; i < n; i++) {
                if (entries[i].end <= entries[i].start || !entries[i].name || !entries[i].name[0])
                        return -EINVAL;
                names += strlen(entries[i].name) + 1;
                if (names > PERF_MAP_NAME_BYTES_MAX)
                        return -E2BIG;
        }
        for (size_t i = 0; i < n; i++) {
                r = add_symbol(m, entries[i].start, entries[i].end - entries[i].start, entries[i].name);
                if (r < 0)
                        return r;
        }
        if (m->n > 1)
                qsort(m->symbols, m->n, sizeof(*m->symbols), by_start_then_seq);
        *ret = TAKE_PTR(m);
        return 0;
}
