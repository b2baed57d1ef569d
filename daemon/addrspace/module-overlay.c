/* SPDX-License-Identifier: GPL-2.0-only */
/* Lay the file mappings BPF recorded as a target made them over its module map: what it mapped
 * later wins where they overlap (pure). */
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

static void free_mappings(struct module_mapping *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(v[i].path);
        free(v);
}

/* Append a copy of e restricted to [start, end) to v. */
static int push_piece(struct module_mapping **v, size_t *n, size_t *cap, const struct module_mapping *e,
                      uint64_t start, uint64_t end, const char *path)
{
        if (*n == *cap) {
                size_t ncap = MAX(*cap * 2, (size_t)16);
                struct module_mapping *nv = realloc(*v, ncap * sizeof(*nv));

                if (!nv)
                        return -ENOMEM;
                *v = nv;
                *cap = ncap;
        }
        (*v)[*n] = (struct module_mapping) {
                .start = start, .end = end, .pgoff = e->pgoff + (start - e->start),
                .dev = e->dev, .ino = e->ino, .path = strdup(path), .not_code = e->not_code,
        };
        if (!(*v)[*n].path)
                return -ENOMEM;
        (*n)++;
        return 0;
}

int module_overlay_apply(struct module_map *mm, const struct recorded_mapping *m, size_t n,
                       module_path_fn path_of, void *userdata)
{
        struct module_mapping *cur = NULL;
        size_t n_cur = 0, cap_cur = 0;
        int r;

        for (size_t i = 0; i < mm->n; i++) {
                r = push_piece(&cur, &n_cur, &cap_cur, &mm->mappings[i], mm->mappings[i].start,
                               mm->mappings[i].end, mm->mappings[i].path);
                if (r < 0)
                        goto fail;
        }
        for (size_t k = 0; k < n; k++) {
                const struct recorded_mapping *rm = &m[k];
                struct module_mapping added = { .start = rm->start, .end = rm->end, .pgoff = rm->pgoff,
                                                .dev = rm->dev, .ino = rm->ino };
                const char *path = path_of ? path_of(userdata, rm->dev, rm->ino) : NULL;
                struct module_mapping *next = NULL;
                size_t n_next = 0, cap_next = 0;

                if (rm->end <= rm->start)
                        continue;
                for (size_t i = 0; i < n_cur; i++) {
                        const struct module_mapping *e = &cur[i];

                        if (e->end <= rm->start || e->start >= rm->end) {
                                r = push_piece(&next, &n_next, &cap_next, e, e->start, e->end, e->path);
                        } else {
                                r = 0;
                                if (e->start < rm->start)
                                        r = push_piece(&next, &n_next, &cap_next, e, e->start, rm->start, e->path);
                                if (r >= 0 && e->end > rm->end)
                                        r = push_piece(&next, &n_next, &cap_next, e, rm->end, e->end, e->path);
                        }
                        if (r < 0) {
                                free_mappings(next, n_next);
                                goto fail;
                        }
                }
                if (path) {
                        r = push_piece(&next, &n_next, &cap_next, &added, added.start, added.end, path);
                        if (r < 0) {
                                free_mappings(next, n_next);
                                goto fail;
                        }
                }
                free_mappings(cur, n_cur);
                cur = next;
                n_cur = n_next;
                cap_cur = cap_next;
        }
        if (n_cur > 1)
                qsort(cur, n_cur, sizeof(*cur), by_start);     /* cur may be NULL: not for qsort */
        free_mappings(mm->mappings, mm->n);
        mm->mappings = cur;
        mm->n = n_cur;
        return 0;
fail:
        free_mappings(cur, n_cur);
        return r;
}
