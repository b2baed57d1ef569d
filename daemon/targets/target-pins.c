/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's probe links pinned in bpffs, and taken back by the next daemon. */
#include <assert.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "target-pins.h"

static int pin_path(char *buf, size_t size, const struct target *t, size_t n)
{
        int k = snprintf(buf, size, "%s/s%" PRIu32 "-%016" PRIx64 "-%zu", t->links.pin_dir, t->slot.slot,
                         t->links.pin_gen, n);

        return k < 0 || (size_t)k >= size ? -ENAMETOOLONG : 0;
}

int target_pins_add(struct target *t, int link_fd)
{
        char path[4096];
        int r;

        assert(t);
        if (!t->links.pin_dir)
                return 0;
        r = pin_path(path, sizeof(path), t, t->links.n_pinned);
        if (r >= 0 && bpf_obj_pin(link_fd, path) < 0)
                r = -errno;
        if (r < 0) {
                t->links.pin_failures++;
                return r;
        }
        t->links.n_pinned++;
        return 0;
}

void target_pins_remove(struct target *t)
{
        char path[4096];

        assert(t);
        if (!t->links.pin_dir || t->links.keep_pins)
                return;
        for (size_t i = 0; i < t->links.n_pinned; i++)
                if (pin_path(path, sizeof(path), t, i) >= 0)
                        (void)unlink(path);
        t->links.n_pinned = 0;
}

/* The generation in a pin's name ("s<slot>-<gen>-<n>" or "<name>-<gen>"), and its slot (or
 * UINT32_MAX for a named one). -EINVAL for a name of neither shape. */
static int parse_name(const char *name, uint32_t *slot, uint64_t *gen)
{
        const char *dash = strchr(name, '-');
        char *end;

        if (!dash)
                return -EINVAL;
        *slot = UINT32_MAX;
        if (name[0] == 's' && name[1] >= '0' && name[1] <= '9') {
                unsigned long v = strtoul(name + 1, &end, 10);

                if (end != dash || v >= UINT32_MAX)
                        return -EINVAL;
                *slot = (uint32_t)v;
        }
        errno = 0;
        *gen = strtoull(dash + 1, &end, 16);
        if (errno != 0 || end != dash + 17 || (*end != '-' && *end != 0))
                return -EINVAL;
        return 0;
}

static int add_fd(int **fds, size_t *n, int fd)
{
        int *more = realloc(*fds, (*n + 1) * sizeof(*more));

        if (!more)
                return -ENOMEM;
        *fds = more;
        more[(*n)++] = fd;
        return 0;
}

/* The links pinned for t's slot by earlier daemons, opened: as t's own (re-pinned under this
 * daemon's generation, the old pin removed), or with inherit into t->links.inherited_fds, their
 * pins left (target_pins_sweep() removes them; the fds keep the links). How many, or -errno. */
static int open_pinned(struct target *t, bool inherit)
{
        struct dirent *de;
        char path[4096];
        int n = 0, r = 0;
        DIR *d;

        assert(t);
        if (!t->links.pin_dir)
                return 0;
        d = opendir(t->links.pin_dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                uint32_t slot;
                uint64_t gen;
                int fd;

                if (parse_name(de->d_name, &slot, &gen) < 0 || slot != t->slot.slot || gen == t->links.pin_gen)
                        continue;
                if (snprintf(path, sizeof(path), "%s/%s", t->links.pin_dir, de->d_name) >= (int)sizeof(path))
                        continue;
                fd = bpf_obj_get(path);
                if (fd < 0) {
                        r = -errno;
                        continue;
                }
                if (inherit ? add_fd(&t->links.inherited_fds, &t->links.n_inherited, fd) < 0
                            : add_fd(&t->links.multi_fds, &t->links.n_multi_fds, fd) < 0) {
                        close(fd);
                        r = -ENOMEM;
                        break;
                }
                /* pinned again before the old pin goes: the link lives on either way */
                if (!inherit && target_pins_add(t, fd) >= 0)
                        (void)unlink(path);
                n++;
        }
        closedir(d);
        return n > 0 || r == 0 ? n : r;
}

int target_pins_adopt(struct target *t)
{
        return open_pinned(t, false);
}

int target_pins_inherit(struct target *t)
{
        return open_pinned(t, true);
}

int target_pins_sweep(const char *dir, uint64_t gen)
{
        struct dirent *de;
        char path[4096];
        int n = 0;
        DIR *d;

        assert(dir);
        d = opendir(dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                uint32_t slot;
                uint64_t g;

                if (parse_name(de->d_name, &slot, &g) < 0 || g == gen)
                        continue;
                if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) < (int)sizeof(path) && unlink(path) >= 0)
                        n++;
        }
        closedir(d);
        return n;
}

int target_pins_pin_named(const char *dir, uint64_t gen, const char *name, int link_fd)
{
        char path[4096];

        if (!dir)
                return 0;
        if (snprintf(path, sizeof(path), "%s/%s-%016" PRIx64, dir, name, gen) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        return bpf_obj_pin(link_fd, path) < 0 ? -errno : 0;
}

void target_pins_unpin_named(const char *dir, uint64_t gen, const char *name)
{
        char path[4096];

        if (dir && snprintf(path, sizeof(path), "%s/%s-%016" PRIx64, dir, name, gen) < (int)sizeof(path))
                (void)unlink(path);
}
