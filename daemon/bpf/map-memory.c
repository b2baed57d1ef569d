/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel memory the BPF maps hold now, from each map's fdinfo. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "macro.h"
#include "map-memory.h"
#include "memleak.skel.h"

#define FDINFO_MAX_BYTES 4096

int map_memory_parse_fdinfo(const char *text, uint64_t *ret)
{
        const char *line = text;

        assert(text);
        assert(ret);
        while (line && *line) {
                if (strncmp(line, "memlock:", 8) == 0)
                        return sscanf(line + 8, "%" SCNu64, ret) == 1 ? 0 : -EINVAL;
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        return -ENOENT;
}

static int fdinfo_memlock(int fd, uint64_t *ret)
{
        char path[64], text[FDINFO_MAX_BYTES];
        _cleanup_close_ int info = -EBADF;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
        info = open(path, O_RDONLY | O_CLOEXEC);
        if (info < 0)
                return -errno;
        n = read(info, text, sizeof(text) - 1);
        if (n < 0)
                return -errno;
        text[n] = '\0';
        return map_memory_parse_fdinfo(text, ret);
}

int map_memory_now(struct memleak_bpf *skel, uint64_t *ret)
{
        struct bpf_map *map;
        uint64_t total = 0;

        assert(skel);
        assert(ret);
        bpf_object__for_each_map(map, skel->obj) {
                uint64_t bytes;
                int fd = bpf_map__fd(map), r;

                if (fd < 0)
                        continue;       /* not created (none today) */
                r = fdinfo_memlock(fd, &bytes);
                if (r < 0)
                        return r;
                total += bytes;
        }
        *ret = total;
        return 0;
}
