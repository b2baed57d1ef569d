/* SPDX-License-Identifier: GPL-2.0-only */
/* Which mapped object's malloc serves a process: the first object defining the allocation
 * functions in the dynamic loader's global lookup order (pure: the caller reads the files). */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "allocator-choice.h"
#include "macro.h"
#include "util.h"

static const char *base_name(const char *path)
{
        const char *slash = strrchr(path, '/');

        return slash ? slash + 1 : path;
}

/* The object a DT_NEEDED or LD_PRELOAD name denotes: a path names the file, a plain name its
 * DT_SONAME or, failing that, its file name. */
static ssize_t find_object(const struct examined_object *objs, size_t n, const char *name)
{
        bool is_path = strchr(name, '/') != NULL;

        for (size_t i = 0; i < n; i++) {
                if (is_path ? strcmp(objs[i].path, name) == 0 :
                    (objs[i].deps && objs[i].deps->soname && strcmp(objs[i].deps->soname, name) == 0))
                        return (ssize_t)i;
        }
        /* A path may name a symlink to the mapped file (libtcmalloc.so.4 -> .so.4.5.10): match
         * its file name as a soname, then as a file name. */
        for (size_t i = 0; is_path && i < n; i++)
                if (objs[i].deps && objs[i].deps->soname && strcmp(objs[i].deps->soname, base_name(name)) == 0)
                        return (ssize_t)i;
        for (size_t i = 0; i < n; i++)
                if (strcmp(base_name(objs[i].path), base_name(name)) == 0)
                        return (ssize_t)i;
        return -1;
}

static bool defines_malloc(const struct examined_object *o)
{
        return o->sites && alloc_sites_has_c_api(o->sites);
}

/* Objects in lookup order into order[] (each once); returns how many. */
static size_t lookup_order(const struct examined_object *objs, size_t n, char *const *preload, size_t n_preload,
                           size_t *order)
{
        _cleanup_free_ bool *seen = calloc(n ? n : 1, sizeof(bool));
        size_t n_order = 0;
        ssize_t k;

        if (!seen)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (objs[i].is_executable) {
                        order[n_order++] = i;
                        seen[i] = true;
                        break;
                }
        if (n_order == 0)
                return 0;
        for (size_t i = 0; i < n_preload; i++)
                if ((k = find_object(objs, n, preload[i])) >= 0 && !seen[k]) {
                        order[n_order++] = (size_t)k;
                        seen[k] = true;
                }
        /* Breadth first: order[] itself is the queue. Preloads' own needs come after the
         * executable's, as the loader loads them. */
        for (size_t head = 0; head < n_order; head++) {
                const struct elf_deps *d = objs[order[head]].deps;

                for (size_t j = 0; d && j < d->n_needed; j++)
                        if ((k = find_object(objs, n, d->needed[j])) >= 0 && !seen[k]) {
                                order[n_order++] = (size_t)k;
                                seen[k] = true;
                        }
        }
        return n_order;
}

static const char *allocator_name(const struct examined_object *o)
{
        const char *name = alloc_sites_family_to_string(alloc_sites_family(o->sites));

        if (name)
                return name;
        /* glibc's libc.so.6 has __libc_malloc; a name check covers stripped copies. */
        if (strcmp(base_name(o->path), "libc.so.6") == 0)
                return "glibc";
        /* musl's libc exports nothing of its allocator but the standard names: its loader's name
         * (ld-musl-x86_64.so.1, libc.musl-x86_64.so.1 on Alpine) or Debian's directory for it */
        if (strncmp(base_name(o->path), "ld-musl-", 8) == 0 || strncmp(base_name(o->path), "libc.musl-", 10) == 0 ||
            strstr(o->path, "-linux-musl/"))
                return "musl";
        return "other";
}

int allocator_choice_find(const struct examined_object *objs, size_t n, char *const *preload, size_t n_preload,
                     struct allocator_choice *ret)
{
        _cleanup_free_ size_t *order = calloc(n ? n : 1, sizeof(size_t));
        size_t n_order, chosen = n;
        const struct examined_object *o;
        bool in_order = false;
        int r;

        assert(ret);
        if (!order)
                return -ENOMEM;
        n_order = lookup_order(objs, n, preload, n_preload, order);
        for (size_t i = 0; i < n_order && chosen == n; i++)
                if (defines_malloc(&objs[order[i]])) {
                        chosen = order[i];
                        in_order = true;
                }
        for (size_t i = 0; i < n && chosen == n; i++)
                if (defines_malloc(&objs[i]))
                        chosen = i;
        if (chosen == n)
                return -ENOENT;

        o = &objs[chosen];
        *ret = (struct allocator_choice) {
                .object = chosen,
                .allocator = allocator_name(o),
                .is_static = o->is_executable,
        };
        if (o->is_executable)
                r = asprintf(&ret->reason, "the executable %s defines malloc itself (%s linked in statically)",
                             o->path, ret->allocator);
        else if (in_order)
                r = asprintf(&ret->reason, "%s is the first object defining malloc in the process's symbol "
                             "lookup order (executable, LD_PRELOAD, DT_NEEDED)", o->path);
        else
                r = asprintf(&ret->reason, "%s defines malloc (the lookup order could not be followed)",
                             o->path);
        if (r < 0) {
                ret->reason = NULL;
                return -ENOMEM;
        }
        return 0;
}

void allocator_choice_done(struct allocator_choice *c)
{
        assert(c);
        free(c->reason);
        *c = (struct allocator_choice) {};
}

int allocator_choice_split_preload(const char *value, char ***ret, size_t *n)
{
        char **names = NULL;
        size_t count = 0;
        int r;

        assert(ret);
        assert(n);
        *ret = NULL;
        *n = 0;
        while (value && *value) {
                size_t len = strcspn(value, " :\t");

                if (len > 0 && (r = strv_push_n(&names, &count, strndup(value, len))) < 0) {
                        strv_free_n(names, count);
                        return r;
                }
                value += len;
                value += strspn(value, " :\t");
        }
        *ret = names;
        *n = count;
        return 0;
}
