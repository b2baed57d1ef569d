/* SPDX-License-Identifier: GPL-2.0-only */
/* BPF's alloc_table, mapped and read or purged in place. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "alloc-table.h"
#include "bpf-types.h"
#include "macro.h"

struct table_view {
        struct alloc_slot *slots;
        uint32_t n;
        size_t bytes;
};

static int view_open(int fd, struct table_view *v)
{
        struct bpf_map_info info = {};
        __u32 len = sizeof(info);
        long page = sysconf(_SC_PAGESIZE);
        void *p;

        if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                return -errno;
        if (info.value_size != sizeof(struct alloc_slot) || page <= 0)
                return -EINVAL;
        v->n = info.max_entries;
        v->bytes = ((size_t)v->n * sizeof(struct alloc_slot) + (size_t)page - 1) / (size_t)page * (size_t)page;
        p = mmap(NULL, v->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
                return -errno;
        v->slots = p;
        return 0;
}

static void view_close(struct table_view *v)
{
        if (v->slots)
                (void)munmap(v->slots, v->bytes);
        *v = (struct table_view) {};
}

int alloc_table_append(int fd, struct map_dump *d)
{
        struct table_view v = {};
        struct alloc_key *keys;
        struct alloc_info *values;
        size_t n;
        int r;

        assert(d);
        r = view_open(fd, &v);
        if (r < 0)
                return r;
        /* room for every slot; the arrays keep their size if that fails */
        n = MAX(d->n + v.n, (size_t)1);
        keys = realloc(d->keys, n * sizeof(*keys));
        if (keys)
                d->keys = keys;
        values = realloc(d->values, n * sizeof(*values));
        if (values)
                d->values = values;
        if (!keys || !values) {
                view_close(&v);
                return -ENOMEM;
        }
        n = d->n;
        for (uint32_t i = 0; i < v.n; i++) {
                const struct alloc_slot *s = &v.slots[i];
                uint64_t word = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);

                if (ALLOC_SLOT_STATE(word) != ALLOC_SLOT_LIVE)
                        continue;
                keys[n] = (struct alloc_key) { .tgid = ALLOC_SLOT_TGID(word), .space = ALLOC_SPACE_USER,
                                               .addr = s->addr };
                values[n++] = s->info;
        }
        view_close(&v);
        d->n = n;
        return 0;
}

int alloc_table_purge(int fd, pid_t pid)
{
        struct table_view v = {};
        uint64_t live = ALLOC_SLOT_WORD((uint32_t)pid, ALLOC_SLOT_LIVE);
        int purged = 0, r;

        r = view_open(fd, &v);
        if (r < 0)
                return r;
        for (uint32_t i = 0; i < v.n; i++) {
                uint64_t expected = live;

                /* as BPF frees a block: the state word swapped, so that a CPU freeing it now and
                 * this purge do not both count it */
                if (__atomic_compare_exchange_n(&v.slots[i].word, &expected,
                                                ALLOC_SLOT_WORD((uint32_t)pid, ALLOC_SLOT_FREE), false,
                                                __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
                        purged++;
        }
        view_close(&v);
        return purged;
}
