/* SPDX-License-Identifier: GPL-2.0-only */
/* Read a whole BPF hash map (batch lookups, falling back to key iteration), at once or in chunks
 * through a buffer the caller keeps, and purge from it. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdint.h>
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

/* A chunk: few syscalls (one per 4,096 entries of the per-stack totals), yet small enough to
 * stay in the cache while its entries are used. */
#define CHUNK_BYTES (128u * 1024)

void map_dump_buffer_done(struct map_dump_buffer *b)
{
        assert(b);
        free(b->keys);
        free(b->values);
        *b = (struct map_dump_buffer) {};
}

static size_t buffer_entries(const struct map_dump_buffer *b, size_t key_size, size_t value_size)
{
        return MIN(b->keys_bytes / key_size, b->values_bytes / value_size);
}

/* Room for at least entries entries; the buffer only grows. */
static int buffer_reserve(struct map_dump_buffer *b, size_t key_size, size_t value_size, size_t entries)
{
        void *p;

        if (buffer_entries(b, key_size, value_size) >= entries)
                return 0;
        if (entries > SIZE_MAX / MAX(key_size, value_size))
                return -ENOMEM;
        if (b->keys_bytes < entries * key_size) {
                p = realloc(b->keys, entries * key_size);
                if (!p)
                        return -ENOMEM;
                b->keys = p;
                b->keys_bytes = entries * key_size;
        }
        if (b->values_bytes < entries * value_size) {
                p = realloc(b->values, entries * value_size);
                if (!p)
                        return -ENOMEM;
                b->values = p;
                b->values_bytes = entries * value_size;
        }
        return 0;
}

static int chunks_iterate(int fd, size_t key_size, size_t value_size, uint32_t max_entries,
                          struct map_dump_buffer *b, map_dump_chunk_fn chunk, void *userdata)
{
        _cleanup_free_ char *prev = malloc(key_size);
        size_t cap = buffer_entries(b, key_size, value_size), n = 0, total = 0;
        bool first = true;
        int r;

        if (!prev)
                return -ENOMEM;
        while (total < max_entries) {
                char *key = (char *)b->keys + n * key_size;

                if (bpf_map_get_next_key(fd, first ? NULL : prev, key) < 0)
                        break;
                memcpy(prev, key, key_size);
                first = false;
                if (bpf_map_lookup_elem(fd, key, (char *)b->values + n * value_size) < 0)
                        continue;       /* deleted under us: skip it */
                total++;
                if (++n < cap)
                        continue;
                r = chunk(b->keys, b->values, n, userdata);
                if (r < 0)
                        return r;
                n = 0;
        }
        if (n > 0) {
                r = chunk(b->keys, b->values, n, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}

int map_dump_chunks(int fd, size_t key_size, size_t value_size, uint32_t max_entries,
                    struct map_dump_buffer *buf, map_dump_chunk_fn chunk, void *userdata)
{
        uint64_t token = 0;
        size_t total = 0;
        bool first = true;
        int r;

        assert(key_size > 0 && value_size > 0);
        assert(buf);
        assert(chunk);
        r = buffer_reserve(buf, key_size, value_size, MAX(CHUNK_BYTES / (key_size + value_size), (size_t)1));
        if (r < 0)
                return r;
        while (total < max_entries) {
                __u32 count = MIN(buffer_entries(buf, key_size, value_size), (size_t)(max_entries - total));

                r = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, buf->keys, buf->values, &count, NULL);
                if (r < 0)
                        r = -errno;
                if (first && (r == -EINVAL || r == -EOPNOTSUPP))
                        return chunks_iterate(fd, key_size, value_size, max_entries, buf, chunk, userdata);
                if (r == -ENOSPC && count == 0) {
                        size_t have = buffer_entries(buf, key_size, value_size);

                        if (have >= max_entries && total == 0)
                                return chunks_iterate(fd, key_size, value_size, max_entries, buf, chunk, userdata);
                        if (have >= max_entries)
                                return r;
                        /* The next hash bucket holds more than the buffer: grow it, read again from
                         * that bucket (the token names it). */
                        first = false;
                        r = buffer_reserve(buf, key_size, value_size, MIN(2 * have, (size_t)max_entries));
                        if (r < 0)
                                return r;
                        continue;
                }
                if (r < 0 && r != -ENOENT)
                        return r;
                first = false;
                if (count > 0) {
                        int k = chunk(buf->keys, buf->values, count, userdata);

                        if (k < 0)
                                return k;
                        total += count;
                }
                if (r == -ENOENT)
                        break;          /* the last batch */
        }
        return 0;
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
