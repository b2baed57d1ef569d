/* SPDX-License-Identifier: MIT */
/* Unit tests for client/suppressions.c (LeakSanitizer's file format and template match) and
 * client/gate.c (suppressions applied to a report, then the CI gate's verdict). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "json-util.h"
#include "macro.h"
#include "render-gate.h"
#include "suppressions.h"
#include "test-util.h"

static struct suppressions *parse_ok(const char *text)
{
        struct suppressions *s = NULL;
        char *error = NULL;

        if (suppressions_parse(text, strlen(text), "ci.supp", &s, &error) < 0) {
                fprintf(stderr, "unexpected parse error: %s\n", error ? error : "?");
                abort();
        }
        ASSERT_TRUE(!error);
        return s;
}

/* The error a bad file gets: "ci.supp:LINE: ..." */
static void parse_fails(const char *text, size_t size, int expected, const char *starts_with)
{
        struct suppressions *s = NULL;
        _cleanup_free_ char *error = NULL;

        ASSERT_EQ(suppressions_parse(text, size, "ci.supp", &s, &error), expected);
        ASSERT_TRUE(!s);
        ASSERT_TRUE(error);
        if (strncmp(error, starts_with, strlen(starts_with)) != 0) {
                fprintf(stderr, "error \"%s\" does not start with \"%s\"\n", error, starts_with);
                abort();
        }
}

static void suppressions_file_reads_leak_lines_comments_and_blanks(void)
{
        struct suppressions *s = parse_ok("# LeakSanitizer's own examples\n"
                                          "\n"
                                          "leak:libfoo.so\n"
                                          "   leak:*bar*   \r\n"
                                          "\tleak:file.c\n"
                                          "# a comment after the lines\n"
                                          "leak:^func$\n"
                                          "leak: spaced\n"
                                          "leak:no_newline_at_the_end");

        ASSERT_STREQ(s->path, "ci.supp");
        ASSERT_EQ(s->n, 6);
        ASSERT_STREQ(s->items[0].pattern, "libfoo.so");
        ASSERT_EQ(s->items[0].line, 3);
        ASSERT_STREQ(s->items[1].pattern, "*bar*");
        ASSERT_EQ(s->items[1].line, 4);
        ASSERT_STREQ(s->items[2].pattern, "file.c");
        ASSERT_STREQ(s->items[3].pattern, "^func$");
        ASSERT_EQ(s->items[3].line, 7);
        ASSERT_STREQ(s->items[4].pattern, "spaced");
        ASSERT_STREQ(s->items[5].pattern, "no_newline_at_the_end");
        ASSERT_EQ(s->items[5].line, 9);
        suppressions_free(s);

        s = parse_ok("");
        ASSERT_EQ(s->n, 0);
        suppressions_free(s);
        s = parse_ok("\n\n# only comments\n");
        ASSERT_EQ(s->n, 0);
        suppressions_free(s);
}

static void suppressions_file_errors_name_the_line(void)
{
        static const char nul[] = "leak:a\0b\n";

        parse_fails("leak:ok\nfoo\n", 12, -EINVAL, "ci.supp:2: not a suppression");
        parse_fails("leak:ok\n\n# c\ninterceptor_via_fun:bar\n", 37, -EINVAL,
                    "ci.supp:4: 'interceptor_via_fun' suppressions are not memleakd's");
        parse_fails("leak:\n", 6, -EINVAL, "ci.supp:1: leak: without a pattern");
        parse_fails("leak:   \n", 9, -EINVAL, "ci.supp:1: leak: without a pattern");
        parse_fails("Leak:x\n", 7, -EINVAL, "ci.supp:1: 'Leak' suppressions");
        parse_fails(nul, sizeof(nul) - 1, -EINVAL, "ci.supp: a NUL byte");
}

