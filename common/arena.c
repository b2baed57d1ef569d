/* SPDX-License-Identifier: MIT */
/* Memory handed out in pieces and given back all at once. */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "arena.h"
#include "macro.h"

struct arena_block {
        struct arena_block *next;
        size_t used, size;
        max_align_t data[];
};

#define ARENA_BLOCK_BYTES (256u << 10)

void *arena_alloc(struct arena *a, size_t size)
{
        struct arena_block *b = a->head;
        size_t aligned;
        void *p;

        if (size > SIZE_MAX - alignof(max_align_t))
                return NULL;
        aligned = (size + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
        if (!b || b->size - b->used < aligned) {
                size_t want = MAX(aligned, (size_t)ARENA_BLOCK_BYTES);

                if (want > SIZE_MAX - sizeof(*b))
                        return NULL;
                b = malloc(sizeof(*b) + want);
                if (!b)
                        return NULL;
                b->next = a->head;
                b->used = 0;
                b->size = want;
                a->head = b;
        }
        p = (char *)b->data + b->used;
        b->used += aligned;
        return memset(p, 0, aligned);
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
        char *p = n < SIZE_MAX ? arena_alloc(a, n + 1) : NULL;

        if (p)
                memcpy(p, s, n);
        return p;
}

void arena_free(struct arena *a)
{
        while (a->head) {
                struct arena_block *next = a->head->next;

                free(a->head);
                a->head = next;
        }
}
