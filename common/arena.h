/* SPDX-License-Identifier: MIT */
/* Memory handed out in pieces and given back all at once: for a structure of many small parts
 * that lives and dies as one (a pprof profile being built). */
#pragma once

#include <stddef.h>

struct arena_block;

struct arena {
        struct arena_block *head;
};

/* size bytes, zeroed, aligned for any type; NULL when out of memory. */
void *arena_alloc(struct arena *a, size_t size);
/* n bytes of s and a NUL; NULL when out of memory. */
char *arena_strndup(struct arena *a, const char *s, size_t n);
/* Everything a handed out; a is empty (and usable) again. */
void arena_free(struct arena *a);