static void suppressions_file_is_bounded(void)
{
        size_t size = SUPPRESSIONS_MAX_BYTES + 1;
        _cleanup_free_ char *big = malloc(size), *many = NULL, *long_line = NULL;
        size_t n = 0;

        ASSERT_TRUE(big);
        memset(big, '#', size);
        parse_fails(big, size, -EFBIG, "ci.supp: larger than");

        many = malloc((SUPPRESSIONS_MAX_PATTERNS + 1) * 7 + 1);
        ASSERT_TRUE(many);
        for (unsigned i = 0; i <= SUPPRESSIONS_MAX_PATTERNS; i++)
                n += (size_t)sprintf(many + n, "leak:x\n");
        parse_fails(many, n, -EFBIG, "ci.supp:10001: more than 10000 suppressions");

        long_line = malloc(SUPPRESSIONS_MAX_PATTERN + 8);
        ASSERT_TRUE(long_line);
        strcpy(long_line, "leak:");
        memset(long_line + 5, 'a', SUPPRESSIONS_MAX_PATTERN + 1);
        long_line[5 + SUPPRESSIONS_MAX_PATTERN + 1] = '\0';
        parse_fails(long_line, strlen(long_line), -EFBIG, "ci.supp:1: a pattern longer than");
}

static void pattern_matches_as_leaksanitizer_does(void)
{
        /* unanchored: anywhere in the name */
        ASSERT_TRUE(suppressions_pattern_match("libfoo.so", "/usr/lib/libfoo.so.1"));
        ASSERT_TRUE(suppressions_pattern_match("bar", "foobarbaz"));
        ASSERT_TRUE(suppressions_pattern_match("*bar*", "foobarbaz"));
        ASSERT_TRUE(suppressions_pattern_match("file.c", "/src/file.c"));
        ASSERT_TRUE(!suppressions_pattern_match("libbar.so", "/usr/lib/libfoo.so"));
        /* anchors */
        ASSERT_TRUE(suppressions_pattern_match("^func$", "func"));
        ASSERT_TRUE(!suppressions_pattern_match("^func$", "func2"));
        ASSERT_TRUE(!suppressions_pattern_match("^func$", "my_func"));
        ASSERT_TRUE(suppressions_pattern_match("^func", "func2"));
        ASSERT_TRUE(!suppressions_pattern_match("^func", "my_func"));
        ASSERT_TRUE(suppressions_pattern_match("func$", "my_func"));
        ASSERT_TRUE(!suppressions_pattern_match("func$", "func2"));
        /* wildcards inside, with what LeakSanitizer's first-occurrence search would miss */
        ASSERT_TRUE(suppressions_pattern_match("^std::*::push_back", "std::vector<int>::push_back(int)"));
        ASSERT_TRUE(suppressions_pattern_match("a*b$", "abab"));
        ASSERT_TRUE(suppressions_pattern_match("^a*c*e$", "abcde"));
        ASSERT_TRUE(!suppressions_pattern_match("^a*c*e$", "abcdef"));
        ASSERT_TRUE(suppressions_pattern_match("*", "x"));
        ASSERT_TRUE(suppressions_pattern_match("^*$", "x"));
        /* '$' elsewhere is a character */
        ASSERT_TRUE(suppressions_pattern_match("a$b", "xa$by"));
        /* nothing matches no name */
        ASSERT_TRUE(!suppressions_pattern_match("*", ""));
        ASSERT_TRUE(!suppressions_pattern_match("*", NULL));
}

static cJSON *frames_of(const char *json)
{
        cJSON *f = cJSON_Parse(json);

        ASSERT_TRUE(cJSON_IsArray(f));
        return f;
}

static void stack_matches_by_function_module_or_file_innermost_first(void)
{
        _cleanup_json_ cJSON *frames = frames_of(
                "[{\"symbol\":\"leak_here\",\"module\":\"/opt/app/bin/server\",\"file\":\"/src/app/cache.c\"},"
                " {\"symbol\":null,\"module\":\"/usr/lib/x86_64-linux-gnu/libfoo.so.1\",\"file\":null},"
                " {\"symbol\":\"main\",\"module\":\"/opt/app/bin/server\",\"file\":\"/src/app/main.c\"}]");
        _cleanup_json_ cJSON *unknown = frames_of("[{\"addr\":\"0x1\",\"symbol\":null,\"module\":null,\"file\":null}]");
        struct suppressions *s;

        s = parse_ok("leak:nothing_here\nleak:^main$\nleak:libfoo.so\n");
        /* libfoo.so's frame is inner to main's: it is the one met first */
        ASSERT_EQ(suppressions_match_frames(s, frames), 2);
        ASSERT_EQ(suppressions_match_frames(s, unknown), -1);
        ASSERT_EQ(suppressions_match_frames(NULL, frames), -1);
        suppressions_free(s);

        /* a module by its file name, anchored */
        s = parse_ok("leak:^server$\n");
        ASSERT_EQ(suppressions_match_frames(s, frames), 0);
        suppressions_free(s);
        /* a source file by its name, anchored, and by its path */
        s = parse_ok("leak:^main.c$\nleak:/src/app/cache.c\n");
        ASSERT_EQ(suppressions_match_frames(s, frames), 1);
        suppressions_free(s);
        s = parse_ok("leak:^cache.c$\n");
        ASSERT_EQ(suppressions_match_frames(s, frames), 0);
        suppressions_free(s);
        /* a function's name is matched whole with anchors */
        s = parse_ok("leak:^leak$\nleak:^leak_*$\n");
        ASSERT_EQ(suppressions_match_frames(s, frames), 1);
        suppressions_free(s);
        s = parse_ok("leak:^nothing*$\n");
        ASSERT_EQ(suppressions_match_frames(s, frames), -1);
        suppressions_free(s);
}

