/* Unit tests for the unwind tables' file format (table-file.h): names, a round trip of a real
 * table, and every way a file can be wrong (cut anywhere, any byte changed, another version,
 * another file's key, too many rows, rows out of order) refused, never decoded. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "macro.h"
#include "table-file.h"
#include "test-util.h"

static const uint8_t BUILD_ID[20] = {
        0x01, 0xe5, 0xf6, 0xa0, 0x16, 0xd2, 0xac, 0x73, 0xae, 0x9e,
        0x44, 0x4a, 0x15, 0x98, 0x9d, 0x1f, 0x90, 0xf1, 0xc3, 0xbe,
};

static struct table_file_key key_of_size(uint64_t size)
{
        struct table_file_key k;

        ASSERT_EQ(table_file_key_from_build_id(BUILD_ID, sizeof(BUILD_ID), size, &k), 0);
        return k;
}

/* A small table: rows at 0, 16, 32 ... with rules that vary. */
static struct unwind_table small_table(size_t n)
{
        struct unwind_table t = { .base_vaddr = 0x1000, .n_segments = 2 };

        t.segments[0] = (struct unwind_table_segment) { .vaddr = 0x1000, .offset = 0x1000, .size = 0x800 };
        t.segments[1] = (struct unwind_table_segment) { .vaddr = 0x3000, .offset = 0x2000, .size = 0x100 };
        t.rows = calloc(n ? n : 1, sizeof(*t.rows));
        ASSERT_TRUE(t.rows);
        t.n_rows = n;
        for (size_t i = 0; i < n; i++)
                t.rows[i] = (struct unwind_row) {
                        .start = (uint32_t)(16 * i), .cfa_offset = (int32_t)(8 + 8 * (i % 5)),
                        .cfa_rule = (uint8_t)(i % 3 ? UNWIND_CFA_RSP : UNWIND_CFA_RBP),
                        .reg_rules = UNWIND_REG_AT_CFA, .ra_offset8 = -1,
                };
        return t;
}

/* t's file, as the store writes it: header, then rows. */
static uint8_t *encode(const struct table_file_key *k, const struct unwind_table *t, size_t *ret_size)
{
        struct table_file_header h;
        size_t size = sizeof(h) + t->n_rows * sizeof(struct unwind_row);
        uint8_t *buf = malloc(size);

        ASSERT_TRUE(buf);
        ASSERT_EQ(table_file_header_make(k, t, &h), 0);
        memcpy(buf, &h, sizeof(h));
        memcpy(buf + sizeof(h), t->rows, t->n_rows * sizeof(struct unwind_row));
        *ret_size = size;
        return buf;
}

static void assert_same(const struct unwind_table *a, const struct unwind_table *b)
{
        ASSERT_EQ(a->base_vaddr, b->base_vaddr);
        ASSERT_EQ(a->n_segments, b->n_segments);
        ASSERT_TRUE(memcmp(a->segments, b->segments, a->n_segments * sizeof(a->segments[0])) == 0);
        ASSERT_EQ(a->n_rows, b->n_rows);
        ASSERT_TRUE(memcmp(a->rows, b->rows, a->n_rows * sizeof(struct unwind_row)) == 0);
        ASSERT_EQ(b->stats.rows, b->n_rows);
}

static void names_say_the_key_and_nothing_else(void)
{
        struct table_file_key k = key_of_size(230104), id;
        char name[TABLE_FILE_KEY_NAME_MAX];

        ASSERT_EQ(table_file_key_name(&k, name, sizeof(name)), 0);
        ASSERT_STREQ(name, "b-01e5f6a016d2ac73ae9e444a15989d1f90f1c3be-230104.unwind");
        ASSERT_TRUE(table_file_name_is_table(name));
        table_file_key_from_identity(0xfe00, 4242, 77, 1700000000123456789, -1, &id);
        ASSERT_EQ(table_file_key_name(&id, name, sizeof(name)), 0);
        ASSERT_STREQ(name, "i-fe00-4242-77-17979cfe3d85cd15-ffffffffffffffff.unwind");
        ASSERT_TRUE(table_file_name_is_table(name));
        ASSERT_EQ(table_file_key_name(&k, name, 20), -ENAMETOOLONG);

        /* the longest build ID still fits */
        uint8_t long_id[TABLE_FILE_KEY_BUILD_ID_MAX];
        memset(long_id, 0xab, sizeof(long_id));
        ASSERT_EQ(table_file_key_from_build_id(long_id, sizeof(long_id), UINT64_MAX, &k), 0);
        ASSERT_EQ(table_file_key_name(&k, name, sizeof(name)), 0);
        ASSERT_EQ(table_file_key_from_build_id(long_id, sizeof(long_id) + 1, 1, &k), -EINVAL);
        ASSERT_EQ(table_file_key_from_build_id(long_id, 0, 1, &k), -EINVAL);
        k.kind = 3;
        ASSERT_EQ(table_file_key_name(&k, name, sizeof(name)), -EINVAL);

        /* what the store may count and evict: its own names only */
        ASSERT_TRUE(!table_file_name_is_table(".tmp-12-3"));
        ASSERT_TRUE(!table_file_name_is_table("b-.unwind"));
        ASSERT_TRUE(!table_file_name_is_table("b-01xz-3.unwind"));
        ASSERT_TRUE(!table_file_name_is_table("b-01-3.unwind.bak"));
        ASSERT_TRUE(!table_file_name_is_table("../b-01-3.unwind"));
        ASSERT_TRUE(!table_file_name_is_table("x-01-3.unwind"));
        ASSERT_TRUE(!table_file_name_is_table(".unwind"));
}

