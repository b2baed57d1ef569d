/* SPDX-License-Identifier: MIT */
/* Unit tests for client/html-report.c: the page carries the report and the history as data, which
 * names a traced process chose cannot turn into markup. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html-report.h"
#include "json-util.h"
#include "macro.h"
#include "test-util.h"

static const char data_open[] = "<script type=\"application/json\" id=\"memleakd-data\">";

static char *write_page(const cJSON *report, const cJSON *history, int *ret_r)
{
        char *text = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&text, &n);

        ASSERT_TRUE(f);
        *ret_r = html_report_write(f, report, history);
        ASSERT_EQ(fclose(f), 0);
        return text;
}

/* The data element's text, parsed. */
static cJSON *page_data(const char *page)
{
        const char *start = strstr(page, data_open), *end;
        _cleanup_free_ char *json = NULL;

        ASSERT_TRUE(start);
        start += strlen(data_open);
        end = strstr(start, "</script>");
        ASSERT_TRUE(end);
        json = strndup(start, (size_t)(end - start));
        ASSERT_TRUE(json);
        return cJSON_Parse(json);
}

static size_t count(const char *s, const char *what)
{
        size_t n = 0;

        for (; (s = strstr(s, what)); s += strlen(what))
                n++;
        return n;
}

static void the_page_carries_the_report_and_the_history(void)
{
        _cleanup_json_ cJSON *report = cJSON_Parse(
                "{\"generated_at\":1,\"targets\":[{\"pid\":7,\"comm\":\"leaky\"}],"
                "\"stacks\":[{\"pid\":7,\"stack_id\":42,\"bytes\":5005,\"allocs\":5,\"verdict\":\"growing\","
                "\"frames\":[{\"symbol\":\"leak_fn\",\"file\":\"leaky.c\",\"line\":12}]}]}");
        _cleanup_json_ cJSON *history = cJSON_Parse(
                "{\"targets\":[{\"pid\":7,\"totals\":[{\"t\":1,\"bytes\":0},{\"t\":2,\"bytes\":5005}],"
                "\"stacks\":[{\"stack_id\":42,\"points\":[{\"t\":1,\"bytes\":0},{\"t\":2,\"bytes\":5005}]}]}]}");
        _cleanup_json_ cJSON *data = NULL;
        _cleanup_free_ char *page = NULL;
        int r;

        page = write_page(report, history, &r);
        ASSERT_EQ(r, 0);
        ASSERT_TRUE(strncmp(page, "<!DOCTYPE html>", 15) == 0);
        ASSERT_TRUE(strstr(page, "</html>") != NULL);
        ASSERT_EQ(count(page, "@MEMLEAKD_DATA@"), 0);
        ASSERT_EQ(count(page, data_open), 1);
        data = page_data(page);
        ASSERT_TRUE(data);
        ASSERT_TRUE(cJSON_Compare(cJSON_GetObjectItem(data, "report"), report, true));
        ASSERT_TRUE(cJSON_Compare(cJSON_GetObjectItem(data, "history"), history, true));
        /* the caller's objects are its own still */
        ASSERT_EQ(cJSON_GetObjectItem(report, "generated_at")->valuedouble, 1);
}

/* A symbol that closes the script and opens another, a comment, an entity: data, not markup. */
static void names_cannot_become_markup(void)
{
        static const char hostile[] = "</script><script>alert(1)</script><!-- &amp; <img src=x onerror=alert(2)>";
        _cleanup_json_ cJSON *report = cJSON_CreateObject(), *data = NULL;
        _cleanup_free_ char *page = NULL;
        cJSON *stacks, *stack, *frames, *frame;
        size_t scripts_in_template;
        int r;

        ASSERT_TRUE(report);
        stacks = cJSON_AddArrayToObject(report, "stacks");
        stack = cJSON_CreateObject();
        cJSON_AddItemToArray(stacks, stack);
        frames = cJSON_AddArrayToObject(stack, "frames");
        frame = cJSON_CreateObject();
        cJSON_AddItemToArray(frames, frame);
        cJSON_AddStringToObject(frame, "symbol", hostile);

        page = write_page(report, NULL, &r);
        ASSERT_EQ(r, 0);
        ASSERT_TRUE(strstr(page, "alert(1)") != NULL);                 /* the name is there, */
        ASSERT_TRUE(strstr(page, "<script>alert") == NULL);            /* but not as markup */
        ASSERT_TRUE(strstr(page, "<img") == NULL);
        ASSERT_TRUE(strstr(page, "<!-- &amp;") == NULL);
        scripts_in_template = count(page, "</script>");
        ASSERT_EQ(scripts_in_template, 2);                              /* the data's and the code's */
        data = page_data(page);
        ASSERT_TRUE(data);
        frame = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(
                cJSON_GetObjectItem(data, "report"), "stacks"), 0), "frames"), 0);
        ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(frame, "symbol")), hostile);
        ASSERT_TRUE(cJSON_GetObjectItem(data, "history") == NULL);
}