/* A run's report: pid 10 scanned at its exit, with a lost stack, a reachable one, a mapping. */
static const char run_report[] =
        "{\"top\":1000000,"
        " \"targets\":[{\"pid\":10,\"comm\":\"prog\",\"exited\":true,\"verdicts_qualified\":false,"
        "   \"reachability\":{\"error\":null,\"partial\":null}}],"
        " \"stacks\":["
        "  {\"pid\":10,\"mmap\":false,\"bytes\":4096,\"allocs\":2,\"verdict\":null,\"frames\":["
        "    {\"symbol\":\"keep_cache\",\"module\":\"/bin/prog\",\"file\":\"/src/prog.c\"}],"
        "   \"reachability\":{\"definitely_lost\":{\"bytes\":0,\"allocs\":0},\"indirectly_lost\":{\"bytes\":0,\"allocs\":0},"
        "     \"undecided\":{\"bytes\":0,\"allocs\":0},\"still_reachable\":{\"bytes\":4096,\"allocs\":2}}},"
        "  {\"pid\":10,\"mmap\":false,\"bytes\":381,\"allocs\":3,\"verdict\":null,\"frames\":["
        "    {\"symbol\":\"lose_list\",\"module\":\"/bin/prog\",\"file\":\"/src/prog.c\"},"
        "    {\"symbol\":\"main\",\"module\":\"/bin/prog\",\"file\":\"/src/prog.c\"}],"
        "   \"reachability\":{\"definitely_lost\":{\"bytes\":48,\"allocs\":1},\"indirectly_lost\":{\"bytes\":333,\"allocs\":2},"
        "     \"undecided\":{\"bytes\":0,\"allocs\":0},\"still_reachable\":{\"bytes\":0,\"allocs\":0}}},"
        "  {\"pid\":10,\"mmap\":true,\"bytes\":8192,\"allocs\":1,\"verdict\":null,\"frames\":["
        "    {\"symbol\":\"map_pages\",\"module\":\"/bin/prog\",\"file\":\"/src/prog.c\"}]}],"
        " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0}}";

static cJSON *report_of(const char *json)
{
        cJSON *r = cJSON_Parse(json);

        ASSERT_TRUE(cJSON_IsObject(r));
        return r;
}

static uint64_t num(const cJSON *o, const char *a, const char *b)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);

        if (b)
                v = cJSON_GetObjectItemCaseSensitive(v, b);
        ASSERT_TRUE(cJSON_IsNumber(v));
        return (uint64_t)v->valuedouble;
}

/* A live target's stack its scan has nothing of (its blocks came after the scan) is no lost
 * evidence; at an exit, where every block was there to scan, it cannot be decided. */
