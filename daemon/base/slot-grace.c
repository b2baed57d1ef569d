/* SPDX-License-Identifier: GPL-2.0-only */
/* Numbered slots released a batch at a time (see slot-grace.h). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "slot-grace.h"

int slot_grace_init(struct slot_grace *g, uint32_t n)
{
        assert(g);
        *g = (struct slot_grace) {};
        return slot_set_init(&g->slots, n);
}

void slot_grace_done(struct slot_grace *g)
{
        assert(g);
        slot_set_done(&g->slots);
        free(g->released);
        *g = (struct slot_grace) {};
}

int slot_grace_take(struct slot_grace *g, uint32_t *ret)
{
        assert(g);
        return slot_set_take(&g->slots, ret);
}

void slot_grace_give_back(struct slot_grace *g, uint32_t slot)
{
        assert(g);
        slot_set_give_back(&g->slots, slot);
}

int slot_grace_release(struct slot_grace *g, uint32_t slot)
{
        assert(g);
        if (!slot_set_is_taken(&g->slots, slot))
                return 0;       /* out of range, or not held: nothing to empty */
        for (size_t i = 0; i < g->n_released; i++)
                if (g->released[i] == slot)
                        return 0;       /* queued already: given back once */
        if (g->n_released == g->n_allocated) {
                size_t want = g->n_allocated ? 2 * g->n_allocated : 64;
                uint32_t *n = realloc(g->released, want * sizeof(*n));

                if (!n)
                        return -ENOMEM;
                g->released = n;
                g->n_allocated = want;
        }
        g->released[g->n_released++] = slot;
        return 0;
}

const uint32_t *slot_grace_released(const struct slot_grace *g, size_t *ret_n)
{
        assert(g);
        assert(ret_n);
        *ret_n = g->n_released;
        return g->released;
}

void slot_grace_emptied(struct slot_grace *g, size_t n)
{
        assert(g);
        if (n > g->n_released)
                n = g->n_released;
        if (n == 0)
                return;
        for (size_t i = 0; i < n; i++)
                slot_set_give_back(&g->slots, g->released[i]);
        memmove(g->released, g->released + n, (g->n_released - n) * sizeof(*g->released));
        g->n_released -= n;
}
