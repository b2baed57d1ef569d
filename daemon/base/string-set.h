/* SPDX-License-Identifier: GPL-2.0-only */
/* A set of strings, each kept once: names that must outlive the data they were read from. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "pair-table.h"

struct string_set {
        struct pair_table by_hash;      /* (hash, length) → the kept string */
        char **extra;                   /* strings whose (hash, length) another one took */
        size_t n_extra;
        uint64_t bytes;                 /* held, roughly */
};

/* The kept copy of s (added now if new), or NULL when out of memory. */
const char *string_set_intern(struct string_set *set, const char *s);
/* Like string_set_intern, taking ownership of s (freed when a copy is kept already). */
const char *string_set_intern_take(struct string_set *set, char *s);
void string_set_done(struct string_set *set);