static void gate_does_not_judge_a_live_stack_newer_than_its_scan(void)
{
        static const char live[] =
                "{\"top\":1000000,"
                " \"targets\":[{\"pid\":7,\"comm\":\"srv\",\"exited\":false,\"verdicts_qualified\":false,"
                "   \"reachability\":{\"error\":null,\"partial\":null,\"at_exit\":false}}],"
                " \"stacks\":[{\"pid\":7,\"mmap\":false,\"bytes\":333,\"allocs\":1,\"verdict\":\"churn\","
                "   \"frames\":[{\"symbol\":\"refill\"}],\"reachability\":null}],"
                " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0}}";
        _cleanup_json_ cJSON *report = report_of(live), *at_exit = report_of(live);
        struct gate_result r;

        ASSERT_EQ(gate_apply(report, NULL, GATE_LOST, 3, 1000000, &r), 0);
        ASSERT_TRUE(!r.failed);
        ASSERT_EQ(cJSON_GetArraySize(r.undecided), 0);
        gate_result_done(&r);
        cJSON_ReplaceItemInObjectCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(at_exit, "targets"), 0),
                                                 "reachability"), "at_exit", cJSON_CreateTrue());
        ASSERT_EQ(gate_apply(at_exit, NULL, GATE_LOST, 3, 1000000, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(cJSON_GetArraySize(r.undecided), 1);
        gate_result_done(&r);
}

static void gate_fails_on_lost_blocks_and_passes_once_suppressed(void)
{
        _cleanup_json_ cJSON *report = report_of(run_report), *again = report_of(run_report);
        struct suppressions *s = parse_ok("leak:never_called\nleak:^lose_*\n");
        struct gate_result r;
        const cJSON *gate, *patterns;

        ASSERT_EQ(gate_apply(report, NULL, GATE_LOST, 23, 1000000, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(r.lost.stacks, 1);
        ASSERT_EQ(r.lost.bytes, 381);
        ASSERT_EQ(r.lost.allocs, 3);
        ASSERT_EQ(cJSON_GetArraySize(r.undecided), 0);
        gate = cJSON_GetObjectItemCaseSensitive(report, "gate");
        ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(gate, "failed")));
        ASSERT_EQ(num(gate, "error_exitcode", NULL), 23);
        ASSERT_EQ(num(gate, "lost", "bytes"), 381);
        ASSERT_STREQ(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(gate, "fail_on"), 0)->valuestring, "lost");
        ASSERT_TRUE(!cJSON_GetObjectItemCaseSensitive(report, "suppressed"));
        gate_result_done(&r);

        ASSERT_EQ(gate_apply(again, s, GATE_LOST, 23, 1000000, &r), 0);
        ASSERT_TRUE(!r.failed);
        ASSERT_EQ(r.lost.stacks, 0);
        ASSERT_EQ(r.suppressed.stacks, 1);
        ASSERT_EQ(r.suppressed.bytes, 381);
        ASSERT_EQ(r.suppressed.allocs, 3);
        ASSERT_EQ(r.patterns[0].stacks, 0);
        ASSERT_EQ(r.patterns[1].stacks, 1);
        ASSERT_EQ(r.patterns[1].bytes, 381);
        /* the suppressed stack left the list; what is left is as it was */
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(again, "stacks")), 2);
        ASSERT_EQ(num(again, "suppressed", "bytes"), 381);
        ASSERT_EQ(num(again, "suppressed", "allocs"), 3);
        ASSERT_EQ(num(again, "suppressed", "stacks"), 1);
        ASSERT_STREQ(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(again, "suppressed"), "file")->valuestring,
                     "ci.supp");
        patterns = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(again, "suppressed"), "patterns");
        ASSERT_EQ(cJSON_GetArraySize(patterns), 2);
        ASSERT_EQ(num(cJSON_GetArrayItem(patterns, 1), "line", NULL), 2);
        ASSERT_EQ(num(cJSON_GetArrayItem(patterns, 1), "bytes", NULL), 381);
        ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(again, "gate"), "failed")));
        gate_result_done(&r);
        suppressions_free(s);
}

