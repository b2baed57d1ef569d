/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/reach/tracee-family.c: memleakctl run's tracer sorting out the children
 * the program forks (held at birth, followed or let go) and their threads. */
#include <stdbool.h>

#include "macro.h"
#include "test-util.h"
#include "tracee-family.h"

static enum tracee_family_verdict decide(struct tracee_family *f, pid_t pid, uint64_t now)
{
        enum tracee_family_verdict v;

        for (size_t i = 0; i < f->n_held; i++)
                if (f->held[i].pid == pid) {
                        ASSERT_EQ(tracee_family_decide(f, i, now, &v), 0);
                        if (v != TRACEE_FAMILY_WAIT)
                                tracee_family_unhold(f, i);
                        return v;
                }
        ASSERT_TRUE(!"not held");
        return TRACEE_FAMILY_WAIT;
}

static void a_child_waits_for_its_answer_and_a_followed_one_becomes_a_member(void)
{
        struct tracee_family f = {};

        ASSERT_EQ(tracee_family_hold(&f, 100, 1000), 0);
        ASSERT_TRUE(tracee_family_is_held(&f, 100));
        ASSERT_TRUE(!tracee_family_is_member(&f, 100));
        ASSERT_EQ(decide(&f, 100, 2000), TRACEE_FAMILY_WAIT);
        /* another child's answer is not this one's */
        ASSERT_EQ(tracee_family_answer(&f, 200, true), 0);
        ASSERT_EQ(decide(&f, 100, 3000), TRACEE_FAMILY_WAIT);
        ASSERT_EQ(tracee_family_answer(&f, 100, true), 0);
        ASSERT_EQ(decide(&f, 100, 4000), TRACEE_FAMILY_MEMBER);
        ASSERT_TRUE(!tracee_family_is_held(&f, 100));
        ASSERT_TRUE(tracee_family_is_member(&f, 100));
        ASSERT_EQ(f.n_answers, 1);
        /* its thread joins it; a thread twice is one member */
        ASSERT_EQ(tracee_family_add_member(&f, 101), 0);
        ASSERT_EQ(tracee_family_add_member(&f, 101), 0);
        ASSERT_EQ(f.n_members, 2);
        tracee_family_forget(&f, 101);
        ASSERT_TRUE(!tracee_family_is_member(&f, 101));
        ASSERT_TRUE(tracee_family_is_member(&f, 100));
        tracee_family_done(&f);
}

static void an_answer_may_come_before_the_first_stop(void)
{
        struct tracee_family f = {};

        ASSERT_EQ(tracee_family_answer(&f, 300, false), 0);
        ASSERT_EQ(tracee_family_answer(&f, 301, true), 0);
        ASSERT_EQ(tracee_family_hold(&f, 300, 10), 0);
        ASSERT_EQ(tracee_family_hold(&f, 301, 10), 0);
        ASSERT_EQ(decide(&f, 300, 20), TRACEE_FAMILY_LET_GO);
        ASSERT_TRUE(!tracee_family_is_member(&f, 300));
        ASSERT_EQ(decide(&f, 301, 20), TRACEE_FAMILY_MEMBER);
        ASSERT_EQ(f.n_answers, 0);
        ASSERT_EQ(f.n_held, 0);
        tracee_family_done(&f);
}

static void a_child_nobody_answers_for_goes_after_the_longest_hold(void)
{
        struct tracee_family f = {};

        ASSERT_EQ(tracee_family_hold(&f, 400, 5), 0);
        ASSERT_EQ(decide(&f, 400, 5 + TRACEE_FAMILY_HOLD_MAX_USEC), TRACEE_FAMILY_WAIT);
        ASSERT_EQ(decide(&f, 400, 6 + TRACEE_FAMILY_HOLD_MAX_USEC), TRACEE_FAMILY_LET_GO);
        ASSERT_EQ(f.n_held, 0);
        tracee_family_done(&f);
}

static void a_child_that_dies_is_forgotten_with_its_answer(void)
{
        struct tracee_family f = {};

        ASSERT_EQ(tracee_family_hold(&f, 500, 0), 0);
        ASSERT_EQ(tracee_family_hold(&f, 501, 0), 0);
        ASSERT_EQ(tracee_family_answer(&f, 502, true), 0);
        tracee_family_forget(&f, 500);
        tracee_family_forget(&f, 502);          /* gone before its first stop */
        ASSERT_TRUE(!tracee_family_is_held(&f, 500));
        ASSERT_TRUE(tracee_family_is_held(&f, 501));
        ASSERT_EQ(f.n_answers, 0);
        tracee_family_forget(&f, 999);          /* nobody's */
        ASSERT_EQ(f.n_held, 1);
        tracee_family_done(&f);
        ASSERT_EQ(f.n_held, 0);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(a_child_waits_for_its_answer_and_a_followed_one_becomes_a_member),
                TEST(an_answer_may_come_before_the_first_stop),
                TEST(a_child_nobody_answers_for_goes_after_the_longest_hold),
                TEST(a_child_that_dies_is_forgotten_with_its_answer),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
