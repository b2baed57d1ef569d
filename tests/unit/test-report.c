/* Unit tests for report building: order, --top folding, null for unknowns, stack errors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bpf-types.h"
#include "json-util.h"
#include "report.h"
#include "test-util.h"

static struct stack_row make_row(pid_t pid, int64_t stack_id, uint64_t bytes, uint64_t allocs,
                                 size_t n_ips, uint64_t first_ip)
{
        struct stack_row r = { .pid = pid, .stack_id = stack_id, .bytes = bytes, .allocs = allocs };

        if (n_ips) {
                r.ips = calloc(n_ips, sizeof(uint64_t));
                for (size_t i = 0; i < n_ips; i++)
                        r.ips[i] = first_ip + i * 0x10;
                r.n_ips = n_ips;
        }
        return r;
}

#define LEAKY_BUILD_ID "4c0e7a39b2d1f5e6a8c9d0b1e2f3a4b5c6d7e8f9"
#define LIBFOO_BUILD_ID "00ff10ee"

/* Addresses from 0x1000 resolve to "leak_fn" in /bin/leaky with line info; 0x2000.. to a symbol
 * without debug info (nor build ID); 0x3000.. to "inner" inlined into "outer"; 0x4000.. to a
 * module only; 0x5000.. to a build ID without a module; anything else resolves to nothing. */
static size_t fake_resolve(void *userdata, pid_t pid, uint64_t addr, struct frame_symbol *ret, size_t max)
{
        int *calls = userdata;

        (*calls)++;
        ASSERT_TRUE(max >= 2);
        if (addr >= 0x1000 && addr < 0x2000) {
                ret[0] = (struct frame_symbol) { .symbol = "leak_fn", .has_offset = true, .offset = addr - 0x1000,
                                                 .module = "/bin/leaky", .build_id = LEAKY_BUILD_ID,
                                                 .file = "leaky.c", .line = 42 };
                return 1;
        }
        if (addr >= 0x2000 && addr < 0x3000) {
                ret[0] = (struct frame_symbol) { .symbol = "libc_fn", .has_offset = true, .offset = 7,
                                                 .module = "/lib/libc.so.6" };
                return 1;
        }
        if (addr >= 0x3000 && addr < 0x4000) {
                ret[0] = (struct frame_symbol) { .symbol = "inner", .inlined = true, .module = "/bin/leaky",
                                                 .build_id = LEAKY_BUILD_ID, .file = "leaky.c", .line = 10 };
                ret[1] = (struct frame_symbol) { .symbol = "outer", .has_offset = true, .offset = 5,
                                                 .module = "/bin/leaky", .build_id = LEAKY_BUILD_ID,
                                                 .file = "leaky.c", .line = 20 };
                return 2;
        }
        if (addr >= 0x4000 && addr < 0x5000) {
                ret[0] = (struct frame_symbol) { .module = "/lib/libfoo.so", .has_module_offset = true,
                                                 .module_offset = addr - 0x4000 + 0x100,
                                                 .build_id = LIBFOO_BUILD_ID };
                return 1;
        }
        if (addr >= 0x5000 && addr < 0x6000) {
                ret[0] = (struct frame_symbol) { .symbol = "orphan", .build_id = LIBFOO_BUILD_ID };
                return 1;
        }
        return 0;
}

static cJSON *build(struct stack_rows *rows, uint64_t top, int *calls)
{
        struct report_target targets[] = {
                { .pid = 10, .comm = "leaky", .exited = false },
                { .pid = 20, .comm = "other", .exited = true },
        };
        _cleanup_json_ cJSON *lost = cJSON_CreateObject();

        cJSON_AddNumberToObject(lost, "stack_efault", 3);
        return report_build(rows, targets, 2, &(struct report_params) {
                .top = top, .generated_at = 1000, .lost = lost, .resolve = fake_resolve, .userdata = calls,
        });
}

static void report_sorts_stacks_by_bytes_then_allocs(void)
{
        struct stack_rows rows = { .rows = calloc(4, sizeof(struct stack_row)), .n = 4 };
        _cleanup_json_ cJSON *r = NULL;
        cJSON *stacks;
        int calls = 0;

        rows.rows[0] = make_row(10, 1, 100, 1, 1, 0x1000);
        rows.rows[1] = make_row(10, 2, 300, 3, 1, 0x1000);
        rows.rows[2] = make_row(20, 3, 100, 5, 1, 0x1000);
        rows.rows[3] = make_row(10, 4, 200, 2, 1, 0x1000);
        r = build(&rows, 10, &calls);
        ASSERT_TRUE(r);
        stacks = cJSON_GetObjectItem(r, "stacks");
        ASSERT_EQ(cJSON_GetArraySize(stacks), 4);
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 0), "bytes")->valuedouble, 300);
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 1), "bytes")->valuedouble, 200);
        /* equal bytes: more allocations first */
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 2), "allocs")->valuedouble, 5);
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 3), "allocs")->valuedouble, 1);
        stack_rows_done(&rows);
}

