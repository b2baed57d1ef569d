/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/reach/reach-file.c: a scan's result (or why there is none) survives an
 * encode and a decode whole, and bytes it did not write (cut, out of range, stacks out of order)
 * are refused without reading or allocating past them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "reach-file.h"
#include "test-util.h"

static struct reach_result *sample(void)
{
        struct reach_result *r = calloc(1, sizeof(*r));

        ASSERT_TRUE(r);
        *r = (struct reach_result) {
                .partial = strdup("cut short after 10 ms"), .no_concurrent = strdup("no userfaultfd"),
                .rounds = 3, .written_bytes = 4096, .method = REACH_METHOD_EXIT, .copy_reaped = false,
                .at_exit = true, .traced_from_start = true, .scanned_at_usec = 1795000000123456ULL,
                .paused_usec = 1500, .longest_pause_usec = 1400, .last_stops = 1, .scan_usec = 2000,
                .mark_usec = 900, .mark_cpu_usec = 800, .threads = 3, .roots_bytes = 1 << 20,
                .blocks_overlapping = 1, .blocks_after = 2, .blocks_freed = 0, .blocks_bytes = 201713,
                .stats = { .bytes_scanned = 5000000, .bytes_unreadable = 7, .blocks_unreadable = 1,
                           .words_filtered = 11, .words_looked_up = 12, .words_settled = 13 },
        };
        r->totals[REACHABILITY_DEFINITELY_LOST] = (struct reach_tally) { 200492, 3 };
        r->totals[REACHABILITY_INDIRECTLY_LOST] = (struct reach_tally) { 1221, 2 };
        r->totals[REACHABILITY_STILL_REACHABLE] = (struct reach_tally) { 3219, 5 };
        r->stacks = calloc(3, sizeof(*r->stacks));
        ASSERT_TRUE(r->stacks);
        r->stacks[0] = (struct reach_stack) { .stack_id = -3 };
        r->stacks[0].by_class[REACHABILITY_UNDECIDED] = (struct reach_tally) { 8, 1 };
        r->stacks[1] = (struct reach_stack) { .stack_id = 17 };
        r->stacks[1].by_class[REACHABILITY_DEFINITELY_LOST] = (struct reach_tally) { 200000, 1 };
        r->stacks[2] = (struct reach_stack) { .stack_id = 40 };
        r->stacks[2].by_class[REACHABILITY_STILL_REACHABLE] = (struct reach_tally) { 222, 1 };
        r->n_stacks = 3;
        return r;
}

static void assert_same_string(const char *a, const char *b)
{
        ASSERT_EQ(!a, !b);
        ASSERT_TRUE(!a || strcmp(a, b) == 0);
}

static void assert_same(const struct reach_result *a, const struct reach_result *b)
{
        ASSERT_EQ(a->error, b->error);
        assert_same_string(a->message, b->message);
        assert_same_string(a->partial, b->partial);
        assert_same_string(a->no_snapshot, b->no_snapshot);
        assert_same_string(a->no_concurrent, b->no_concurrent);
        ASSERT_EQ(a->rounds, b->rounds);
        ASSERT_EQ(a->written_bytes, b->written_bytes);
        ASSERT_EQ(a->method, b->method);
        ASSERT_EQ(a->copy_reaped, b->copy_reaped);
        ASSERT_EQ(a->at_exit, b->at_exit);
        ASSERT_EQ(a->traced_from_start, b->traced_from_start);
        ASSERT_EQ(a->scanned_at_usec, b->scanned_at_usec);
        ASSERT_EQ(a->paused_usec, b->paused_usec);
        ASSERT_EQ(a->longest_pause_usec, b->longest_pause_usec);
        ASSERT_EQ(a->last_stops, b->last_stops);
        ASSERT_EQ(a->scan_usec, b->scan_usec);
        ASSERT_EQ(a->mark_usec, b->mark_usec);
        ASSERT_EQ(a->mark_cpu_usec, b->mark_cpu_usec);
        ASSERT_EQ(a->threads, b->threads);
        ASSERT_EQ(a->roots_bytes, b->roots_bytes);
        ASSERT_EQ(a->blocks_overlapping, b->blocks_overlapping);
        ASSERT_EQ(a->blocks_after, b->blocks_after);
        ASSERT_EQ(a->blocks_freed, b->blocks_freed);
        ASSERT_EQ(a->blocks_bytes, b->blocks_bytes);
        ASSERT_TRUE(memcmp(&a->stats, &b->stats, sizeof(a->stats)) == 0);
        ASSERT_TRUE(memcmp(a->totals, b->totals, sizeof(a->totals)) == 0);
        ASSERT_EQ(a->n_stacks, b->n_stacks);
        ASSERT_TRUE(a->n_stacks == 0 || memcmp(a->stacks, b->stacks, a->n_stacks * sizeof(*a->stacks)) == 0);
        ASSERT_TRUE(reach_scan_result_find(b, 17) == &b->stacks[1]);
}

