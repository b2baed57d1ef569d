/* SPDX-License-Identifier: MIT */
/* Unit tests for pending-ops.c: the manager's one list of attaches and follows not done yet. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "pending-ops.h"
#include "protocol.h"
#include "test-util.h"

static int add_follow(struct pending_ops *l, pid_t child, uint64_t not_before_usec)
{
        return pending_ops_add(l, &(struct pending_op) { .kind = PENDING_FOLLOW, .state = PENDING_QUEUED,
                                                         .pid = child, .parent_id = 1,
                                                         .not_before_usec = not_before_usec });
}

static void ops_are_counted_by_kind_and_state(void)
{
        struct pending_ops l = {};

        ASSERT_EQ(pending_ops_add(&l, &(struct pending_op) { .kind = PENDING_ATTACH, .state = PENDING_QUEUED,
                                                             .pid = 10, .id = 7 }), 0);
        ASSERT_EQ(pending_ops_add(&l, &(struct pending_op) { .kind = PENDING_ATTACH,
                                                             .state = PENDING_AWAITING_TABLES, .pid = 11,
                                                             .id = 8, .target_id = 3 }), 0);
        ASSERT_EQ(add_follow(&l, 12, 0), 0);
        ASSERT_EQ(l.n, 3);
        ASSERT_EQ(pending_ops_count(&l, PENDING_ATTACH, PENDING_QUEUED), 1);
        ASSERT_EQ(pending_ops_count(&l, PENDING_ATTACH, PENDING_AWAITING_TABLES), 1);
        ASSERT_EQ(pending_ops_count(&l, PENDING_FOLLOW, PENDING_QUEUED), 1);
        ASSERT_EQ(pending_ops_count(&l, PENDING_FOLLOW, PENDING_AWAITING_TABLES), 0);
        ASSERT_EQ(pending_ops_add(&l, NULL), -EINVAL);
        pending_ops_done(&l);
        ASSERT_EQ(l.n, 0);
        ASSERT_TRUE(l.ops == NULL);
}

static void a_prune_drops_the_done_and_keeps_the_order(void)
{
        struct pending_ops l = {};

        for (pid_t p = 1; p <= 5; p++)
                ASSERT_EQ(add_follow(&l, p, 0), 0);
        l.ops[0].state = PENDING_DONE;
        l.ops[2].state = PENDING_DONE;
        l.ops[4].state = PENDING_DONE;
        pending_ops_prune(&l);
        ASSERT_EQ(l.n, 2);
        ASSERT_EQ(l.ops[0].pid, 2);
        ASSERT_EQ(l.ops[1].pid, 4);
        pending_ops_prune(&l);                  /* nothing done: nothing goes */
        ASSERT_EQ(l.n, 2);
        l.ops[0].state = l.ops[1].state = PENDING_DONE;
        pending_ops_prune(&l);
        ASSERT_EQ(l.n, 0);
        ASSERT_TRUE(l.ops == NULL);
        pending_ops_done(&l);
}

/* A queued attach's request is the list's: a prune of it done, or the end of the list, frees its
 * strings (ASan's leak check sees one left behind). */
static void a_queued_attach_s_request_goes_with_it(void)
{
        struct pending_ops l = {};
        struct memleak_request *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

        ASSERT_TRUE(a && b);
        a->exec = strdup("/bin/true");
        b->exec = strdup("/bin/false");
        ASSERT_EQ(pending_ops_add(&l, &(struct pending_op) { .kind = PENDING_ATTACH, .pid = 1, .parsed = a }), 0);
        ASSERT_EQ(pending_ops_add(&l, &(struct pending_op) { .kind = PENDING_ATTACH, .pid = 2, .parsed = b }), 0);
        l.ops[0].state = PENDING_DONE;
        pending_ops_prune(&l);
        ASSERT_EQ(l.n, 1);
        ASSERT_TRUE(l.ops[0].parsed == b);
        pending_ops_done(&l);
}

static void the_next_due_follow_is_the_earliest_queued_with_a_time(void)
{
        struct pending_ops l = {};

        ASSERT_EQ(pending_ops_next_due(&l), 0);
        ASSERT_EQ(add_follow(&l, 1, 0), 0);      /* the detacher's */
        ASSERT_EQ(pending_ops_next_due(&l), 0);
        ASSERT_EQ(add_follow(&l, 2, 500), 0);
        ASSERT_EQ(add_follow(&l, 3, 300), 0);
        ASSERT_EQ(add_follow(&l, 4, 100), 0);
        ASSERT_EQ(pending_ops_add(&l, &(struct pending_op) { .kind = PENDING_ATTACH, .not_before_usec = 50 }), 0);
        l.ops[3].state = PENDING_DONE;          /* taken: no longer waits */
        ASSERT_EQ(pending_ops_next_due(&l), 300);
        pending_ops_done(&l);
}

static void each_state_has_a_name(void)
{
        ASSERT_STREQ(pending_ops_state_to_string(PENDING_QUEUED), "queued");
        ASSERT_STREQ(pending_ops_state_to_string(PENDING_AWAITING_TABLES), "awaiting-tables");
        ASSERT_STREQ(pending_ops_state_to_string(PENDING_DONE), "done");
        ASSERT_TRUE(pending_ops_state_to_string(_PENDING_STATE_MAX) == NULL);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(ops_are_counted_by_kind_and_state),
                TEST(a_prune_drops_the_done_and_keeps_the_order),
                TEST(a_queued_attach_s_request_goes_with_it),
                TEST(the_next_due_follow_is_the_earliest_queued_with_a_time),
                TEST(each_state_has_a_name),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
