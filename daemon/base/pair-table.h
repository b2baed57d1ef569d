/* SPDX-License-Identifier: GPL-2.0-only */
/* A hash table from a pair of u64 to a non-NULL pointer (open addressing, linear probing). */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct pair_table {
        struct pair_table_slot *slots;
        size_t n_slots;                 /* 0 or a power of two */
        size_t n_used;
};

void *pair_table_get(const struct pair_table *t, uint64_t a, uint64_t b);
/* The key must not be present yet. -ENOMEM. */
int pair_table_put(struct pair_table *t, uint64_t a, uint64_t b, void *value);
/* Remove the key; returns its value, NULL when absent. */
void *pair_table_remove(struct pair_table *t, uint64_t a, uint64_t b);
/* Put every key of from that to lacks into to, with from's value; -ENOMEM. */
int pair_table_merge(struct pair_table *to, const struct pair_table *from);
/* Call fn on every value (the table must not change meanwhile). */
void pair_table_foreach(const struct pair_table *t, void (*fn)(void *value, void *userdata), void *userdata);
/* Free the table and, with free_value, every value in it. */
void pair_table_done(struct pair_table *t, void (*free_value)(void *value));
