/* SPDX-License-Identifier: GPL-2.0-only */
/* The layered configuration: shipped defaults, the administrator's file, drop-ins by name. */
#include "config-source.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "macro.h"

#define CONFIG_FILE_NAME "memleakd.conf"
#define CONFIG_DROPIN_DIR_NAME "memleakd.conf.d"
#define CONFIG_DROPINS_MAX 1024u        /* a directory with more is refused, not half read */

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

__attribute__((format(printf, 3, 4)))
static int set_error(char **error, int r, const char *fmt, ...)
{
        va_list ap;

        if (error && !*error) {
                va_start(ap, fmt);
                if (vasprintf(error, fmt, ap) < 0)
                        *error = NULL;
                va_end(ap);
        }
        return r;
}

int config_source_init(struct config_source *s, const char *explicit_path, const char *vendor_dir,
                       const char *admin_dir)
{
        assert(s);
        *s = (struct config_source) {};
        if ((explicit_path && !(s->explicit_path = strdup(explicit_path))) ||
            (vendor_dir && !(s->vendor_dir = strdup(vendor_dir))) ||
            (admin_dir && !(s->admin_dir = strdup(admin_dir)))) {
                config_source_done(s);
                return -ENOMEM;
        }
        return 0;
}

void config_source_done(struct config_source *s)
{
        if (!s)
                return;
        free(s->explicit_path);
        free(s->vendor_dir);
        free(s->admin_dir);
        free(s->socket_path);
        *s = (struct config_source) {};
}

static int dropin_compare(const void *a, const void *b)
{
        const struct config_dropin *x = a, *y = b;

        return strcmp(x->name, y->name);
}

size_t config_source_dropins_order(struct config_dropin *dropins, size_t n, const char *hide_dir)
{
        size_t kept = 0;

        assert(dropins || n == 0);
        if (n == 0)
                return 0;
        qsort(dropins, n, sizeof(*dropins), dropin_compare);
        for (size_t i = 0; i < n; i++) {
                if (kept > 0 && strcmp(dropins[kept - 1].name, dropins[i].name) == 0) {
                        /* the same name twice: the administrator's wins wherever it sorted */
                        if (hide_dir && strcmp(dropins[i].dir, hide_dir) == 0)
                                dropins[kept - 1] = dropins[i];
                        continue;
                }
                dropins[kept++] = dropins[i];
        }
        return kept;
}

static bool dropin_name_valid(const char *name)
{
        size_t n = strlen(name);

        /* "x.conf", not hidden (editors' and package managers' leftovers start with '.') */
        return name[0] != '.' && n > 5 && strcmp(name + n - 5, ".conf") == 0;
}

struct path_list {
        char **paths;
        size_t n, allocated;
};

static void path_list_done(struct path_list *l)
{
        for (size_t i = 0; i < l->n; i++)
                free(l->paths[i]);
        free(l->paths);
        *l = (struct path_list) {};
}

/* Takes path. */
static int path_list_push(struct path_list *l, char *path)
{
        if (!path)
                return -ENOMEM;
        if (l->n + 2 > l->allocated) {
                size_t allocated = l->allocated ? l->allocated * 2 : 8;
                char **p = realloc(l->paths, allocated * sizeof(*p));

                if (!p) {
                        free(path);
                        return -ENOMEM;
                }
                l->paths = p;
                l->allocated = allocated;
        }
        l->paths[l->n++] = path;
        l->paths[l->n] = NULL;
        return 0;
}

static char *path_join(const char *dir, const char *name)
{
        char *p;

        return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* A regular file (or a link to one) at path: 1, nothing there: 0. */
static int regular_file_exists(const char *path, char **error)
{
        struct stat st;

        if (stat(path, &st) < 0) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0;
                return set_error(error, -errno, "%s: %s", path, strerror(errno));
        }
        if (!S_ISREG(st.st_mode))
                return set_error(error, -EISDIR, "%s: not a regular file", path);
        return 1;
}

/* The drop-in names found, owned here; the entries point into them. */
struct dropin_list {
        struct config_dropin entries[2 * CONFIG_DROPINS_MAX];
        char *names[2 * CONFIG_DROPINS_MAX];
        size_t n;
};

static void dropin_list_free(struct dropin_list *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++)
                free(l->names[i]);
        free(l);
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct dropin_list *, dropin_list_free);

/* Appends dir/memleakd.conf.d's drop-in names to l. */
static int dropins_list(const char *dir, struct dropin_list *l, char **error)
{
        _cleanup_free_ char *path = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        size_t in_dir = 0;
        struct dirent *de;

        if (!dir)
                return 0;
        path = path_join(dir, CONFIG_DROPIN_DIR_NAME);
        if (!path)
                return -ENOMEM;
        d = opendir(path);
        if (!d) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0;
                return set_error(error, -errno, "%s: %s", path, strerror(errno));
        }
        errno = 0;
        while ((de = readdir(d))) {
                if (!dropin_name_valid(de->d_name))
                        continue;
                if (++in_dir > CONFIG_DROPINS_MAX)
                        return set_error(error, -E2BIG, "%s: more than %u drop-ins", path, CONFIG_DROPINS_MAX);
                l->names[l->n] = strdup(de->d_name);
                if (!l->names[l->n])
                        return -ENOMEM;
                l->entries[l->n] = (struct config_dropin) { .name = l->names[l->n], .dir = dir };
                l->n++;
                errno = 0;
        }
        if (errno > 0)
                return set_error(error, -errno, "%s: %s", path, strerror(errno));
        return 0;
}