/* A pid reused: the exited target's rows keyed apart (a pid below 0) are its own, each target
 * and each stack shown with the real pid. */
static void a_reused_pid_keeps_each_target_s_rows_apart(void)
{
        struct stack_rows rows = { .rows = calloc(2, sizeof(struct stack_row)), .n = 2 };
        struct report_target targets[] = {
                { .pid = -1, .shown_pid = 10, .comm = "before", .exited = true },
                { .pid = 10, .comm = "after", .exited = false },
        };
        _cleanup_json_ cJSON *lost = cJSON_CreateObject(), *r = NULL;
        cJSON *t, *stacks;
        int calls = 0;

        rows.rows[0] = make_row(-1, 1, 700, 7, 1, 0x1000);
        rows.rows[1] = make_row(10, 2, 30, 3, 1, 0x1000);
        r = report_build(&rows, targets, 2, &(struct report_params) {
                .top = 10, .generated_at = 1000, .lost = lost, .resolve = fake_resolve, .userdata = &calls,
        });
        ASSERT_TRUE(r);
        t = cJSON_GetObjectItem(r, "targets");
        ASSERT_EQ(cJSON_GetArraySize(t), 2);
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(t, 0), "pid")->valuedouble, 10);
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(t, 0), "outstanding_bytes")->valuedouble, 700);
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(t, 1), "pid")->valuedouble, 10);
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(t, 1), "outstanding_bytes")->valuedouble, 30);
        stacks = cJSON_GetObjectItem(r, "stacks");
        ASSERT_EQ(cJSON_GetArraySize(stacks), 2);
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 0), "pid")->valuedouble, 10);
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 1), "pid")->valuedouble, 10);
        stack_rows_done(&rows);
}

static void report_folds_stacks_past_top_into_other(void)
{
        struct stack_rows rows = { .rows = calloc(3, sizeof(struct stack_row)), .n = 3 };
        _cleanup_json_ cJSON *r = NULL;
        cJSON *other;
        int calls = 0;

        rows.rows[0] = make_row(10, 1, 1000, 10, 2, 0x1000);
        rows.rows[1] = make_row(10, 2, 30, 3, 2, 0x1000);
        rows.rows[2] = make_row(20, 3, 7, 1, 2, 0x1000);
        r = build(&rows, 1, &calls);
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(r, "stacks")), 1);
        other = cJSON_GetObjectItem(r, "other");
        ASSERT_EQ(cJSON_GetObjectItem(other, "stacks")->valuedouble, 2);
        ASSERT_EQ(cJSON_GetObjectItem(other, "bytes")->valuedouble, 37);
        ASSERT_EQ(cJSON_GetObjectItem(other, "allocs")->valuedouble, 4);
        /* only the listed stack's frames are resolved */
        ASSERT_EQ(calls, 2);
        stack_rows_done(&rows);
}

static void report_totals_per_target_include_folded_stacks(void)
{
        struct stack_rows rows = { .rows = calloc(3, sizeof(struct stack_row)), .n = 3 };
        _cleanup_json_ cJSON *r = NULL;
        cJSON *t0, *t1;
        int calls = 0;

        rows.rows[0] = make_row(10, 1, 1000, 10, 1, 0x1000);
        rows.rows[1] = make_row(10, 2, 30, 3, 1, 0x1000);
        rows.rows[2] = make_row(20, 3, 7, 1, 1, 0x1000);
        r = build(&rows, 1, &calls);
        t0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "targets"), 0);
        t1 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "targets"), 1);
        ASSERT_EQ(cJSON_GetObjectItem(t0, "outstanding_bytes")->valuedouble, 1030);
        ASSERT_EQ(cJSON_GetObjectItem(t0, "outstanding_allocs")->valuedouble, 13);
        ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(t0, "exited")));
        ASSERT_EQ(cJSON_GetObjectItem(t1, "outstanding_bytes")->valuedouble, 7);
        ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(t1, "exited")));
        ASSERT_STREQ(cJSON_GetObjectItem(t1, "comm")->valuestring, "other");
        stack_rows_done(&rows);
}

