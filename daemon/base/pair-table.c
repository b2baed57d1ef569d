/* SPDX-License-Identifier: GPL-2.0-only */
/* A hash table from a pair of u64 to a non-NULL pointer (open addressing, linear probing). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "pair-table.h"

struct pair_table_slot {
        uint64_t a, b;
        void *value;                    /* NULL: empty slot */
};

static uint64_t hash_pair(uint64_t a, uint64_t b)
{
        /* splitmix64's finalizer: file offsets and inode numbers are far from random. */
        uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);

        h ^= h >> 30;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 27;
        h *= 0x94d049bb133111ebULL;
        h ^= h >> 31;
        return h;
}

/* The slot holding the key, or the empty slot ending its probe run. */
static size_t slot_of(const struct pair_table *t, uint64_t a, uint64_t b)
{
        size_t mask = t->n_slots - 1;
        size_t i = hash_pair(a, b) & mask;

        while (t->slots[i].value && !(t->slots[i].a == a && t->slots[i].b == b))
                i = (i + 1) & mask;
        return i;
}

void *pair_table_get(const struct pair_table *t, uint64_t a, uint64_t b)
{
        assert(t);
        if (t->n_slots == 0)
                return NULL;
        return t->slots[slot_of(t, a, b)].value;
}

static void slots_place(struct pair_table_slot *slots, size_t n_slots, uint64_t a, uint64_t b, void *value)
{
        size_t mask = n_slots - 1;
        size_t i = hash_pair(a, b) & mask;

        while (slots[i].value)
                i = (i + 1) & mask;
        slots[i] = (struct pair_table_slot) { .a = a, .b = b, .value = value };
}

int pair_table_put(struct pair_table *t, uint64_t a, uint64_t b, void *value)
{
        assert(t);
        assert(value);
        /* Keep the load at most one half so probe runs stay short. */
        if ((t->n_used + 1) * 2 > t->n_slots) {
                size_t n = t->n_slots > 0 ? t->n_slots * 2 : 16;
                struct pair_table_slot *slots = calloc(n, sizeof(*slots));

                if (!slots)
                        return -ENOMEM;
                for (size_t i = 0; i < t->n_slots; i++)
                        if (t->slots[i].value)
                                slots_place(slots, n, t->slots[i].a, t->slots[i].b, t->slots[i].value);
                free(t->slots);
                t->slots = slots;
                t->n_slots = n;
        }
        slots_place(t->slots, t->n_slots, a, b, value);
        t->n_used++;
        return 0;
}

void *pair_table_remove(struct pair_table *t, uint64_t a, uint64_t b)
{
        size_t mask, hole, i;
        void *value;

        assert(t);
        if (t->n_slots == 0)
                return NULL;
        mask = t->n_slots - 1;
        hole = slot_of(t, a, b);
        value = t->slots[hole].value;
        if (!value)
                return NULL;
        /* Backward-shift deletion: move up every later entry of the run whose home is at or
         * before the hole, so no lookup stops early at it. */
        for (i = (hole + 1) & mask; t->slots[i].value; i = (i + 1) & mask) {
                size_t home = hash_pair(t->slots[i].a, t->slots[i].b) & mask;

                if (((i - home) & mask) >= ((i - hole) & mask)) {
                        t->slots[hole] = t->slots[i];
                        hole = i;
                }
        }
        t->slots[hole] = (struct pair_table_slot) {};
        t->n_used--;
        return value;
}

int pair_table_merge(struct pair_table *to, const struct pair_table *from)
{
        assert(to);
        assert(from);
        for (size_t i = 0; i < from->n_slots; i++) {
                const struct pair_table_slot *slot = &from->slots[i];
                int r;

                if (!slot->value || pair_table_get(to, slot->a, slot->b))
                        continue;
                r = pair_table_put(to, slot->a, slot->b, slot->value);
                if (r < 0)
                        return r;
        }
        return 0;
}

void pair_table_foreach(const struct pair_table *t, void (*fn)(void *value, void *userdata), void *userdata)
{
        assert(t);
        assert(fn);
        for (size_t i = 0; i < t->n_slots; i++)
                if (t->slots[i].value)
                        fn(t->slots[i].value, userdata);
}

void pair_table_done(struct pair_table *t, void (*free_value)(void *value))
{
        assert(t);
        for (size_t i = 0; free_value && i < t->n_slots; i++)
                if (t->slots[i].value)
                        free_value(t->slots[i].value);
        free(t->slots);
        *t = (struct pair_table) {};
}
