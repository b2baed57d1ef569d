/* SPDX-License-Identifier: MIT */
/* Tests for auto-sample.c: when a target whose share of the allocation table fills is turned to
 * sampling, at what mean, when the mean is raised again, and what is remembered of each change. */
#include <stdint.h>

#include "auto-sample.h"
#include "macro.h"
#include "test-util.h"

#define SHARE 16384u
#define MAX_MEAN (UINT64_C(1) << 32)

/* One target of 10,000 blocks of 100 bytes (its mean block), exact so far. */
static struct auto_sample_view exact_target(uint64_t blocks)
{
        return (struct auto_sample_view) {
                .share = SHARE, .blocks = blocks, .bytes = 1000000, .allocs = 10000, .percent = 80,
        };
}

static void the_share_is_the_table_over_the_live_targets(void)
{
        ASSERT_EQ(auto_sample_share(16384, 1), 16384);
        ASSERT_EQ(auto_sample_share(16384, 2), 8192);
        ASSERT_EQ(auto_sample_share(16384, 3), 5461);
        ASSERT_EQ(auto_sample_share(16384, 0), 16384);
        ASSERT_EQ(auto_sample_fill_percent(13108, SHARE), 80);
        ASSERT_EQ(auto_sample_fill_percent(20000, SHARE), 122);
        ASSERT_EQ(auto_sample_fill_percent(0, 0), 0);
        ASSERT_EQ(auto_sample_fill_percent(1, 0), 100);
}

static void below_the_threshold_nothing_changes(void)
{
        struct auto_sample_view v = exact_target(13107);        /* 79.99% of 16384 */

        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v.blocks = 0;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v = exact_target(SHARE * 2);
        v.percent = 0;                  /* auto_sample_percent = 0: never, however full */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v = exact_target(100);
        v.share = 0;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
}

static void at_the_threshold_the_mean_fits_four_heaps_more_in_the_room_left(void)
{
        struct auto_sample_view v = exact_target(13108);        /* 80.005% */

        /* room 3276: 4 * 1,000,000 / 3276 = 1221, the next power of two */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 2048);
        v.percent = 50;
        v.blocks = SHARE / 2;           /* room 8192: 488 -> 512 */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 512);
        v.percent = 100;
        v.blocks = SHARE - 1;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v.blocks = SHARE;               /* full: the room counts as a sixteenth of the share */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 4096);     /* 4e6 / 1024 = 3906 */
        v.blocks = SHARE * 4;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 4096);
}

static void the_mean_is_well_above_the_mean_block_and_the_least_mean(void)
{
        struct auto_sample_view v = exact_target(13108);

        v.bytes = 3276;                 /* a small heap: 4 bytes a room's block */
        v.allocs = 1000;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), AUTO_SAMPLE_MIN_BYTES);
        v.allocs = 0;                   /* none known: the least */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), AUTO_SAMPLE_MIN_BYTES);
        /* blocks of a MiB: a mean below them would record every one (their size, always) */
        v.bytes = UINT64_C(13108) << 20;
        v.allocs = 13108;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), UINT64_C(32) << 20);       /* 4 * 13108 MiB / 3276: 16.0 MiB */
        v.bytes = UINT64_C(1) << 20;
        v.allocs = 1;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), UINT64_C(4) << 20);
}

static void the_mean_never_passes_its_maximum(void)
{
        struct auto_sample_view v = exact_target(SHARE);

        v.bytes = UINT64_C(1) << 50;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), MAX_MEAN);
        v.sample_bytes = MAX_MEAN;      /* there already: nothing more to do */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v.bytes = UINT64_MAX;           /* no overflow on the way */
        v.sample_bytes = 0;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), MAX_MEAN);
}

static void raised_again_once_half_the_room_left_is_used(void)
{
        struct auto_sample_view v = exact_target(13108);

        v.sample_bytes = 2048;
        v.blocks_at_change = 13108;     /* room then 3276: half of it is 1638 */
        v.blocks = 13108 + 1637;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v.blocks = 13108 + 1638;        /* room 1638: 4 * 4,000,000 / 1638 = 9768 */
        v.bytes = 4000000;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 16384);
        v.bytes = 1000;                 /* a heap that shrank: still at least twice the mean */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 4096);
        /* a mean the user chose (--sample-bytes) and a share that fills: raised as well */
        v.blocks_at_change = 0;
        v.blocks = 13108;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 4096);
        /* more targets since: the share is below the blocks of the last change; the room then
         * counts as a sixteenth of it (1024), raised again once half of that is used, not at
         * every tick */
        v.blocks_at_change = SHARE + 10;
        v.blocks = SHARE + 20;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v.blocks = SHARE + 10 + 511;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v.blocks = SHARE + 10 + 512;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 4096);
}

