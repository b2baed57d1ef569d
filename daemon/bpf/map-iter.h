/* SPDX-License-Identifier: GPL-2.0-only */
/* Read a BPF iterator's records through a buffer the caller keeps between reads. */
#pragma once

#include <stddef.h>

struct map_iter_buffer {
        void *data;
        size_t size;
};
void map_iter_buffer_done(struct map_iter_buffer *b);

/* Called with the len bytes read and not consumed yet: returns how many it consumed (its whole
 * records among them; the rest comes again with the next read's bytes after it), or -errno,
 * which stops the read and is returned. */
typedef long (*map_iter_consume_fn)(const void *data, size_t len, void *userdata);

/* Create an iterator from the iterator link link_fd and read it to its end, calling consume()
 * after each read. Returns 0, or -errno (-EBADMSG when the output ends inside a record). */
int map_iter_read_stream(int link_fd, struct map_iter_buffer *buf, map_iter_consume_fn consume, void *userdata);

/* Called with n > 0 whole records; a negative errno stops the read and is returned. */
typedef int (*map_iter_records_fn)(const void *records, size_t n, void *userdata);

/* Create an iterator from the iterator link link_fd and read it to its end, record_size bytes a
 * record, calling records() on each batch read. Returns 0, or -errno (-EBADMSG when the
 * iterator's output ends inside a record). */
int map_iter_read(int link_fd, size_t record_size, struct map_iter_buffer *buf, map_iter_records_fn records,
                  void *userdata);

/* Whether this kernel loads a map-element iterator program for us: 0, or the -errno it answered
 * (some kernels refuse them with EPERM where they load other tracing programs).
 * MEMLEAKD_MAP_ITER=0 in the environment says no, to exercise reading maps by look-ups on any
 * kernel. */
int map_iter_probe(void);
