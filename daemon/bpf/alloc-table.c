/* SPDX-License-Identifier: GPL-2.0-only */
/* BPF's alloc_table, mapped and read or purged in place. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdbool.h>
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

int alloc_table_view_open(int table_fd, int allocs_fd, struct alloc_table_view *ret)
{
        int r;

        assert(ret);
        *ret = (struct alloc_table_view) { .allocs_fd = allocs_fd };
        if (table_fd < 0)
                return 0;
        r = mapped_array_open(table_fd, sizeof(struct alloc_slot), &ret->table);
        if (r < 0)
                *ret = (struct alloc_table_view) { .allocs_fd = -1 };
        return r;
}

void alloc_table_view_close(struct alloc_table_view *t)
{
        if (!t)
                return;
        mapped_array_close(&t->table);
        t->allocs_fd = -1;
}

int alloc_table_view_times(const struct alloc_table_view *t, pid_t pid, const uint64_t *addrs, size_t n,
                           uint64_t *ret)
{
        const struct mapped_array *v = &t->table;
        struct alloc_key first;
        bool in_allocs;

        assert(t);
        assert(addrs || n == 0);
        assert(ret || n == 0);
        /* the allocs map holds only the blocks whose windows were full: most often none, and then
         * no look-up there (a system call each) is needed */
        in_allocs = t->allocs_fd >= 0 && bpf_map_get_next_key(t->allocs_fd, NULL, &first) == 0;
        for (size_t i = 0; i < n; i++) {
                uint32_t h = memleak_alloc_hash((uint32_t)pid, addrs[i]);
                uint64_t live = ALLOC_SLOT_WORD((uint32_t)pid, ALLOC_SLOT_LIVE);
                struct alloc_key key = { .tgid = (uint32_t)pid, .space = ALLOC_SPACE_USER, .addr = addrs[i] };
                struct alloc_info info;

                ret[i] = 0;
                for (uint32_t k = 0; v->n > 0 && k < ALLOC_TABLE_WINDOW; k++) {
                        const struct alloc_slot *s = (const struct alloc_slot *)v->values + ((h + k) & (v->n - 1));
                        uint64_t word = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);

                        if (word == ALLOC_SLOT_EMPTY)
                                break;
                        if (word == live && s->addr == addrs[i]) {
                                ret[i] = s->info.timestamp_ns;
                                break;
                        }
                }
                if (ret[i] == 0 && in_allocs && bpf_map_lookup_elem(t->allocs_fd, &key, &info) == 0)
                        ret[i] = info.timestamp_ns;
        }
        return 0;
}

int alloc_table_times(int table_fd, int allocs_fd, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *ret)
{
        struct alloc_table_view t;
        int r;

        r = alloc_table_view_open(table_fd, allocs_fd, &t);
        if (r < 0)
                return r;
        r = alloc_table_view_times(&t, pid, addrs, n, ret);
        alloc_table_view_close(&t);
        return r;
}