static void history_keeps_the_first_change_and_the_latest(void)
{
        struct auto_sample_history h = {};

        ASSERT_TRUE(auto_sample_first(&h) == NULL);
        ASSERT_TRUE(auto_sample_last(&h) == NULL);
        ASSERT_EQ(auto_sample_kept(&h), 0);
        for (uint64_t i = 1; i <= AUTO_SAMPLE_CHANGES_MAX + 5; i++)
                auto_sample_note(&h, &(struct auto_sample_change) {
                        .at_usec = i * 1000000, .sample_bytes = UINT64_C(256) << i, .fill_percent = 80, .blocks = i,
                });
        ASSERT_EQ(h.n_changes, AUTO_SAMPLE_CHANGES_MAX + 5);
        ASSERT_EQ(auto_sample_kept(&h), AUTO_SAMPLE_CHANGES_MAX);
        ASSERT_EQ(auto_sample_first(&h)->at_usec, 1000000);
        ASSERT_EQ(auto_sample_last(&h)->blocks, AUTO_SAMPLE_CHANGES_MAX + 5);
        /* in order, the ones between dropped from the oldest */
        ASSERT_EQ(h.changes[1].blocks, 7);
        for (uint32_t i = 2; i < AUTO_SAMPLE_CHANGES_MAX; i++)
                ASSERT_EQ(h.changes[i].blocks, h.changes[i - 1].blocks + 1);
}

/* A target that would fill its share by the next check at its pace is switched before its
 * threshold (redis loading 5,000 keys a second filled a share of 20,000 blocks between two
 * checks a second apart, and dropped from then on); one that only nears its threshold is not. */
static void a_target_filling_fast_is_switched_before_it_is_full(void)
{
        struct auto_sample_view v = exact_target(10000);        /* 61% */

        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v.blocks_before = 5000;                                 /* +5000 a check: 15000 next, 92% */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v.blocks_before = 3000;                                 /* +7000: 17000 next, past full */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 1024);     /* room 6384: 4e6 / 6384 = 627 */
        v.blocks_before = 12000;                                /* shrinking: only where it is */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        /* sampled since 10000 blocks: raised when half its room then will be used by the next check */
        v = exact_target(11000);
        v.sample_bytes = 512;
        v.blocks_at_change = 10000;                             /* room then 6384: again at 13192 */
        v.percent = 50;
        v.blocks_before = 10500;                                /* 11500 next */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v.blocks_before = 8000;                                 /* 14000 next */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 1024);
}

/* Allocations of it dropped for a full table switch it, or raise its mean, whatever its share
 * says: the table was full for it (its share counts as used up by others, or it filled it between
 * two checks). */
static void allocations_dropped_switch_or_raise_at_once(void)
{
        struct auto_sample_view v = exact_target(1000);         /* 6%: far below */

        v.dropped = 1;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 512);      /* 4e6 / 15384 = 260, below 4 x its 100-byte block */
        v = exact_target(SHARE);
        v.sample_bytes = 8192;
        v.blocks_at_change = SHARE - 100;       /* switched at 99%: half the room then is past full */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
        v.dropped = 2207;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 16384);    /* twice the mean it had, at least */
        v.percent = 0;                          /* auto_sample_percent = 0: never */
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 0);
}

/* BPF's own switch, for a target that fills its share faster than the daemon checks it: at
 * percent of its share, rounded up as auto_sample_decide()'s threshold is; none when off. */
static void bpf_switches_at_percent_of_the_share(void)
{
        ASSERT_EQ(auto_sample_limit(SHARE, 80), 13108);        /* 13107.2: 80.005%, as decide's */
        ASSERT_EQ(auto_sample_fill_percent(auto_sample_limit(SHARE, 80), SHARE), 80);
        ASSERT_EQ(auto_sample_limit(8192, 80), 6554);
        ASSERT_EQ(auto_sample_limit(SHARE, 100), SHARE);
        ASSERT_EQ(auto_sample_limit(SHARE, 0), 0);               /* auto_sample_percent = 0: no limit */
        ASSERT_EQ(auto_sample_limit(0, 80), 0);
}

/* The mean it switches to there is set ahead from its mean block now: the room left past the
 * limit holds four times the heap it will have at the limit. */
