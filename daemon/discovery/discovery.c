/* SPDX-License-Identifier: GPL-2.0-only */
/* Look at every ELF object a process maps (or, before an exec, will map): which allocator entry
 * points each defines, what it needs, whether it is the main program; then which allocator serves
 * the process. */
#include <assert.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>
#include "discovery.h"
#include "elf-file.h"
#include "exec-plan.h"
#include "ld-cache.h"
#include "macro.h"
#include "object-cache.h"
#include "safe-open.h"
#include "util.h"

static void object_done(struct discovered_object *o)
{
        free(o->path);
        closep(&o->fd);
        alloc_sites_done(&o->sites);
        elf_deps_done(&o->deps);
}

void discovery_done(struct discovery *d)
{
        assert(d);
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

/* Its allocator entry points and its dependencies, from one reading of the file. */
static int read_object(struct object_cache *cache, int fd, struct discovered_object *o)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        struct stat st;
        bool keyed = cache && fstat(fd, &st) == 0;
        int r;

        if (keyed) {
                r = object_cache_get(cache, &st, &o->sites, &o->deps);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        r = elf_file_open(fd, &elf);
        if (r >= 0)
                r = alloc_sites_read(elf, &o->sites);
        if (r >= 0)
                r = elf_deps_read_elf(elf, &o->deps);
        if (r >= 0 && keyed)
                (void)object_cache_put(cache, &st, &o->sites, &o->deps);        /* else read again next time */
        return r;
}

int discovery_examine(struct object_cache *cache, pid_t pid, const struct module_map *mm,
                      bool (*skip)(void *userdata, uint64_t dev, uint64_t ino), void *userdata,
                      struct discovery *ret)
{
        _cleanup_(discovery_done) struct discovery d = {};
        struct stat exe_st;
        char exe_path[PATH_MAX];
        bool exe_read = false;

        assert(mm);
        assert(ret);
        for (size_t i = 0; i < mm->n; i++) {
                const struct module_mapping *m = &mm->mappings[i];
                struct discovered_object o = { .fd = -EBADF };
                struct discovered_object *n;

                if (seen_in(&d, m->dev, m->ino) || (skip && skip(userdata, m->dev, m->ino)))
                        continue;
                o.fd = module_map_open_file(pid, m->path, m->dev, m->ino, m->start, m->end);
                if (o.fd < 0)
                        continue;       /* gone, or not ours to open: nothing to probe there */
                if (read_object(cache, o.fd, &o) < 0) {
                        object_done(&o);
                        continue;       /* not ELF (locale archives, fonts, ...) */
                }
                o.dev = m->dev;
                o.ino = m->ino;
                if (!exe_read) {
                        /* only once there is something new to look at: rescans mostly find nothing */
                        read_executable(pid, &exe_st, exe_path);
                        exe_read = true;
                }
                o.is_executable = (exe_st.st_ino == m->ino && exe_st.st_dev == m->dev) ||
                                  strcmp(exe_path, m->path) == 0;
                o.path = strdup(m->path);
                n = o.path ? realloc(d.objects, (d.n + 1) * sizeof(*n)) : NULL;
                if (!n) {
                        object_done(&o);
                        return -ENOMEM;
                }
                d.objects = n;
                d.objects[d.n++] = o;
        }
        *ret = TAKE_STRUCT(d);
        return 0;
}

/* The most of /etc/ld.so.preload read: the loader reads the whole file, but no real one is long. */
#define PRELOAD_FILE_MAX_BYTES (1u << 20)

/* pid's /etc/ld.so.preload as its loader reads it (inside its root; regular files only, bounded)
 * into *ret, NULL when there is none to read. */
static int read_preload_file(int root_fd, char **ret)
{
        int r = safe_open_read_file(root_fd, "/etc/ld.so.preload", PRELOAD_FILE_MAX_BYTES, ret, NULL);

        if (r == -ENOMEM)
                return r;
        if (r < 0)
                *ret = NULL;    /* missing, not a regular file, too large: nothing preloaded */
        return 0;
}

/* The values of LD_LIBRARY_PATH and LD_PRELOAD in pid's environment (malloc'd; NULL when unset),
 * either pointer NULL when not wanted. */
static int read_loader_environ(pid_t pid, char **ret_library_path, char **ret_preload)
{
        _cleanup_free_ char *var = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        char path[64];
        size_t cap = 0;

        snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return -errno;
        /* NUL-separated: one variable at a time. */
        while (getdelim(&var, &cap, 0, f) > 0) {
                char **slot = strncmp(var, "LD_LIBRARY_PATH=", 16) == 0 ? ret_library_path :
                              strncmp(var, "LD_PRELOAD=", 11) == 0 ? ret_preload : NULL;

                if (!slot || *slot)
                        continue;
                *slot = strdup(strchr(var, '=') + 1);
                if (!*slot)
                        return -ENOMEM;
        }
        return 0;
}

/* LD_PRELOAD from the process's environment, then its /etc/ld.so.preload, as the loader reads
 * them. Best effort: an unreadable environment means no preloads. */
static int read_preloads(pid_t pid, char ***ret, size_t *n)
{
        _cleanup_free_ char *env_value = NULL, *preload_file = NULL, *joined = NULL;
        _cleanup_close_ int root_fd = -EBADF;
        int r;

        r = read_loader_environ(pid, NULL, &env_value);
        if (r == -ENOMEM)
                return r;
        root_fd = safe_open_root(pid);
        if (root_fd >= 0) {
                r = read_preload_file(root_fd, &preload_file);
                if (r < 0)
                        return r;
        }
        if (preload_file)
                for (char *c = preload_file; *c; c++)
                        if (*c == '\n')
                                *c = ' ';
        if (asprintf(&joined, "%s %s", env_value ? env_value : "", preload_file ? preload_file : "") < 0) {
                joined = NULL;
                return -ENOMEM;
        }
        return allocator_choice_split_preload(joined, ret, n);
}

int discovery_choose(pid_t pid, const struct discovery *d, struct allocator_choice *ret)
{
        _cleanup_free_ struct examined_object *objs = calloc(d->n ? d->n : 1, sizeof(*objs));
        char **preload = NULL;
        size_t n_preload = 0;
        int r;

        assert(d);
        assert(ret);
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
        r = allocator_choice_find(objs, d->n, preload, n_preload, ret);
        for (size_t i = 0; i < n_preload; i++)
                free(preload[i]);
        free(preload);
        return r;
}

/* What the held process will hand the program it execs: its root, cwd and environment. */
struct exec_context {
        char root[64];                  /* "/proc/PID/root" */
        int root_fd;                    /* that root: every path is opened inside it */
        char *root_prefix;              /* that root as the daemon sees it; "" when it is ours */
        char *cwd;
        char *ld_library_path, *ld_preload, *preload_file;
};

static void exec_context_done(struct exec_context *c)
{
        closep(&c->root_fd);
        free(c->root_prefix);
        free(c->cwd);
        free(c->ld_library_path);
        free(c->ld_preload);
        free(c->preload_file);
}

/* A link of /proc/PID as the target sees it: the daemon's view less the target's root. */
static char *read_link_in_target(const struct exec_context *c, const char *link)
{
        char buf[PATH_MAX];
        size_t prefix = strlen(c->root_prefix);
        ssize_t n = readlink(link, buf, sizeof(buf) - 1);

        if (n <= 0)
                return NULL;
        buf[n] = '\0';
        if (prefix == 0)
                return strdup(buf);
        if (strncmp(buf, c->root_prefix, prefix) != 0 || (buf[prefix] != '/' && buf[prefix] != '\0'))
                return NULL;    /* outside the target's root */
        return strdup(buf[prefix] ? buf + prefix : "/");
}

static int read_exec_context(pid_t pid, struct exec_context *c)
{
        char path[64], buf[PATH_MAX];
        ssize_t n;
        int r;

        snprintf(c->root, sizeof(c->root), "/proc/%d/root", (int)pid);
        n = readlink(c->root, buf, sizeof(buf) - 1);
        if (n <= 0)
                return -errno ?: -ESRCH;
        buf[n] = '\0';
        c->root_prefix = strdup(strcmp(buf, "/") == 0 ? "" : buf);
        if (!c->root_prefix)
                return -ENOMEM;
        snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
        c->cwd = read_link_in_target(c, path);
        if (!c->cwd && !(c->cwd = strdup("/")))
                return -ENOMEM;
        r = read_loader_environ(pid, &c->ld_library_path, &c->ld_preload);
        if (r < 0)
                return r;
        c->root_fd = safe_open_root(pid);
        if (c->root_fd < 0)
                return c->root_fd;
        return read_preload_file(c->root_fd, &c->preload_file);
}

/* exec_plan_open_fn: open a file as the target sees it and read what the loader reads. */
static int open_in_target(void *userdata, const char *path, struct exec_plan_file *ret)
{
        const struct exec_context *c = userdata;
        _cleanup_close_ int fd = -1;
        struct exec_plan_file f = { .fd = -1 };
        char self[64];
        struct stat st;
        int r;

        fd = safe_open_regular(c->root_fd, path, 0, &st);
        if (fd == -ENOTREG)
                return -ENOENT;         /* the loader would not load it either */
        if (fd < 0)
                return fd;
        r = elf_deps_read(fd, &f.deps);
        if (r < 0)
                return r;
        snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
        f.real_path = read_link_in_target(c, self);
        f.fd = TAKE_FD(fd);
        f.dev = st.st_dev;
        f.ino = st.st_ino;
        *ret = f;
        return 0;
}

const char *discovery_foreign_process(pid_t pid)
{
        _cleanup_close_ int fd = -EBADF;
        unsigned char h[EI_NIDENT + 4];
        char exe[64];

        snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
        fd = open(exe, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0)
                return NULL;
        /* e_machine follows e_type, after the identification bytes; little-endian on x86 */
        return elf_file_foreign_abi(h[EI_CLASS], (uint16_t)(h[EI_NIDENT + 2] | h[EI_NIDENT + 3] << 8));
}

int discovery_plan_exec(pid_t pid, const char *exe, struct discovery *ret, char **error)
{
        static char *const default_dirs[] = LD_DEFAULT_DIRS;
        _cleanup_(exec_context_done) struct exec_context c = { .root_fd = -EBADF };
        _cleanup_(ld_cache_done) struct ld_cache cache = {};
        _cleanup_(exec_plan_done) struct exec_plan plan = {};
        _cleanup_free_ char *failed = NULL;
        char **conf_dirs = NULL;
        size_t n_conf_dirs = 0;
        const char *platform = (const char *)getauxval(AT_PLATFORM);
        struct discovery d = {};
        bool have_cache;
        int r;

        assert(exe);
        assert(ret);
        assert(error);
        r = read_exec_context(pid, &c);
        if (r < 0)
                return error_set(error, r == -ENOENT ? -ESRCH : r, "Cannot read the environment of pid %d: %s",
                                 (int)pid, strerror(-r));
        have_cache = ld_cache_read(c.root_fd, &cache) >= 0;
        if (!have_cache) {
                r = ld_cache_read_conf_dirs(c.root_fd, &conf_dirs, &n_conf_dirs);
                if (r < 0)
                        return error_set(error, r, "Cannot read %s/etc/ld.so.conf: %s", c.root, strerror(-r));
        }
        r = exec_plan_resolve(&(struct exec_plan_settings) {
                .exe = exe,
                .cwd = c.cwd,
                .ld_library_path = c.ld_library_path,
                .ld_preload = c.ld_preload,
                .preload_file = c.preload_file,
                .cache = have_cache ? &cache : NULL,
                .conf_dirs = conf_dirs,
                .n_conf_dirs = n_conf_dirs,
                .default_dirs = default_dirs,
                .n_default_dirs = ELEMENTSOF(default_dirs),
                .lib = LD_DST_LIB,
                .platform = platform ? platform : "x86_64",
        }, open_in_target, &c, &plan, &failed);
        strv_free_n(conf_dirs, n_conf_dirs);
        if (r == -ENOEXEC)
                return error_set(error, -EINVAL, "%s is not an ELF program", failed ? failed : exe);
        if (r == -ENOENT || r == -ENOTDIR)
                return error_set(error, -ENOENT, "%s does not exist as pid %d sees it", failed ? failed : exe,
                                 (int)pid);
        if (r < 0)
                return error_set(error, r, "Cannot open %s: %s", failed ? failed : exe, strerror(-r));

        for (size_t i = 0; i < plan.n; i++) {
                const char *foreign = plan.objects[i].is_executable ?
                        elf_file_foreign_abi(plan.objects[i].deps.elf_class, plan.objects[i].deps.machine) : NULL;

                if (foreign)
                        return error_set(error, -EINVAL, "%s is %s: memleakd traces x86-64 programs only", exe,
                                         foreign);
        }
        d.objects = calloc(plan.n, sizeof(*d.objects));
        if (!d.objects)
                return error_set(error, -ENOMEM, "Out of memory");
        for (size_t i = 0; i < plan.n; i++) {
                struct planned_object *p = &plan.objects[i];
                struct discovered_object *o = &d.objects[d.n];

                *o = (struct discovered_object) { .fd = -EBADF, .dev = p->dev, .ino = p->ino,
                                                  .is_executable = p->is_executable };
                if (alloc_sites_find(p->fd, &o->sites) < 0)
                        continue;       /* read as ELF a moment ago: only ENOMEM gets here */
                o->path = TAKE_PTR(p->path);
                o->fd = TAKE_FD(p->fd);
                o->deps = p->deps;
                p->deps = (struct elf_deps) {};
                d.n++;
        }
        *ret = d;
        return 0;
}
