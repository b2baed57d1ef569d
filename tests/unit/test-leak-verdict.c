/* SPDX-License-Identifier: GPL-2.0-only */
/* The leak classifier on synthetic series: one snapshot a second, as the ring keeps them. */
#include <math.h>
#include <stdint.h>
#include "leak-verdict.h"
#include "macro.h"
#include "test-util.h"

#define N 60

/* A repeatable noise in [-1, 1] (the same series every run). */
static double noise(unsigned *state)
{
        *state = *state * 1103515245u + 12345u;
        return ((*state >> 8) % 20001) / 10000.0 - 1.0;
}

static enum leak_verdict verdict_of(double (*bytes_at)(int i, unsigned *seed), size_t n, struct leak_assessment *ret)
{
        struct leak_point p[N];
        struct leak_assessment a;
        unsigned seed = 42;

        for (size_t i = 0; i < n; i++)
                p[i] = (struct leak_point) { .t_s = (double)i, .bytes = bytes_at((int)i, &seed) };
        leak_verdict_assess(p, n, &LEAK_VERDICT_THRESHOLDS_DEFAULT, &a);
        if (ret)
                *ret = a;
        return a.verdict;
}

static double steady_leak(int i, unsigned *seed) { return 4096.0 + 1000.0 * i; }
static double plateau_early(int i, unsigned *seed) { return i < 15 ? 3000.0 * i : 45000.0; }
static double plateau_from_start(int i, unsigned *seed) { return 72704.0; }
static double plateau_late(int i, unsigned *seed) { return i < 35 ? 1000.0 * i : 35000.0; }
static double sawtooth(int i, unsigned *seed) { return 1000.0 * (i % 10); }
static double noisy_leak(int i, unsigned *seed) { return 1000.0 * i + 500.0 * noise(seed); }
static double slow_leak_under_noise(int i, unsigned *seed) { return 100000.0 + 150.0 * i + 1000.0 * noise(seed); }
static double churn_around_a_level(int i, unsigned *seed) { return 50000.0 + 20000.0 * noise(seed); }
static double leak_that_stopped_halfway(int i, unsigned *seed) { return 2000.0 * MIN(i, 30); }
static double tiny_jitter(int i, unsigned *seed) { return 1000000.0 + 40.0 * noise(seed); }
/* buffers filling for 40 s then emptied, caught rising in the recent half */
static double slow_sawtooth_rising_now(int i, unsigned *seed) { return 500.0 * ((i + 25) % 40); }
/* a leak under churn: the floor rises by 300 B/s under a 5,000-byte sawtooth */
static double leak_under_churn(int i, unsigned *seed) { return 300.0 * i + 500.0 * (i % 10); }

static void steady_leak_is_growing(void)
{
        struct leak_assessment a;

        ASSERT_EQ(verdict_of(steady_leak, N, &a), LEAK_VERDICT_GROWING);
        ASSERT_TRUE(fabs(a.slope_bytes_per_s - 1000.0) < 1e-6);
        ASSERT_TRUE(a.fit_r2 > 0.999);
        ASSERT_TRUE(a.first_bytes == 4096.0 && a.last_bytes == 4096.0 + 59000.0);
}

static void noisy_and_slow_leaks_are_growing(void)
{
        ASSERT_EQ(verdict_of(noisy_leak, N, NULL), LEAK_VERDICT_GROWING);
        ASSERT_EQ(verdict_of(leak_under_churn, N, NULL), LEAK_VERDICT_GROWING);
        /* 150 B/s under noise of +-1000 B: 4,500 B over the recent half */
        ASSERT_EQ(verdict_of(slow_leak_under_noise, N, NULL), LEAK_VERDICT_GROWING);
}

static void growth_that_stopped_is_a_plateau(void)
{
        ASSERT_EQ(verdict_of(plateau_early, N, NULL), LEAK_VERDICT_PLATEAU);
        ASSERT_EQ(verdict_of(plateau_from_start, N, NULL), LEAK_VERDICT_PLATEAU);
        ASSERT_EQ(verdict_of(leak_that_stopped_halfway, N, NULL), LEAK_VERDICT_PLATEAU);
        /* stopped 25 s ago: its last quarter reaches no new high */
        ASSERT_EQ(verdict_of(plateau_late, N, NULL), LEAK_VERDICT_PLATEAU);
        /* a big buffer whose size jitters by a few bytes is flat */
        ASSERT_EQ(verdict_of(tiny_jitter, N, NULL), LEAK_VERDICT_PLATEAU);
}

