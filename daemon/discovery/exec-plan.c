/* SPDX-License-Identifier: GPL-2.0-only */
/* The objects a program will map once it runs, found before it runs the way glibc's dynamic
 * loader finds them. Pure: files are opened through a callback (tests feed it fixture trees). */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exec-plan.h"
#include "macro.h"
#include "util.h"

#define PRELOAD_SEPARATORS " :"         /* LD_PRELOAD (glibc rtld.c) */
#define PRELOAD_FILE_SEPARATORS " \t\n:" /* /etc/ld.so.preload */
#define LIBRARY_PATH_SEPARATORS ":;"    /* LD_LIBRARY_PATH */

struct resolver {
        const struct exec_plan_settings *s;
        exec_plan_open_fn open_file;
        void *userdata;
        struct exec_plan plan;
};

char *exec_plan_dirname(const char *path)
{
        const char *slash = strrchr(path, '/');

        assert(path);
        if (!slash)
                return strdup(".");
        if (slash == path)
                return strdup("/");
        return strndup(path, (size_t)(slash - path));
}

/* Length of the token name at s ("ORIGIN" as $ORIGIN or ${ORIGIN}), 0 if s does not start with it. */
static size_t dst_match(const char *s, const char *name)
{
        size_t n = strlen(name);

        if (strncmp(s, name, n) == 0 && !(s[n] == '_' || (s[n] >= 'A' && s[n] <= 'Z') ||
                                          (s[n] >= 'a' && s[n] <= 'z') || (s[n] >= '0' && s[n] <= '9')))
                return n;
        if (s[0] == '{' && strncmp(s + 1, name, n) == 0 && s[n + 1] == '}')
                return n + 2;
        return 0;
}

char *exec_plan_expand_dst(const char *s, const char *origin, const char *lib, const char *platform)
{
        _cleanup_free_ char *out = NULL;
        size_t len = 0;
        FILE *f;

        assert(s);
        f = open_memstream(&out, &len);
        if (!f)
                return NULL;
        while (*s) {
                const char *value = NULL;
                size_t k = 0;

                if (*s == '$') {
                        if ((k = dst_match(s + 1, "ORIGIN")))
                                value = origin;
                        else if ((k = dst_match(s + 1, "LIB")))
                                value = lib;
                        else if ((k = dst_match(s + 1, "PLATFORM")))
                                value = platform;
                        if (k > 0 && !value) {
                                fclose(f);
                                return NULL;    /* the loader drops what it cannot expand */
                        }
                }
                if (k > 0) {
                        fputs(value, f);
                        s += 1 + k;
                } else
                        fputc(*s++, f);
        }
        if (fclose(f) != 0)
                return NULL;
        return TAKE_PTR(out);
}

/* path made absolute against the program's working directory. */
static char *absolute(const struct resolver *r, const char *path)
{
        char *p;

        if (path[0] == '/')
                return strdup(path);
        if (asprintf(&p, "%s/%s", r->s->cwd ? r->s->cwd : "", path) < 0)
                return NULL;
        return p;
}

static void object_done(struct planned_object *o)
{
        free(o->path);
        free(o->name);
        strv_free_n(o->aliases, o->n_aliases);
        if (o->fd >= 0)
                close(o->fd);
        elf_deps_done(&o->deps);
}

void exec_plan_done(struct exec_plan *p)
{
        assert(p);
        for (size_t i = 0; i < p->n; i++)
                object_done(&p->objects[i]);
        free(p->objects);
        strv_free_n(p->missing, p->n_missing);
        *p = (struct exec_plan) {};
}

static void file_done(struct exec_plan_file *f)
{
        if (f->fd >= 0)
                close(f->fd);
        free(f->real_path);
        elf_deps_done(&f->deps);
}

