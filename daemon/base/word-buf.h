/* SPDX-License-Identifier: GPL-2.0-only */
/* Records made of 64-bit words (host order) and length-prefixed byte strings: a growing buffer to
 * write one, a reader that never reads past the bytes it was given. What the state directory's
 * binary files are made of (targets/exited-file, reach/reach-file). Pure: no I/O. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing buffer; ok false once out of memory (every later put is dropped). Start it as
 * { .ok = true }; p is malloc'd (the caller's once it is done). */
struct word_buf_writer {
        unsigned char *p;
        size_t n, room;
        bool ok;
};

void word_buf_put_bytes(struct word_buf_writer *w, const void *data, size_t n);
void word_buf_put(struct word_buf_writer *w, uint64_t v);
/* Its length, then its bytes: NULL is written as the empty string (and read back as NULL). */
void word_buf_put_string(struct word_buf_writer *w, const char *s);

/* Reads past the end fail (ok false), and every read after them; enomem: an allocation failed
 * (ok false too). Start it as { .p, .n, .ok = true }. */
struct word_buf_reader {
        const unsigned char *p;
        size_t n, at;
        bool ok;
        bool enomem;
};

uint64_t word_buf_get(struct word_buf_reader *rd);
/* v, if it is at most max; else a failed read (0). */
uint64_t word_buf_get_max(struct word_buf_reader *rd, uint64_t max);
bool word_buf_get_bool(struct word_buf_reader *rd);
/* A count of elements of at least unit bytes each, which the bytes left must hold. */
size_t word_buf_get_count(struct word_buf_reader *rd, size_t unit);
/* n bytes into buf: false (a failed read) when fewer are left. */
bool word_buf_get_bytes(struct word_buf_reader *rd, void *buf, size_t n);
/* A string of at most max bytes into *ret (malloc'd; NULL for the empty one): false when cut, too
 * long, holding a NUL, or without memory (enomem). */
bool word_buf_get_string(struct word_buf_reader *rd, size_t max, char **ret);
/* A count (as word_buf_get_count(rd, unit)), then an array of that many zeroed elements of size
 * bytes (at least one, so that an empty array is not NULL) into *ret: its count, or 0 with *ret
 * NULL when the read or the allocation (enomem) failed. */
size_t word_buf_get_array(struct word_buf_reader *rd, size_t unit, size_t size, void **ret);
