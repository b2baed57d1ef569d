/* SPDX-License-Identifier: GPL-2.0-only */
/* A BPF array made with BPF_F_MMAPABLE, mapped into the daemon's memory. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>
#include "mapped-array.h"

int mapped_array_open(int fd, size_t value_size, struct mapped_array *ret)
{
        struct bpf_map_info info = {};
        __u32 len = sizeof(info);
        long page = sysconf(_SC_PAGESIZE);
        size_t bytes;
        void *p;

        assert(ret);
        if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                return -errno;
        if (info.value_size != value_size || page <= 0)
                return -EINVAL;
        bytes = ((size_t)info.max_entries * value_size + (size_t)page - 1) / (size_t)page * (size_t)page;
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
                return -errno;
        *ret = (struct mapped_array) { .values = p, .n = info.max_entries, .bytes = bytes };
        return 0;
}

void mapped_array_close(struct mapped_array *a)
{
        assert(a);
        if (a->values)
                (void)munmap(a->values, a->bytes);
        *a = (struct mapped_array) {};
}