static int add_alias(struct planned_object *o, const char *name)
{
        char **n;

        for (size_t i = 0; i < o->n_aliases; i++)
                if (strcmp(o->aliases[i], name) == 0)
                        return 0;
        n = realloc(o->aliases, (o->n_aliases + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        o->aliases = n;
        n[o->n_aliases] = strdup(name);
        if (!n[o->n_aliases])
                return -ENOMEM;
        o->n_aliases++;
        return 0;
}

/* The planned object a name already denotes (glibc _dl_name_match_p, plus the soname). */
static size_t find_by_name(const struct exec_plan *p, const char *name)
{
        for (size_t i = 0; i < p->n; i++) {
                const struct planned_object *o = &p->objects[i];

                if (!o->is_executable && o->name && strcmp(o->name, name) == 0)
                        return i;
                if (o->deps.soname && strcmp(o->deps.soname, name) == 0)
                        return i;
                for (size_t j = 0; j < o->n_aliases; j++)
                        if (strcmp(o->aliases[j], name) == 0)
                                return i;
        }
        return EXEC_PLAN_NO_LOADER;
}

static size_t find_by_file(const struct exec_plan *p, uint64_t dev, uint64_t ino)
{
        for (size_t i = 0; i < p->n; i++)
                if (p->objects[i].dev == dev && p->objects[i].ino == ino)
                        return i;
        return EXEC_PLAN_NO_LOADER;
}

/* Add the opened file f as an object opened as name (absolute). Takes f. */
static int add_object(struct resolver *r, const char *name, struct exec_plan_file *f, size_t loader,
                      size_t *ret)
{
        struct planned_object *n, *o;

        n = realloc(r->plan.objects, (r->plan.n + 1) * sizeof(*n));
        if (!n) {
                file_done(f);
                return -ENOMEM;
        }
        r->plan.objects = n;
        o = &n[r->plan.n];
        *o = (struct planned_object) {
                .name = strdup(name),
                .path = f->real_path ? TAKE_PTR(f->real_path) : strdup(name),
                .fd = TAKE_FD(f->fd),
                .dev = f->dev,
                .ino = f->ino,
                .deps = f->deps,
                .loader = loader,
        };
        f->deps = (struct elf_deps) {};
        r->plan.n++;
        if (!o->name || !o->path)
                return -ENOMEM;
        *ret = r->plan.n - 1;
        return 0;
}

/* Whether the loader would use f for a program of this class and machine. */
static bool compatible(const struct resolver *r, const struct exec_plan_file *f)
{
        const struct elf_deps *exe = &r->plan.objects[0].deps;

        return f->deps.elf_class == exe->elf_class && f->deps.machine == exe->machine;
}

/* Try one candidate path: 1 and *ret when it is (or already was) the object, 0 to keep
 * searching, -errno on a hard failure. */
static int try_path(struct resolver *r, const char *path, const char *requested, size_t loader, size_t *ret)
{
        struct exec_plan_file f = { .fd = -1 };
        size_t k;
        int e;

        e = r->open_file(r->userdata, path, &f);
        if (e == -ENOMEM)
                return e;
        if (e < 0)
                return 0;
        if (!compatible(r, &f)) {
                file_done(&f);
                return 0;
        }
        k = find_by_file(&r->plan, f.dev, f.ino);
        if (k != EXEC_PLAN_NO_LOADER) {
                file_done(&f);
                *ret = k;
                return add_alias(&r->plan.objects[k], requested) < 0 ? -ENOMEM : 1;
        }
        e = add_object(r, path, &f, loader, ret);
        if (e < 0)
                return e;
        return add_alias(&r->plan.objects[*ret], requested) < 0 ? -ENOMEM : 1;
}

/* Try name in each directory of list (separated by seps; DSTs expanded against origin; an empty
 * entry is the working directory). */
static int try_dirs(struct resolver *r, const char *list, const char *seps, const char *origin,
                    const char *name, size_t loader, size_t *ret)
{
        while (list) {
                size_t len = strcspn(list, seps);
                _cleanup_free_ char *entry = strndup(list, len), *dir = NULL, *candidate = NULL;
                int k;

                list = list[len] ? list + len + 1 : NULL;
                if (!entry)
                        return -ENOMEM;
                dir = exec_plan_expand_dst(entry, origin, r->s->lib, r->s->platform);
                if (!dir)
                        continue;
                if (asprintf(&candidate, "%s%s%s", dir[0] ? dir : ".",
                             dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name) < 0) {
                        candidate = NULL;
                        return -ENOMEM;
                }
                if (candidate[0] != '/') {
                        char *abs = absolute(r, candidate);

                        if (!abs)
                                return -ENOMEM;
                        free(candidate);
                        candidate = abs;
                }
                k = try_path(r, candidate, name, loader, ret);
                if (k != 0)
                        return k;
        }
        return 0;
}

static int try_dir_array(struct resolver *r, char *const *dirs, size_t n, const char *name, size_t loader,
                         size_t *ret)
{
        for (size_t i = 0; i < n; i++) {
                int k = try_dirs(r, dirs[i], "", NULL, name, loader, ret);

                if (k != 0)
                        return k;
        }
        return 0;
}

/* $ORIGIN of object i: the executable's real directory, else the directory it was opened in. */
static char *origin_of(const struct resolver *r, size_t i)
{
        const struct planned_object *o = &r->plan.objects[i];

        return exec_plan_dirname(o->is_executable ? o->path : o->name);
}

/* The DT_RPATH the loader reads from object i: none once it has a DT_RUNPATH. */
static const char *rpath_of(const struct resolver *r, size_t i)
{
        const struct elf_deps *d = &r->plan.objects[i].deps;

        return d->runpath ? NULL : d->rpath;
}

static int try_rpath_of(struct resolver *r, size_t holder, const char *name, size_t loader, size_t *ret)
{
        _cleanup_free_ char *origin = NULL;
        const char *rpath = rpath_of(r, holder);

        if (!rpath)
                return 0;
        origin = origin_of(r, holder);
        if (!origin)
                return -ENOMEM;
        return try_dirs(r, rpath, ":", origin, name, loader, ret);
}

/* glibc elf/dl-load.c _dl_map_object: name, asked for by object loader. 1 and *ret when found,
 * 0 when the loader would not find it. */
static int search(struct resolver *r, const char *name, size_t loader, size_t *ret)
{
        _cleanup_free_ char *main_origin = NULL;
        /* strings the objects own stay put when a found object grows the array */
        const char *runpath = r->plan.objects[loader].deps.runpath;
        bool nodeflib = r->plan.objects[loader].deps.nodeflib;
        int k;

        /* DT_RPATH of the object asking, then of each object that loaded it, then the
         * executable's: all skipped when the object asking has a DT_RUNPATH. */
        if (!runpath) {
                bool did_main = false;

                for (size_t l = loader; l != EXEC_PLAN_NO_LOADER; l = r->plan.objects[l].loader) {
                        k = try_rpath_of(r, l, name, loader, ret);
                        if (k != 0)
                                return k;
                        did_main = did_main || l == 0;
                }
                if (!did_main) {
                        k = try_rpath_of(r, 0, name, loader, ret);
                        if (k != 0)
                                return k;
                }
        }
        if (r->s->ld_library_path) {
                main_origin = origin_of(r, 0);
                if (!main_origin)
                        return -ENOMEM;
                k = try_dirs(r, r->s->ld_library_path, LIBRARY_PATH_SEPARATORS, main_origin, name, loader, ret);
                if (k != 0)
                        return k;
        }
        if (runpath) {
                _cleanup_free_ char *origin = origin_of(r, loader);

                if (!origin)
                        return -ENOMEM;
                k = try_dirs(r, runpath, ":", origin, name, loader, ret);
                if (k != 0)
                        return k;
        }
        if (nodeflib)
                return 0;
        if (r->s->cache) {
                const char *path = ld_cache_lookup(r->s->cache, name);

                if (path && (k = try_path(r, path, name, loader, ret)) != 0)
                        return k;
        } else {
                /* Without a cache (a container image that never ran ldconfig) the loader sees
                 * none of ld.so.conf; its directories are the closest stand-in for the cache
                 * ldconfig would build from them. */
                k = try_dir_array(r, r->s->conf_dirs, r->s->n_conf_dirs, name, loader, ret);
                if (k != 0)
                        return k;
        }
        return try_dir_array(r, r->s->default_dirs, r->s->n_default_dirs, name, loader, ret);
}

static int add_missing(struct resolver *r, const char *name)
{
        char **n = realloc(r->plan.missing, (r->plan.n_missing + 1) * sizeof(*n));

        if (!n)
                return -ENOMEM;
        r->plan.missing = n;
        n[r->plan.n_missing] = strdup(name);
        if (!n[r->plan.n_missing])
                return -ENOMEM;
        r->plan.n_missing++;
        return 0;
}

/* Map name for object loader: an object already planned, a path, or a search. 1 and *ret when
 * found, 0 when missing (recorded). */
static int map_object(struct resolver *r, const char *name, size_t loader, size_t *ret)
{
        size_t k = find_by_name(&r->plan, name);
        int e;

        if (k != EXEC_PLAN_NO_LOADER) {
                *ret = k;
                return 1;
        }
        if (strchr(name, '/')) {
                _cleanup_free_ char *origin = origin_of(r, loader), *expanded = NULL, *path = NULL;

                if (!origin)
                        return -ENOMEM;
                expanded = exec_plan_expand_dst(name, origin, r->s->lib, r->s->platform);
                path = expanded ? absolute(r, expanded) : NULL;
                e = path ? try_path(r, path, name, loader, ret) : 0;
        } else
                e = search(r, name, loader, ret);
        if (e == 0)
                return add_missing(r, name) < 0 ? -ENOMEM : 0;
        return e;
}

/* LD_PRELOAD, then /etc/ld.so.preload: each found one joins the queue after the executable. */
static int map_preloads(struct resolver *r, const char *list, const char *seps)
{
        while (list && *list) {
                size_t len = strcspn(list, seps);
                size_t k;
                int e;

                if (len > 0) {
                        _cleanup_free_ char *name = strndup(list, len);

                        if (!name)
                                return -ENOMEM;
                        e = map_object(r, name, 0, &k);
                        if (e < 0)
                                return e;
                }
                list += len;
                list += strspn(list, seps);
        }
        return 0;
}

static void resolver_done(struct resolver *r)
{
        exec_plan_done(&r->plan);
}

/* The interpreter the executable names (PT_INTERP), if any, into the plan. */
static int map_interpreter(struct resolver *r, char **ret_failed_path)
{
        struct exec_plan_file f = { .fd = -1 };
        _cleanup_free_ char *interp = NULL;
        size_t k;
        int e;

        if (!r->plan.objects[0].deps.interp)
                return 0;
        interp = strdup(r->plan.objects[0].deps.interp);
        if (!interp)
                return -ENOMEM;
        e = r->open_file(r->userdata, interp, &f);
        if (e < 0) {
                *ret_failed_path = TAKE_PTR(interp);
                return e;
        }
        e = add_object(r, interp, &f, EXEC_PLAN_NO_LOADER, &k);
        if (e < 0)
                return e;
        r->plan.objects[k].is_interpreter = true;
        return 0;
}

/* Breadth first over the executable and the preloads: the objects array is the queue (the
 * interpreter's own needs are none, and it is never queued). */
static int map_needed(struct resolver *r)
{
        for (size_t head = 0; head < r->plan.n; head++) {
                if (r->plan.objects[head].is_interpreter)
                        continue;
                for (size_t j = 0; j < r->plan.objects[head].deps.n_needed; j++) {
                        _cleanup_free_ char *name = strdup(r->plan.objects[head].deps.needed[j]);
                        size_t k;
                        int e;

                        if (!name)
                                return -ENOMEM;
                        e = map_object(r, name, head, &k);
                        if (e < 0)
                                return e;
                }
        }
        return 0;
}

int exec_plan_resolve(const struct exec_plan_settings *s, exec_plan_open_fn open_file, void *userdata,
                      struct exec_plan *ret, char **ret_failed_path)
{
        _cleanup_(resolver_done) struct resolver r = { .s = s, .open_file = open_file, .userdata = userdata };
        struct exec_plan_file f = { .fd = -1 };
        size_t k;
        int e;

        assert(s);
        assert(open_file);
        assert(ret);
        assert(ret_failed_path);
        e = open_file(userdata, s->exe, &f);
        if (e < 0) {
                *ret_failed_path = strdup(s->exe);
                return e;
        }
        e = add_object(&r, s->exe, &f, EXEC_PLAN_NO_LOADER, &k);
        if (e < 0)
                return e;
        r.plan.objects[0].is_executable = true;
        if ((e = map_interpreter(&r, ret_failed_path)) < 0 ||
            (e = map_preloads(&r, s->ld_preload, PRELOAD_SEPARATORS)) < 0 ||
            (e = map_preloads(&r, s->preload_file, PRELOAD_FILE_SEPARATORS)) < 0 ||
            (e = map_needed(&r)) < 0)
                return e;
        *ret = TAKE_STRUCT(r.plan);
        return 0;
}
