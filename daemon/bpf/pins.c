/* SPDX-License-Identifier: GPL-2.0-only */
/* The maps, links and layout memleakd keeps in bpffs across its restarts. */
#include <assert.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include "memleak.skel.h"
#include "dir-stream.h"
#include "pins.h"
#include "util.h"

#define MAPS_SUBDIR "maps"
#define LAYOUT_FILE "layout"

/* The maps a restart keeps: what the probes record in and what the daemon reads of it. The
 * unwind tables are not among them: the programs of the links kept hold their own, whole, until
 * the new daemon's probes take the target over (target_take_over()) with its own tables. */
static const char *const kept_maps[] = {
        "targets", "target_slots", "threads", "allocs", "mmaps", "counters", "target_blocks",
        "stacks", "alloc_table", "combined", "file_mappings", "forks", "code_holds",
};

/* The name a kept map is pinned by, or NULL when it is not kept. The .bss (its counters of
 * stacks added and purged, of blocks past the table) is named "<object>_.bss" by libbpf. */
static const char *kept_name(const char *name)
{
        const char *dot = strrchr(name, '.');

        if (dot && strcmp(dot, ".bss") == 0)
                return "bss";
        for (size_t i = 0; i < ELEMENTSOF(kept_maps); i++)
                if (strcmp(kept_maps[i], name) == 0)
                        return name;
        return NULL;
}

uint64_t pins_layout(const struct bpf_sizes *sizes)
{
        size_t n = 0;
        const void *elf = memleak_bpf__elf_bytes(&n);
        uint64_t h = FNV1A64_INIT;

        assert(sizes);
        h = fnv1a64(h, elf, n);
        /* field by field: no padding hashed */
        h = fnv1a64(h, &sizes->max_targets, sizeof(sizes->max_targets));
        h = fnv1a64(h, &sizes->max_allocs, sizeof(sizes->max_allocs));
        h = fnv1a64(h, &sizes->max_stacks, sizeof(sizes->max_stacks));
        h = fnv1a64(h, &sizes->max_combined, sizeof(sizes->max_combined));
        h = fnv1a64(h, &sizes->max_mmaps, sizeof(sizes->max_mmaps));
        h = fnv1a64(h, &sizes->max_stack_depth, sizeof(sizes->max_stack_depth));
        h = fnv1a64(h, &sizes->n_cpus, sizeof(sizes->n_cpus));
        return h;
}

