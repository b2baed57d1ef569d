/* SPDX-License-Identifier: MIT */
/* Small helpers both programs use: error messages for the caller, clocks, strings. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* Set *error to a malloc'd message (NULL if even that fails) and return r, the -errno; %m in
 * fmt names -r. */
int error_set(char **error, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

uint64_t now_realtime_usec(void);
uint64_t now_monotonic_usec(void);
uint64_t now_monotonic_nsec(void);

/* Free an array of n malloc'd strings and the array. */
void strv_free_n(char **v, size_t n);
/* Append s (taken: freed on failure) to the n strings of *v. -ENOMEM, also when s is NULL (so a
 * failed strdup() can be passed straight in). */
int strv_push_n(char ***v, size_t *n, char *s);

/* FNV-1a, 64 bits, over n bytes of data, from h (FNV1A64_INIT to begin; a previous result to go
 * on): a fast hash and checksum, not a defence against anyone who chooses the bytes. */
#define FNV1A64_INIT UINT64_C(0xcbf29ce484222325)
uint64_t fnv1a64(uint64_t h, const void *data, size_t n);

/* The part of path after its last '/' ("libc.so.6" of "/usr/lib/libc.so.6"); path itself when it
 * has none or ends with one. */
const char *path_base_name(const char *path);