static int dropins_push(const struct config_source *s, struct path_list *paths, char **error)
{
        _cleanup_(dropin_list_freep) struct dropin_list *l = calloc(1, sizeof(*l));
        size_t kept;
        int r;

        if (!l)
                return -ENOMEM;
        r = dropins_list(s->vendor_dir, l, error);
        if (r < 0)
                return r;
        r = dropins_list(s->admin_dir, l, error);
        if (r < 0)
                return r;
        kept = config_source_dropins_order(l->entries, l->n, s->admin_dir);
        for (size_t i = 0; i < kept; i++) {
                _cleanup_free_ char *dir = path_join(l->entries[i].dir, CONFIG_DROPIN_DIR_NAME);

                if (!dir)
                        return -ENOMEM;
                r = path_list_push(paths, path_join(dir, l->entries[i].name));
                if (r < 0)
                        return r;
                r = regular_file_exists(paths->paths[paths->n - 1], error);
                if (r < 0)
                        return r;
                if (r == 0) {
                        free(paths->paths[--paths->n]);         /* gone since it was listed */
                        paths->paths[paths->n] = NULL;
                }
        }
        return 0;
}

/* dir/memleakd.conf, if it is there. */
static int main_file_push(const char *dir, struct path_list *paths, char **error)
{
        char *path;
        int r;

        if (!dir)
                return 0;
        path = path_join(dir, CONFIG_FILE_NAME);
        if (!path)
                return -ENOMEM;
        r = regular_file_exists(path, error);
        if (r <= 0) {
                free(path);
                return r;
        }
        return path_list_push(paths, path);
}

void config_source_files_free(char **paths)
{
        if (!paths)
                return;
        for (size_t i = 0; paths[i]; i++)
                free(paths[i]);
        free(paths);
}

int config_source_files(const struct config_source *s, char ***ret_paths, char **error)
{
        struct path_list paths = {};
        int r;

        assert(s);
        assert(ret_paths);
        if (s->explicit_path) {
                r = regular_file_exists(s->explicit_path, error);
                if (r == 0)
                        r = set_error(error, -ENOENT, "%s: %s", s->explicit_path, strerror(ENOENT));
                if (r >= 0)
                        r = path_list_push(&paths, strdup(s->explicit_path));
        } else {
                r = main_file_push(s->vendor_dir, &paths, error);
                if (r >= 0)
                        r = main_file_push(s->admin_dir, &paths, error);
                if (r >= 0)
                        r = dropins_push(s, &paths, error);
        }
        if (r >= 0 && !paths.paths && !(paths.paths = calloc(1, sizeof(char *))))
                r = -ENOMEM;            /* none at all: an empty list */
        if (r < 0) {
                path_list_done(&paths);
                return r;
        }
        *ret_paths = paths.paths;
        return 0;
}

static int files_join(char *const *paths, char **ret)
{
        size_t size = 1;
        char *s;

        for (size_t i = 0; paths[i]; i++)
                size += strlen(paths[i]) + 2;
        s = malloc(size);
        if (!s)
                return -ENOMEM;
        s[0] = '\0';
        for (size_t i = 0; paths[i]; i++) {
                if (i > 0)
                        strcat(s, ", ");
                strcat(s, paths[i]);
        }
        *ret = s;
        return 0;
}

int config_source_load(const struct config_source *s, struct memleakd_config *c, char **ret_files,
                       char **error)
{
        _cleanup_(config_done) struct memleakd_config t = {};
        char **paths = NULL;
        int r;

        assert(s);
        assert(c);
        r = config_source_files(s, &paths, error);
        if (r < 0)
                return r;
        /* Over a copy: *c changes only if every file is valid. */
        r = config_copy(c, &t);
        for (size_t i = 0; r >= 0 && paths[i]; i++)
                r = config_parse_file(paths[i], &t, error);
        if (r >= 0 && s->socket_path) {
                char *p = strdup(s->socket_path);

                if (p) {
                        free(t.socket_path);
                        t.socket_path = p;
                } else
                        r = -ENOMEM;
        }
        if (r >= 0 && ret_files)
                r = files_join(paths, ret_files);
        config_source_files_free(paths);
        if (r < 0)
                return r == -ENOMEM ? set_error(error, r, "Out of memory") : r;
        config_done(c);
        *c = TAKE_STRUCT(t);
        return 0;
}
