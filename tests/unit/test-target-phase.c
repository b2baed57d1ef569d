/* SPDX-License-Identifier: MIT */
/* Unit tests for target-phase.c: a target's phases and the only changes allowed between them. */
#include <errno.h>
#include "macro.h"
#include "target-phase.h"
#include "test-util.h"

#define P(x) TARGET_PHASE_##x

/* Every change the machine allows, written out once more: any other is refused. */
static const struct {
        enum target_phase from, to;
} expected[] = {
        { P(PROBING), P(AWAITING_TABLES) },     /* probed, its tables building */
        { P(PROBING), P(RECORDING) },           /* registered at once (run, kernel, tables in) */
        { P(PROBING), P(DROPPED) },
        { P(AWAITING_TABLES), P(RECORDING) },   /* its tables are in */
        { P(AWAITING_TABLES), P(FAILED) },      /* its registration failed */
        { P(AWAITING_TABLES), P(EXITING) },     /* it went before its tables were in */
        { P(AWAITING_TABLES), P(DROPPED) },     /* detached meanwhile */
        { P(RECORDING), P(EXITING) },
        { P(RECORDING), P(DROPPED) },           /* detached */
        { P(FAILED), P(DROPPED) },              /* answered with why, then forgotten */
        { P(EXITING), P(EXITED) },
        { P(EXITED), P(DROPPED) },              /* detached, or pruned past exited_max_mb */
};

static bool is_expected(enum target_phase from, enum target_phase to)
{
        for (size_t i = 0; i < ELEMENTSOF(expected); i++)
                if (expected[i].from == from && expected[i].to == to)
                        return true;
        return false;
}

static void the_table_allows_exactly_the_lifecycle_changes(void)
{
        size_t allowed = 0;

        for (int from = 0; from < _TARGET_PHASE_MAX; from++)
                for (int to = 0; to < _TARGET_PHASE_MAX; to++) {
                        bool ok = target_phase_allowed(from, to);

                        if (ok != is_expected(from, to))
                                fprintf(stderr, "%s -> %s: %s\n", target_phase_to_string(from),
                                        target_phase_to_string(to), ok ? "allowed" : "refused");
                        ASSERT_EQ(ok, is_expected(from, to));
                        allowed += ok;
                }
        ASSERT_EQ(allowed, ELEMENTSOF(expected));
}

static void a_refused_change_leaves_the_phase(void)
{
        enum target_phase p = P(EXITED);

        ASSERT_EQ(target_phase_change(&p, P(RECORDING)), -EINVAL);     /* no coming back */
        ASSERT_EQ(p, P(EXITED));
        ASSERT_EQ(target_phase_change(&p, P(EXITED)), -EINVAL);        /* exited once */
        ASSERT_EQ(target_phase_change(&p, P(DROPPED)), 0);
        ASSERT_EQ(p, P(DROPPED));
        ASSERT_EQ(target_phase_change(&p, P(DROPPED)), -EINVAL);       /* freed once */
        ASSERT_EQ(target_phase_change(&p, P(PROBING)), -EINVAL);
        ASSERT_EQ(p, P(DROPPED));
        ASSERT_EQ(target_phase_change(&p, _TARGET_PHASE_MAX), -EINVAL);
        ASSERT_EQ(target_phase_change(NULL, P(RECORDING)), -EINVAL);
        ASSERT_TRUE(!target_phase_allowed(_TARGET_PHASE_MAX, P(DROPPED)));
        ASSERT_TRUE(!target_phase_allowed((enum target_phase)-1, P(DROPPED)));
}

static void a_deferred_attach_walks_its_whole_life(void)
{
        static const enum target_phase life[] = {
                P(AWAITING_TABLES), P(RECORDING), P(EXITING), P(EXITED), P(DROPPED),
        };
        enum target_phase p = 0;

        ASSERT_EQ(p, P(PROBING));               /* a zeroed target is probing */
        for (size_t i = 0; i < ELEMENTSOF(life); i++) {
                ASSERT_EQ(target_phase_change(&p, life[i]), 0);
                ASSERT_EQ(p, life[i]);
        }
        /* its registration refused: answered with why, then dropped, never recording */
        p = P(AWAITING_TABLES);
        ASSERT_EQ(target_phase_change(&p, P(FAILED)), 0);
        ASSERT_EQ(target_phase_change(&p, P(RECORDING)), -EINVAL);
        ASSERT_EQ(target_phase_change(&p, P(EXITING)), -EINVAL);
        ASSERT_EQ(target_phase_change(&p, P(DROPPED)), 0);
}

static void only_exited_and_dropped_targets_are_gone(void)
{
        for (int p = 0; p < _TARGET_PHASE_MAX; p++)
                ASSERT_EQ(target_phase_exited(p), p == P(EXITED) || p == P(DROPPED));
}

static void each_phase_has_a_wire_name(void)
{
        static const char *const names[_TARGET_PHASE_MAX] = {
                "probing", "awaiting-tables", "recording", "failed", "exiting", "exited", "dropped",
        };

        for (int p = 0; p < _TARGET_PHASE_MAX; p++)
                ASSERT_STREQ(target_phase_to_string(p), names[p]);
        ASSERT_TRUE(target_phase_to_string(_TARGET_PHASE_MAX) == NULL);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(the_table_allows_exactly_the_lifecycle_changes),
                TEST(a_refused_change_leaves_the_phase),
                TEST(a_deferred_attach_walks_its_whole_life),
                TEST(only_exited_and_dropped_targets_are_gone),
                TEST(each_phase_has_a_wire_name),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
