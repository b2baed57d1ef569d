/* SPDX-License-Identifier: GPL-2.0-only */
/* Read a whole BPF hash map (batch lookups, falling back to key iteration), at once or in chunks
 * through a buffer the caller keeps, and purge from it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct map_dump {
        void *keys;
        void *values;
        size_t n;
};

/* Dump up to max_entries entries of the hash map fd. The copy is a consistent-enough view:
 * entries may change while it is read, as they do in the kernel all the time. */
int map_dump_hash(int fd, size_t key_size, size_t value_size, uint32_t max_entries, struct map_dump *ret);
void map_dump_done(struct map_dump *d);

/* Where map_dump_chunks() reads to. A caller that reads a map often (every snapshot tick) keeps
 * it between reads: once grown it is reused, not allocated and faulted in again each time. */
struct map_dump_buffer {
        void *keys;
        void *values;
        size_t keys_bytes;
        size_t values_bytes;
};
void map_dump_buffer_done(struct map_dump_buffer *b);

/* Called with each chunk read: n > 0 entries, keys and values packed; a negative errno stops the
 * read and is returned. */
typedef int (*map_dump_chunk_fn)(const void *keys, const void *values, size_t n, void *userdata);

/* Read up to max_entries entries of the hash map fd chunk by chunk (a few thousand entries, more
 * when one hash bucket holds more) into buf, calling chunk() on each: the memory is that of a
 * chunk, not of max_entries. Same view as map_dump_hash(). Returns 0 or -errno. */
int map_dump_chunks(int fd, size_t key_size, size_t value_size, uint32_t max_entries,
                    struct map_dump_buffer *buf, map_dump_chunk_fn chunk, void *userdata);

/* Delete every entry of a hash map for which match() says so (the map read whole first, as
 * map_dump_hash()). Returns how many went, or -errno. */
int map_dump_purge(int fd, size_t key_size, size_t value_size, uint32_t max_entries,
                   bool (*match)(const void *key, const void *value, void *userdata), void *userdata);
