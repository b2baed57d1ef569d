/* SPDX-License-Identifier: GPL-2.0-only */
/* The slots of unwind_tables, filled and emptied a batch at a time. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "bpf-types.h"
#include "macro.h"
#include "slot-grace.h"
#include "table-slots.h"

struct table_slots {
        int tables_fd;
        int empty_fd;                   /* an inner map of one NONE row: what an emptied slot holds */
        struct slot_grace slots;        /* held, or released and not emptied yet */
};

int table_slots_rows_map(const struct unwind_row *rows, size_t n, int *ret)
{
        LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = TABLE_SLOTS_ROWS_FLAGS);
        /* an array's elements are 8-byte aligned: a 12-byte row takes 16 */
        const size_t stride = (sizeof(struct unwind_row) + 7) & ~(size_t)7;
        size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes;
        _cleanup_close_ int fd = -EBADF;
        uint8_t *p;

        assert(ret);
        if (n == 0)
                return -EINVAL;
        if (n > UINT32_MAX)
                return -EFBIG;
        fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", sizeof(uint32_t), sizeof(struct unwind_row),
                            (uint32_t)n, &opts);
        if (fd < 0)
                return -errno;
        bytes = (n * stride + page - 1) / page * page;
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
                return -errno;
        for (size_t i = 0; i < n; i++)
                memcpy(p + i * stride, &rows[i], sizeof(rows[i]));
        (void)munmap(p, bytes);
        *ret = TAKE_FD(fd);
        return 0;
}

int table_slots_new(int tables_fd, uint32_t n, struct table_slots **ret)
{
        LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = TABLE_SLOTS_ROWS_FLAGS);
        struct table_slots *s;
        int r;

        assert(ret);
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->tables_fd = tables_fd;
        s->empty_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_empty", sizeof(uint32_t), sizeof(struct unwind_row),
                                     1, &opts);
        if (s->empty_fd < 0) {
                r = -errno;
                free(s);
                return r;
        }
        if (slot_grace_init(&s->slots, n) < 0) {
                table_slots_free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

struct table_slots *table_slots_free(struct table_slots *s)
{
        if (!s)
                return NULL;
        closep(&s->empty_fd);
        slot_grace_done(&s->slots);
        free(s);
        return NULL;
}

int table_slots_take(struct table_slots *s, uint32_t *ret)
{
        assert(s);
        return slot_grace_take(&s->slots, ret);
}

void table_slots_give_back(struct table_slots *s, uint32_t slot)
{
        assert(s);
        slot_grace_give_back(&s->slots, slot);
}

int table_slots_fill(struct table_slots *s, const uint32_t *slots, const int *fds, size_t n, size_t *ret_filled)
{
        uint32_t count = (uint32_t)n;
        size_t done;

        assert(s);
        assert(ret_filled);
        *ret_filled = 0;
        if (n == 0)
                return 0;
        if (bpf_map_update_batch(s->tables_fd, slots, fds, &count, NULL) >= 0 && count == n) {
                *ret_filled = n;
                return 0;
        }
        /* a kernel without batch updates of a map of maps, or one that failed part way: one at a
         * time from where it stopped (each waits for its own grace period) */
        done = count <= n ? count : 0;
        for (; done < n; done++)
                if (bpf_map_update_elem(s->tables_fd, &slots[done], &fds[done], BPF_ANY) < 0) {
                        *ret_filled = done;
                        return -errno;
                }
        *ret_filled = n;
        return 0;
}

int table_slots_release(struct table_slots *s, uint32_t slot)
{
        assert(s);
        if (slot_grace_release(&s->slots, slot) < 0) {
                /* one now, then: slower (the delete waits for its own grace period), but the
                 * slot comes back */
                (void)bpf_map_delete_elem(s->tables_fd, &slot);
                slot_grace_give_back(&s->slots, slot);
                return -ENOMEM;
        }
        return 0;
}

void table_slots_flush(struct table_slots *s)
{
        _cleanup_free_ int *fds = NULL;
        const uint32_t *released;
        size_t n, filled = 0;

        assert(s);
        released = slot_grace_released(&s->slots, &n);
        if (n == 0)
                return;
        fds = malloc(n * sizeof(*fds));
        if (!fds)
                return;
        for (size_t i = 0; i < n; i++)
                fds[i] = s->empty_fd;
        /* the batch update returns once every program that could still read the slots' old
         * tables has finished (one RCU grace period): only then are the slots free */
        (void)table_slots_fill(s, released, fds, n, &filled);
        slot_grace_emptied(&s->slots, filled);
}

size_t table_slots_released(const struct table_slots *s)
{
        size_t n;

        assert(s);
        (void)slot_grace_released(&s->slots, &n);
        return n;
}
