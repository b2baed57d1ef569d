/* SPDX-License-Identifier: GPL-2.0-only */
/* Read a whole BPF hash map (batch lookups, falling back to key iteration), and purge from it. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "map-dump.h"

static int dump_batch(int fd, size_t key_size, size_t value_size, uint32_t max_entries,
                      char *keys, char *values, size_t *ret_n)
{
        uint64_t token = 0;
        size_t n = 0;
        bool first = true;

        while (n < max_entries) {
                __u32 count = max_entries - n;
                int r;

                r = bpf_map_lookup_batch(fd, first ? NULL : &token, &token,
                                         keys + n * key_size, values + n * value_size, &count, NULL);
                if (r < 0)
                        r = -errno;
                n += count;
                if (r == -ENOENT)
                        break;          /* the last batch */
                if (r < 0)
                        return r;
                first = false;
        }
        *ret_n = n;
        return 0;
}

static int dump_iterate(int fd, size_t key_size, size_t value_size, uint32_t max_entries,
                        char *keys, char *values, size_t *ret_n)
{
        _cleanup_free_ char *cur = calloc(1, key_size);
        size_t n = 0;
        void *prev = NULL;

        if (!cur)
                return -ENOMEM;
        while (n < max_entries && bpf_map_get_next_key(fd, prev, cur) == 0) {
                memcpy(keys + n * key_size, cur, key_size);
                prev = keys + n * key_size;
                if (bpf_map_lookup_elem(fd, cur, values + n * value_size) == 0)
                        n++;    /* else deleted under us: skip it */
        }
        *ret_n = n;
        return 0;
}

int map_dump_hash(int fd, size_t key_size, size_t value_size, uint32_t max_entries, struct map_dump *ret)
{
        _cleanup_free_ char *keys = NULL, *values = NULL;
        size_t n = 0;
        int r;

        assert(ret);
        if (max_entries == 0)
                max_entries = 1;
        keys = malloc((size_t)max_entries * key_size);
        values = malloc((size_t)max_entries * value_size);
        if (!keys || !values)
                return -ENOMEM;
        r = dump_batch(fd, key_size, value_size, max_entries, keys, values, &n);
        if (r == -EINVAL || r == -EOPNOTSUPP || r == -ENOSPC)
                r = dump_iterate(fd, key_size, value_size, max_entries, keys, values, &n);
        if (r < 0)
                return r;
        ret->keys = TAKE_PTR(keys);
        ret->values = TAKE_PTR(values);
        ret->n = n;
        return 0;
}

void map_dump_done(struct map_dump *d)
{
        assert(d);
        free(d->keys);
        free(d->values);
        *d = (struct map_dump) {};
}

int map_dump_purge(int fd, size_t key_size, size_t value_size, uint32_t max_entries,
                   bool (*match)(const void *key, const void *value, void *userdata), void *userdata)
{
        _cleanup_(map_dump_done) struct map_dump d = {};
        int r, purged = 0;

        assert(match);
        r = map_dump_hash(fd, key_size, value_size, max_entries, &d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d.n; i++) {
                const char *k = (const char *)d.keys + i * key_size;
                const char *v = (const char *)d.values + i * value_size;

                if (match(k, v, userdata))
                        purged += bpf_map_delete_elem(fd, k) == 0;
        }
        return purged;
}