/* A live target's trend ends at the report's own read: the bytes printed beside it. */
static void report_trend_of_a_live_target_ends_at_its_current_bytes(void)
{
        struct stack_rows rows = { .rows = calloc(2, sizeof(struct stack_row)), .n = 2 };
        struct report_target targets[] = {
                { .pid = 10, .comm = "leaky", .has_trend = true, .trend_to_now = true,
                  .trend_oldest_bytes = 400, .trend_oldest_usec = 940 * 1000000ULL,
                  .trend_window_s = 999, .trend_bytes = 999999 },
                { .pid = 20, .comm = "gone", .exited = true, .has_trend = true, .trend_window_s = 5, .trend_bytes = -7 },
        };
        _cleanup_json_ cJSON *lost = cJSON_CreateObject(), *r = NULL;
        cJSON *t0, *t1;
        int calls = 0;

        rows.rows[0] = make_row(10, 1, 1000, 10, 1, 0x1000);
        rows.rows[1] = make_row(10, 2, 30, 3, 1, 0x1000);
        r = report_build(&rows, targets, 2, &(struct report_params) {
                .top = 10, .generated_at = 1000, .lost = lost, .resolve = fake_resolve, .userdata = &calls,
        });
        t0 = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "targets"), 0), "trend");
        t1 = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "targets"), 1), "trend");
        ASSERT_EQ(cJSON_GetObjectItem(t0, "bytes_delta")->valuedouble, 1030 - 400);
        ASSERT_EQ(cJSON_GetObjectItem(t0, "window_s")->valuedouble, 60);
        /* an exited target's ends at its last snapshot */
        ASSERT_EQ(cJSON_GetObjectItem(t1, "bytes_delta")->valuedouble, -7);
        ASSERT_EQ(cJSON_GetObjectItem(t1, "window_s")->valuedouble, 5);
        stack_rows_done(&rows);
}

static void report_unknown_frame_fields_are_null(void)
{
        struct stack_rows rows = { .rows = calloc(1, sizeof(struct stack_row)), .n = 1 };
        _cleanup_json_ cJSON *r = NULL;
        cJSON *frames, *f0, *f1;
        int calls = 0;

        rows.rows[0] = make_row(10, 1, 64, 1, 2, 0x1ff0);     /* 0x1ff0 resolves, 0x2000 no line */
        r = build(&rows, 10, &calls);
        frames = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "stacks"), 0), "frames");
        ASSERT_EQ(cJSON_GetArraySize(frames), 2);
        f0 = cJSON_GetArrayItem(frames, 0);
        ASSERT_STREQ(cJSON_GetObjectItem(f0, "addr")->valuestring, "0x1ff0");
        ASSERT_STREQ(cJSON_GetObjectItem(f0, "symbol")->valuestring, "leak_fn");
        ASSERT_EQ(cJSON_GetObjectItem(f0, "offset")->valuedouble, 0xff0);
        ASSERT_STREQ(cJSON_GetObjectItem(f0, "file")->valuestring, "leaky.c");
        ASSERT_EQ(cJSON_GetObjectItem(f0, "line")->valuedouble, 42);
        f1 = cJSON_GetArrayItem(frames, 1);
        ASSERT_STREQ(cJSON_GetObjectItem(f1, "symbol")->valuestring, "libc_fn");
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(f1, "file")));
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(f1, "line")));
        stack_rows_done(&rows);

        rows = (struct stack_rows) { .rows = calloc(1, sizeof(struct stack_row)), .n = 1 };
        rows.rows[0] = make_row(10, 1, 64, 1, 1, 0x9000);     /* resolves to nothing */
        cJSON_Delete(r);
        r = build(&rows, 10, &calls);
        f0 = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "stacks"), 0), "frames"), 0);
        ASSERT_STREQ(cJSON_GetObjectItem(f0, "addr")->valuestring, "0x9000");
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(f0, "symbol")));
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(f0, "offset")));
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(f0, "module")));
        stack_rows_done(&rows);
}

