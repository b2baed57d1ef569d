/* SPDX-License-Identifier: MIT */
/* Unit tests for slot-set.c: the numbered slots targets and unwind tables occupy in BPF arrays. */
#include <errno.h>
#include "macro.h"
#include "slot-set.h"
#include "test-util.h"

static void slots_are_taken_lowest_first_and_run_out(void)
{
        struct slot_set s = {};
        uint32_t slot = 99;

        ASSERT_EQ(slot_set_init(&s, 3), 0);
        for (uint32_t i = 0; i < 3; i++) {
                ASSERT_EQ(slot_set_take(&s, &slot), 0);
                ASSERT_EQ(slot, i);
                ASSERT_TRUE(slot_set_is_taken(&s, i));
        }
        slot = 99;
        ASSERT_EQ(slot_set_take(&s, &slot), -ENOSPC);
        ASSERT_EQ(slot, 99);                    /* untouched on failure */
        slot_set_done(&s);
}

static void a_slot_given_back_is_the_next_taken(void)
{
        struct slot_set s = {};
        uint32_t slot;

        ASSERT_EQ(slot_set_init(&s, 4), 0);
        for (int i = 0; i < 4; i++)
                ASSERT_EQ(slot_set_take(&s, &slot), 0);
        slot_set_give_back(&s, 2);
        ASSERT_TRUE(!slot_set_is_taken(&s, 2));
        ASSERT_TRUE(slot_set_is_taken(&s, 1) && slot_set_is_taken(&s, 3));
        ASSERT_EQ(slot_set_take(&s, &slot), 0);
        ASSERT_EQ(slot, 2);
        /* out of range, or free already: nothing changes */
        slot_set_give_back(&s, 4);
        slot_set_give_back(&s, UINT32_MAX);
        ASSERT_TRUE(!slot_set_is_taken(&s, 4));
        ASSERT_EQ(slot_set_take(&s, &slot), -ENOSPC);
        slot_set_give_back(&s, 0);
        slot_set_give_back(&s, 0);
        ASSERT_EQ(slot_set_take(&s, &slot), 0);
        ASSERT_EQ(slot, 0);
        ASSERT_EQ(slot_set_take(&s, &slot), -ENOSPC);
        slot_set_done(&s);
        ASSERT_TRUE(s.taken == NULL && s.n == 0);
}

static void an_empty_set_has_no_slot(void)
{
        struct slot_set s = {};
        uint32_t slot;

        ASSERT_EQ(slot_set_init(&s, 0), 0);
        ASSERT_EQ(slot_set_take(&s, &slot), -ENOSPC);
        ASSERT_TRUE(!slot_set_is_taken(&s, 0));
        slot_set_done(&s);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(slots_are_taken_lowest_first_and_run_out),
                TEST(a_slot_given_back_is_the_next_taken),
                TEST(an_empty_set_has_no_slot),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