static void bpf_switches_at_a_mean_set_ahead_from_the_mean_block(void)
{
        struct auto_sample_view v = exact_target(1000);         /* 100-byte blocks */
        uint64_t limit = auto_sample_limit(SHARE, 80);

        /* 100 x 13108 x 4 / 3276 = 1600 */
        ASSERT_EQ(auto_sample_preset(&v, limit, MAX_MEAN), 2048);
        /* and what decide() picks when the daemon sees it at the limit itself */
        v.blocks = limit;
        v.bytes = 100 * limit;
        v.allocs = limit;
        ASSERT_EQ(auto_sample_decide(&v, MAX_MEAN), 2048);
        /* no snapshot yet: the least mean */
        v = exact_target(0);
        v.bytes = v.allocs = 0;
        ASSERT_EQ(auto_sample_preset(&v, limit, MAX_MEAN), AUTO_SAMPLE_MIN_BYTES);
        /* big blocks: the estimate, above four of them */
        v = exact_target(10);
        v.allocs = 10;                                          /* 100,000-byte blocks */
        ASSERT_EQ(auto_sample_preset(&v, limit, MAX_MEAN), UINT64_C(1) << 21);
        ASSERT_EQ(auto_sample_preset(&v, limit, 65536), 65536);
        /* off */
        v.percent = 0;
        ASSERT_EQ(auto_sample_preset(&v, limit, MAX_MEAN), 0);
        v.percent = 80;
        ASSERT_EQ(auto_sample_preset(&v, 0, MAX_MEAN), 0);
        /* a limit at the full share: a sixteenth of it is the room */
        v = exact_target(0);
        ASSERT_EQ(auto_sample_preset(&v, SHARE, MAX_MEAN), 8192);   /* 100 x 16384 x 4 / 1024 = 6400 */
}

/* Where BPF raises the mean itself: at the switch's threshold while exact (or at a mean it was
 * attached with), then where the daemon would raise it again: half the room left at its last
 * change used. */
static void bpf_raises_where_the_daemon_would(void)
{
        struct auto_sample_view v = exact_target(0);

        ASSERT_EQ(auto_sample_bpf_limit(&v), auto_sample_limit(SHARE, 80));
        v.sample_bytes = 4096;                                  /* attached sampled: no change yet */
        ASSERT_EQ(auto_sample_bpf_limit(&v), auto_sample_limit(SHARE, 80));
        v.blocks_at_change = 13108;                             /* changed at 80%: half the rest */
        ASSERT_EQ(auto_sample_bpf_limit(&v), 13108 + (SHARE - 13108) / 2);
        v.blocks_at_change = SHARE;                             /* full: a sixteenth past it */
        ASSERT_EQ(auto_sample_bpf_limit(&v), SHARE + SHARE / 16 / 2);
        v.blocks_at_change = 100;                               /* never below the threshold */
        ASSERT_EQ(auto_sample_bpf_limit(&v), auto_sample_limit(SHARE, 80));
        v.percent = 0;                                          /* off */
        ASSERT_EQ(auto_sample_bpf_limit(&v), 0);
}

/* BPF's switch is noted as the daemon's own: when (its monotonic time told in real time), at
 * what mean, at how full a share. */
static void bpf_switch_noted_as_a_change(void)
{
        struct auto_sample_change c;

        c = auto_sample_bpf_change(UINT64_C(5000000000), 2048, 13108, SHARE, UINT64_C(1700000000000000),
                                   UINT64_C(7000000));
        ASSERT_EQ(c.at_usec, UINT64_C(1700000000000000) - 2000000);   /* 2 s before now */
        ASSERT_EQ(c.sample_bytes, 2048);
        ASSERT_EQ(c.blocks, 13108);
        ASSERT_EQ(c.fill_percent, 80);
        /* a clock read before the switch (never, but not a wrap) */
        c = auto_sample_bpf_change(UINT64_C(9000000000), 2048, 13108, SHARE, UINT64_C(1700000000000000),
                                   UINT64_C(7000000));
        ASSERT_EQ(c.at_usec, UINT64_C(1700000000000000));
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(the_share_is_the_table_over_the_live_targets),
                TEST(bpf_raises_where_the_daemon_would),
                TEST(below_the_threshold_nothing_changes),
                TEST(at_the_threshold_the_mean_fits_four_heaps_more_in_the_room_left),
                TEST(the_mean_is_well_above_the_mean_block_and_the_least_mean),
                TEST(the_mean_never_passes_its_maximum),
                TEST(raised_again_once_half_the_room_left_is_used),
                TEST(a_target_filling_fast_is_switched_before_it_is_full),
                TEST(bpf_switches_at_percent_of_the_share),
                TEST(bpf_switches_at_a_mean_set_ahead_from_the_mean_block),
                TEST(bpf_switch_noted_as_a_change),
                TEST(allocations_dropped_switch_or_raise_at_once),
                TEST(history_keeps_the_first_change_and_the_latest),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
