/* SPDX-License-Identifier: MIT */
/* Unit tests for slot-grace.c: a slot of unwind_tables released is handed out again only after the
 * batch that empties it (and waits for the programs that could read its old table) is done. */
#include <errno.h>
#include "macro.h"
#include "slot-grace.h"
#include "test-util.h"

static void take_all(struct slot_grace *g, uint32_t n)
{
        uint32_t slot;

        for (uint32_t i = 0; i < n; i++) {
                ASSERT_EQ(slot_grace_take(g, &slot), 0);
                ASSERT_EQ(slot, i);
        }
        ASSERT_EQ(slot_grace_take(g, &slot), -ENOSPC);
}

static void a_released_slot_is_not_handed_out_before_its_batch_is_emptied(void)
{
        struct slot_grace g = {};
        const uint32_t *released;
        uint32_t slot = 99;
        size_t n;

        ASSERT_EQ(slot_grace_init(&g, 4), 0);
        take_all(&g, 4);
        ASSERT_EQ(slot_grace_release(&g, 2), 0);
        ASSERT_EQ(slot_grace_release(&g, 0), 0);
        /* released, not emptied: neither free nor handed out */
        ASSERT_EQ(slot_grace_take(&g, &slot), -ENOSPC);
        ASSERT_EQ(slot, 99);
        released = slot_grace_released(&g, &n);
        ASSERT_EQ(n, 2);
        ASSERT_EQ(released[0], 2);
        ASSERT_EQ(released[1], 0);
        /* a batch that emptied none (it failed): still not free, still queued */
        slot_grace_emptied(&g, 0);
        ASSERT_EQ(slot_grace_take(&g, &slot), -ENOSPC);
        (void)slot_grace_released(&g, &n);
        ASSERT_EQ(n, 2);
        /* the first emptied: that one is free, the other waits for the next batch */
        slot_grace_emptied(&g, 1);
        ASSERT_EQ(slot_grace_take(&g, &slot), 0);
        ASSERT_EQ(slot, 2);
        ASSERT_EQ(slot_grace_take(&g, &slot), -ENOSPC);
        released = slot_grace_released(&g, &n);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(released[0], 0);
        slot_grace_emptied(&g, 1);
        ASSERT_EQ(slot_grace_take(&g, &slot), 0);
        ASSERT_EQ(slot, 0);
        (void)slot_grace_released(&g, &n);
        ASSERT_EQ(n, 0);
        slot_grace_done(&g);
}

static void a_slot_is_queued_once_and_given_back_once(void)
{
        struct slot_grace g = {};
        uint32_t slot;
        size_t n;

        ASSERT_EQ(slot_grace_init(&g, 3), 0);
        take_all(&g, 3);
        ASSERT_EQ(slot_grace_release(&g, 1), 0);
        ASSERT_EQ(slot_grace_release(&g, 1), 0);        /* twice: queued once */
        (void)slot_grace_released(&g, &n);
        ASSERT_EQ(n, 1);
        slot_grace_emptied(&g, 5);                      /* more than queued: those queued */
        ASSERT_EQ(slot_grace_take(&g, &slot), 0);
        ASSERT_EQ(slot, 1);
        /* held by its new table now: a late second release of the old one is not replayed on it */
        slot_grace_emptied(&g, 1);
        ASSERT_EQ(slot_grace_take(&g, &slot), -ENOSPC);
        /* free or out of range: nothing to empty */
        slot_grace_give_back(&g, 2);
        ASSERT_EQ(slot_grace_release(&g, 2), 0);
        ASSERT_EQ(slot_grace_release(&g, 7), 0);
        (void)slot_grace_released(&g, &n);
        ASSERT_EQ(n, 0);
        slot_grace_done(&g);
}

static void a_slot_taken_and_never_filled_is_free_at_once(void)
{
        struct slot_grace g = {};
        uint32_t slot;

        ASSERT_EQ(slot_grace_init(&g, 2), 0);
        take_all(&g, 2);
        slot_grace_give_back(&g, 0);
        ASSERT_EQ(slot_grace_take(&g, &slot), 0);
        ASSERT_EQ(slot, 0);
        slot_grace_done(&g);
}

int main(void)
{
        a_released_slot_is_not_handed_out_before_its_batch_is_emptied();
        a_slot_is_queued_once_and_given_back_once();
        a_slot_taken_and_never_filled_is_free_at_once();
        return 0;
}