static int mkdir_at(int dir_fd, const char *name)
{
        if (mkdirat(dir_fd, name, 0700) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* Every entry of the subdirectory name unlinked (pins: no subdirectories). Returns how many, or
 * -errno of the first failure after trying them all. */
static int empty_subdir(int dir_fd, const char *name)
{
        int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        struct dirent *de;
        int n = 0, r = 0;
        DIR *d;

        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (unlinkat(dirfd(d), de->d_name, 0) < 0) {
                        if (r == 0)
                                r = -errno;
                } else
                        n++;
        }
        closedir(d);
        return r < 0 ? r : n;
}

/* Whether the maps subdirectory holds a pin. */
static bool has_map_pins(int dir_fd)
{
        int fd = openat(dir_fd, MAPS_SUBDIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        struct dirent *de;
        bool found = false;
        DIR *d;

        if (fd < 0)
                return false;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return false;
        }
        while (!found && (de = readdir(d)))
                found = strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
        closedir(d);
        return found;
}

/* The layout the pins were made with, kept as the name of an empty directory (bpffs holds no
 * regular files): LAYOUT_PREFIX and 16 hex digits. */
#define LAYOUT_PREFIX "layout-"

/* Calls fn on each LAYOUT_PREFIX entry of dir_fd; stops at a nonzero return, which it returns. */
static int each_layout(int dir_fd, int (*fn)(int dir_fd, const char *name, void *userdata), void *userdata)
{
        struct dirent *de;
        DIR *d;
        int r;

        r = dir_stream_open(dir_fd, &d);
        if (r < 0)
                return r;
        while (r == 0 && (de = readdir(d)))
                if (strncmp(de->d_name, LAYOUT_PREFIX, strlen(LAYOUT_PREFIX)) == 0)
                        r = fn(dir_fd, de->d_name, userdata);
        closedir(d);
        return r;
}

static int layout_matches(int dir_fd, const char *name, void *userdata)
{
        uint64_t v;
        char *end;

        (void)dir_fd;
        errno = 0;
        v = strtoull(name + strlen(LAYOUT_PREFIX), &end, 16);
        return errno == 0 && *end == 0 && v == *(const uint64_t *)userdata ? 1 : 0;
}

static int layout_remove(int dir_fd, const char *name, void *userdata)
{
        (void)userdata;
        return unlinkat(dir_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -errno : 0;
}

static int clear_at(int dir_fd)
{
        int r1 = empty_subdir(dir_fd, PINS_LINKS_SUBDIR), r2 = empty_subdir(dir_fd, MAPS_SUBDIR);
        int r3 = each_layout(dir_fd, layout_remove, NULL);

        return r1 < 0 ? r1 : r2 < 0 ? r2 : r3 < 0 ? r3 : 0;
}

int pins_open(const char *dir, uint64_t layout, struct pins **ret, enum pins_found *found)
{
        _cleanup_(pins_freep) struct pins *p = calloc(1, sizeof(*p));
        struct statfs sfs;
        int r;

        assert(dir);
        assert(ret);
        assert(found);
        if (!p || !(p->dir = strdup(dir)))
                return -ENOMEM;
        p->dir_fd = p->links_fd = -1;
        p->layout = layout;
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return -errno;
        p->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (p->dir_fd < 0)
                return -errno;
        /* only bpffs holds pins */
        if (fstatfs(p->dir_fd, &sfs) < 0)
                return -errno;
        if ((uint64_t)sfs.f_type != BPF_FS_MAGIC)
                return -ENOTSUP;
        /* one daemon a directory: held while p lives, let go by the kernel at any exit */
        if (flock(p->dir_fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? -EBUSY : -errno;
        if ((r = mkdir_at(p->dir_fd, MAPS_SUBDIR)) < 0 || (r = mkdir_at(p->dir_fd, PINS_LINKS_SUBDIR)) < 0)
                return r;
        p->links_fd = openat(p->dir_fd, PINS_LINKS_SUBDIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (p->links_fd < 0)
                return -errno;
        if (!has_map_pins(p->dir_fd))
                *found = PINS_FOUND_NONE;
        else if (each_layout(p->dir_fd, layout_matches, &layout) == 1)
                *found = PINS_FOUND_SAME;
        else {
                r = clear_at(p->dir_fd);
                if (r < 0)
                        return r;
                *found = PINS_FOUND_CHANGED;
        }
        *ret = TAKE_PTR(p);
        return 0;
}

int pins_prepare_maps(struct pins *p, struct bpf_object *obj)
{
        struct bpf_map *map;
        char path[4096];
        int r;

        assert(p);
        assert(obj);
        bpf_object__for_each_map(map, obj) {
                const char *name = kept_name(bpf_map__name(map));

                if (!name)
                        continue;
                if (snprintf(path, sizeof(path), "%s/%s/%s", p->dir, MAPS_SUBDIR, name) >=
                    (int)sizeof(path))
                        return -ENAMETOOLONG;
                r = bpf_map__set_pin_path(map, path);
                if (r < 0)
                        return r;
        }
        return 0;
}

int pins_write_layout(struct pins *p)
{
        char name[sizeof(LAYOUT_PREFIX) + 16];

        assert(p);
        (void)each_layout(p->dir_fd, layout_remove, NULL);
        snprintf(name, sizeof(name), LAYOUT_PREFIX "%016" PRIx64, p->layout);
        return mkdir_at(p->dir_fd, name);
}

int pins_clear(struct pins *p)
{
        assert(p);
        return clear_at(p->dir_fd);
}

struct pins *pins_free(struct pins *p)
{
        if (!p)
                return NULL;
        if (p->links_fd >= 0)
                close(p->links_fd);
        if (p->dir_fd >= 0)
                close(p->dir_fd);
        free(p->dir);
        free(p);
        return NULL;
}

int pins_forget(const char *dir)
{
        int fd, r;

        assert(dir);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        r = clear_at(fd);
        if (r >= 0) {
                (void)unlinkat(fd, MAPS_SUBDIR, AT_REMOVEDIR);
                (void)unlinkat(fd, PINS_LINKS_SUBDIR, AT_REMOVEDIR);
                (void)rmdir(dir);
        }
        close(fd);
        return r;
}
