/* SPDX-License-Identifier: GPL-2.0-only */
/* A set of strings, each kept once: names that must outlive the data they were read from. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "string-set.h"
#include "util.h"

static uint64_t hash_string(const char *s, size_t len)
{
        return fnv1a64(FNV1A64_INIT, s, len);
}

const char *string_set_intern_take(struct string_set *set, char *s)
{
        size_t len;
        uint64_t h;
        char *kept, **n;

        assert(set);
        if (!s)
                return NULL;
        len = strlen(s);
        h = hash_string(s, len);
        kept = pair_table_get(&set->by_hash, h, len);
        if (kept && strcmp(kept, s) == 0) {
                free(s);
                return kept;
        }
        if (!kept) {
                if (pair_table_put(&set->by_hash, h, len, s) < 0) {
                        free(s);
                        return NULL;
                }
        } else {
                /* Another string has this hash and length: keep s apart, unshared. */
                n = realloc(set->extra, (set->n_extra + 1) * sizeof(*n));
                if (!n) {
                        free(s);
                        return NULL;
                }
                set->extra = n;
                set->extra[set->n_extra++] = s;
        }
        set->bytes += len + 1 + 2 * sizeof(void *);
        return s;
}

const char *string_set_intern(struct string_set *set, const char *s)
{
        assert(set);
        return s ? string_set_intern_take(set, strdup(s)) : NULL;
}

void string_set_done(struct string_set *set)
{
        assert(set);
        pair_table_done(&set->by_hash, free);
        for (size_t i = 0; i < set->n_extra; i++)
                free(set->extra[i]);
        free(set->extra);
        *set = (struct string_set) {};
}
