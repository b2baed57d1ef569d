/* SPDX-License-Identifier: GPL-2.0-only */
/* Read a whole BPF hash map (batch lookups, falling back to key iteration), and purge from it. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "map-dump.h"

/* Entries a batch holds to begin with; doubled while a bucket of the hash map holds more. */
#define MAP_DUMP_BATCH_ENTRIES 1024u
#define MAP_DUMP_BATCH_ENTRIES_MAX (1u << 20)

struct batch_buffer {
        char *keys, *values;
        uint32_t entries;
};

static void batch_buffer_done(struct batch_buffer *b)
{
        free(b->keys);
        free(b->values);
        *b = (struct batch_buffer) {};
}

static int batch_buffer_size(struct batch_buffer *b, size_t key_size, size_t value_size, uint32_t entries)
{
        char *keys = realloc(b->keys, (size_t)entries * key_size), *values;

        if (!keys)
                return -ENOMEM;
        b->keys = keys;
        values = realloc(b->values, (size_t)entries * value_size);
        if (!values)
                return -ENOMEM;
        b->values = values;
        b->entries = entries;
        return 0;
}

/* One get_next_key and one look-up an entry, for kernels without batch look-ups. */
static int each_by_iteration(int fd, size_t key_size, size_t value_size, struct batch_buffer *b,
                             map_dump_batch_fn each, void *userdata)
{
        _cleanup_free_ char *prev = malloc(key_size);
        bool have_prev = false;
        uint32_t n = 0;
        int r;

        if (!prev)
                return -ENOMEM;
        for (;;) {
                char *key = b->keys + (size_t)n * key_size;

                if (bpf_map_get_next_key(fd, have_prev ? prev : NULL, key) < 0)
                        break;
                memcpy(prev, key, key_size);
                have_prev = true;
                if (bpf_map_lookup_elem(fd, key, b->values + (size_t)n * value_size) < 0)
                        continue;       /* deleted under us: skip it */
                if (++n == b->entries) {
                        if ((r = each(b->keys, b->values, n, userdata)) < 0)
                                return r;
                        n = 0;
                }
        }
        return n > 0 ? each(b->keys, b->values, n, userdata) : 0;
}

int map_dump_hash_each(int fd, size_t key_size, size_t value_size, map_dump_batch_fn each, void *userdata)
{
        _cleanup_(batch_buffer_done) struct batch_buffer b = {};
        uint64_t token = 0;
        bool first = true;
        int r;

        assert(each);
        r = batch_buffer_size(&b, key_size, value_size, MAP_DUMP_BATCH_ENTRIES);
        if (r < 0)
                return r;
        for (;;) {
                __u32 count = b.entries;

                r = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, b.keys, b.values, &count, NULL);
                if (r < 0)
                        r = -errno;
                if (r == -ENOSPC && count == 0 && b.entries < MAP_DUMP_BATCH_ENTRIES_MAX) {
                        /* one bucket holds more entries than the batch: a larger one, same place */
                        if ((r = batch_buffer_size(&b, key_size, value_size, b.entries * 2)) < 0)
                                return r;
                        continue;
                }
                if (r < 0 && r != -ENOENT) {
                        if (first && (r == -EINVAL || r == -EOPNOTSUPP))
                                return each_by_iteration(fd, key_size, value_size, &b, each, userdata);
                        return r;
                }
                if (count > 0) {
                        int e = each(b.keys, b.values, count, userdata);

                        if (e < 0)
                                return e;
                }
                if (r == -ENOENT)
                        return 0;       /* that was the last batch */
                first = false;
        }
}

struct dump_into {
        struct map_dump *d;
        size_t key_size, value_size;
        uint32_t max_entries;
};

static int append_batch(const void *keys, const void *values, size_t n, void *userdata)
{
        struct dump_into *to = userdata;
        struct map_dump *d = to->d;

        n = MIN(n, (size_t)to->max_entries - d->n);
        memcpy((char *)d->keys + d->n * to->key_size, keys, n * to->key_size);
        memcpy((char *)d->values + d->n * to->value_size, values, n * to->value_size);
        d->n += n;
        return 0;
}

int map_dump_hash(int fd, size_t key_size, size_t value_size, uint32_t max_entries, struct map_dump *ret)
{
        _cleanup_(map_dump_done) struct map_dump d = {};
        struct dump_into to = { .d = &d, .key_size = key_size, .value_size = value_size };
        int r;

        assert(ret);
        to.max_entries = max_entries = MAX(max_entries, 1u);
        d.keys = malloc((size_t)max_entries * key_size);
        d.values = malloc((size_t)max_entries * value_size);
        if (!d.keys || !d.values)
                return -ENOMEM;
        r = map_dump_hash_each(fd, key_size, value_size, append_batch, &to);
        if (r < 0)
                return r;
        *ret = d;
        d = (struct map_dump) {};
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
