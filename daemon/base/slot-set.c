/* SPDX-License-Identifier: GPL-2.0-only */
/* Numbered slots, free or taken. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "slot-set.h"

int slot_set_init(struct slot_set *s, uint32_t n)
{
        assert(s);
        s->taken = calloc(n ? n : 1, 1);
        if (!s->taken)
                return -ENOMEM;
        s->n = n;
        return 0;
}

int slot_set_take(struct slot_set *s, uint32_t *ret)
{
        assert(s);
        assert(ret);
        for (uint32_t i = 0; i < s->n; i++)
                if (!s->taken[i]) {
                        s->taken[i] = 1;
                        *ret = i;
                        return 0;
                }
        return -ENOSPC;
}

int slot_set_take_at(struct slot_set *s, uint32_t slot)
{
        assert(s);
        if (slot >= s->n)
                return -ERANGE;
        if (s->taken[slot])
                return -EBUSY;
        s->taken[slot] = 1;
        return 0;
}

void slot_set_give_back(struct slot_set *s, uint32_t slot)
{
        assert(s);
        if (slot < s->n)
                s->taken[slot] = 0;
}

bool slot_set_is_taken(const struct slot_set *s, uint32_t slot)
{
        assert(s);
        return slot < s->n && s->taken[slot];
}

void slot_set_done(struct slot_set *s)
{
        assert(s);
        free(s->taken);
        *s = (struct slot_set) {};
}
