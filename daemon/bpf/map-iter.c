/* SPDX-License-Identifier: GPL-2.0-only */
/* Read a BPF iterator's records through a buffer the caller keeps between reads. */
#include <assert.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
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

int map_iter_read_stream(int link_fd, struct map_iter_buffer *buf, map_iter_consume_fn consume, void *userdata)
{
        _cleanup_close_ int fd = -EBADF;
        size_t have = 0;        /* bytes not consumed yet (a record split between two reads) */

        assert(buf);
        assert(consume);
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
                ssize_t got;
                long used;

                if (have == buf->size)
                        return -EBADMSG;        /* a record larger than the buffer */
                got = read(fd, (char *)buf->data + have, buf->size - have);
                if (got < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (got == 0)
                        return have ? -EBADMSG : 0;
                have += (size_t)got;
                used = consume(buf->data, have, userdata);
                if (used < 0)
                        return (int)used;
                if ((size_t)used > have)
                        return -EINVAL;
                memmove(buf->data, (char *)buf->data + used, have - (size_t)used);
                have -= (size_t)used;
        }
}

struct fixed_records {
        size_t record_size;
        map_iter_records_fn records;
        void *userdata;
};

static long consume_fixed(const void *data, size_t len, void *userdata)
{
        struct fixed_records *f = userdata;
        size_t n = len / f->record_size;
        int r;

        if (n > 0 && (r = f->records(data, n, f->userdata)) < 0)
                return r;
        return (long)(n * f->record_size);
}

int map_iter_read(int link_fd, size_t record_size, struct map_iter_buffer *buf, map_iter_records_fn records,
                  void *userdata)
{
        struct fixed_records f = { .record_size = record_size, .records = records, .userdata = userdata };

        assert(records);
        if (record_size == 0 || record_size > MAP_ITER_READ_BYTES)
                return -EINVAL;
        return map_iter_read_stream(link_fd, buf, consume_fixed, &f);
}

int map_iter_probe(void)
{
        static const struct bpf_insn ret0[] = {
                { .code = 0xb7 /* BPF_ALU64 | BPF_MOV | BPF_K */, .dst_reg = 0, .imm = 0 },
                { .code = 0x95 /* BPF_JMP | BPF_EXIT */ },
        };
        LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_ITER);
        const char *env = getenv("MEMLEAKD_MAP_ITER");
        int btf_id, fd;

        if (env && strcmp(env, "0") == 0)
                return -EOPNOTSUPP;
        btf_id = libbpf_find_vmlinux_btf_id("bpf_map_elem", BPF_TRACE_ITER);
        if (btf_id < 0)
                return btf_id;
        opts.attach_btf_id = (__u32)btf_id;
        fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "memleakd_iter", "GPL", ret0, ELEMENTSOF(ret0), &opts);
        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}
