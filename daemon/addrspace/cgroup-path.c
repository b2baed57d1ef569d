/* SPDX-License-Identifier: GPL-2.0-only */
/* Where a cgroup v2 directory is and what it holds: the cgroup2 mount, a unit's directory, its
 * id, the processes in it and below it. */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include "cgroup-path.h"
#include "dir-stream.h"
#include "fd-text.h"
#include "macro.h"
#include "proc-children.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* mountinfo and cgroup.procs are read up to this much (a pid and its newline: 8 bytes, 512 Ki
 * processes in one cgroup). */
#define CGROUP_FILE_MAX_BYTES (4u << 20)

/* The whole text of the file at dir_fd/name (bounded, cut at its last newline past the bound):
 * a malloc'd string, or NULL and errno. */
static char *read_text(int dir_fd, const char *name)
{
        _cleanup_close_ int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
        char *text = NULL, *nl;
        size_t len = 0;
        bool cut = false;
        int r;

        if (fd < 0)
                return NULL;
        r = fd_text_read(fd, CGROUP_FILE_MAX_BYTES, &text, &len, &cut);
        if (r < 0) {
                errno = -r;
                return NULL;
        }
        if (cut) {
                nl = memrchr(text, '\n', len);
                text[nl ? (size_t)(nl - text) + 1 : 0] = '\0';
        }
        return text;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo: undone in place. */
static void unescape_octal(char *s)
{
        char *out = s;

        for (char *p = s; *p; ) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
                    p[3] <= '7') {
                        *out++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 4;
                } else
                        *out++ = *p++;
        }
        *out = '\0';
}

int cgroup_path_mount_parse(const char *mountinfo, char **ret)
{
        const char *line = mountinfo;

        assert(mountinfo);
        assert(ret);
        while (*line) {
                const char *end = strchrnul(line, '\n'), *sep;
                _cleanup_free_ char *copy = strndup(line, (size_t)(end - line));
                char *fields[5], *save = NULL, *tok;
                int n = 0;

                if (!copy)
                        return -ENOMEM;
                /* "ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE ..." */
                sep = strstr(copy, " - ");
                if (copy[0] == '\0')
                        goto next;
                if (!sep)
                        return -EINVAL;
                for (tok = strtok_r(copy, " ", &save); tok && n < 5; tok = strtok_r(NULL, " ", &save))
                        fields[n++] = tok;
                if (n < 5)
                        return -EINVAL;
                if (strncmp(line + (sep - copy) + 3, "cgroup2 ", 8) == 0) {
                        char *point = strdup(fields[4]);

                        if (!point)
                                return -ENOMEM;
                        unescape_octal(point);
                        *ret = point;
                        return 0;
                }
        next:
                line = *end ? end + 1 : end;
        }
        return -ENOENT;
}

int cgroup_path_mount(const char *path, char **ret)
{
        _cleanup_free_ char *text = read_text(AT_FDCWD, path ?: "/proc/self/mountinfo");

        assert(ret);
        if (!text)
                return -errno;
        return cgroup_path_mount_parse(text, ret);
}

bool cgroup_path_unit_name_valid(const char *name)
{
        static const char *const suffixes[] = { ".service", ".scope", ".slice" };
        size_t n;

        if (!name)
                return false;
        n = strnlen(name, CGROUP_PATH_UNIT_NAME_MAX + 1);
        if (n == 0 || n > CGROUP_PATH_UNIT_NAME_MAX || strchr(name, '/') || name[0] == '.')
                return false;
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                size_t k = strlen(suffixes[i]);

                if (n > k && strcmp(name + n - k, suffixes[i]) == 0)
                        return true;
        }
        return false;
}

/* Whether path is a directory on a cgroup2 file system: 0, -ENOENT, -ENOTDIR. */
static int check_cgroup_dir(const char *path)
{
        struct statfs sfs;
        struct stat st;

        if (stat(path, &st) < 0)
                return errno == ENOENT ? -ENOENT : -errno;
        if (!S_ISDIR(st.st_mode) || statfs(path, &sfs) < 0 || sfs.f_type != CGROUP2_SUPER_MAGIC)
                return -ENOTDIR;
        return 0;
}

