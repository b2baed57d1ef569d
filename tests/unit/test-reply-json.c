/* Unit tests for the reply entities' serialisers: each writes its entity's fields as
 * common/reply-fields.h lists them, in that order, and no other. */
#include <stdlib.h>
#include <string.h>
#include "bpf-types.h"
#include "counters-json.h"
#include "json-util.h"
#include "reply-fields.h"
#include "report.h"
#include "target-json.h"
#include "test-util.h"
#include "verdict-json.h"

static const char *const target_fields[] = { REPLY_TARGET(REPLY_FIELD_NAME) };
static const char *const verdict_fields[] = { REPLY_VERDICT(REPLY_FIELD_NAME) };
static const char *const counters_fields[] = { REPLY_COUNTERS(REPLY_FIELD_NAME) };
static const char *const lost_fields[] = { REPLY_LOST(REPLY_FIELD_NAME) };
static const char *const stack_fields[] = { REPLY_STACK(REPLY_FIELD_NAME) };
static const char *const frame_fields[] = { REPLY_FRAME(REPLY_FIELD_NAME) };

/* o's members are fields[0..n) in that order, less those in skipped (NULL-terminated). */
static void assert_fields(const cJSON *o, const char *const *fields, size_t n, const char *const *skipped)
{
        const cJSON *member = o ? o->child : NULL;

        ASSERT_TRUE(cJSON_IsObject(o));
        for (size_t i = 0; i < n; i++) {
                bool skip = false;

                for (size_t k = 0; skipped && skipped[k]; k++)
                        skip = skip || strcmp(skipped[k], fields[i]) == 0;
                if (skip)
                        continue;
                ASSERT_TRUE(member != NULL);
                ASSERT_STREQ(member->string, fields[i]);
                member = member->next;
        }
        ASSERT_TRUE(member == NULL);
}

static void target_json_writes_every_target_field_in_order(void)
{
        struct auto_sample_history h = { .n_changes = 1, .changes = { { .at_usec = 5000000, .sample_bytes = 4096 } } };
        _cleanup_json_ cJSON *all = target_json_new(&(struct target_json) {
                .pid = 7, .comm = "leaky", .has_outstanding = true, .outstanding_bytes = 100, .has_attach = true,
                .allocator = "glibc", .snapshots = 3, .auto_sample = &h, .forked_from = 6,
                .watch_name = "nginx.service", .watch_is_unit = true,
        });
        _cleanup_json_ cJSON *least = target_json_new(&(struct target_json) { .pid = 7 });

        assert_fields(all, target_fields, ELEMENTSOF(target_fields), NULL);
        ASSERT_EQ(cJSON_GetObjectItem(all, RF_FORKED_FROM)->valueint, 6);
        ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(all, RF_UNIT)), "nginx.service");
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(all, RF_CGROUP)));
        ASSERT_TRUE(cJSON_IsObject(cJSON_GetObjectItem(all, RF_AUTO_SAMPLE)));
        /* without the report's totals and the attach's fields; unknowns null */
        assert_fields(least, target_fields, ELEMENTSOF(target_fields), (const char *const[]) {
                RF_OUTSTANDING_BYTES, RF_OUTSTANDING_ALLOCS, RF_OUTSTANDING_MMAP_BYTES, RF_OUTSTANDING_MMAPS,
                RF_MMAP, RF_ATTACHED_S, RF_ALLOCATOR, RF_ALLOCATOR_REASON, NULL });
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(least, RF_COMM)));
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(least, RF_AUTO_SAMPLE)));
        ASSERT_TRUE(cJSON_IsNull(cJSON_GetObjectItem(least, RF_FORKED_FROM)));
}

static void verdict_json_writes_growth_or_what_is_missing(void)
{
        _cleanup_json_ cJSON *growing = cJSON_CreateObject(), *pending = cJSON_CreateObject();

        verdict_json_add(growing, &(struct leak_assessment) {
                .verdict = LEAK_VERDICT_GROWING, .slope_bytes_per_s = 2201.4567, .first_bytes = 111 }, true);
        verdict_json_add(pending, &(struct leak_assessment) {
                .verdict = LEAK_VERDICT_PENDING, .points_missing = 2 }, false);
        assert_fields(growing, verdict_fields, ELEMENTSOF(verdict_fields), (const char *const[]) { RF_SNAPSHOTS_MISSING, NULL });
        assert_fields(pending, verdict_fields, ELEMENTSOF(verdict_fields), (const char *const[]) { RF_GROWTH_BYTES_PER_S, NULL });
        ASSERT_STREQ(cJSON_GetObjectItem(growing, RF_VERDICT)->valuestring, "growing");
        ASSERT_TRUE(cJSON_GetObjectItem(growing, RF_GROWTH_BYTES_PER_S)->valuedouble == 2201.5);
        ASSERT_EQ(cJSON_GetObjectItem(growing, RF_FIRST_BYTES)->valueint, 111);
        ASSERT_TRUE(cJSON_IsTrue(cJSON_GetObjectItem(growing, RF_VERDICT_QUALIFIED)));
        ASSERT_EQ(cJSON_GetObjectItem(pending, RF_SNAPSHOTS_MISSING)->valueint, 2);
}

