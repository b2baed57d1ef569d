/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/symbols/perf-map.c: perf maps as JIT runtimes write them, and as a
 * hostile process might. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "perf-map.h"
#include "test-util.h"

static struct perf_map *parse(const char *text, size_t len)
{
        _cleanup_fclose_ FILE *f = fmemopen((void *)text, len, "r");
        struct perf_map *m = NULL;

        ASSERT_TRUE(f != NULL);
        ASSERT_EQ(perf_map_parse(f, &m), 0);
        ASSERT_TRUE(m != NULL);
        return m;
}

static void finds_names_by_address_with_offsets(void)
{
        static const char text[] =
                "3a1d2c8a0040 1bc JS:^leakBuffers /srv/app/leak.js:2:21\n"
                "3a1d2c8a0200 40 LazyCompile:*handle node:internal/timers:524:25\n"
                "0x7f00dead0000 0x100 Interpreted Java frame\r\n";
        _cleanup_(perf_map_unrefp) struct perf_map *m = parse(text, sizeof(text) - 1);
        uint64_t offset = 99;

        ASSERT_STREQ(perf_map_find(m, 0x3a1d2c8a0040ull, &offset), "JS:^leakBuffers /srv/app/leak.js:2:21");
        ASSERT_EQ(offset, 0);
        ASSERT_STREQ(perf_map_find(m, 0x3a1d2c8a01fbull, &offset), "JS:^leakBuffers /srv/app/leak.js:2:21");
        ASSERT_EQ(offset, 0x1bb);
        ASSERT_TRUE(perf_map_find(m, 0x3a1d2c8a01fcull, &offset) == NULL);     /* its end */
        ASSERT_TRUE(perf_map_find(m, 0x3a1d2c8a003full, &offset) == NULL);     /* before the first */
        ASSERT_STREQ(perf_map_find(m, 0x3a1d2c8a0210ull, NULL), "LazyCompile:*handle node:internal/timers:524:25");
        /* 0x prefixes, a CR before the newline */
        ASSERT_STREQ(perf_map_find(m, 0x7f00dead00ffull, &offset), "Interpreted Java frame");
        ASSERT_EQ(offset, 0xff);
        ASSERT_TRUE(perf_map_find(m, UINT64_MAX, NULL) == NULL);
        ASSERT_TRUE(!perf_map_truncated(m));
}

/* Code the runtime freed and compiled something else into: the line written last names it. */
static void the_last_line_wins_where_entries_overlap(void)
{
        static const char text[] =
                "1000 1000 old_big_function\n"
                "1800 100 new_small_function\n"
                "1800 40 newest_at_the_same_start\n"
                "2800 10 unrelated\n";
        _cleanup_(perf_map_unrefp) struct perf_map *m = parse(text, sizeof(text) - 1);

        ASSERT_STREQ(perf_map_find(m, 0x1000, NULL), "old_big_function");
        ASSERT_STREQ(perf_map_find(m, 0x1810, NULL), "newest_at_the_same_start");
        ASSERT_STREQ(perf_map_find(m, 0x1850, NULL), "new_small_function");
        ASSERT_STREQ(perf_map_find(m, 0x1900, NULL), "old_big_function");      /* past the new ones */
        ASSERT_STREQ(perf_map_find(m, 0x1fff, NULL), "old_big_function");
        ASSERT_TRUE(perf_map_find(m, 0x2000, NULL) == NULL);
        ASSERT_STREQ(perf_map_find(m, 0x2805, NULL), "unrelated");
}

/* What is not "START SIZE NAME" is skipped, the rest still read; a line the runtime is still
 * writing (no newline yet) counts when it is whole. */