static void a_real_table_round_trips(void)
{
        _cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        struct unwind_table t = {}, back = {};
        struct table_file_key k = key_of_size(12345);
        _cleanup_free_ uint8_t *buf = NULL;
        size_t size;

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(unwind_table_build(fd, &UNWIND_TABLE_LIMITS_DEFAULT, &t), 0);
        ASSERT_TRUE(t.n_rows > 10);
        buf = encode(&k, &t, &size);
        ASSERT_EQ(table_file_decode(buf, size, &k, UNWIND_TABLE_LIMITS_DEFAULT.max_rows, &back), 0);
        assert_same(&t, &back);
        /* what a walker needs of it is the same */
        for (size_t i = 0; i < t.n_rows; i++) {
                const struct unwind_row *a = unwind_table_find(&t, t.base_vaddr + t.rows[i].start);
                const struct unwind_row *b = unwind_table_find(&back, t.base_vaddr + t.rows[i].start);

                ASSERT_TRUE(a ? b == back.rows + (a - t.rows) : !b);
        }
        unwind_table_done(&back);
        unwind_table_done(&t);
}

static void a_table_without_rows_round_trips(void)
{
        struct unwind_table t = small_table(0), back = {};
        struct table_file_key k;
        _cleanup_free_ uint8_t *buf = NULL;
        size_t size;

        table_file_key_from_identity(1, 2, 3, 4, 5, &k);
        buf = encode(&k, &t, &size);
        ASSERT_EQ(size, sizeof(struct table_file_header));
        ASSERT_EQ(table_file_decode(buf, size, &k, 100, &back), 0);
        assert_same(&t, &back);
        unwind_table_done(&back);
        unwind_table_done(&t);
}

static void a_file_cut_anywhere_is_refused(void)
{
        struct unwind_table t = small_table(7), back = {};
        struct table_file_key k = key_of_size(99);
        _cleanup_free_ uint8_t *buf = NULL;
        size_t size;

        buf = encode(&k, &t, &size);
        for (size_t cut = 0; cut < size; cut++) {
                int r = table_file_decode(buf, cut, &k, 100, &back);

                ASSERT_EQ(r, cut < sizeof(struct table_file_header) ? -TABLE_FILE_EBADMAGIC : -TABLE_FILE_ESIZE);
        }
        /* and one with a row too many (bytes appended) */
        uint8_t *longer = calloc(1, size + sizeof(struct unwind_row));
        ASSERT_TRUE(longer);
        memcpy(longer, buf, size);
        ASSERT_EQ(table_file_decode(longer, size + sizeof(struct unwind_row), &k, 100, &back), -TABLE_FILE_ESIZE);
        free(longer);
        unwind_table_done(&t);
}

static void any_byte_changed_is_refused(void)
{
        struct unwind_table t = small_table(9), back = {};
        struct table_file_key k = key_of_size(99);
        _cleanup_free_ uint8_t *buf = NULL;
        size_t size;

        buf = encode(&k, &t, &size);
        for (size_t i = 0; i < size; i++)
                for (unsigned bit = 0; bit < 8; bit++) {
                        buf[i] ^= (uint8_t)(1u << bit);
                        ASSERT_TRUE(table_file_decode(buf, size, &k, 100, &back) < 0);
                        buf[i] ^= (uint8_t)(1u << bit);
                }
        ASSERT_EQ(table_file_decode(buf, size, &k, 100, &back), 0);
        unwind_table_done(&back);
        unwind_table_done(&t);
}

