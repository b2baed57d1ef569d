/* SPDX-License-Identifier: GPL-2.0-only */
/* Lay the file mappings BPF recorded as a target made them over its module map: what it mapped
 * later wins where they overlap (pure). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "module-overlay.h"

static int by_time(const void *a, const void *b)
{
        const struct recorded_mapping *x = a, *y = b;

        if (x->timestamp_ns != y->timestamp_ns)
                return x->timestamp_ns < y->timestamp_ns ? -1 : 1;
        return x->start < y->start ? -1 : x->start > y->start;
}

size_t module_overlay_latest(struct recorded_mapping *m, size_t n)
{
        size_t newest = 0, out = 0;
        uint64_t mm;

        if (n == 0)
                return 0;
        for (size_t i = 1; i < n; i++)
                if (m[i].timestamp_ns > m[newest].timestamp_ns)
                        newest = i;
        mm = m[newest].mm;
        for (size_t i = 0; i < n; i++)
                if (m[i].mm == mm)
                        m[out++] = m[i];
        qsort(m, out, sizeof(*m), by_time);
        return out;
}

static int by_start(const void *a, const void *b)
{
        const struct module_mapping *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

/* A growing array of mappings, built piece by piece. */
struct pieces {
        struct module_mapping *v;
        size_t n, cap;
};

static void pieces_done(struct pieces *p)
{
        for (size_t i = 0; i < p->n; i++)
                free(p->v[i].path);
        free(p->v);
        *p = (struct pieces) {};
}

/* Append a copy of e restricted to [start, end) to p. */
static int push_piece(struct pieces *p, const struct module_mapping *e, uint64_t start, uint64_t end,
                      const char *path)
{
        if (p->n == p->cap) {
                size_t ncap = MAX(p->cap * 2, (size_t)16);
                struct module_mapping *nv = realloc(p->v, ncap * sizeof(*nv));

                if (!nv)
                        return -ENOMEM;
                p->v = nv;
                p->cap = ncap;
        }
        p->v[p->n] = (struct module_mapping) {
                .start = start, .end = end, .pgoff = e->pgoff + (start - e->start),
                .dev = e->dev, .ino = e->ino, .path = strdup(path), .not_code = e->not_code,
        };
        if (!p->v[p->n].path)
                return -ENOMEM;
        p->n++;
        return 0;
}

/* cur with [rm->start, rm->end) cut out of it, and the mapping rm records there if path names it. */
static int overlay_one(const struct pieces *cur, const struct recorded_mapping *rm, const char *path,
                       struct pieces *ret)
{
        _cleanup_(pieces_done) struct pieces next = {};
        struct module_mapping added = { .start = rm->start, .end = rm->end, .pgoff = rm->pgoff,
                                        .dev = rm->dev, .ino = rm->ino };
        int r = 0;

        for (size_t i = 0; r >= 0 && i < cur->n; i++) {
                const struct module_mapping *e = &cur->v[i];

                if (e->end <= rm->start || e->start >= rm->end) {
                        r = push_piece(&next, e, e->start, e->end, e->path);
                        continue;
                }
                if (e->start < rm->start)
                        r = push_piece(&next, e, e->start, rm->start, e->path);
                if (r >= 0 && e->end > rm->end)
                        r = push_piece(&next, e, rm->end, e->end, e->path);
        }
        if (r >= 0 && path)
                r = push_piece(&next, &added, added.start, added.end, path);
        if (r < 0)
                return r;
        *ret = TAKE_STRUCT(next);
        return 0;
}

/* mm's file mappings replaced by v[n]; its anonymous code, no file's, stays. */
static void replace_file_mappings(struct module_map *mm, struct module_mapping *v, size_t n)
{
        for (size_t i = 0; i < mm->n; i++)
                free(mm->mappings[i].path);
        free(mm->mappings);
        mm->mappings = v;
        mm->n = n;
}

int module_overlay_apply(struct module_map *mm, const struct recorded_mapping *m, size_t n,
                       module_path_fn path_of, void *userdata)
{
        _cleanup_(pieces_done) struct pieces cur = {};
        int r;

        assert(mm);
        for (size_t i = 0; i < mm->n; i++) {
                r = push_piece(&cur, &mm->mappings[i], mm->mappings[i].start, mm->mappings[i].end,
                               mm->mappings[i].path);
                if (r < 0)
                        return r;
        }
        for (size_t k = 0; k < n; k++) {
                const char *path = path_of ? path_of(userdata, m[k].dev, m[k].ino) : NULL;
                struct pieces next;

                if (m[k].end <= m[k].start || m[k].timestamp_ns < mm->read_ns)
                        continue;
                r = overlay_one(&cur, &m[k], path, &next);
                if (r < 0)
                        return r;
                pieces_done(&cur);
                cur = next;
        }
        if (cur.n > 1)
                qsort(cur.v, cur.n, sizeof(*cur.v), by_start);  /* cur.v may be NULL: not for qsort */
        replace_file_mappings(mm, TAKE_PTR(cur.v), cur.n);
        cur = (struct pieces) {};
        return 0;
}