static void report_inlined_calls_are_frames_of_their_own(void)
{
        struct stack_rows rows = { .rows = calloc(1, sizeof(struct stack_row)), .n = 1 };
        _cleanup_json_ cJSON *r = NULL;
        cJSON *frames, *f;
        int calls = 0;

        rows.rows[0] = make_row(10, 1, 64, 1, 3, 0x3ff0);     /* 0x3ff0 inlined, 0x4000 module, 0x4010 */
        rows.rows[0].ips[2] = 0x1000;
        r = build(&rows, 10, &calls);
        frames = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "stacks"), 0), "frames");
        /* one address, two frames: the inlined call first, both with the address */
        ASSERT_EQ(cJSON_GetArraySize(frames), 4);
        f = cJSON_GetArrayItem(frames, 0);
        ASSERT_STREQ(cJSON_GetObjectItem(f, "symbol")->valuestring, "inner");
        ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(f, "inlined")));
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(f, "offset")));
        ASSERT_STREQ(cJSON_GetObjectItem(f, "addr")->valuestring, "0x3ff0");
        ASSERT_EQ(cJSON_GetObjectItem(f, "line")->valuedouble, 10);
        f = cJSON_GetArrayItem(frames, 1);
        ASSERT_STREQ(cJSON_GetObjectItem(f, "symbol")->valuestring, "outer");
        ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(f, "inlined")));
        ASSERT_EQ(cJSON_GetObjectItem(f, "offset")->valuedouble, 5);
        ASSERT_STREQ(cJSON_GetObjectItem(f, "addr")->valuestring, "0x3ff0");
        ASSERT_EQ(cJSON_GetObjectItem(f, "line")->valuedouble, 20);
        /* nothing names it, but the module and the offset in its file are there */
        f = cJSON_GetArrayItem(frames, 2);
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(f, "symbol")));
        ASSERT_STREQ(cJSON_GetObjectItem(f, "module")->valuestring, "/lib/libfoo.so");
        ASSERT_EQ(cJSON_GetObjectItem(f, "module_offset")->valuedouble, 0x100);
        f = cJSON_GetArrayItem(frames, 3);
        ASSERT_STREQ(cJSON_GetObjectItem(f, "symbol")->valuestring, "leak_fn");
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(f, "module_offset")));
        /* the stack is 3 deep, not 4: cut stacks count addresses, not frames */
        ASSERT_EQ(calls, 3);
        stack_rows_done(&rows);
}

static void report_frames_carry_their_module_s_build_id(void)
{
        struct stack_rows rows = { .rows = calloc(1, sizeof(struct stack_row)), .n = 1 };
        _cleanup_json_ cJSON *r = NULL;
        const char *const want[] = { "inner", LEAKY_BUILD_ID, "outer", LEAKY_BUILD_ID, NULL, LIBFOO_BUILD_ID,
                                     "libc_fn", NULL, "orphan", NULL, NULL, NULL };
        cJSON *frames;
        int calls = 0;

        /* inlined and holding frames, a module alone, one without a build ID, a build ID without a
         * module (no module: nothing for it to identify), nothing at all */
        rows.rows[0] = make_row(10, 1, 64, 1, 5, 0x3ff0);
        rows.rows[0].ips[2] = 0x2000;
        rows.rows[0].ips[3] = 0x5000;
        rows.rows[0].ips[4] = 0x9000;
        r = build(&rows, 10, &calls);
        frames = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "stacks"), 0), "frames");
        ASSERT_EQ(cJSON_GetArraySize(frames), (int)ELEMENTSOF(want) / 2);
        for (size_t i = 0; i < ELEMENTSOF(want) / 2; i++) {
                cJSON *f = cJSON_GetArrayItem(frames, (int)i), *id = cJSON_GetObjectItem(f, "build_id");

                ASSERT_TRUE(id != NULL);
                if (want[2 * i])
                        ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(f, "symbol")), want[2 * i]);
                else
                        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(f, "symbol")));
                if (want[2 * i + 1])
                        ASSERT_STREQ(cJSON_GetStringValue(id), want[2 * i + 1]);
                else
                        ASSERT_TRUE(cJSON_IsNull(id));
        }
        stack_rows_done(&rows);
}

static void report_names_why_a_stack_is_unavailable(void)
{
        struct stack_rows rows = { .rows = calloc(2, sizeof(struct stack_row)), .n = 2 };
        _cleanup_json_ cJSON *r = NULL;
        cJSON *s0, *s1;
        int calls = 0;

        rows.rows[0] = make_row(10, -EFAULT, 500, 5, 0, 0);
        rows.rows[1] = make_row(10, 3, 100, 1, 1, 0x1000);
        r = build(&rows, 10, &calls);
        s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "stacks"), 0);
        s1 = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "stacks"), 1);
        ASSERT_STREQ(cJSON_GetObjectItem(s0, "stack_error")->valuestring, "user stack unreadable (EFAULT)");
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(s0, "frames")), 0);
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(s1, "stack_error")));
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "lost"), "stack_efault")->valuedouble, 3);
        ASSERT_STREQ(report_stack_error(-ENOSPC, false), "stack table full (ENOSPC)");
        ASSERT_STREQ(report_stack_error(-EEXIST, false), "stack hash clash (EEXIST)");
        ASSERT_STREQ(report_stack_error(-ENOMEM, false), "no buffer to capture the stack in (ENOMEM)");
        /* the kernel target's stacks are the kernel's */
        ASSERT_STREQ(report_stack_error(-EFAULT, true), "kernel stack unreadable (EFAULT)");
        stack_rows_done(&rows);
}

