/* SPDX-License-Identifier: GPL-2.0-only */
/* BPF's alloc_table, mapped and read or purged in place. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include "alloc-table.h"
#include "bpf-types.h"
#include "macro.h"
#include "mapped-array.h"

int alloc_table_append(int fd, struct map_dump *d)
{
        struct mapped_array v = {};
        struct alloc_key *keys;
        struct alloc_info *values;
        size_t n;
        int r;

        assert(d);
        r = mapped_array_open(fd, sizeof(struct alloc_slot), &v);
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
                mapped_array_close(&v);
                return -ENOMEM;
        }
        n = d->n;
        for (uint32_t i = 0; i < v.n; i++) {
                const struct alloc_slot *s = (const struct alloc_slot *)v.values + i;
                uint64_t word = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);

                if (ALLOC_SLOT_STATE(word) != ALLOC_SLOT_LIVE)
                        continue;
                keys[n] = (struct alloc_key) { .tgid = ALLOC_SLOT_TGID(word), .space = ALLOC_SPACE_USER,
                                               .addr = s->addr };
                values[n++] = s->info;
        }
        mapped_array_close(&v);
        d->n = n;
        return 0;
}

int alloc_table_purge(int fd, pid_t pid)
{
        struct mapped_array v = {};
        int r;

        r = mapped_array_open(fd, sizeof(struct alloc_slot), &v);
        if (r < 0)
                return r;
        r = mapped_array_free_slots(&v, pid);
        mapped_array_close(&v);
        return r;
}