static void up_and_down_is_churn(void)
{
        ASSERT_EQ(verdict_of(sawtooth, N, NULL), LEAK_VERDICT_CHURN);
        ASSERT_EQ(verdict_of(churn_around_a_level, N, NULL), LEAK_VERDICT_CHURN);
        /* its recent half rises steadily, but it emptied within the window: not a leak */
        ASSERT_EQ(verdict_of(slow_sawtooth_rising_now, N, NULL), LEAK_VERDICT_CHURN);
}

/* A leak sampled at a mean of 64 KiB: its series rises by whole sample points, about four a
 * second, read every 0.1 s. Its last four reads caught none (a 20% chance at that pace), their
 * highest ties the four before. */
static const double sampled_quiet_at_the_end[] = { 0, 0, 1, 1, 1, 2, 2, 3, 3, 3, 4, 5, 5, 5, 5, 5 };
/* the same leak stopped: no sample point for the recent half of the window */
static const double sampled_then_stopped[] = { 0, 1, 1, 2, 3, 3, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5 };

static enum leak_verdict verdict_of_steps(const double *steps, size_t n, double step_bytes)
{
        struct leak_verdict_thresholds th = LEAK_VERDICT_THRESHOLDS_DEFAULT;
        struct leak_point p[N];
        struct leak_assessment a;

        th.step_bytes = step_bytes;
        for (size_t i = 0; i < n; i++)
                p[i] = (struct leak_point) { .t_s = 0.1 * (double)i, .bytes = 65536.0 * steps[i] };
        leak_verdict_assess(p, n, &th, &a);
        return a.verdict;
}

static void a_sampled_leak_between_sample_points_is_still_growing(void)
{
        ASSERT_EQ(verdict_of_steps(sampled_quiet_at_the_end, ELEMENTSOF(sampled_quiet_at_the_end), 65536),
                  LEAK_VERDICT_GROWING);
        /* read as exact, the same tie means it stopped */
        ASSERT_EQ(verdict_of_steps(sampled_quiet_at_the_end, ELEMENTSOF(sampled_quiet_at_the_end), 0),
                  LEAK_VERDICT_PLATEAU);
        /* steps four times smaller: the quarter expected 5 of them and caught none */
        ASSERT_EQ(verdict_of_steps(sampled_quiet_at_the_end, ELEMENTSOF(sampled_quiet_at_the_end), 16384),
                  LEAK_VERDICT_PLATEAU);
        ASSERT_EQ(verdict_of_steps(sampled_then_stopped, ELEMENTSOF(sampled_then_stopped), 65536),
                  LEAK_VERDICT_PLATEAU);
}

static void a_sampled_step_is_the_mean_or_the_block_where_larger(void)
{
        ASSERT_TRUE(leak_verdict_step_bytes(0, 1 << 20, 16) == 0);
        ASSERT_TRUE(leak_verdict_step_bytes(65536, 256 * 100, 100) == 65536);
        ASSERT_TRUE(leak_verdict_step_bytes(4096, 1 << 20, 4) == 1 << 18);
        ASSERT_TRUE(leak_verdict_step_bytes(4096, 0, 0) == 4096);
}

static void few_snapshots_are_pending_and_say_how_many_more(void)
{
        struct leak_assessment a;

        ASSERT_EQ(verdict_of(steady_leak, 0, &a), LEAK_VERDICT_PENDING);
        ASSERT_EQ(a.points_missing, LEAK_VERDICT_THRESHOLDS_DEFAULT.min_points);
        ASSERT_EQ(verdict_of(steady_leak, 4, &a), LEAK_VERDICT_PENDING);
        ASSERT_EQ(a.points_missing, LEAK_VERDICT_THRESHOLDS_DEFAULT.min_points - 4);
        ASSERT_EQ(verdict_of(steady_leak, LEAK_VERDICT_THRESHOLDS_DEFAULT.min_points, NULL), LEAK_VERDICT_GROWING);
}

static void verdicts_have_names(void)
{
        ASSERT_STREQ(leak_verdict_to_string(LEAK_VERDICT_GROWING), "growing");
        ASSERT_STREQ(leak_verdict_to_string(LEAK_VERDICT_PLATEAU), "plateau");
        ASSERT_STREQ(leak_verdict_to_string(LEAK_VERDICT_CHURN), "churn");
        ASSERT_STREQ(leak_verdict_to_string(LEAK_VERDICT_PENDING), "pending");
        ASSERT_TRUE(leak_verdict_to_string(_LEAK_VERDICT_MAX) == NULL);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(steady_leak_is_growing),
                TEST(noisy_and_slow_leaks_are_growing),
                TEST(growth_that_stopped_is_a_plateau),
                TEST(up_and_down_is_churn),
                TEST(a_sampled_leak_between_sample_points_is_still_growing),
                TEST(a_sampled_step_is_the_mean_or_the_block_where_larger),
                TEST(few_snapshots_are_pending_and_say_how_many_more),
                TEST(verdicts_have_names),
        };
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
