/* SPDX-License-Identifier: GPL-2.0-only */
/* A file's whole text read from its descriptor, bounded: /proc and cgroup files, whose size
 * stat() does not tell; and a buffer written whole to one. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Read fd to its end or to max bytes (then *ret_cut, when not NULL, is set: the text stops
 * there): 0 and *ret (malloc'd, NUL-terminated; "" for an empty file) and *ret_len (may be NULL);
 * -ENOMEM, or the read's -errno (EINTR retried). */
int fd_text_read(int fd, size_t max, char **ret, size_t *ret_len, bool *ret_cut);

/* Write n bytes of data to fd whole (EINTR retried): 0, the write's -errno, or -EIO when it wrote
 * nothing. */
int fd_text_write(int fd, const void *data, size_t n);
