/* SPDX-License-Identifier: MIT */
/* Byte strings to the ids handed out for them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "id-table.h"
#include "util.h"

struct id_entry {
        uint64_t hash;
        const char *key;        /* NULL: free */
        size_t len;
        size_t value;
};

/* Twice as many slots: the entries moved over. */
static int id_table_grow(struct id_table *t)
{
        size_t cap = t->cap ? t->cap * 2 : 1024, i;
        struct id_entry *e;

        if (cap < t->cap)
                return -ENOMEM;
        e = calloc(cap, sizeof(*e));
        if (!e)
                return -ENOMEM;
        for (size_t j = 0; j < t->cap; j++) {
                if (!t->entries[j].key)
                        continue;
                for (i = t->entries[j].hash & (cap - 1); e[i].key; i = (i + 1) & (cap - 1))
                        ;
                e[i] = t->entries[j];
        }
        free(t->entries);
        t->entries = e;
        t->cap = cap;
        return 0;
}

int id_table_get_or_add(struct id_table *t, struct arena *a, const void *key, size_t len, size_t value,
                        size_t *ret, const char **ret_key)
{
        uint64_t h = fnv1a64(FNV1A64_INIT, key, len);
        size_t i;
        int r;

        if ((t->n + 1) * 2 > t->cap) {
                r = id_table_grow(t);
                if (r < 0)
                        return r;
        }
        for (i = h & (t->cap - 1); t->entries[i].key; i = (i + 1) & (t->cap - 1))
                if (t->entries[i].hash == h && t->entries[i].len == len && memcmp(t->entries[i].key, key, len) == 0) {
                        *ret = t->entries[i].value;
                        if (ret_key)
                                *ret_key = t->entries[i].key;
                        return 1;
                }
        t->entries[i].key = arena_strndup(a, key, len);
        if (!t->entries[i].key)
                return -ENOMEM;
        t->entries[i].hash = h;
        t->entries[i].len = len;
        t->entries[i].value = value;
        t->n++;
        *ret = value;
        if (ret_key)
                *ret_key = t->entries[i].key;
        return 0;
}

size_t *id_table_find(const struct id_table *t, const void *key, size_t len)
{
        uint64_t h = fnv1a64(FNV1A64_INIT, key, len);

        if (t->cap == 0)
                return NULL;
        for (size_t i = h & (t->cap - 1); t->entries[i].key; i = (i + 1) & (t->cap - 1))
                if (t->entries[i].hash == h && t->entries[i].len == len && memcmp(t->entries[i].key, key, len) == 0)
                        return &t->entries[i].value;
        return NULL;
}

void id_table_free(struct id_table *t)
{
        free(t->entries);
        *t = (struct id_table) {};
}
