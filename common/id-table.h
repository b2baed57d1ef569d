/* SPDX-License-Identifier: MIT */
/* Byte strings to the ids handed out for them, so that each distinct thing gets one id: a pprof
 * profile's strings, functions, locations and mappings; a report's locations. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "arena.h"

struct id_entry;

struct id_table {
        struct id_entry *entries;
        size_t n, cap;          /* cap a power of two, at most half full */
};

/* 1 with *ret the id key has; 0 with key (copied into a) added with the id value; *ret_key (if
 * not NULL) the table's NUL-terminated copy of key. -ENOMEM. */
int id_table_get_or_add(struct id_table *t, struct arena *a, const void *key, size_t len, size_t value,
                        size_t *ret, const char **ret_key);

/* The id key has (changeable in place), NULL when it has none. */
size_t *id_table_find(const struct id_table *t, const void *key, size_t len);

/* The table's own memory (its keys are the arena's). */
void id_table_free(struct id_table *t);
