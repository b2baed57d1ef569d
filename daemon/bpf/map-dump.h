/* SPDX-License-Identifier: GPL-2.0-only */
/* Read a whole BPF hash map (batch lookups, falling back to key iteration), and purge from it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct map_dump {
        void *keys;
        void *values;
        size_t n;
};

/* Called with n > 0 entries read: their keys, then their values, each packed; a negative errno
 * stops the read and is returned. */
typedef int (*map_dump_batch_fn)(const void *keys, const void *values, size_t n, void *userdata);

/* Read the hash map fd whole, a batch at a time (batch look-ups; one look-up an entry where the
 * kernel has none), calling each() on every batch. Returns 0 or -errno. */
int map_dump_hash_each(int fd, size_t key_size, size_t value_size, map_dump_batch_fn each, void *userdata);

/* Dump up to max_entries entries of the hash map fd. The copy is a consistent-enough view:
 * entries may change while it is read, as they do in the kernel all the time. */
int map_dump_hash(int fd, size_t key_size, size_t value_size, uint32_t max_entries, struct map_dump *ret);
void map_dump_done(struct map_dump *d);

/* Delete every entry of a hash map for which match() says so (the map read whole first, as
 * map_dump_hash()). Returns how many went, or -errno. */
int map_dump_purge(int fd, size_t key_size, size_t value_size, uint32_t max_entries,
                   bool (*match)(const void *key, const void *value, void *userdata), void *userdata);
