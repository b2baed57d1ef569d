/* SPDX-License-Identifier: MIT */
/* Unit tests for daemon/report/metrics-text.c: the Prometheus text format (families once, HELP
 * and TYPE, labels escaped), live targets only, lost blocks only once a scan says. */
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "macro.h"
#include "metrics-text.h"
#include "test-util.h"

static cJSON *parse(const char *s)
{
        cJSON *o = cJSON_Parse(s);

        ASSERT_TRUE(o);
        return o;
}

static size_t count(const char *hay, const char *needle)
{
        size_t n = 0;

        for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

static void metrics_text_labels_and_values(void)
{
        _cleanup_json_ cJSON *targets = parse(
                "[{\"pid\":42,\"comm\":\"a\\\"b\\\\c\\nd\",\"outstanding_bytes\":4096,\"outstanding_allocs\":3,"
                "  \"outstanding_mmap_bytes\":0,\"exited\":false,\"sample_bytes\":0,\"snapshots\":7,"
                "  \"unit\":\"web.service\",\"cgroup\":null,\"trend\":{\"window_s\":10,\"bytes_delta\":2000},"
                "  \"verdicts_qualified\":false,\"lost\":{\"allocs_map_full\":5,\"stack_table_full\":0},"
                "  \"reachability\":{\"method\":\"snapshot\"}},"
                " {\"pid\":43,\"comm\":\"gone\",\"outstanding_bytes\":1,\"exited\":true},"
                " {\"pid\":44,\"comm\":\"sampled\",\"outstanding_bytes\":65536,\"outstanding_allocs\":2,"
                "  \"exited\":false,\"sample_bytes\":32768,\"snapshots\":1,\"unit\":null,\"cgroup\":\"/x\","
                "  \"trend\":null,\"verdicts_qualified\":true,\"lost\":{},\"reachability\":null}]");
        struct report_summary sums[3] = {
                { .stacks = 5, .growing = 2, .lost_stacks = 1, .lost_bytes = 100, .has_growth = true, .growth_bytes_per_s = 200 },
                { .stacks = 9, .growing = 9 },
                { .stacks = 1, .growing = 0, .lost_stacks = 7, .lost_bytes = 7 },
        };
        struct metrics_daemon d = { .version = "9.9", .rss_bytes = 1000, .has_map_bytes = true, .map_bytes = 2000,
                                    .snapshot_tick_s = 0.0015, .generated_at = 1700000000 };
        _cleanup_free_ char *text = NULL;
        const char *a = "{pid=\"42\",comm=\"a\\\"b\\\\c\\nd\",unit=\"web.service\"}";

        ASSERT_EQ(metrics_text_build(targets, sums, &d, &text), 0);
        /* the first target: escaped labels, each value */
        ASSERT_TRUE(strstr(text, "memleakd_target_outstanding_bytes{pid=\"42\",comm=\"a\\\"b\\\\c\\nd\",unit=\"web.service\"} 4096\n"));
        ASSERT_EQ(count(text, a), 12);         /* each per-target family (losses: with their reason) */
        ASSERT_TRUE(strstr(text, "memleakd_target_growth_bytes_per_second{pid=\"42\""));
        ASSERT_TRUE(strstr(text, "\"} 200\n"));
        ASSERT_TRUE(strstr(text, "memleakd_target_growing_stacks{pid=\"42\",comm=\"a\\\"b\\\\c\\nd\",unit=\"web.service\"} 2\n"));
        ASSERT_TRUE(strstr(text, "memleakd_target_lost_bytes{pid=\"42\",comm=\"a\\\"b\\\\c\\nd\",unit=\"web.service\"} 100\n"));
        ASSERT_TRUE(strstr(text, "memleakd_target_lost_events_total{pid=\"42\",comm=\"a\\\"b\\\\c\\nd\",unit=\"web.service\","
                                 "reason=\"allocs_map_full\"} 5\n"));
        ASSERT_TRUE(strstr(text, "reason=\"stack_table_full\"} 0\n"));
        /* an exited target: none */
        ASSERT_TRUE(!strstr(text, "pid=\"43\""));
        /* the sampled one: by cgroup, no trend yet, no scan: no lost figures */
        ASSERT_TRUE(strstr(text, "memleakd_target_sampled{pid=\"44\",comm=\"sampled\",cgroup=\"/x\"} 1\n"));
        ASSERT_TRUE(strstr(text, "memleakd_target_sample_mean_bytes{pid=\"44\",comm=\"sampled\",cgroup=\"/x\"} 32768\n"));
        ASSERT_TRUE(strstr(text, "memleakd_target_verdicts_qualified{pid=\"44\",comm=\"sampled\",cgroup=\"/x\"} 1\n"));
        ASSERT_TRUE(!strstr(text, "memleakd_target_growth_bytes_per_second{pid=\"44\""));
        ASSERT_TRUE(!strstr(text, "memleakd_target_lost_bytes{pid=\"44\""));
        /* each family once, HELP before TYPE before its samples */
        ASSERT_EQ(count(text, "# TYPE memleakd_target_outstanding_bytes gauge\n"), 1);
        ASSERT_EQ(count(text, "# TYPE memleakd_target_lost_events_total counter\n"), 1);
        ASSERT_TRUE(strstr(text, "# HELP memleakd_target_stacks ") < strstr(text, "# TYPE memleakd_target_stacks "));
        ASSERT_TRUE(strstr(text, "# TYPE memleakd_target_stacks ") < strstr(text, "memleakd_target_stacks{"));
        /* the daemon's */
        ASSERT_TRUE(strstr(text, "memleakd_build_info{version=\"9.9\"} 1\n"));
        ASSERT_TRUE(strstr(text, "memleakd_targets 2\n"));
        ASSERT_TRUE(strstr(text, "memleakd_resident_memory_bytes 1000\n"));
        ASSERT_TRUE(strstr(text, "memleakd_bpf_map_bytes 2000\n"));
        ASSERT_TRUE(strstr(text, "memleakd_snapshot_tick_seconds 0.001500\n"));
        ASSERT_TRUE(strstr(text, "memleakd_metrics_generated_timestamp_seconds 1700000000\n"));
        ASSERT_EQ(text[strlen(text) - 1], '\n');
}

static void metrics_text_without_targets(void)
{
        _cleanup_json_ cJSON *targets = parse("[]");
        struct metrics_daemon d = { .version = "1" };
        _cleanup_free_ char *text = NULL;

        ASSERT_EQ(metrics_text_build(targets, NULL, &d, &text), 0);
        ASSERT_TRUE(strstr(text, "memleakd_targets 0\n"));
        ASSERT_TRUE(!strstr(text, "memleakd_resident_memory_bytes"));   /* unknown: left out */
        ASSERT_TRUE(!strstr(text, "memleakd_bpf_map_bytes"));
        ASSERT_TRUE(!strstr(text, "{pid="));
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(metrics_text_labels_and_values),
                TEST(metrics_text_without_targets),
        };
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