static bool has_dotdot(const char *s)
{
        for (const char *p = s; (p = strstr(p, "..")); p += 2)
                if ((p == s || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
                        return true;
        return false;
}

int cgroup_path_resolve(const char *root, const char *spec, char **ret)
{
        size_t root_len;
        char *path;
        int r;

        assert(root);
        assert(ret);
        if (!spec || !spec[0] || strnlen(spec, 4096) >= 4096 || has_dotdot(spec))
                return -EINVAL;
        root_len = strlen(root);
        /* a path under the mount as it is; else one relative to it */
        if (strncmp(spec, root, root_len) == 0 && (spec[root_len] == '/' || spec[root_len] == '\0'))
                path = strdup(spec);
        else {
                while (*spec == '/')
                        spec++;
                if (asprintf(&path, "%s/%s", root, spec) < 0)
                        path = NULL;
        }
        if (!path)
                return -ENOMEM;
        /* no trailing slash: the name is the directory's */
        for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
                path[n - 1] = '\0';
        r = check_cgroup_dir(path);
        if (r < 0) {
                free(path);
                return r;
        }
        *ret = path;
        return 0;
}

/* Breadth first below dir (a path), depth levels at most: the first directory named unit. */
static int find_below(const char *dir, const char *unit, unsigned depth, char **ret)
{
        _cleanup_free_ char *here = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        if (asprintf(&here, "%s/%s", dir, unit) < 0)
                return -ENOMEM;
        if (check_cgroup_dir(here) == 0) {
                *ret = TAKE_PTR(here);
                return 0;
        }
        if (depth == 0)
                return -ENOENT;
        d = opendir(dir);
        if (!d)
                return -ENOENT;
        while ((de = readdir(d))) {
                _cleanup_free_ char *sub = NULL;
                int r;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                if (asprintf(&sub, "%s/%s", dir, de->d_name) < 0)
                        return -ENOMEM;
                r = find_below(sub, unit, depth - 1, ret);
                if (r != -ENOENT)
                        return r;
        }
        return -ENOENT;
}

int cgroup_path_find_unit(const char *root, const char *unit, char **ret)
{
        static const char *const first[] = { "", "/system.slice", "/user.slice" };

        assert(root);
        assert(ret);
        if (!cgroup_path_unit_name_valid(unit))
                return -EINVAL;
        /* where systemd puts most units first, then everything down to the bound */
        for (size_t i = 0; i < ELEMENTSOF(first); i++) {
                _cleanup_free_ char *dir = NULL;

                if (asprintf(&dir, "%s%s", root, first[i]) < 0)
                        return -ENOMEM;
                if (find_below(dir, unit, 0, ret) == 0)
                        return 0;
        }
        return find_below(root, unit, CGROUP_PATH_UNIT_DEPTH_MAX, ret);
}

int cgroup_path_id(const char *path, uint64_t *ret)
{
        struct stat st;

        assert(path);
        assert(ret);
        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return -ENOTDIR;
        *ret = (uint64_t)st.st_ino;
        return 0;
}

/* Visit dir_fd's cgroup and those below it, depth levels at most. */
typedef int (*visit_fn)(int dir_fd, void *userdata);

static int walk(int dir_fd, unsigned depth, visit_fn fn, void *userdata)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        r = fn(dir_fd, userdata);
        if (r < 0 || depth == 0)
                return r;
        r = dir_stream_open(dir_fd, &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_close_ int sub = -EBADF;

                if (de->d_type != DT_DIR || de->d_name[0] == '.')
                        continue;
                sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (sub < 0)
                        continue;       /* removed meanwhile */
                r = walk(sub, depth - 1, fn, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

struct procs_walk {
        pid_t **pids;
        size_t *n;
};

static int add_procs(int dir_fd, void *userdata)
{
        struct procs_walk *w = userdata;
        _cleanup_free_ char *text = read_text(dir_fd, "cgroup.procs");

        if (!text)
                return errno == ENOENT || errno == ENODEV ? 0 : -errno;     /* removed meanwhile */
        for (char *p = text; *p; p++)
                if (*p == '\n')
                        *p = ' ';
        return proc_children_parse(text, w->pids, w->n);
}

int cgroup_path_procs(const char *path, pid_t **pids, size_t *n)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct procs_walk w = { pids, n };
        int r;

        assert(pids);
        assert(n);
        if (fd < 0)
                return -errno;
        r = walk(fd, CGROUP_PATH_TREE_DEPTH_MAX, add_procs, &w);
        if (r < 0)
                return r;
        *n = proc_children_unique(*pids, *n);
        return 0;
}

struct tree_walk {
        uint64_t **ids;
        size_t *n;
};

static int add_id(int dir_fd, void *userdata)
{
        struct tree_walk *w = userdata;
        struct stat st;
        uint64_t *grown;

        if (fstat(dir_fd, &st) < 0)
                return -errno;
        grown = realloc(*w->ids, (*w->n + 1) * sizeof(**w->ids));
        if (!grown)
                return -ENOMEM;
        *w->ids = grown;
        grown[(*w->n)++] = (uint64_t)st.st_ino;
        return 0;
}

int cgroup_path_tree(const char *path, uint64_t **ids, size_t *n)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct tree_walk w = { ids, n };

        assert(ids);
        assert(n);
        if (fd < 0)
                return -errno;
        return walk(fd, CGROUP_PATH_TREE_DEPTH_MAX, add_id, &w);
}