static void reach_file_round_trips_a_scan(void)
{
        struct reach_result *r = sample(), *back = NULL;
        char *why = (char *)"unchanged";
        void *data = NULL;
        size_t n = 0;

        ASSERT_EQ(reach_file_encode(r, NULL, &data, &n), 0);
        ASSERT_EQ(reach_file_decode(data, n, &back, &why), 0);
        ASSERT_TRUE(why == NULL);
        assert_same(r, back);
        reach_scan_result_free(back);
        free(data);
        reach_scan_result_free(r);
}

static void reach_file_round_trips_why_there_is_no_scan(void)
{
        struct reach_result failed = { .error = -ESRCH, .message = (char *)"it was gone" }, *back = NULL;
        char *why = NULL;
        void *data = NULL;
        size_t n = 0;

        ASSERT_EQ(reach_file_encode(NULL, "memleakd sampled it", &data, &n), 0);
        ASSERT_EQ(reach_file_decode(data, n, &back, &why), 0);
        ASSERT_TRUE(back == NULL);
        ASSERT_STREQ(why, "memleakd sampled it");
        free(why);
        free(data);
        /* a scan that could not start: its error and message */
        ASSERT_EQ(reach_file_encode(&failed, NULL, &data, &n), 0);
        ASSERT_EQ(reach_file_decode(data, n, &back, &why), 0);
        ASSERT_TRUE(back && why == NULL);
        ASSERT_EQ(back->error, -ESRCH);
        ASSERT_STREQ(back->message, "it was gone");
        reach_scan_result_free(back);
        free(data);
}

static int decode_fresh(const void *data, size_t n)
{
        struct reach_result *back = NULL;
        char *why = NULL;
        int r = reach_file_decode(data, n, &back, &why);

        if (r < 0)
                ASSERT_TRUE(back == NULL && why == NULL);
        reach_scan_result_free(back);
        free(why);
        return r;
}

/* Each cut refused; each word made 0, 1, huge or all ones read as what it says or refused, never
 * past the bytes given (run under ASan) nor into a huge allocation; stacks out of order refused. */
static void reach_file_refuses_what_it_did_not_write(void)
{
        static const uint64_t values[] = { 0, 1, UINT32_MAX, 1ULL << 40, UINT64_MAX };
        struct reach_result *r = sample();
        unsigned char *data = NULL, *copy;
        unsigned refused = 0;
        size_t n = 0;

        ASSERT_EQ(reach_file_encode(r, "why", (void **)&data, &n), 0);
        ASSERT_EQ(decode_fresh(data, n), 0);
        for (size_t cut = 0; cut < n; cut++)
                ASSERT_EQ(decode_fresh(data, cut), -EBADMSG);
        copy = malloc(n);
        ASSERT_TRUE(copy);
        for (size_t at = 0; at + sizeof(uint64_t) <= n; at += sizeof(uint64_t))
                for (size_t v = 0; v < ELEMENTSOF(values); v++) {
                        int k;

                        memcpy(copy, data, n);
                        memcpy(copy + at, &values[v], sizeof(values[v]));
                        k = decode_fresh(copy, n);
                        ASSERT_TRUE(k == 0 || k == -EBADMSG);
                        refused += k == -EBADMSG;
                }
        ASSERT_TRUE(refused > 0);
        free(copy);
        free(data);
        /* two stacks swapped: reach_scan_result_find() could not find them */
        r->stacks[0].stack_id = 50;
        ASSERT_EQ(reach_file_encode(r, NULL, (void **)&data, &n), 0);
        ASSERT_EQ(decode_fresh(data, n), -EBADMSG);
        free(data);
        reach_scan_result_free(r);
}

static const struct unit_test tests[] = {
        TEST(reach_file_round_trips_a_scan),
        TEST(reach_file_round_trips_why_there_is_no_scan),
        TEST(reach_file_refuses_what_it_did_not_write),
};

int main(void)
{
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
