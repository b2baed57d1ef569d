/* SPDX-License-Identifier: MIT */
/* Tests for text-safe.c: what a traced process names is valid UTF-8 on the wire and inert when printed. */
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "macro.h"
#include "text-safe.h"
#include "test-util.h"

static void utf8_is_checked_strictly(void)
{
        ASSERT_TRUE(utf8_valid(""));
        ASSERT_TRUE(utf8_valid("leak_session_buffer"));
        ASSERT_TRUE(utf8_valid("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
        ASSERT_TRUE(!utf8_valid("\xff"));
        ASSERT_TRUE(!utf8_valid("\xc3"));                       /* cut short */
        ASSERT_TRUE(!utf8_valid("\xc0\xaf"));                   /* overlong '/' */
        ASSERT_TRUE(!utf8_valid("\xe0\x80\xaf"));               /* overlong, 3 bytes */
        ASSERT_TRUE(!utf8_valid("\xed\xa0\x80"));               /* a surrogate */
        ASSERT_TRUE(!utf8_valid("\xf4\x90\x80\x80"));           /* past U+10FFFF */
}

static void bad_bytes_become_replacement_characters(void)
{
        _cleanup_free_ char *a = utf8_repair("ab\xff" "cd");
        _cleanup_free_ char *b = utf8_repair("\xc3\xa9\xc3");
        _cleanup_free_ char *c = utf8_repair("fine");

        ASSERT_STREQ(a, "ab\xef\xbf\xbd" "cd");
        ASSERT_STREQ(b, "\xc3\xa9\xef\xbf\xbd");
        ASSERT_STREQ(c, "fine");
        ASSERT_TRUE(utf8_valid(a) && utf8_valid(b));
}

static void controls_are_spelled_out(void)
{
        _cleanup_free_ char *esc = text_escape_controls("evil\x1b]0;owned\x07\x1b[2J");
        _cleanup_free_ char *c1 = text_escape_controls("x\xc2\x9b" "31m");
        _cleanup_free_ char *bidi = text_escape_controls("abc\xe2\x80\xae" "fed");
        _cleanup_free_ char *plain = text_escape_controls("caf\xc3\xa9/lib.so");
        _cleanup_free_ char *slash = text_escape_controls("a\\x1b");

        ASSERT_STREQ(esc, "evil\\x1b]0;owned\\x07\\x1b[2J");
        ASSERT_STREQ(c1, "x\\x9b31m");
        ASSERT_STREQ(bidi, "abc\\u202Efed");
        ASSERT_STREQ(plain, "caf\xc3\xa9/lib.so");
        ASSERT_STREQ(slash, "a\\\\x1b");                        /* cannot pose as an escape */
        ASSERT_TRUE(text_has_controls("\x1b"));
        ASSERT_TRUE(!text_has_controls("caf\xc3\xa9"));
}

static void every_string_of_a_tree_is_mapped(void)
{
        _cleanup_json_ cJSON *root = cJSON_CreateObject();
        cJSON *arr, *o;
        _cleanup_free_ char *printed = NULL;

        ASSERT_TRUE(root);
        cJSON_AddStringToObject(root, "comm", "bad\xff");
        arr = cJSON_AddArrayToObject(root, "frames");
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "symbol", "\xc0\xaf");
        cJSON_AddStringToObject(o, "module", "/ok.so");
        cJSON_AddItemToArray(arr, o);
        cJSON_AddItemToArray(arr, cJSON_CreateString("tail\xfe"));
        ASSERT_EQ(json_strings_map(root, utf8_needs_repair, utf8_repair), 0);
        printed = cJSON_PrintUnformatted(root);
        ASSERT_TRUE(printed && utf8_valid(printed));
        ASSERT_STREQ(cJSON_GetObjectItem(root, "comm")->valuestring, "bad\xef\xbf\xbd");
        ASSERT_STREQ(cJSON_GetObjectItem(o, "module")->valuestring, "/ok.so");
        ASSERT_STREQ(cJSON_GetArrayItem(arr, 1)->valuestring, "tail\xef\xbf\xbd");
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(utf8_is_checked_strictly),
                TEST(bad_bytes_become_replacement_characters),
                TEST(controls_are_spelled_out),
                TEST(every_string_of_a_tree_is_mapped),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
