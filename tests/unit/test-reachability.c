/* SPDX-License-Identifier: GPL-2.0-only */
/* The conservative mark on a made-up address space: roots, blocks and the pointers between them. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include "macro.h"
#include "reachability.h"
#include "test-util.h"

#define BLOCK_BYTES 32

/* Eight blocks of 32 bytes at 0x10000, 0x10100, ... and their contents. */
struct space {
        uint8_t contents[8][BLOCK_BYTES];
        struct reach_block blocks[8];
        uint8_t global[64];             /* a root: a writable segment at 0x5000 */
        uint8_t stack[64];              /* a root: a thread's stack at 0x7ff000 */
        enum reachability out[8];
};

static uint64_t block_addr(int i)
{
        return 0x10000 + 0x100 * (uint64_t)i;
}

static void space_init(struct space *s)
{
        memset(s, 0, sizeof(*s));
        for (int i = 0; i < 8; i++)
                s->blocks[i] = (struct reach_block) {
                        .addr = block_addr(i), .size = BLOCK_BYTES, .bytes = s->contents[i],
                };
}

static void put(uint8_t *where, size_t offset, uint64_t value)
{
        memcpy(where + offset, &value, sizeof(value));
}

static void classify(struct space *s)
{
        struct reach_root roots[] = {
                { .addr = 0x5000, .bytes = s->global, .size = sizeof(s->global) },
                { .addr = 0x7ff000, .bytes = s->stack, .size = sizeof(s->stack) },
        };

        ASSERT_EQ(reachability_classify(s->blocks, 8, roots, ELEMENTSOF(roots), s->out), 0);
}

/* The five cases, as its test program makes them. */
static void globals_stacks_and_lost_blocks_are_told_apart(void)
{
        struct space s;

        space_init(&s);
        put(s.global, 8, block_addr(1));                /* (b) a global points to block 1 */
        put(s.contents[2], 0, block_addr(3));           /* (c) 3 is pointed to only by 2, which is lost */
        put(s.contents[4], 0, 0xdeadbeef);              /* (d) 4: its pointer was overwritten */
        put(s.stack, 16, block_addr(5) + 12);           /* (e) a thread's stack points inside block 5 */
        classify(&s);
        ASSERT_EQ(s.out[1], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[2], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.out[3], REACHABILITY_INDIRECTLY_LOST);
        ASSERT_EQ(s.out[4], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.out[5], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[0], REACHABILITY_DEFINITELY_LOST);
}

static void what_a_reachable_block_points_to_is_reachable(void)
{
        struct space s;

        space_init(&s);
        put(s.global, 0, block_addr(0));
        put(s.contents[0], 8, block_addr(6));
        put(s.contents[6], 24, block_addr(7) + BLOCK_BYTES - 1);   /* its last byte */
        classify(&s);
        ASSERT_EQ(s.out[0], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[6], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[7], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[1], REACHABILITY_DEFINITELY_LOST);
}

static void a_lost_cycle_has_one_definitely_lost_leader(void)
{
        struct space s;

        space_init(&s);
        put(s.contents[3], 0, block_addr(5));
        put(s.contents[5], 0, block_addr(3));
        /* a later block pointing into an earlier clique joins it: 6 -> 2 -> (nothing) */
        put(s.contents[6], 0, block_addr(2));
        classify(&s);
        ASSERT_EQ(s.out[3], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.out[5], REACHABILITY_INDIRECTLY_LOST);
        ASSERT_EQ(s.out[2], REACHABILITY_INDIRECTLY_LOST);
        ASSERT_EQ(s.out[6], REACHABILITY_DEFINITELY_LOST);
}

static void only_aligned_words_and_addresses_inside_count(void)
{
        struct space s;

        space_init(&s);
        put(s.global, 3, block_addr(1));                /* unaligned: not a pointer */
        put(s.global, 16, block_addr(2) + BLOCK_BYTES);  /* one past the end: not inside */
        put(s.global, 24, block_addr(2) - 1);           /* one before */
        classify(&s);
        ASSERT_EQ(s.out[1], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.out[2], REACHABILITY_DEFINITELY_LOST);
}

static void unreadable_blocks_are_classified_and_reach_nothing(void)
{
        struct space s;

        space_init(&s);
        put(s.global, 0, block_addr(0));
        put(s.contents[0], 0, block_addr(1));
        s.blocks[0].bytes = NULL;
        classify(&s);
        ASSERT_EQ(s.out[0], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[1], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(reachability_classify(NULL, 0, NULL, 0, NULL), 0);
        ASSERT_STREQ(reachability_to_string(REACHABILITY_INDIRECTLY_LOST), "indirectly_lost");
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(globals_stacks_and_lost_blocks_are_told_apart),
                TEST(what_a_reachable_block_points_to_is_reachable),
                TEST(a_lost_cycle_has_one_definitely_lost_leader),
                TEST(only_aligned_words_and_addresses_inside_count),
                TEST(unreadable_blocks_are_classified_and_reach_nothing),
        };
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
