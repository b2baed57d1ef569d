/* SPDX-License-Identifier: GPL-2.0-only */
/* Look at every ELF object a process maps: which allocator entry points each defines, what it
 * needs, whether it is the main program; then which allocator serves the process. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "discovery.h"
#include "macro.h"

static void object_done(struct discovered_object *o)
{
        free(o->path);
        closep(&o->fd);
        alloc_sites_done(&o->sites);
        elf_deps_done(&o->deps);
}

void discovery_done(struct discovery *d)
{
        for (size_t i = 0; i < d->n; i++)
                object_done(&d->objects[i]);
        free(d->objects);
        *d = (struct discovery) {};
}

static bool seen_in(const struct discovery *d, uint64_t dev, uint64_t ino)
{
        for (size_t i = 0; i < d->n; i++)
                if (d->objects[i].dev == dev && d->objects[i].ino == ino)
                        return true;
        return false;
}

/* The main program's identity: (dev, ino) of /proc/PID/exe and the path it names. */
static void read_executable(pid_t pid, struct stat *st, char path[PATH_MAX])
{
        char link[64];
        ssize_t n;

        snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
        if (stat(link, st) < 0)
                *st = (struct stat) {};
        n = readlink(link, path, PATH_MAX - 1);
        path[n > 0 ? n : 0] = 0;
}

int discovery_examine(pid_t pid, const struct module_map *mm,
                      bool (*skip)(void *userdata, uint64_t dev, uint64_t ino), void *userdata,
                      struct discovery *ret)
{
        struct discovery d = {};
        struct stat exe_st;
        char exe_path[PATH_MAX];
        int r;

        read_executable(pid, &exe_st, exe_path);
        for (size_t i = 0; i < mm->n; i++) {
                const struct module_mapping *m = &mm->mappings[i];
                struct discovered_object o = { .fd = -EBADF };
                struct discovered_object *n;

                if (seen_in(&d, m->dev, m->ino) || (skip && skip(userdata, m->dev, m->ino)))
                        continue;
                o.fd = module_open_in_target(pid, m->path, m->dev, m->ino, m->start, m->end);
                if (o.fd < 0)
                        continue;       /* gone, or not ours to open: nothing to probe there */
                if (alloc_sites_find(o.fd, &o.sites) < 0 || elf_deps_read(o.fd, &o.deps) < 0) {
                        object_done(&o);
                        continue;       /* not ELF (locale archives, fonts, ...) */
                }
                o.dev = m->dev;
                o.ino = m->ino;
                o.is_executable = (exe_st.st_ino == m->ino && exe_st.st_dev == m->dev) ||
                                  strcmp(exe_path, m->path) == 0;
                o.path = strdup(m->path);
                n = o.path ? realloc(d.objects, (d.n + 1) * sizeof(*n)) : NULL;
                if (!n) {
                        object_done(&o);
                        r = -ENOMEM;
                        goto fail;
                }
                d.objects = n;
                d.objects[d.n++] = o;
        }
        *ret = d;
        return 0;
fail:
        discovery_done(&d);
        return r;
}

/* LD_PRELOAD from the process's environment, then its /etc/ld.so.preload, as the loader reads
 * them. Best effort: an unreadable environment means no preloads. */
static int read_preloads(pid_t pid, char ***ret, size_t *n)
{
        _cleanup_free_ char *environ_text = NULL, *preload_file = NULL, *joined = NULL;
        char path[64];
        const char *env_value = "";
        _cleanup_fclose_ FILE *f = NULL;

        snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
        f = fopen(path, "re");
        if (f) {
                size_t cap = 0;
                ssize_t k;

                /* NUL-separated: getdelim reads one variable at a time. */
                while ((k = getdelim(&environ_text, &cap, 0, f)) > 0)
                        if (strncmp(environ_text, "LD_PRELOAD=", 11) == 0) {
                                env_value = environ_text + 11;
                                break;
                        }
        }
        snprintf(path, sizeof(path), "/proc/%d/root/etc/ld.so.preload", (int)pid);
        {
                _cleanup_fclose_ FILE *pf = fopen(path, "re");

                if (pf) {
                        size_t cap = 0;

                        if (getdelim(&preload_file, &cap, 0, pf) < 0) {
                                free(preload_file);
                                preload_file = NULL;
                        }
                }
        }
        if (preload_file)
                for (char *c = preload_file; *c; c++)
                        if (*c == '\n')
                                *c = ' ';
        if (asprintf(&joined, "%s %s", env_value, preload_file ? preload_file : "") < 0) {
                joined = NULL;
                return -ENOMEM;
        }
        return preload_split(joined, ret, n);
}

int discovery_choose(pid_t pid, const struct discovery *d, struct allocator_choice *ret)
{
        _cleanup_free_ struct examined_object *objs = calloc(d->n ? d->n : 1, sizeof(*objs));
        char **preload = NULL;
        size_t n_preload = 0;
        int r;

        if (!objs)
                return -ENOMEM;
        for (size_t i = 0; i < d->n; i++)
                objs[i] = (struct examined_object) {
                        .path = d->objects[i].path,
                        .is_executable = d->objects[i].is_executable,
                        .deps = &d->objects[i].deps,
                        .sites = &d->objects[i].sites,
                };
        r = read_preloads(pid, &preload, &n_preload);
        if (r < 0)
                return r;
        r = allocator_choose(objs, d->n, preload, n_preload, ret);
        for (size_t i = 0; i < n_preload; i++)
                free(preload[i]);
        free(preload);
        return r;
}