static void counters_json_splits_events_from_losses(void)
{
        uint64_t totals[_COUNTER_MAX] = { [COUNTER_ALLOCS] = 5, [COUNTER_LOST_ALLOCS_MAP_FULL] = 2 };
        _cleanup_json_ cJSON *counters = counters_json_new(totals, false), *lost = counters_json_new(totals, true);

        assert_fields(counters, counters_fields, ELEMENTSOF(counters_fields), NULL);
        assert_fields(lost, lost_fields, ELEMENTSOF(lost_fields), NULL);
        ASSERT_EQ(cJSON_GetObjectItem(counters, RF_ALLOCS)->valueint, 5);
        ASSERT_EQ(cJSON_GetObjectItem(lost, RF_ALLOCS_MAP_FULL)->valueint, 2);
}

static size_t resolve_one(void *userdata, pid_t pid, uint64_t addr, struct frame_symbol *ret, size_t max)
{
        ret[0] = (struct frame_symbol) { .symbol = "leak_fn", .has_offset = true, .offset = 4, .module = "/bin/leaky",
                                         .has_module_offset = true, .module_offset = addr, .file = "leaky.c", .line = 9 };
        return 1;
}

static bool assess_growing(void *userdata, const struct stack_row *row, struct leak_assessment *ret)
{
        *ret = (struct leak_assessment) { .verdict = LEAK_VERDICT_GROWING, .slope_bytes_per_s = 10, .first_bytes = 1 };
        return true;
}

static void report_stacks_and_frames_have_their_entity_fields(void)
{
        uint64_t ips[] = { 0x1000, 0x1010 };
        struct stack_row row = { .pid = 10, .stack_id = 3, .bytes = 64, .allocs = 2, .ips = ips, .n_ips = 2 };
        struct stack_rows rows = { .rows = &row, .n = 1 };
        struct report_target target = { .pid = 10, .comm = "leaky" };
        _cleanup_json_ cJSON *r = report_build(&rows, &target, 1, &(struct report_params) {
                .top = 10, .resolve = resolve_one, .assess = assess_growing,
        });
        const cJSON *stack = cJSON_GetArrayItem(cJSON_GetObjectItem(r, RF_STACKS), 0);

        _cleanup_json_ cJSON *table = report_build(&rows, &target, 1, &(struct report_params) {
                .top = 10, .resolve = resolve_one, .assess = assess_growing, .locations = true,
        });
        const cJSON *raw = cJSON_GetArrayItem(cJSON_GetObjectItem(table, RF_STACKS), 0);
        _cleanup_json_ cJSON *parsed = NULL;

        /* each stack has its frames, or (with locations) their indices into the report's table */
        assert_fields(stack, stack_fields, ELEMENTSOF(stack_fields),
                      (const char *const[]) { RF_SNAPSHOTS_MISSING, RF_LOCATIONS, NULL });
        assert_fields(cJSON_GetArrayItem(cJSON_GetObjectItem(stack, RF_FRAMES), 1), frame_fields,
                      ELEMENTSOF(frame_fields), NULL);
        ASSERT_TRUE(cJSON_IsRaw(raw));
        parsed = cJSON_Parse(raw->valuestring);
        assert_fields(parsed, stack_fields, ELEMENTSOF(stack_fields),
                      (const char *const[]) { RF_SNAPSHOTS_MISSING, RF_FRAMES, NULL });
        assert_fields(cJSON_GetArrayItem(cJSON_GetObjectItem(table, RF_LOCATIONS), 1), frame_fields,
                      ELEMENTSOF(frame_fields), NULL);
}

/* With locations, a frame two stacks share is one entry, both stacks' indices naming it. */
static void report_locations_hold_each_frame_once(void)
{
        uint64_t ips_a[] = { 0x1000, 0x1010 }, ips_b[] = { 0x1020, 0x1010 };
        struct stack_row rows_[] = {
                { .pid = 10, .stack_id = 3, .bytes = 64, .allocs = 2, .ips = ips_a, .n_ips = 2 },
                { .pid = 10, .stack_id = 4, .bytes = 32, .allocs = 1, .ips = ips_b, .n_ips = 2 },
        };
        struct stack_rows rows = { .rows = rows_, .n = 2 };
        struct report_target target = { .pid = 10, .comm = "leaky" };
        _cleanup_json_ cJSON *r = report_build(&rows, &target, 1, &(struct report_params) {
                .top = 10, .resolve = resolve_one, .locations = true,
        });
        const cJSON *stacks = cJSON_GetObjectItem(r, RF_STACKS);
        _cleanup_json_ cJSON *a = cJSON_Parse(cJSON_GetArrayItem(stacks, 0)->valuestring);
        _cleanup_json_ cJSON *b = cJSON_Parse(cJSON_GetArrayItem(stacks, 1)->valuestring);
        _cleanup_free_ char *ids_a = cJSON_PrintUnformatted(cJSON_GetObjectItem(a, RF_LOCATIONS));
        _cleanup_free_ char *ids_b = cJSON_PrintUnformatted(cJSON_GetObjectItem(b, RF_LOCATIONS));

        ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(r, RF_LOCATIONS)), 3);
        ASSERT_STREQ(ids_a, "[0,1]");
        ASSERT_STREQ(ids_b, "[2,1]");
        ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, RF_LOCATIONS), 2),
                                                              RF_ADDR)), "0x1020");
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(target_json_writes_every_target_field_in_order),
                TEST(verdict_json_writes_growth_or_what_is_missing),
                TEST(counters_json_splits_events_from_losses),
                TEST(report_stacks_and_frames_have_their_entity_fields),
                TEST(report_locations_hold_each_frame_once),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
