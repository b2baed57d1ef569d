/* SPDX-License-Identifier: GPL-2.0-only */
/* What a target maps where: its file mappings, kept after it exits so its stacks still resolve. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include "macro.h"
#include "module-map.h"
#include "proc-maps.h"
#include "safe-open.h"
#include "util.h"

int module_map_open_file(pid_t pid, const char *path, uint64_t dev, uint64_t ino,
                          uint64_t start, uint64_t end)
{
        _cleanup_close_ int root_fd = -EBADF;
        int fd;

        root_fd = safe_open_root(pid);
        if (root_fd < 0)
                return root_fd;
        /* A mapping's path is canonical (no symlink in it) and names the file (dev, ino). */
        fd = safe_open_regular_as(root_fd, path, ino ? SAFE_OPEN_NOFOLLOW : 0, dev, ino, NULL);
        if (fd >= 0 || start == end || fd == -ENOTREG)
                return fd;
        /* Replaced or deleted since it was mapped: the mapping itself still names the file. */
        return safe_open_mapped(pid, start, end, dev, ino, NULL);
}

static int add_mapping(struct module_map *mm, const struct map_entry *e)
{
        struct module_mapping *n;
        char *path = strdup(e->path);

        if (!path)
                return -ENOMEM;
        n = realloc(mm->mappings, (mm->n + 1) * sizeof(*n));
        if (!n) {
                free(path);
                return -ENOMEM;
        }
        mm->mappings = n;
        mm->mappings[mm->n++] = (struct module_mapping) {
                .start = e->start, .end = e->end, .pgoff = e->pgoff,
                .dev = makedev(e->dev_major, e->dev_minor), .ino = e->inode, .path = path,
                .not_code = e->perms[2] != 'x',
        };
        return 0;
}

/* Executable memory no file backs: no path, or one the process named (PR_SET_VMA_ANON_NAME);
 * not the kernel's "[vdso]", "[vsyscall]" or "[uprobes]", whose code is no JIT's. */
static bool is_anon_code(const struct map_entry *e)
{
        return e->perms[2] == 'x' && e->inode == 0 && (!e->path || strncmp(e->path, "[anon:", 6) == 0);
}

static int add_anon_code(struct module_map *mm, const struct map_entry *e)
{
        struct address_range *n = realloc(mm->anon_code, (mm->n_anon_code + 1) * sizeof(*n));

        if (!n)
                return -ENOMEM;
        mm->anon_code = n;
        mm->anon_code[mm->n_anon_code++] = (struct address_range) { .start = e->start, .end = e->end };
        return 0;
}

int module_map_from_proc_maps(const struct proc_maps *maps, struct module_map *ret)
{
        _cleanup_(module_map_done) struct module_map mm = {};
        int r;

        assert(maps);
        assert(ret);
        for (size_t i = 0; i < maps->n; i++) {
                const struct map_entry *e = &maps->entries[i];

                if (is_anon_code(e))
                        r = add_anon_code(&mm, e);
                else if (!e->path || e->path[0] != '/' || e->inode == 0)
                        continue;
                else
                        r = add_mapping(&mm, e);
                if (r < 0)
                        return r;
        }
        *ret = TAKE_STRUCT(mm);
        return 0;
}

int module_map_refresh(struct module_map *mm, pid_t pid)
{
        _cleanup_(proc_maps_done) struct proc_maps maps = {};
        _cleanup_(module_map_done) struct module_map fresh = {};
        uint64_t read_ns = now_monotonic_nsec();
        char maps_path[64];
        int r;

        assert(mm);
        snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", (int)pid);
        r = proc_maps_parse_file(maps_path, &maps);
        if (r < 0)
                return r;
        r = module_map_from_proc_maps(&maps, &fresh);
        if (r < 0)
                return r;
        /* A process that exited (a zombie) shows no mappings at all: keep the last view. */
        if (fresh.n == 0)
                return -ESRCH;
        fresh.read_ns = read_ns;
        module_map_done(mm);
        *mm = TAKE_STRUCT(fresh);
        return 0;
}

void module_map_done(struct module_map *mm)
{
        assert(mm);
        for (size_t i = 0; i < mm->n; i++)
                free(mm->mappings[i].path);
        free(mm->mappings);
        free(mm->anon_code);
        *mm = (struct module_map) {};
}

int module_map_copy(struct module_map *to, const struct module_map *from)
{
        struct module_map copy = {};

        assert(to);
        assert(from);
        copy.mappings = calloc(MAX(from->n, (size_t)1), sizeof(*copy.mappings));
        if (!copy.mappings)
                return -ENOMEM;
        for (; copy.n < from->n; copy.n++) {
                copy.mappings[copy.n] = from->mappings[copy.n];
                copy.mappings[copy.n].path = strdup(from->mappings[copy.n].path);
                if (!copy.mappings[copy.n].path) {
                        module_map_done(&copy);
                        return -ENOMEM;
                }
        }
        if (from->n_anon_code > 0) {
                copy.anon_code = malloc(from->n_anon_code * sizeof(*from->anon_code));
                if (!copy.anon_code) {
                        module_map_done(&copy);
                        return -ENOMEM;
                }
                memcpy(copy.anon_code, from->anon_code, from->n_anon_code * sizeof(*from->anon_code));
                copy.n_anon_code = from->n_anon_code;
        }
        copy.read_ns = from->read_ns;
        *to = copy;
        return 0;
}

/* The index of the element of array (n of stride bytes each, sorted by address, not overlapping,
 * each starting with its [start, end) as two uint64_t) that holds addr, or -1. */
static ssize_t range_holding(const void *array, size_t n, size_t stride, uint64_t addr)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                const uint64_t *range = (const uint64_t *)((const char *)array + mid * stride);

                if (addr < range[0])
                        hi = mid;
                else if (addr >= range[1])
                        lo = mid + 1;
                else
                        return (ssize_t)mid;
        }
        return -1;
}

_Static_assert(offsetof(struct module_mapping, start) == 0 && offsetof(struct module_mapping, end) == 8,
               "a mapping starts with its range");
_Static_assert(offsetof(struct address_range, start) == 0 && offsetof(struct address_range, end) == 8,
               "a range is its start and end");

const struct module_mapping *module_map_find(const struct module_map *mm, uint64_t addr)
{
        ssize_t i;

        assert(mm);
        /* /proc/PID/maps lists mappings in address order. */
        i = range_holding(mm->mappings, mm->n, sizeof(*mm->mappings), addr);
        return i >= 0 ? &mm->mappings[i] : NULL;
}

bool module_map_is_anon_code(const struct module_map *mm, uint64_t addr)
{
        assert(mm);
        return range_holding(mm->anon_code, mm->n_anon_code, sizeof(*mm->anon_code), addr) >= 0;
}

bool module_map_in_ranges(const struct module_map *mm, const struct file_range *ranges, size_t n, uint64_t addr)
{
        const struct module_mapping *m;
        uint64_t offset;

        assert(mm);
        if (n == 0 || !(m = module_map_find(mm, addr)))
                return false;
        offset = addr - m->start + m->pgoff;
        for (size_t i = 0; i < n; i++)
                if (ranges[i].dev == m->dev && ranges[i].ino == m->ino && offset >= ranges[i].start &&
                    offset < ranges[i].end)
                        return true;
        return false;
}