static cJSON *series(int n, int bytes_step)
{
        cJSON *points = cJSON_CreateArray();

        ASSERT_TRUE(points);
        for (int i = 0; i < n; i++) {
                cJSON *p = cJSON_CreateObject();

                ASSERT_TRUE(p);
                cJSON_AddNumberToObject(p, "t", 1795000000.5 + i);
                cJSON_AddNumberToObject(p, "bytes", (double)i * bytes_step);
                cJSON_AddItemToArray(points, p);
        }
        return points;
}

/* A ring deeper than the page keeps: the same snapshots, evenly spread with the oldest and the
 * newest, in the totals and in every stack's series; a shallower one whole. */
static void a_deep_ring_is_thinned_alike_in_every_series(void)
{
        _cleanup_json_ cJSON *report = cJSON_Parse("{\"stacks\":[]}"), *history = cJSON_CreateObject(), *data = NULL;
        _cleanup_free_ char *page = NULL;
        cJSON *targets, *deep, *shallow, *stacks, *stack, *totals, *points;
        int r;

        ASSERT_TRUE(report && history);
        targets = cJSON_AddArrayToObject(history, "targets");
        deep = cJSON_CreateObject();
        cJSON_AddItemToArray(targets, deep);
        cJSON_AddNumberToObject(deep, "snapshots", 1001);
        cJSON_AddItemToObject(deep, "totals", series(1001, 10));
        stacks = cJSON_AddArrayToObject(deep, "stacks");
        stack = cJSON_CreateObject();
        cJSON_AddItemToArray(stacks, stack);
        cJSON_AddItemToObject(stack, "points", series(1001, 3));
        shallow = cJSON_CreateObject();
        cJSON_AddItemToArray(targets, shallow);
        cJSON_AddItemToObject(shallow, "totals", series(HTML_HISTORY_POINTS_MAX, 1));

        page = write_page(report, history, &r);
        ASSERT_EQ(r, 0);
        data = page_data(page);
        ASSERT_TRUE(data);
        targets = cJSON_GetObjectItem(cJSON_GetObjectItem(data, "history"), "targets");
        deep = cJSON_GetArrayItem(targets, 0);
        totals = cJSON_GetObjectItem(deep, "totals");
        points = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(deep, "stacks"), 0), "points");
        ASSERT_EQ(cJSON_GetArraySize(totals), HTML_HISTORY_POINTS_MAX);
        ASSERT_EQ(cJSON_GetArraySize(points), HTML_HISTORY_POINTS_MAX);
        for (int j = 0; j < HTML_HISTORY_POINTS_MAX; j++) {
                int i = 1000 * j / (HTML_HISTORY_POINTS_MAX - 1);
                cJSON *total = cJSON_GetArrayItem(totals, j), *point = cJSON_GetArrayItem(points, j);

                ASSERT_EQ(cJSON_GetObjectItem(total, "t")->valuedouble, 1795000000.5 + i);
                ASSERT_EQ(cJSON_GetObjectItem(total, "bytes")->valuedouble, 10.0 * i);
                ASSERT_EQ(cJSON_GetObjectItem(point, "t")->valuedouble, 1795000000.5 + i);
                ASSERT_EQ(cJSON_GetObjectItem(point, "bytes")->valuedouble, 3.0 * i);
        }
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(totals, HTML_HISTORY_POINTS_MAX - 1), "t")->valuedouble,
                  1795000000.5 + 1000);
        ASSERT_EQ(cJSON_GetObjectItem(deep, "snapshots")->valuedouble, 1001);
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(targets, 1), "totals")),
                  HTML_HISTORY_POINTS_MAX);
        /* the caller's history is its own still */
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(history, "targets"), 0),
                                                         "totals")), 1001);
}

static void a_reply_that_is_no_report_is_refused(void)
{
        _cleanup_json_ cJSON *array = cJSON_CreateArray();
        _cleanup_free_ char *page = NULL;
        int r;

        page = write_page(array, NULL, &r);
        ASSERT_EQ(r, -EBADMSG);
        ASSERT_EQ(strlen(page), 0);
        free(TAKE_PTR(page));
        page = write_page(NULL, NULL, &r);
        ASSERT_EQ(r, -EBADMSG);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(the_page_carries_the_report_and_the_history),
                TEST(names_cannot_become_markup),
                TEST(a_deep_ring_is_thinned_alike_in_every_series),
                TEST(a_reply_that_is_no_report_is_refused),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