static void report_marks_stacks_cut_at_the_depth_limit(void)
{
        struct stack_rows rows = { .rows = calloc(3, sizeof(struct stack_row)), .n = 3 };
        _cleanup_json_ cJSON *lost = cJSON_CreateObject(), *r = NULL;
        cJSON *stacks;
        int calls = 0;

        rows.rows[0] = make_row(10, 1, 100, 1, 4, 0x1000);    /* as deep as the limit: cut */
        rows.rows[1] = make_row(10, 2, 50, 1, 3, 0x1000);
        /* as deep too, with operator new's frame dropped from its top (stack_rows) */
        rows.rows[2] = make_row(10, 3, 20, 1, 3, 0x1000);
        rows.rows[2].n_allocator = 1;
        r = report_build(&rows, NULL, 0, &(struct report_params) {
                .top = 10, .max_stack_depth = 4, .lost = lost, .resolve = fake_resolve, .userdata = &calls,
        });
        stacks = cJSON_GetObjectItem(r, "stacks");
        ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 0), "truncated")));
        ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 1), "truncated")));
        ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 2), "truncated")));
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "lost"), "stacks_truncated")->valuedouble, 2);
        stack_rows_done(&rows);
}

/* A walk that stopped is said to have stopped at its last frame, unless addresses were cut from
 * the stack: then it stopped among them (in data), and the cut says why the stack ends. */
static void report_says_where_a_walk_stopped_unless_its_end_was_cut(void)
{
        struct stack_rows rows = { .rows = calloc(2, sizeof(struct stack_row)), .n = 2 };
        _cleanup_json_ cJSON *lost = cJSON_CreateObject(), *r = NULL;
        cJSON *stacks, *stopped;
        int calls = 0;

        rows.rows[0] = make_row(10, 1, 100, 1, 2, 0x4000);
        rows.rows[0].unwind_stop = UNWIND_STOP_NO_CFI;
        rows.rows[1] = make_row(10, 2, 50, 1, 2, 0x4000);
        rows.rows[1].unwind_stop = UNWIND_STOP_NO_CFI;
        rows.rows[1].n_cut = 3;
        r = report_build(&rows, NULL, 0, &(struct report_params) {
                .top = 10, .lost = lost, .resolve = fake_resolve, .userdata = &calls,
        });
        stacks = cJSON_GetObjectItem(r, "stacks");
        stopped = cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 0), "unwind_stopped");
        ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(stopped, "reason")), "no_cfi");
        ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(stopped, "module")), "/lib/libfoo.so");
        ASSERT_EQ(cJSON_GetObjectItem(stopped, "module_offset")->valuedouble, 0x110);
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 1), "unwind_stopped")));
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(stacks, 1), "addresses_cut")->valuedouble, 3);
        stack_rows_done(&rows);
}

static void report_of_nothing_is_empty_not_missing(void)
{
        struct stack_rows rows = {};
        _cleanup_json_ cJSON *r = NULL;
        int calls = 0;

        r = build(&rows, 10, &calls);
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(r, "stacks")), 0);
        ASSERT_EQ(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "other"), "stacks")->valuedouble, 0);
        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(r, "targets")), 2);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(report_sorts_stacks_by_bytes_then_allocs),
                TEST(a_reused_pid_keeps_each_target_s_rows_apart),
                TEST(report_folds_stacks_past_top_into_other),
                TEST(report_totals_per_target_include_folded_stacks),
                TEST(report_trend_of_a_live_target_ends_at_its_current_bytes),
                TEST(report_unknown_frame_fields_are_null),
                TEST(report_inlined_calls_are_frames_of_their_own),
                TEST(report_frames_carry_their_module_s_build_id),
                TEST(report_names_why_a_stack_is_unavailable),
                TEST(report_of_nothing_is_empty_not_missing),
                TEST(report_marks_stacks_cut_at_the_depth_limit),
                TEST(report_says_where_a_walk_stopped_unless_its_end_was_cut),
        };
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