static void malformed_lines_are_skipped(void)
{
        static const char text[] =
                "\n"
                "not a line\n"
                "zz 10 bad_start\n"
                "1000 zz bad_size\n"
                "1000 10\n"
                "1000 10    \n"
                "2000 0 empty_code\n"
                "ffffffffffffff00 1000 wraps_around\n"
                "3000 10 good\n"
                "4000 20 last without newline";
        _cleanup_(perf_map_unrefp) struct perf_map *m = parse(text, sizeof(text) - 1);

        ASSERT_TRUE(perf_map_find(m, 0x1000, NULL) == NULL);
        ASSERT_TRUE(perf_map_find(m, 0x2000, NULL) == NULL);
        ASSERT_TRUE(perf_map_find(m, 0xffffffffffffff10ull, NULL) == NULL);
        ASSERT_STREQ(perf_map_find(m, 0x3005, NULL), "good");
        ASSERT_STREQ(perf_map_find(m, 0x4010, NULL), "last without newline");
}

/* A line past PERF_MAP_LINE_MAX is skipped whole, not split into lines of its own. */
static void an_endless_line_is_skipped(void)
{
        size_t long_len = 3 * PERF_MAP_LINE_MAX;
        _cleanup_free_ char *text = malloc(long_len + 64);
        _cleanup_(perf_map_unrefp) struct perf_map *m = NULL;
        size_t n;

        ASSERT_TRUE(text != NULL);
        n = (size_t)sprintf(text, "1000 10 ");
        memset(text + n, 'x', long_len);
        n += long_len;
        n += (size_t)sprintf(text + n, "\n5000 10 after\n");
        m = parse(text, n);
        ASSERT_TRUE(perf_map_find(m, 0x1000, NULL) == NULL);
        ASSERT_STREQ(perf_map_find(m, 0x5000, NULL), "after");
}

/* Shared: the last reference frees it (ASan's leak check and use-after-free tell otherwise). */
static void a_map_lives_as_long_as_its_last_reference(void)
{
        static const char text[] = "1000 10 shared\n";
        struct perf_map *m = parse(text, sizeof(text) - 1), *other = perf_map_ref(m);

        ASSERT_TRUE(other == m);
        ASSERT_TRUE(perf_map_unref(m) == NULL);
        ASSERT_STREQ(perf_map_find(other, 0x1008, NULL), "shared");
        ASSERT_TRUE(perf_map_unref(other) == NULL);
}

/* A map that never ends (a FIFO is refused before this; here an endless stream of NUL bytes, as
 * a sparse file of terabytes reads): read up to PERF_MAP_READ_BYTES_MAX, said to be cut. */
static void an_endless_map_is_read_up_to_its_bound(void)
{
        _cleanup_fclose_ FILE *f = fopen("/dev/zero", "re");
        _cleanup_(perf_map_unrefp) struct perf_map *m = NULL;

        ASSERT_TRUE(f != NULL);
        ASSERT_EQ(perf_map_parse(f, &m), 0);
        ASSERT_TRUE(perf_map_truncated(m));
        ASSERT_TRUE(perf_map_find(m, 0, NULL) == NULL);
}

static void an_empty_map_finds_nothing(void)
{
        _cleanup_(perf_map_unrefp) struct perf_map *m = parse("", 0);

        ASSERT_TRUE(perf_map_find(m, 0x1000, NULL) == NULL);
        ASSERT_TRUE(perf_map_unref(NULL) == NULL);
        ASSERT_TRUE(perf_map_ref(NULL) == NULL);
}

/* PERF_MAP_SYMBOLS_MAX lines are read, the rest left and said to be. */
static void a_map_past_the_limit_is_truncated(void)
{
        size_t lines = PERF_MAP_SYMBOLS_MAX + 10, size = lines * 24 + 1, n = 0;
        _cleanup_free_ char *text = malloc(size);
        _cleanup_(perf_map_unrefp) struct perf_map *m = NULL;

        ASSERT_TRUE(text != NULL);
        for (size_t i = 0; i < lines; i++)
                n += (size_t)snprintf(text + n, size - n, "%zx 10 f\n", (size_t)0x100000 + i * 0x10);
        m = parse(text, n);
        ASSERT_TRUE(perf_map_truncated(m));
        ASSERT_STREQ(perf_map_find(m, 0x100000, NULL), "f");
        ASSERT_STREQ(perf_map_find(m, 0x100000 + (PERF_MAP_SYMBOLS_MAX - 1) * 0x10ull, NULL), "f");
        ASSERT_TRUE(perf_map_find(m, 0x100000 + PERF_MAP_SYMBOLS_MAX * 0x10ull, NULL) == NULL);
}

