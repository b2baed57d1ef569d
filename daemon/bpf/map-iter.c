/* SPDX-License-Identifier: GPL-2.0-only */
/* Read a BPF iterator's fixed-size records through a buffer the caller keeps between reads. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "macro.h"
#include "map-iter.h"

/* A read's size: many records per system call, little memory kept. */
#define MAP_ITER_READ_BYTES (256u << 10)

void map_iter_buffer_done(struct map_iter_buffer *b)
{
        assert(b);
        free(b->data);
        *b = (struct map_iter_buffer) {};
}

int map_iter_read(int link_fd, size_t record_size, struct map_iter_buffer *buf, map_iter_records_fn records,
                  void *userdata)
{
        _cleanup_close_ int fd = -EBADF;
        size_t have = 0;        /* bytes of a record split between two reads, kept at the start */

        assert(buf);
        assert(records);
        if (record_size == 0 || record_size > MAP_ITER_READ_BYTES)
                return -EINVAL;
        if (!buf->data) {
                buf->data = malloc(MAP_ITER_READ_BYTES);
                if (!buf->data)
                        return -ENOMEM;
                buf->size = MAP_ITER_READ_BYTES;
        }
        fd = bpf_iter_create(link_fd);
        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t got = read(fd, (char *)buf->data + have, buf->size - have);
                size_t n, whole;
                int r;

                if (got < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (got == 0)
                        return have ? -EBADMSG : 0;
                have += (size_t)got;
                n = have / record_size;
                whole = n * record_size;
                if (n > 0 && (r = records(buf->data, n, userdata)) < 0)
                        return r;
                memmove(buf->data, (char *)buf->data + whole, have - whole);
                have -= whole;
        }
}