static void gate_on_outstanding_counts_reachable_blocks_and_mappings(void)
{
        _cleanup_json_ cJSON *report = report_of(run_report);
        struct suppressions *s = parse_ok("leak:lose_list\n");
        struct gate_result r;

        ASSERT_EQ(gate_apply(report, s, GATE_OUTSTANDING, 1, 1000000, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(r.outstanding.stacks, 2);
        ASSERT_EQ(r.outstanding.bytes, 4096 + 8192);
        ASSERT_EQ(r.outstanding.allocs, 3);
        ASSERT_EQ(r.lost.stacks, 0);
        gate_result_done(&r);
        suppressions_free(s);
}

static void gate_cannot_decide_lost_without_a_scan(void)
{
        static const char no_scan[] =
                "{\"targets\":[{\"pid\":10,\"comm\":\"prog\",\"exited\":true,\"reachability\":null}],"
                " \"stacks\":[{\"pid\":10,\"mmap\":false,\"bytes\":100,\"allocs\":1,\"frames\":[{\"symbol\":\"f\"}]}],"
                " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0}}";
        static const char failed_scan[] =
                "{\"targets\":[{\"pid\":10,\"comm\":\"prog\",\"exited\":true,"
                "   \"reachability\":{\"error\":\"cannot stop pid 10: traced by pid 9\"}}],"
                " \"stacks\":[{\"pid\":10,\"mmap\":false,\"bytes\":100,\"allocs\":1,\"frames\":[{\"symbol\":\"f\"}]}],"
                " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0}}";
        _cleanup_json_ cJSON *a = report_of(no_scan), *b = report_of(no_scan), *c = report_of(failed_scan),
                             *d = report_of(no_scan);
        struct suppressions *s = parse_ok("leak:^f$\n");
        struct gate_result r;

        ASSERT_EQ(gate_apply(a, NULL, GATE_LOST, 23, 10, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(r.lost.stacks, 0);
        ASSERT_EQ(cJSON_GetArraySize(r.undecided), 1);
        ASSERT_TRUE(strstr(cJSON_GetArrayItem(r.undecided, 0)->valuestring, "lost: pid 10 (prog) was not scanned"));
        gate_result_done(&r);
        /* every stack suppressed: nothing left to decide */
        ASSERT_EQ(gate_apply(b, s, GATE_LOST, 23, 10, &r), 0);
        ASSERT_TRUE(!r.failed);
        gate_result_done(&r);
        ASSERT_EQ(gate_apply(c, NULL, GATE_LOST, 23, 10, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_TRUE(strstr(cJSON_GetArrayItem(r.undecided, 0)->valuestring, "traced by pid 9"));
        gate_result_done(&r);
        /* only what can be decided: outstanding */
        ASSERT_EQ(gate_apply(d, NULL, GATE_OUTSTANDING, 23, 10, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(cJSON_GetArraySize(r.undecided), 0);
        gate_result_done(&r);
        suppressions_free(s);
}

static void gate_on_growing_judges_verdicts_and_says_when_there_are_none(void)
{
        static const char live[] =
                "{\"targets\":[{\"pid\":7,\"comm\":\"srv\",\"exited\":false,\"verdicts_qualified\":false,\"reachability\":null}],"
                " \"stacks\":["
                "  {\"pid\":7,\"bytes\":9000,\"allocs\":90,\"verdict\":\"growing\",\"frames\":[{\"symbol\":\"grow\"}]},"
                "  {\"pid\":7,\"bytes\":100,\"allocs\":1,\"verdict\":\"plateau\",\"frames\":[{\"symbol\":\"init\"}]}],"
                " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0}}";
        static const char pending[] =
                "{\"targets\":[{\"pid\":7,\"comm\":\"srv\",\"exited\":false,\"verdicts_qualified\":false}],"
                " \"stacks\":[{\"pid\":7,\"bytes\":10,\"allocs\":1,\"verdict\":\"pending\",\"snapshots_missing\":4,"
                "   \"frames\":[{\"symbol\":\"init\"}]}],"
                " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0}}";
        static const char qualified[] =
                "{\"targets\":[{\"pid\":7,\"comm\":\"srv\",\"exited\":false,\"verdicts_qualified\":true}],"
                " \"stacks\":[{\"pid\":7,\"bytes\":10,\"allocs\":1,\"verdict\":\"plateau\",\"frames\":[{\"symbol\":\"init\"}]}],"
                " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0}}";
        _cleanup_json_ cJSON *a = report_of(live), *b = report_of(live), *c = report_of(pending),
                             *d = report_of(qualified), *e = report_of(run_report);
        struct suppressions *s = parse_ok("leak:grow\n");
        struct gate_result r;

        ASSERT_EQ(gate_apply(a, NULL, GATE_GROWING, 3, 1000000, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(r.growing.stacks, 1);
        ASSERT_EQ(r.growing.bytes, 9000);
        gate_result_done(&r);
        ASSERT_EQ(gate_apply(b, s, GATE_GROWING, 3, 1000000, &r), 0);
        ASSERT_TRUE(!r.failed);
        ASSERT_EQ(r.suppressed.bytes, 9000);
        gate_result_done(&r);
        ASSERT_EQ(gate_apply(c, NULL, GATE_GROWING, 3, 1000000, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_TRUE(strstr(cJSON_GetArrayItem(r.undecided, 0)->valuestring, "too few snapshots (4 more needed"));
        gate_result_done(&r);
        ASSERT_EQ(gate_apply(d, NULL, GATE_GROWING, 3, 1000000, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_TRUE(strstr(cJSON_GetArrayItem(r.undecided, 0)->valuestring, "a stack may grow unseen"));
        gate_result_done(&r);
        /* an exited program's stacks without a verdict kept; its mapping is not judged for growth */
        ASSERT_EQ(gate_apply(e, NULL, GATE_GROWING, 3, 1000000, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(cJSON_GetArraySize(r.undecided), 1);
        ASSERT_TRUE(strstr(cJSON_GetArrayItem(r.undecided, 0)->valuestring,
                           "a stack of pid 10 (prog) has no verdict kept from its exit"));
        gate_result_done(&r);
        suppressions_free(s);
}

/* An exited program's stacks carry the verdicts kept at its exit: judged as a live one's, and one
 * that ran too short for a verdict cannot be decided, said as such. */
static void gate_on_growing_judges_an_exited_program_by_its_verdicts_at_exit(void)
{
        static const char exited[] =
                "{\"targets\":[{\"pid\":10,\"comm\":\"prog\",\"exited\":true,\"snapshots\":30,\"verdicts_qualified\":false}],"
                " \"stacks\":["
                "  {\"pid\":10,\"bytes\":3330,\"allocs\":30,\"verdict\":\"growing\",\"frames\":[{\"symbol\":\"grow\"}]},"
                "  {\"pid\":10,\"bytes\":999,\"allocs\":3,\"verdict\":\"churn\",\"frames\":[{\"symbol\":\"churn\"}]},"
                "  {\"pid\":10,\"bytes\":4440,\"allocs\":20,\"verdict\":\"plateau\",\"frames\":[{\"symbol\":\"init\"}]}],"
                " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0}}";
        static const char short_lived[] =
                "{\"targets\":[{\"pid\":10,\"comm\":\"prog\",\"exited\":true,\"snapshots\":2,\"verdicts_qualified\":false}],"
                " \"stacks\":["
                "  {\"pid\":10,\"bytes\":100,\"allocs\":1,\"verdict\":\"pending\",\"snapshots_missing\":3,"
                "   \"frames\":[{\"symbol\":\"init\"}]},"
                "  {\"pid\":10,\"bytes\":200,\"allocs\":2,\"verdict\":\"pending\",\"snapshots_missing\":3,"
                "   \"frames\":[{\"symbol\":\"more\"}]}],"
                " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0}}";
        _cleanup_json_ cJSON *a = report_of(exited), *b = report_of(exited), *c = report_of(short_lived),
                             *d = report_of(short_lived);
        struct suppressions *s = parse_ok("leak:^grow$\n");
        struct gate_result r;

        ASSERT_EQ(gate_apply(a, NULL, GATE_GROWING, 23, 1000000, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(cJSON_GetArraySize(r.undecided), 0);
        ASSERT_EQ(r.growing.stacks, 1);
        ASSERT_EQ(r.growing.bytes, 3330);
        ASSERT_EQ(r.growing.allocs, 30);
        gate_result_done(&r);
        /* the growing stack suppressed: churn and plateau pass */
        ASSERT_EQ(gate_apply(b, s, GATE_GROWING, 23, 1000000, &r), 0);
        ASSERT_TRUE(!r.failed);
        ASSERT_EQ(r.suppressed.bytes, 3330);
        gate_result_done(&r);
        /* too short to judge: undecided, once for the program, and why */
        ASSERT_EQ(gate_apply(c, NULL, GATE_GROWING, 23, 1000000, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(r.growing.stacks, 0);
        ASSERT_EQ(cJSON_GetArraySize(r.undecided), 1);
        ASSERT_TRUE(strstr(cJSON_GetArrayItem(r.undecided, 0)->valuestring,
                           "pid 10 (prog) exited after 2 snapshots: a growth verdict needed 3 more"));
        ASSERT_TRUE(strstr(cJSON_GetArrayItem(r.undecided, 0)->valuestring, "ran too short to judge its growth"));
        gate_result_done(&r);
        /* everything it holds suppressed: nothing left to judge, it passes */
        suppressions_free(s);
        s = parse_ok("leak:*\n");
        ASSERT_EQ(gate_apply(d, s, GATE_GROWING, 23, 1000000, &r), 0);
        ASSERT_TRUE(!r.failed);
        gate_result_done(&r);
        suppressions_free(s);
}

static void gate_judges_every_stack_then_folds_past_top(void)
{
        _cleanup_json_ cJSON *report = report_of(run_report);
        _cleanup_json_ cJSON *unlisted = report_of(run_report);
        const cJSON *other;
        struct gate_result r;

        /* the lost stack is second: --top 1 would not show it, the gate still sees it */
        ASSERT_EQ(gate_apply(report, NULL, GATE_LOST, 23, 1, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(r.lost.bytes, 381);
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(report, "stacks")), 1);
        other = cJSON_GetObjectItemCaseSensitive(report, "other");
        ASSERT_EQ(num(other, "stacks", NULL), 2);
        ASSERT_EQ(num(other, "bytes", NULL), 381 + 8192);
        ASSERT_EQ(num(other, "allocs", NULL), 4);
        gate_result_done(&r);

        /* stacks memleakd did not list cannot be judged */
        cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(unlisted, "other"), "stacks",
                                               cJSON_CreateNumber(5));
        cJSON_DeleteItemFromArray(cJSON_GetObjectItemCaseSensitive(unlisted, "stacks"), 1);
        ASSERT_EQ(gate_apply(unlisted, NULL, GATE_LOST, 23, 1000000, &r), 0);
        ASSERT_TRUE(r.failed);
        ASSERT_EQ(r.lost.stacks, 0);
        ASSERT_TRUE(strstr(cJSON_GetArrayItem(r.undecided, 0)->valuestring, "5 stacks were not listed"));
        gate_result_done(&r);
}

static void gate_kinds_parse_a_comma_list(void)
{
        unsigned mask;
        char buf[64];

        ASSERT_EQ(gate_kinds_parse("lost", &mask), 0);
        ASSERT_EQ(mask, GATE_LOST);
        ASSERT_EQ(gate_kinds_parse("growing,lost,outstanding", &mask), 0);
        ASSERT_EQ(mask, GATE_LOST | GATE_GROWING | GATE_OUTSTANDING);
        ASSERT_STREQ(gate_kinds_to_string(mask, buf, sizeof(buf)), "lost,growing,outstanding");
        ASSERT_EQ(gate_kinds_parse("", &mask), -EINVAL);
        ASSERT_EQ(gate_kinds_parse("lost,", &mask), -EINVAL);
        ASSERT_EQ(gate_kinds_parse(",lost", &mask), -EINVAL);
        ASSERT_EQ(gate_kinds_parse("lost,lost", &mask), -EINVAL);
        ASSERT_EQ(gate_kinds_parse("leaks", &mask), -EINVAL);
        ASSERT_EQ(gate_kinds_parse("los", &mask), -EINVAL);
}

static void suppressed_text_lists_the_patterns_used(void)
{
        _cleanup_json_ cJSON *report = report_of(run_report);
        struct suppressions *s = parse_ok("# ours\nleak:never_called\nleak:^lose_*\nleak:map_pages\n");
        struct gate_result r;
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        ASSERT_EQ(gate_apply(report, s, 0, 0, 1000000, &r), 0);
        ASSERT_TRUE(!cJSON_GetObjectItemCaseSensitive(report, "gate"));
        ASSERT_EQ(render_suppressed(f, report), 0);
        fclose(f);
        ASSERT_STREQ(text,
                     "\nSuppressed: 8573 bytes in 4 blocks by 2 stacks (ci.supp)\n"
                     "Suppressions used:\n"
                     "  stacks   blocks      bytes  pattern\n"
                     "       1        3        381  ^lose_* (line 3)\n"
                     "       1        1       8192  map_pages (line 4)\n");
        gate_result_done(&r);
        suppressions_free(s);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(suppressions_file_reads_leak_lines_comments_and_blanks),
                TEST(suppressions_file_errors_name_the_line),
                TEST(suppressions_file_is_bounded),
                TEST(pattern_matches_as_leaksanitizer_does),
                TEST(stack_matches_by_function_module_or_file_innermost_first),
                TEST(gate_does_not_judge_a_live_stack_newer_than_its_scan),
                TEST(gate_fails_on_lost_blocks_and_passes_once_suppressed),
                TEST(gate_on_outstanding_counts_reachable_blocks_and_mappings),
                TEST(gate_cannot_decide_lost_without_a_scan),
                TEST(gate_on_growing_judges_verdicts_and_says_when_there_are_none),
        TEST(gate_on_growing_judges_an_exited_program_by_its_verdicts_at_exit),
                TEST(gate_judges_every_stack_then_folds_past_top),
                TEST(gate_kinds_parse_a_comma_list),
                TEST(suppressed_text_lists_the_patterns_used),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
