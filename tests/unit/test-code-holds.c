/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/report/code-holds.c: memleakctl run's tracer holding the program and its
 * followed children at new code until the manager says their tables are in. */
#include <errno.h>
#include <stdbool.h>

#include "code-holds.h"
#include "macro.h"
#include "test-util.h"

/* Whether the held thread tid may go at now; let go (counted) when it may. */
static bool due(struct code_holds *c, pid_t tid, uint64_t now)
{
        for (size_t i = 0; i < c->n_held; i++)
                if (c->held[i].tid == tid) {
                        if (!code_holds_due(c, i, now))
                                return false;
                        code_holds_unhold(c, i, now);
                        return true;
                }
        ASSERT_TRUE(!"not held");
        return false;
}

static void only_bpfs_signals_are_taken_and_each_process_counts_its_own(void)
{
        struct code_holds c = {};

        ASSERT_EQ(code_holds_add_process(&c, 100), 0);
        ASSERT_EQ(code_holds_add_process(&c, 200), 0);
        ASSERT_TRUE(!code_holds_take_signal(&c, 100, 0));      /* the program's own SIGURG */
        ASSERT_TRUE(code_holds_take_signal(&c, 100, 1));
        ASSERT_TRUE(!code_holds_take_signal(&c, 100, 1));      /* that one is taken already */
        ASSERT_TRUE(code_holds_take_signal(&c, 200, 1));       /* the child's first */
        ASSERT_TRUE(!code_holds_take_signal(&c, 300, 5));      /* a process not held there */
        ASSERT_EQ(code_holds_hold(&c, 301, 300, 0), -ESRCH);
        code_holds_done(&c);
}

static void a_held_thread_waits_for_its_own_processs_answer(void)
{
        struct code_holds c = {};

        ASSERT_EQ(code_holds_add_process(&c, 100), 0);
        ASSERT_EQ(code_holds_add_process(&c, 200), 0);
        ASSERT_EQ(code_holds_hold(&c, 100, 100, 1000), 0);
        ASSERT_EQ(code_holds_hold(&c, 200, 200, 1000), 0);
        ASSERT_EQ(code_holds_hold(&c, 201, 200, 2000), 0);     /* a second stop of the child */
        ASSERT_TRUE(!due(&c, 100, 3000));
        code_holds_ready(&c, 200, 1);                           /* the child's first answer */
        ASSERT_TRUE(!due(&c, 100, 3000));
        ASSERT_TRUE(due(&c, 200, 4000));
        ASSERT_TRUE(!due(&c, 201, 4000));                       /* waits for the second */
        code_holds_ready(&c, 999, 3);                           /* nobody's: dropped */
        code_holds_ready(&c, 200, 1);
        ASSERT_TRUE(due(&c, 201, 5000));
        code_holds_ready(&c, 100, 1);
        ASSERT_TRUE(due(&c, 100, 6000));
        ASSERT_EQ(c.n_held, 0);
        ASSERT_EQ(c.stats.holds, 3);
        ASSERT_EQ(c.stats.timeouts, 0);
        ASSERT_EQ(c.stats.held_usec, 3000 + 5000 + 3000);
        ASSERT_EQ(c.stats.held_usec_max, 5000);
        code_holds_done(&c);
}

static void a_thread_nobody_answers_for_goes_at_the_limit_and_is_not_waited_for_again(void)
{
        struct code_holds c = {};

        ASSERT_EQ(code_holds_add_process(&c, 100), 0);
        ASSERT_EQ(code_holds_hold(&c, 100, 100, 0), 0);
        ASSERT_TRUE(!due(&c, 100, CODE_HOLD_MAX_USEC - 1));
        ASSERT_TRUE(due(&c, 100, CODE_HOLD_MAX_USEC));
        ASSERT_EQ(c.stats.timeouts, 1);
        /* the answer that never came does not hold the next stop */
        ASSERT_EQ(code_holds_hold(&c, 100, 100, CODE_HOLD_MAX_USEC + 10), 0);
        ASSERT_TRUE(!due(&c, 100, CODE_HOLD_MAX_USEC + 20));
        code_holds_ready(&c, 100, 1);
        ASSERT_TRUE(due(&c, 100, CODE_HOLD_MAX_USEC + 30));
        ASSERT_EQ(c.stats.holds, 2);
        ASSERT_EQ(c.stats.timeouts, 1);
        code_holds_done(&c);
}

static void a_process_gone_or_replaced_takes_its_threads_with_it(void)
{
        struct code_holds c = {};

        ASSERT_EQ(code_holds_add_process(&c, 200), 0);
        ASSERT_TRUE(code_holds_take_signal(&c, 200, 1));
        ASSERT_EQ(code_holds_hold(&c, 200, 200, 0), 0);
        ASSERT_EQ(code_holds_hold(&c, 202, 200, 0), 0);
        code_holds_forget_thread(&c, 202);                      /* killed while held */
        ASSERT_EQ(c.n_held, 1);
        /* a new process of that pid: its counts start again, the old one's threads are out */
        ASSERT_EQ(code_holds_add_process(&c, 200), 0);
        ASSERT_EQ(c.n_processes, 1);
        ASSERT_EQ(c.n_held, 0);
        ASSERT_TRUE(code_holds_take_signal(&c, 200, 1));
        code_holds_forget_process(&c, 200);
        ASSERT_TRUE(!code_holds_has_process(&c, 200));
        ASSERT_EQ(c.stats.holds, 0);                            /* none let go: none counted */
        code_holds_done(&c);
        ASSERT_EQ(c.n_processes, 0);
}

static void a_process_released_waits_for_no_answer_again(void)
{
        struct code_holds c = {};

        ASSERT_EQ(code_holds_add_process(&c, 300), 0);
        ASSERT_EQ(code_holds_hold(&c, 300, 300, 0), 0);
        ASSERT_TRUE(!due(&c, 300, 10));
        code_holds_release_process(&c, 300);                    /* detached: no answer comes */
        ASSERT_TRUE(due(&c, 300, 20));
        code_holds_ready(&c, 300, 1);                           /* a late one changes nothing */
        ASSERT_EQ(code_holds_hold(&c, 301, 300, 30), 0);
        ASSERT_TRUE(due(&c, 301, 30));
        ASSERT_EQ(c.stats.timeouts, 0);
        code_holds_done(&c);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(only_bpfs_signals_are_taken_and_each_process_counts_its_own),
                TEST(a_held_thread_waits_for_its_own_processs_answer),
                TEST(a_thread_nobody_answers_for_goes_at_the_limit_and_is_not_waited_for_again),
                TEST(a_process_gone_or_replaced_takes_its_threads_with_it),
                TEST(a_process_released_waits_for_no_answer_again),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