static void each_wrong_header_says_why(void)
{
        struct unwind_table t = small_table(5), back = {};
        struct table_file_key k = key_of_size(99), other = key_of_size(100), id;
        struct table_file_header h;
        _cleanup_free_ uint8_t *buf = NULL;
        size_t size;

        buf = encode(&k, &t, &size);
        memcpy(&h, buf, sizeof(h));

        h.version = TABLE_FILE_VERSION + 1;
        memcpy(buf, &h, sizeof(h));
        ASSERT_EQ(table_file_decode(buf, size, &k, 100, &back), -TABLE_FILE_EVERSION);
        h.version = TABLE_FILE_VERSION;
        h.row_bytes = 16;
        memcpy(buf, &h, sizeof(h));
        ASSERT_EQ(table_file_decode(buf, size, &k, 100, &back), -TABLE_FILE_EVERSION);
        h.row_bytes = sizeof(struct unwind_row);
        h.magic[0] = 'X';
        memcpy(buf, &h, sizeof(h));
        ASSERT_EQ(table_file_decode(buf, size, &k, 100, &back), -TABLE_FILE_EBADMAGIC);
        h.magic[0] = TABLE_FILE_MAGIC[0];
        memcpy(buf, &h, sizeof(h));

        /* the file of another build (same ID, another size), or of a file by identity */
        ASSERT_EQ(table_file_decode(buf, size, &other, 100, &back), -TABLE_FILE_EKEY);
        table_file_key_from_identity(1, 2, 99, 4, 5, &id);
        ASSERT_EQ(table_file_decode(buf, size, &id, 100, &back), -TABLE_FILE_EKEY);
        /* more rows than the builder may make */
        ASSERT_EQ(table_file_decode(buf, size, &k, 4, &back), -TABLE_FILE_ESIZE);
        ASSERT_EQ(table_file_decode(buf, size, &k, 5, &back), 0);
        unwind_table_done(&back);
        unwind_table_done(&t);
}

static void rows_a_walker_cannot_search_are_refused_though_the_checksum_matches(void)
{
        struct unwind_table t = small_table(4), back = {};
        struct table_file_key k = key_of_size(99);
        _cleanup_free_ uint8_t *buf = NULL;
        size_t size;

        t.rows[2].start = t.rows[1].start;      /* two rows at one address */
        buf = encode(&k, &t, &size);
        ASSERT_EQ(table_file_decode(buf, size, &k, 100, &back), -TABLE_FILE_EROWS);
        free(buf);
        t.rows[2].start = 1000;                 /* out of order */
        buf = encode(&k, &t, &size);
        ASSERT_EQ(table_file_decode(buf, size, &k, 100, &back), -TABLE_FILE_EROWS);
        free(buf);
        t.rows[2].start = 40;
        t.rows[0].cfa_rule = _UNWIND_CFA_RULE_MAX;
        buf = encode(&k, &t, &size);
        ASSERT_EQ(table_file_decode(buf, size, &k, 100, &back), -TABLE_FILE_EROWS);
        unwind_table_done(&t);
}

static void the_checksum_changes_with_any_word(void)
{
        uint64_t words[6] = { 1, 2, 3, 4, 5, 6 };
        uint64_t sum = table_file_checksum(TABLE_FILE_CHECKSUM_INIT, words, sizeof(words));

        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                words[i] ^= 1ull << 63;
                ASSERT_TRUE(table_file_checksum(TABLE_FILE_CHECKSUM_INIT, words, sizeof(words)) != sum);
                words[i] ^= 1ull << 63;
        }
        /* swapped words too */
        words[0] = 2;
        words[1] = 1;
        ASSERT_TRUE(table_file_checksum(TABLE_FILE_CHECKSUM_INIT, words, sizeof(words)) != sum);
        /* and a tail that is not a whole word */
        ASSERT_TRUE(table_file_checksum(TABLE_FILE_CHECKSUM_INIT, words, 13) !=
                    table_file_checksum(TABLE_FILE_CHECKSUM_INIT, words, 12));
}

static const struct unit_test tests[] = {
        TEST(names_say_the_key_and_nothing_else),
        TEST(a_real_table_round_trips),
        TEST(a_table_without_rows_round_trips),
        TEST(a_file_cut_anywhere_is_refused),
        TEST(any_byte_changed_is_refused),
        TEST(each_wrong_header_says_why),
        TEST(rows_a_walker_cannot_search_are_refused_though_the_checksum_matches),
        TEST(the_checksum_changes_with_any_word),
};

int main(void)
{
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
