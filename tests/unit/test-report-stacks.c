/* Unit tests for json-raw.c and report-stacks.c: a reply read with its report's stacks kept as
 * text, and each stack read back with its frames, from the report's locations or its own. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "json-raw.h"
#include "json-util.h"
#include "reply-fields.h"
#include "report-stacks.h"
#include "test-util.h"

static const char *const report_stacks[] = { "report", "stacks", NULL };

static int parse(const char *text, cJSON **ret)
{
        return json_parse_raw_array(text, strlen(text), report_stacks, ret);
}

static void raw_array_keeps_each_stack_as_its_text(void)
{
        /* brackets, braces and quotes inside strings do not end an element */
        const char *text = " {\"v\": 1, \"report\": {\"top\": 2, \"stacks\": [ {\"pid\": 1, \"s\": \"]}\\\",{\"} ,"
                           "{\"pid\": 2, \"locations\": [0, 1]}], \"other\": {\"stacks\": 0}}, \"ok\": true}\n";
        _cleanup_json_ cJSON *reply = NULL;
        const cJSON *report, *stacks;

        ASSERT_EQ(parse(text, &reply), 0);
        report = cJSON_GetObjectItemCaseSensitive(reply, RF_REPORT);
        stacks = cJSON_GetObjectItemCaseSensitive(report, RF_STACKS);
        ASSERT_EQ(cJSON_GetArraySize(stacks), 2);
        ASSERT_TRUE(cJSON_IsRaw(cJSON_GetArrayItem(stacks, 0)));
        ASSERT_STREQ(cJSON_GetArrayItem(stacks, 0)->valuestring, "{\"pid\": 1, \"s\": \"]}\\\",{\"}");
        ASSERT_STREQ(cJSON_GetArrayItem(stacks, 1)->valuestring, "{\"pid\": 2, \"locations\": [0, 1]}");
        /* the rest parsed as cJSON would */
        ASSERT_EQ(cJSON_GetObjectItemCaseSensitive(report, RF_TOP)->valueint, 2);
        ASSERT_TRUE(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(report, RF_OTHER)));
        ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "ok")));
}

static void raw_array_elsewhere_or_absent_parses_as_usual(void)
{
        _cleanup_json_ cJSON *a = NULL, *b = NULL, *c = NULL;

        /* "stacks" not under "report": an ordinary array */
        ASSERT_EQ(parse("{\"stacks\": [{\"pid\": 1}]}", &a), 0);
        ASSERT_TRUE(cJSON_IsObject(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(a, RF_STACKS), 0)));
        /* "report" not an object, "stacks" not an array: as they are */
        ASSERT_EQ(parse("{\"report\": 3}", &b), 0);
        ASSERT_EQ(cJSON_GetObjectItemCaseSensitive(b, RF_REPORT)->valueint, 3);
        ASSERT_EQ(parse("{\"report\": {\"stacks\": null}, \"x\": []}", &c), 0);
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, RF_REPORT),
                                                                  RF_STACKS)));
}

static void raw_array_refuses_what_is_not_one_object(void)
{
        const char *bad[] = {
                "", "   ", "[]", "1", "{", "{\"a\"}", "{\"a\": }", "{\"a\": 1,}", "{\"a\": 1} x", "{\"a\": 1}}",
                "{\"report\": {\"stacks\": [{\"pid\": 1}, ]}}", "{\"report\": {\"stacks\": [{\"pid\": 1}}",
                "{\"report\": {\"stacks\": [\"unterminated]}}", "{\"a\": tru}", "{\"a\" 1}", "{1: 2}",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                cJSON *o = NULL;

                ASSERT_EQ(parse(bad[i], &o), -EBADMSG);
                ASSERT_TRUE(o == NULL);
        }
}