/* The entries naming some addresses (each once, in the order written), and a map made of them,
 * which names those addresses as the whole map did: an exited target's kept JIT names. */
static void the_entries_at_some_addresses_make_a_map_that_names_them_alike(void)
{
        static const char text[] =
                "1000 100 first\n"
                "2000 100 unused\n"
                "1000 40 overlaps_first_later\n"
                "3000 10 third\n";
        _cleanup_(perf_map_unrefp) struct perf_map *m = parse(text, sizeof(text) - 1);
        _cleanup_(perf_map_unrefp) struct perf_map *kept = NULL;
        _cleanup_free_ struct perf_map_entry *entries = NULL;
        const uint64_t addrs[] = { 0x1010, 0x1080, 0x3005, 0x1011, 0x5000, 0x1081 };
        size_t n = 0;

        ASSERT_EQ(perf_map_entries_at(m, addrs, ELEMENTSOF(addrs), &entries, &n), 0);
        ASSERT_EQ(n, 3);
        ASSERT_STREQ(entries[0].name, "first");
        ASSERT_EQ(entries[0].start, 0x1000);
        ASSERT_EQ(entries[0].end, 0x1100);
        ASSERT_STREQ(entries[1].name, "overlaps_first_later");
        ASSERT_STREQ(entries[2].name, "third");
        ASSERT_EQ(perf_map_new_from(entries, n, &kept), 0);
        for (size_t i = 0; i < ELEMENTSOF(addrs); i++) {
                uint64_t o1 = 0, o2 = 0;
                const char *a = perf_map_find(m, addrs[i], &o1), *b = perf_map_find(kept, addrs[i], &o2);

                ASSERT_TRUE((a == NULL) == (b == NULL));
                if (a) {
                        ASSERT_STREQ(a, b);
                        ASSERT_EQ(o1, o2);
                }
        }
        ASSERT_TRUE(perf_map_find(kept, 0x2010, NULL) == NULL);        /* no frame was there */
        ASSERT_TRUE(!perf_map_truncated(kept));

        /* none found: none kept */
        free(entries);
        entries = NULL;
        ASSERT_EQ(perf_map_entries_at(m, (const uint64_t[]) { 0x9000 }, 1, &entries, &n), 0);
        ASSERT_EQ(n, 0);
        ASSERT_TRUE(entries == NULL);
}

static void a_map_is_not_made_of_entries_that_name_nothing(void)
{
        struct perf_map *m = NULL;

        ASSERT_EQ(perf_map_new_from((const struct perf_map_entry[]) { { 0x10, 0x10, "empty" } }, 1, &m), -EINVAL);
        ASSERT_EQ(perf_map_new_from((const struct perf_map_entry[]) { { 0x10, 0x8, "backwards" } }, 1, &m), -EINVAL);
        ASSERT_EQ(perf_map_new_from((const struct perf_map_entry[]) { { 0x10, 0x20, "" } }, 1, &m), -EINVAL);
        ASSERT_EQ(perf_map_new_from((const struct perf_map_entry[]) { { 0x10, 0x20, NULL } }, 1, &m), -EINVAL);
        ASSERT_TRUE(m == NULL);
        ASSERT_EQ(perf_map_new_from(NULL, 0, &m), 0);
        ASSERT_TRUE(perf_map_find(m, 0x10, NULL) == NULL);
        perf_map_unref(m);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(finds_names_by_address_with_offsets),
                TEST(the_last_line_wins_where_entries_overlap),
                TEST(malformed_lines_are_skipped),
                TEST(an_endless_line_is_skipped),
                TEST(a_map_lives_as_long_as_its_last_reference),
                TEST(an_endless_map_is_read_up_to_its_bound),
                TEST(an_empty_map_finds_nothing),
                TEST(a_map_past_the_limit_is_truncated),
                TEST(the_entries_at_some_addresses_make_a_map_that_names_them_alike),
                TEST(a_map_is_not_made_of_entries_that_name_nothing),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