static void stacks_read_back_with_their_frames(void)
{
        const char *text = "{\"report\": {\"locations\": [{\"symbol\": \"leak\"}, {\"symbol\": \"ma\\u001bin\"}],"
                           "\"stacks\": [{\"bytes\": 8, \"locations\": [0, 1]}, {\"bytes\": 4, \"locations\": [1]},"
                           "{\"bytes\": 2, \"frames\": [{\"symbol\": \"own\"}]}, {\"bytes\": 1, \"locations\": [2]},"
                           "[1], {\"bytes\": 1, \"locations\": [-1]}]}}";
        _cleanup_json_ cJSON *reply = NULL, *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        _cleanup_(report_stacks_done) struct report_stacks rs = {};
        const cJSON *report, *item;

        ASSERT_EQ(parse(text, &reply), 0);
        report = cJSON_GetObjectItemCaseSensitive(reply, RF_REPORT);
        ASSERT_EQ(report_stacks_init(&rs, report), 0);
        ASSERT_EQ(rs.n_locations, 2u);
        item = rs.stacks->child;
        ASSERT_EQ(report_stacks_open(&rs, item, NULL, NULL, &a), 0);
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(a, RF_FRAMES)), 2);
        ASSERT_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(a, RF_FRAMES), 0)->child->valuestring, "leak");
        item = item->next;
        ASSERT_EQ(report_stacks_open(&rs, item, NULL, NULL, &b), 0);
        ASSERT_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(b, RF_FRAMES), 0)->child->valuestring,
                     "ma\x1b" "in");
        /* an older memleakd's stack keeps its own frames */
        item = item->next;
        ASSERT_EQ(report_stacks_open(&rs, item, NULL, NULL, &c), 0);
        ASSERT_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, RF_FRAMES), 0)->child->valuestring, "own");
        /* an index past the table, a stack that is no object, a negative index */
        item = item->next;
        ASSERT_EQ(report_stacks_open(&rs, item, NULL, NULL, &d), -EBADMSG);
        item = item->next;
        ASSERT_EQ(report_stacks_open(&rs, item, NULL, NULL, &d), -EBADMSG);
        item = item->next;
        ASSERT_EQ(report_stacks_open(&rs, item, NULL, NULL, &d), -EBADMSG);
        ASSERT_TRUE(d == NULL);
        /* the frames are the report's entries: the report outlives them */
        cJSON_Delete(TAKE_PTR(a));
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(report, RF_LOCATIONS)), 2);
}

static void expand_makes_every_stack_whole(void)
{
        const char *text = "{\"report\": {\"locations\": [{\"symbol\": \"leak\"}],"
                           "\"stacks\": [{\"bytes\": 8, \"locations\": [0, 0]}, {\"bytes\": 4, \"frames\": []}]}}";
        _cleanup_json_ cJSON *reply = NULL, *bad = NULL;
        cJSON *report, *first;

        ASSERT_EQ(parse(text, &reply), 0);
        report = cJSON_GetObjectItemCaseSensitive(reply, RF_REPORT);
        ASSERT_EQ(report_stacks_expand(report), 0);
        first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(report, RF_STACKS), 0);
        ASSERT_TRUE(cJSON_IsObject(first));
        ASSERT_EQ(cJSON_GetObjectItemCaseSensitive(first, RF_BYTES)->valueint, 8);
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(first, RF_FRAMES)), 2);
        /* copies, not references: the report's locations may go */
        cJSON_DeleteItemFromObjectCaseSensitive(report, RF_LOCATIONS);
        ASSERT_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(first, RF_FRAMES), 1)->child->valuestring,
                     "leak");
        ASSERT_TRUE(cJSON_IsObject(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(report, RF_STACKS), 1)));
        ASSERT_EQ(report_stacks_expand(NULL), -EBADMSG);
        ASSERT_EQ(parse("{\"report\": {\"locations\": 5, \"stacks\": []}}", &bad), 0);
        ASSERT_EQ(report_stacks_expand(cJSON_GetObjectItemCaseSensitive(bad, RF_REPORT)), -EBADMSG);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(raw_array_keeps_each_stack_as_its_text),
                TEST(raw_array_elsewhere_or_absent_parses_as_usual),
                TEST(raw_array_refuses_what_is_not_one_object),
                TEST(stacks_read_back_with_their_frames),
                TEST(expand_makes_every_stack_whole),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
