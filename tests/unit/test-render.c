/* SPDX-License-Identifier: MIT */
/* Unit tests for client/render.c: hand-written replies in, the exact text memleakctl prints out. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json-util.h"
#include "macro.h"
#include "render-folded.h"
#include "render.h"
#include "test-util.h"

/* 1763888000 is 08:53:20 UTC. */
static const char full_report[] =
        "{\"generated_at\":1763888000,\"min_age_s\":0,\"top\":2,"
        " \"targets\":["
        "  {\"pid\":1234,\"comm\":\"leaky\",\"outstanding_bytes\":5101,\"outstanding_allocs\":7,\"exited\":false,"
        "   \"trend\":{\"window_s\":10,\"bytes_delta\":1024}},"
        "  {\"pid\":77,\"comm\":\"gone\",\"outstanding_bytes\":1,\"outstanding_allocs\":1,\"exited\":true,"
        "   \"trend\":null}],"
        " \"stacks\":["
        "  {\"pid\":1234,\"bytes\":5005,\"allocs\":5,\"stack_error\":null,\"frames\":["
        "    {\"addr\":\"0x55d0c0a011a9\",\"symbol\":\"fill_buffer\",\"offset\":null,\"inlined\":true,"
        "     \"module\":\"/tmp/leaky\",\"module_offset\":4521,\"file\":\"/src/util.h\",\"line\":3},"
        "    {\"addr\":\"0x55d0c0a011a9\",\"symbol\":\"leak_malloc\",\"offset\":25,\"module\":\"/tmp/leaky\","
        "     \"file\":\"/src/leaky.c\",\"line\":12},"
        "    {\"addr\":\"0x7f0000001000\",\"symbol\":\"__libc_start_call_main\",\"offset\":128,"
        "     \"module\":\"/usr/lib/x86_64-linux-gnu/libc.so.6\",\"file\":null,\"line\":null},"
        "    {\"addr\":\"0x7f0000002000\",\"symbol\":null,\"offset\":null,\"module\":\"/usr/lib/libfoo.so\",\"module_offset\":4096,"
        "     \"file\":null,\"line\":null},"
        "    {\"addr\":\"0x1234\",\"symbol\":null,\"offset\":null,\"module\":null,\"file\":null,\"line\":null},"
        "    {\"addr\":\"0x5678\",\"symbol\":\"_start\",\"offset\":null,\"module\":\"/tmp/leaky\","
        "     \"file\":\"/src/start.S\",\"line\":null}]},"
        "  {\"pid\":77,\"bytes\":96,\"allocs\":1,\"stack_error\":\"user stack unreadable (EFAULT)\",\"frames\":[]}],"
        " \"other\":{\"stacks\":3,\"bytes\":96,\"allocs\":3},"
        " \"lost\":{\"allocs_map_full\":0,\"stack_efault\":2,\"stack_table_full\":0,\"free_unknown\":5}}";

static const char full_report_text[] =
        "[08:53:20] Top 2 stacks with outstanding allocations:\n"
        "pid 1234 (leaky): 5101 bytes in 7 allocations outstanding, +1024 bytes over the last 10 s\n"
        "pid 77 (gone, exited): 1 bytes in 1 allocation outstanding\n"
        "\t5005 bytes in 5 allocations from stack (pid 1234)\n"
        "\t\tfill_buffer [inlined] [leaky] /src/util.h:3\n"
        "\t\tleak_malloc+0x19 [leaky] /src/leaky.c:12\n"
        "\t\t__libc_start_call_main+0x80 [libc.so.6]\n"
        "\t\t?? [libfoo.so+0x1000]\n"
        "\t\t0x1234 [unknown]\n"
        "\t\t_start [leaky] /src/start.S\n"
        "\t96 bytes in 1 allocation from stack (pid 77)\n"
        "\t\t[stack unavailable: user stack unreadable (EFAULT)]\n"
        "\t... and 3 more stacks: 96 bytes in 3 allocations\n"
        "Lost events: stack_efault=2\n"
        "Frees of blocks not seen allocated: free_unknown=5 (allocated before the attach, or by a parent before "
        "its fork)\n";

/* Render obj with fn into a string; *ret_r is what fn returned. */
static char *render_to_string(int (*fn)(FILE *f, const cJSON *obj), const cJSON *obj, int *ret_r)
{
        char *text = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&text, &n);

        ASSERT_TRUE(f);
        *ret_r = fn(f, obj);
        ASSERT_EQ(fclose(f), 0);
        return text;
}

static cJSON *parse_json(const char *text)
{
        cJSON *j = cJSON_Parse(text);

        ASSERT_TRUE(j);
        return j;
}

static void assert_renders(int (*fn)(FILE *f, const cJSON *obj), const char *json, const char *expected)
{
        _cleanup_json_ cJSON *obj = parse_json(json);
        _cleanup_free_ char *text = NULL;
        int r;

        text = render_to_string(fn, obj, &r);
        if (r != 0 || strcmp(text, expected) != 0)
                fprintf(stderr, "rendered (r=%d):\n%s\nexpected:\n%s\n", r, text, expected);
        ASSERT_EQ(r, 0);
        ASSERT_STREQ(text, expected);
}

static void render_report_prints_targets_stacks_frames_other_and_lost(void)
{
        assert_renders(render_report, full_report, full_report_text);
}

static void render_report_shows_raw_addresses_only_when_asked(void)
{
        static const char report[] =
                "{\"generated_at\":1763888000,\"targets\":[{\"pid\":9,\"comm\":\"p\",\"outstanding_bytes\":8,"
                "\"outstanding_allocs\":1,\"exited\":false,\"trend\":null}],\"stacks\":[{\"pid\":9,\"bytes\":8,\"allocs\":1,"
                "\"stack_error\":null,\"frames\":["
                "{\"addr\":\"0x401136\",\"symbol\":\"leak\",\"offset\":22,\"module\":\"/bin/p\",\"file\":\"/s/p.c\",\"line\":7},"
                "{\"addr\":\"0x7f00\",\"symbol\":null,\"offset\":null,\"module\":null,\"file\":null,\"line\":null}]}]}";

        assert_renders(render_report, report,
                       "[08:53:20] Top 1 stacks with outstanding allocations:\n"
                       "pid 9 (p): 8 bytes in 1 allocation outstanding\n"
                       "\t8 bytes in 1 allocation from stack (pid 9)\n"
                       "\t\tleak+0x16 [p] /s/p.c:7\n"
                       "\t\t0x7f00 [unknown]\n"
                       "Lost events: none\n");
        /* a stack cut at max_stack_depth says so under its last frame */
        {
                _cleanup_free_ char *cut = strdup(report);
                char *at = strstr(cut, "\"stack_error\":null,");

                ASSERT_TRUE(at);
                memcpy(at, "\"truncated\":true,  ", strlen("\"stack_error\":null,"));     /* same length */
                assert_renders(render_report, cut,
                               "[08:53:20] Top 1 stacks with outstanding allocations:\n"
                               "pid 9 (p): 8 bytes in 1 allocation outstanding\n"
                               "\t8 bytes in 1 allocation from stack (pid 9)\n"
                               "\t\tleak+0x16 [p] /s/p.c:7\n"
                               "\t\t0x7f00 [unknown]\n"
                               "\t\t[deeper frames cut: max_stack_depth reached]\n"
                               "Lost events: none\n");
        }
        assert_renders(render_report_with_addresses, report,
                       "[08:53:20] Top 1 stacks with outstanding allocations:\n"
                       "pid 9 (p): 8 bytes in 1 allocation outstanding\n"
                       "\t8 bytes in 1 allocation from stack (pid 9)\n"
                       "\t\tleak+0x16 [p] /s/p.c:7 (0x401136)\n"
                       "\t\t0x7f00 [unknown]\n"
                       "Lost events: none\n");
}

static void render_report_prints_kernel_frames_with_their_module(void)
{
        static const char report[] =
                "{\"generated_at\":1763888000,\"targets\":[{\"pid\":0,\"comm\":\"[kernel]\",\"outstanding_bytes\":64,"
                "\"outstanding_allocs\":1,\"exited\":false,\"trend\":null}],\"stacks\":[{\"pid\":0,\"bytes\":64,\"allocs\":1,"
                "\"stack_error\":null,\"frames\":["
                "{\"addr\":\"0xffffffff815c5a10\",\"symbol\":\"__kmalloc_cache_noprof\",\"offset\":567,"
                "\"module\":\"[kernel]\",\"module_offset\":null,\"file\":null,\"line\":null},"
                "{\"addr\":\"0xffffffffc0a00010\",\"symbol\":\"nft_do_chain\",\"offset\":16,"
                "\"module\":\"[nf_tables]\",\"module_offset\":null,\"file\":null,\"line\":null},"
                "{\"addr\":\"0xffffffffc0300000\",\"symbol\":null,\"offset\":null,\"module\":null,\"file\":null,\"line\":null}]}]}";

        assert_renders(render_report, report,
                       "[08:53:20] Top 1 stacks with outstanding allocations:\n"
                       "pid 0 ([kernel]): 64 bytes in 1 allocation outstanding\n"
                       "\t64 bytes in 1 allocation from stack (pid 0)\n"
                       "\t\t__kmalloc_cache_noprof+0x237 [kernel]\n"
                       "\t\tnft_do_chain+0x10 [nf_tables]\n"
                       "\t\t0xffffffffc0300000 [unknown]\n"
                       "Lost events: none\n");
}

static void render_report_says_none_lost_and_omits_empty_trailer(void)
{
        assert_renders(render_report,
                       "{\"generated_at\":1763888001,\"min_age_s\":30,\"top\":10,\"targets\":[],\"stacks\":[],"
                       "\"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0},"
                       "\"lost\":{\"allocs_map_full\":0,\"stack_efault\":0}}",
                       "[08:53:21] Top 0 stacks with outstanding allocations:\n"
                       "Only allocations at least 30 s old are counted.\n"
                       "No processes are traced; start with 'memleakctl attach --pid PID'.\n"
                       "Lost events: none\n");
        /* A shrinking target, and a report without "other" or "lost" at all. */
        assert_renders(render_report,
                       "{\"generated_at\":1763888000,\"targets\":[{\"pid\":5,\"comm\":\"x\",\"outstanding_bytes\":0,"
                       "\"outstanding_allocs\":0,\"exited\":false,\"trend\":{\"window_s\":3,\"bytes_delta\":-512}}],"
                       "\"stacks\":[]}",
                       "[08:53:20] Top 0 stacks with outstanding allocations:\n"
                       "pid 5 (x): 0 bytes in 0 allocations outstanding, -512 bytes over the last 3 s\n"
                       "Lost events: none\n");
}

/* A target memleakd turned to sampling as its share of the allocation table filled: since when,
 * how full, at what mean (and how often raised), its figures marked as estimates, in the report
 * and in leaks. */
static void render_report_and_leaks_say_when_memleakd_started_sampling(void)
{
        static const char target[] =
                "{\"pid\":9,\"comm\":\"cache\",\"outstanding_bytes\":4096000,\"outstanding_allocs\":16000,"
                "\"exited\":false,\"snapshots\":16,\"trend\":null,\"sample_bytes\":16384,"
                "\"auto_sample\":{\"since\":1763888000,\"table_percent\":85,\"sample_bytes\":16384,\"changes_total\":2,"
                "\"changes\":[{\"at\":1763888000,\"sample_bytes\":2048,\"table_percent\":85,\"table_blocks\":13926},"
                "{\"at\":1763888005,\"sample_bytes\":16384,\"table_percent\":93,\"table_blocks\":15237}]}}";
        static const char stack[] =
                "{\"pid\":9,\"stack_id\":1,\"verdict\":\"growing\",\"bytes\":1048576,\"allocs\":4096,"
                "\"expected_error\":0.125,\"growth_bytes_per_s\":170000,\"first_bytes\":524288,\"reachability\":null,"
                "\"stack_error\":null,\"frames\":[{\"addr\":\"0x1\",\"symbol\":\"leak_steadily\",\"offset\":18,"
                "\"module\":\"/tmp/cache\",\"file\":null,\"line\":null}]}";
        _cleanup_free_ char *report = NULL, *leaks = NULL;

        ASSERT_TRUE(asprintf(&report, "{\"generated_at\":1763888010,\"targets\":[%s],\"stacks\":[%s]}",
                             target, stack) > 0);
        assert_renders(render_report, report,
                       "[08:53:30] Top 1 stacks with outstanding allocations:\n"
                       "pid 9 (cache): ~4096000 bytes in ~16000 allocations outstanding\n"
                       "\tsampled since 08:53:20 (its share of the allocation table 85% full), 1 in ~16384 bytes, "
                       "raised 1 time (last at 08:53:25)\n"
                       "\tSampled (a sample point every 16384 bytes on average): its heap bytes and counts are "
                       "estimates, each stack's expected error beside it\n"
                       "\t~1048576 bytes (+/-12.5%) in ~4096 allocations from stack (pid 9) [growing: +170000 B/s]\n"
                       "\t\tleak_steadily+0x12 [cache]\n"
                       "Lost events: none\n");
        ASSERT_TRUE(asprintf(&leaks, "{\"suspects\":[%s],\"targets\":[%s]}", stack, target) > 0);
        assert_renders(render_leaks, leaks,
                       "pid 9 (cache): ~4096000 bytes outstanding, verdicts from 16 snapshots\n"
                       "\tsampled since 08:53:20 (its share of the allocation table 85% full), 1 in ~16384 bytes, "
                       "raised 1 time (last at 08:53:25): its figures below are estimates\n"
                       "1 stack still growing, the fastest first:\n"
                       "\t~1048576 bytes (+/-12.5%) in ~4096 allocations from stack (pid 9) [growing: +170000 B/s]\n"
                       "\t\tleak_steadily+0x12 [cache]\n"
                       "\t\t(~524288 bytes at the oldest snapshot)\n");
}

static void render_report_refuses_objects_that_are_not_reports(void)
{
        static const char *const bad[] = {
                "[]",
                "{}",
                "{\"stacks\":[],\"targets\":{}}",
                "{\"stacks\":{},\"targets\":[]}",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_json_ cJSON *obj = parse_json(bad[i]);
                _cleanup_free_ char *text = NULL;
                int r;

                text = render_to_string(render_report, obj, &r);
                ASSERT_EQ(r, -EBADMSG);
                ASSERT_STREQ(text, "");
        }
}

static void render_report_folds_followed_processes_that_left_nothing(void)
{
        static const char report[] =
                "{\"generated_at\":1763888000,\"targets\":["
                "{\"pid\":9,\"comm\":\"sh\",\"outstanding_bytes\":8,\"outstanding_allocs\":1,\"exited\":true},"
                "{\"pid\":10,\"comm\":\"true\",\"outstanding_bytes\":0,\"outstanding_allocs\":0,\"exited\":true,"
                "\"forked_from\":9},"
                "{\"pid\":11,\"comm\":\"true\",\"outstanding_bytes\":0,\"outstanding_allocs\":0,\"exited\":true,"
                "\"forked_from\":9},"
                "{\"pid\":12,\"comm\":\"cat\",\"outstanding_bytes\":0,\"outstanding_allocs\":0,\"exited\":false,"
                "\"forked_from\":9},"
                "{\"pid\":13,\"comm\":\"sh\",\"outstanding_bytes\":0,\"outstanding_allocs\":0,\"exited\":false}],"
                "\"stacks\":[],\"lost\":{}}";

        /* a running child, or one not followed, keeps its line: it may yet leak, or it is asked for */
        assert_renders(render_report, report,
                       "[08:53:20] Top 0 stacks with outstanding allocations:\n"
                       "pid 9 (sh, exited): 8 bytes in 1 allocation outstanding\n"
                       "pid 12 (cat, forked by pid 9): 0 bytes in 0 allocations outstanding\n"
                       "pid 13 (sh): 0 bytes in 0 allocations outstanding\n"
                       "2 followed processes exited with nothing outstanding (report --json lists them)\n"
                       "Lost events: none\n");
}

static void render_report_says_where_a_frame_pointer_chain_broke(void)
{
        assert_renders(render_report,
                       "{\"generated_at\":1763888000,\"targets\":[{\"pid\":9,\"comm\":\"p\",\"outstanding_bytes\":8,"
                       "\"outstanding_allocs\":1,\"exited\":false,\"trend\":null}],\"stacks\":[{\"pid\":9,\"bytes\":8,"
                       "\"allocs\":1,\"stack_error\":null,\"addresses_cut\":1,\"frames\":["
                       "{\"addr\":\"0x401136\",\"symbol\":\"leak\",\"offset\":22,\"module\":\"/bin/p\",\"file\":null,\"line\":null}]}]}",
                       "[08:53:20] Top 1 stacks with outstanding allocations:\n"
                       "pid 9 (p): 8 bytes in 1 allocation outstanding\n"
                       "\t8 bytes in 1 allocation from stack (pid 9)\n"
                       "\t\tleak+0x16 [p]\n"
                       "\t\t[1 more address not shown: the frame-pointer chain broke there (code built without frame pointers)]\n"
                       "Lost events: none\n");
}

static void render_attach_and_detach_print_one_line(void)
{
        static const char target[] =
                "{\"pid\":1234,\"comm\":\"leaky\",\"exited\":false,\"attached_s\":0,\"allocator\":\"glibc\","
                "\"allocator_reason\":\"/usr/lib/x86_64-linux-gnu/libc.so.6 is mapped by the process\","
                "\"objects\":[{\"path\":\"/usr/lib/x86_64-linux-gnu/libc.so.6\",\"probes\":10,\"role\":\"allocator\"},"
                "{\"path\":\"/usr/lib/x86_64-linux-gnu/libstdc++.so.6\",\"probes\":20,\"role\":\"c++ operators\"}],"
                "\"snapshots\":0}";
        static const char forwarded[] =
                "{\"pid\":1234,\"comm\":\"leaky\",\"allocator\":\"glibc\",\"objects\":["
                "{\"path\":\"/usr/lib/x86_64-linux-gnu/libstdc++.so.6\",\"probes\":0,\"forwarded\":20,"
                "\"role\":\"c++ operators\"}]}";

        assert_renders(render_attach, target,
                       "Attached to pid 1234 (leaky): glibc allocator, 10 probes in "
                       "/usr/lib/x86_64-linux-gnu/libc.so.6 (allocator), 20 probes in "
                       "/usr/lib/x86_64-linux-gnu/libstdc++.so.6 (c++ operators)\n");
        assert_renders(render_attach, forwarded,
                       "Attached to pid 1234 (leaky): glibc allocator, 0 probes in "
                       "/usr/lib/x86_64-linux-gnu/libstdc++.so.6 (c++ operators) (20 operators left to the "
                       "malloc or free they call)\n");
        assert_renders(render_attach,
                       "{\"pid\":9,\"comm\":\"t\",\"exited\":false,\"allocator\":\"objects\",\"objects\":["
                       "{\"path\":\"/a.so\",\"probes\":1},{\"path\":\"/b.so\",\"probes\":3}]}",
                       "Attached to pid 9 (t): objects allocator, 1 probe in /a.so, 3 probes in /b.so\n");
        assert_renders(render_attach, "{\"pid\":9,\"comm\":\"t\",\"allocator\":null,\"objects\":[]}",
                       "Attached to pid 9 (t): unknown allocator, no probes\n");
        assert_renders(render_detach, "{\"target\":{\"pid\":1234,\"comm\":\"leaky\"},\"children_left\":0}",
                       "Detached from pid 1234 (leaky)\n");
        assert_renders(render_detach, "{\"target\":{\"pid\":1234,\"comm\":\"leaky\",\"exited\":true}}",
                       "Detached from pid 1234 (leaky, exited)\n");
        assert_renders(render_detach, "{\"target\":{\"pid\":1234,\"comm\":\"leaky\"},\"children_left\":2}",
                       "Detached from pid 1234 (leaky); the 2 processes followed from it stay (detach "
                       "--children takes them too)\n");
        assert_renders(render_detach,
                       "{\"target\":{\"pid\":1234,\"comm\":\"leaky\"},\"children\":["
                       "{\"pid\":1240,\"comm\":\"leaky\",\"forked_from\":1234},"
                       "{\"pid\":1250,\"comm\":\"sh\",\"exited\":true,\"forked_from\":1240}]}",
                       "Detached from pid 1234 (leaky)\n"
                       "Detached from pid 1240 (leaky, forked by pid 1234)\n"
                       "Detached from pid 1250 (sh, exited, forked by pid 1240)\n");
        {
                _cleanup_json_ cJSON *obj = parse_json("{\"children_left\":0}");
                _cleanup_free_ char *text = NULL;
                int r;

                text = render_to_string(render_detach, obj, &r);
                ASSERT_EQ(r, -EBADMSG);
                ASSERT_STREQ(text, "");
        }
}

static void render_status_lists_daemon_targets_and_counters(void)
{
        assert_renders(render_status,
                       "{\"version\":\"0.1.0\",\"uptime_s\":3725,\"snapshot_interval_ms\":1000,\"ring_depth\":60,"
                       "\"targets\":["
                       " {\"pid\":1234,\"comm\":\"leaky\",\"exited\":false,\"attached_s\":10,\"allocator\":\"glibc\","
                       "  \"allocator_reason\":\"/lib/libc.so.6 is mapped by the process\",\"phase\":\"recording\","
                       "  \"objects\":[{\"path\":\"/lib/libc.so.6\",\"probes\":10,\"role\":\"allocator\"}],\"snapshots\":10,"
                       "  \"lost\":{\"allocs_map_full\":3,\"free_unknown\":2,\"stack_efault\":0}},"
                       " {\"pid\":77,\"comm\":\"gone\",\"exited\":true,\"phase\":\"exited\",\"attached_s\":90061,"
                       "  \"allocator\":\"objects\","
                       "  \"allocator_reason\":null,\"objects\":[{\"path\":\"/a.so\",\"probes\":1}],\"snapshots\":1}],"
                       "\"counters\":{\"allocs\":100,\"frees\":90,\"allocs_filtered\":0},"
                       "\"lost\":{\"allocs_map_full\":0,\"inflight_stale\":4}}",
                       "memleakd 0.1.0, up 1h 2m 5s, snapshot every 1000 ms, 60 kept per target\n"
                       "Targets:\n"
                       "  pid 1234 (leaky): recording, attached 10s ago, glibc allocator "
                       "(/lib/libc.so.6 is mapped by the process), 10 snapshots\n"
                       "    /lib/libc.so.6: 10 probes (allocator)\n"
                       "    Lost events: allocs_map_full=3\n"
                       "    Frees of blocks not seen allocated: free_unknown=2 (allocated before the attach, or by a "
                       "parent before its fork)\n"
                       "  pid 77 (gone, exited): attached 1d 1h 1m 1s ago, objects allocator, 1 snapshot\n"
                       "    /a.so: 1 probe\n"
                       "Counters (every target since memleakd started): allocs=100 frees=90 allocs_filtered=0\n"
                       "Lost events (every target since memleakd started): inflight_stale=4\n");
        assert_renders(render_status,
                       "{\"version\":\"0.1.0\",\"uptime_s\":0,\"snapshot_interval_ms\":250,\"ring_depth\":4,"
                       "\"targets\":[],\"counters\":{},\"lost\":{}}",
                       "memleakd 0.1.0, up 0s, snapshot every 250 ms, 4 kept per target\n"
                       "Targets: none\n"
                       "Counters (every target since memleakd started): none\n"
                       "Lost events (every target since memleakd started): none\n");
        /* the snapshot tick's cost and the maps' kernel memory (null: unreadable) */
        assert_renders(render_status,
                       "{\"version\":\"0.1.0\",\"uptime_s\":0,\"snapshot_interval_ms\":250,\"ring_depth\":4,"
                       "\"snapshot_cost\":{\"last_ms\":0.84,\"max_ms\":3.25,\"last_rows\":412},"
                       "\"targets\":[],\"counters\":{},\"lost\":{},"
                       "\"limits\":{\"tables\":{\"allocs\":{\"held\":786432,\"max\":1048576,\"share\":524288},"
                       "\"stacks\":{\"held\":1310,\"max\":131072},\"per_stack_rows\":{\"held\":412,\"max\":262144}},"
                       "\"maps\":{\"kernel_bytes\":26214400,\"max_bytes\":327155712}}}",
                       "memleakd 0.1.0, up 0s, snapshot every 250 ms, 4 kept per target\n"
                       "Snapshot tick: 0.8 ms for 412 per-stack rows (longest 3.2 ms)\n"
                       "Targets: none\n"
                       "Counters (every target since memleakd started): none\n"
                       "Lost events (every target since memleakd started): none\n"
                       "Tables: heap blocks 786432 of 1048576 (75.0%; a target's share 524288), stacks 1310 of "
                       "131072 (1.0%), per-stack rows 412 of 262144 (0.2%)\n"
                       "BPF maps: 25.0 MiB of kernel memory, about 312 MiB with every map full\n");
        assert_renders(render_status,
                       "{\"version\":\"0.1.0\",\"uptime_s\":0,\"snapshot_interval_ms\":250,\"ring_depth\":4,"
                       "\"targets\":[],\"counters\":{},\"lost\":{},"
                       "\"limits\":{\"maps\":{\"kernel_bytes\":null,\"max_bytes\":327155712}}}",
                       "memleakd 0.1.0, up 0s, snapshot every 250 ms, 4 kept per target\n"
                       "Targets: none\n"
                       "Counters (every target since memleakd started): none\n"
                       "Lost events (every target since memleakd started): none\n"
                       "BPF maps: kernel memory unknown, about 312 MiB with every map full\n");
}

/* A target that lost allocations within its verdicts' window: leaks says so and never that no
 * stack grows; a clean one beside it lost nothing; a sampled suspect prints as an estimate. */
static void render_leaks_never_says_nothing_grows_while_blind(void)
{
        setenv("TZ", "UTC", 1);
        tzset();
        assert_renders(render_leaks,
                       "{\"suspects\":[],\"targets\":["
                       " {\"pid\":10,\"comm\":\"clean\",\"outstanding_bytes\":1000,\"snapshots\":16,"
                       "  \"lost\":{\"allocs_map_full\":0},\"verdicts_qualified\":false,\"blind_since\":null,"
                       "  \"lost_in_window\":{}},"
                       " {\"pid\":11,\"comm\":\"full\",\"outstanding_bytes\":50247,\"snapshots\":16,"
                       "  \"lost\":{\"allocs_map_full\":8908},\"verdicts_qualified\":true,\"blind_since\":3600,"
                       "  \"lost_in_window\":{\"allocs_map_full\":6191,\"stack_table_full\":2}}]}",
                       "pid 10 (clean): 1000 bytes outstanding, verdicts from 16 snapshots\n"
                       "\tLost events: none\n"
                       "pid 11 (full): 50247 bytes outstanding, verdicts from 16 snapshots\n"
                       "\tLost events: allocs_map_full=8908\n"
                       "\tVerdicts qualified: since 01:00:00 it lost allocs_map_full=6191 stack_table_full=2 "
                       "(allocations dropped or stored without their stack: a stack may grow unseen; raise the "
                       "table's size in memleakd.conf, or trace with --sample-bytes)\n"
                       "No stack is seen growing, but allocations were lost meanwhile (above): a stack may be "
                       "growing unseen.\n");
        assert_renders(render_leaks,
                       "{\"suspects\":[{\"pid\":12,\"stack_id\":1,\"verdict\":\"growing\",\"verdict_qualified\":false,"
                       "  \"bytes\":524288,\"allocs\":128,\"expected_error\":0.088,\"growth_bytes_per_s\":4096.0,"
                       "  \"first_bytes\":8192,\"frames\":[]}],"
                       "\"targets\":[{\"pid\":12,\"comm\":\"sampled\",\"outstanding_bytes\":524288,\"snapshots\":16}]}",
                       "pid 12 (sampled): 524288 bytes outstanding, verdicts from 16 snapshots\n"
                       "1 stack still growing, the fastest first:\n"
                       "\t~524288 bytes (+/-8.8%) in ~128 allocations from stack (pid 12) [growing: +4096 B/s]\n"
                       "\t\t(~8192 bytes at the oldest snapshot)\n");
}

static void render_json_pretty_prints_the_same_object(void)
{
        _cleanup_json_ cJSON *report = parse_json(full_report), *back = NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        text = render_to_string(render_json, report, &r);
        ASSERT_EQ(r, 0);
        ASSERT_TRUE(strchr(text, '\n') < text + strlen(text) - 1);      /* more than one line */
        ASSERT_EQ(text[strlen(text) - 1], '\n');
        back = parse_json(text);
        /* with the version of what made it: memleakctl's, when the reply had none */
        ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(back, "version")), MEMLEAKD_VERSION);
        cJSON_DeleteItemFromObjectCaseSensitive(back, "version");
        ASSERT_TRUE(cJSON_Compare(report, back, true));
}

/* A stack id (up to 2^53) is printed as the digits memleakd sent, not 5.63606357959902e+15. */
static void render_json_keeps_large_ids_as_digits(void)
{
        _cleanup_json_ cJSON *obj = parse_json("{\"stack_id\":5636063579599020,\"a\":[9007199254740992],"
                                               "\"small\":12,\"half\":2.5}");
        _cleanup_free_ char *text = NULL;
        int r;

        text = render_to_string(render_json, obj, &r);
        ASSERT_EQ(r, 0);
        ASSERT_TRUE(strstr(text, "5636063579599020"));
        ASSERT_TRUE(strstr(text, "9007199254740992"));
        ASSERT_TRUE(!strstr(text, "e+"));
        ASSERT_TRUE(strstr(text, "2.5"));
        /* the object itself is untouched: still numbers */
        ASSERT_TRUE(cJSON_IsNumber(cJSON_GetObjectItem(obj, "stack_id")));
}

static void render_error_json_prints_code_and_message(void)
{
        char *text = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&text, &n);

        ASSERT_TRUE(f);
        ASSERT_EQ(render_error_json(f, ESRCH, "No process with pid 99999"), 0);
        ASSERT_EQ(render_error_json(f, -ENOENT, "say \"no\""), 0);
        ASSERT_EQ(fclose(f), 0);
        ASSERT_STREQ(text,
                     "{\"error\":{\"code\":\"ESRCH\",\"message\":\"No process with pid 99999\"}}\n"
                     "{\"error\":{\"code\":\"ENOENT\",\"message\":\"say \\\"no\\\"\"}}\n");
        free(text);
}

/* Folded stacks: the process, then the frames outermost first, each named by its symbol, else its
 * module and offset, else its address; a name's ';' or line break cannot split a stack. */
static void render_folded_prints_one_line_a_stack_outermost_first(void)
{
        _cleanup_json_ cJSON *report = parse_json(full_report);
        _cleanup_json_ cJSON *hostile = parse_json(
                "{\"targets\":[{\"pid\":9,\"comm\":\"a;b\\nc\"}],\"stacks\":["
                " {\"pid\":9,\"bytes\":7,\"frames\":[{\"addr\":\"0x1\",\"symbol\":\"x;y\\nz\"}]},"
                " {\"pid\":0,\"bytes\":64,\"frames\":[{\"addr\":\"0xffffffff81000000\",\"symbol\":\"kmalloc_trace\","
                "   \"module\":\"[kernel]\"}]}]}");
        _cleanup_free_ char *text = NULL, *hostile_text = NULL;
        int r;

        text = render_to_string(render_folded, report, &r);
        ASSERT_EQ(r, 0);
        /* what --top left out said first, as a comment ending in no number */
        ASSERT_STREQ(text,
                     "# memleakctl report: the 2 largest stacks; 3 more (96 bytes in 3 allocations) left out: "
                     "--top for them\n"
                     "leaky (pid 1234);_start;0x1234;libfoo.so+0x1000;__libc_start_call_main;leak_malloc;fill_buffer 5005\n"
                     "gone (pid 77) 96\n");
        free(text);
        text = render_to_string(render_folded_allocs, report, &r);
        ASSERT_EQ(r, 0);
        ASSERT_TRUE(strstr(text, ";fill_buffer 5\n"));
        hostile_text = render_to_string(render_folded, hostile, &r);
        ASSERT_EQ(r, 0);
        ASSERT_STREQ(hostile_text, "a_b_c (pid 9);x_y_z 7\n[kernel];kmalloc_trace 64\n");
        ASSERT_EQ(render_folded(stdout, NULL), -EBADMSG);
}

/* A growing stack every block of which a scan found reachable is a growing cache, listed apart
 * after the leaks; with no leak, leaks says so rather than "no stack is growing". */
static void render_leaks_lists_growing_caches_apart_from_leaks(void)
{
        static const char *const cache =
                "\"growing_caches\":[{\"pid\":7,\"stack_id\":2,\"verdict\":\"growing\",\"bytes\":4800,"
                "  \"allocs\":100,\"expected_error\":null,\"growth_bytes_per_s\":960.0,\"first_bytes\":480,"
                "  \"reachability\":{\"definitely_lost\":{\"bytes\":0,\"allocs\":0},"
                "   \"indirectly_lost\":{\"bytes\":0,\"allocs\":0},\"undecided\":{\"bytes\":0,\"allocs\":0},"
                "   \"still_reachable\":{\"bytes\":4800,\"allocs\":100}},\"frames\":[]}],";
        static const char *const target =
                "\"targets\":[{\"pid\":7,\"comm\":\"kv\",\"outstanding_bytes\":7360,\"snapshots\":16}]}";
        char json[2048];

        snprintf(json, sizeof(json),
                 "{\"suspects\":[{\"pid\":7,\"stack_id\":1,\"verdict\":\"growing\",\"bytes\":2560,"
                 "  \"allocs\":10,\"expected_error\":null,\"growth_bytes_per_s\":512.0,\"first_bytes\":256,"
                 "  \"reachability\":{\"definitely_lost\":{\"bytes\":2304,\"allocs\":9},"
                 "   \"indirectly_lost\":{\"bytes\":0,\"allocs\":0},\"undecided\":{\"bytes\":0,\"allocs\":0},"
                 "   \"still_reachable\":{\"bytes\":256,\"allocs\":1}},\"frames\":[]}],%s%s", cache, target);
        assert_renders(render_leaks, json,
                       "pid 7 (kv): 7360 bytes outstanding, verdicts from 16 snapshots\n"
                       "1 stack still growing, the fastest first:\n"
                       "\t2560 bytes in 10 allocations from stack (pid 7) [growing: +512 B/s]\n"
                       "\t  definitely lost: 2304 bytes in 9 blocks, still reachable: 256 bytes in 1 block\n"
                       "\t\t(256 bytes at the oldest snapshot)\n"
                       "1 stack growing whose every block is still reachable (a growing cache, not a leak: the "
                       "program still holds it), the fastest first:\n"
                       "\t4800 bytes in 100 allocations from stack (pid 7) [growing: +960 B/s]\n"
                       "\t  still reachable: 4800 bytes in 100 blocks\n"
                       "\t\t(480 bytes at the oldest snapshot)\n");
        snprintf(json, sizeof(json), "{\"suspects\":[],%s%s", cache, target);
        assert_renders(render_leaks, json,
                       "pid 7 (kv): 7360 bytes outstanding, verdicts from 16 snapshots\n"
                       "No leak: no stack holds lost blocks, and the growing ones are still reachable.\n"
                       "1 stack growing whose every block is still reachable (a growing cache, not a leak: the "
                       "program still holds it), the fastest first:\n"
                       "\t4800 bytes in 100 allocations from stack (pid 7) [growing: +960 B/s]\n"
                       "\t  still reachable: 4800 bytes in 100 blocks\n"
                       "\t\t(480 bytes at the oldest snapshot)\n");
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(render_report_prints_targets_stacks_frames_other_and_lost),
                TEST(render_folded_prints_one_line_a_stack_outermost_first),
                TEST(render_report_says_where_a_frame_pointer_chain_broke),
                TEST(render_report_says_none_lost_and_omits_empty_trailer),
                TEST(render_report_shows_raw_addresses_only_when_asked),
                TEST(render_report_prints_kernel_frames_with_their_module),
                TEST(render_report_refuses_objects_that_are_not_reports),
                TEST(render_report_and_leaks_say_when_memleakd_started_sampling),
                TEST(render_attach_and_detach_print_one_line),
                TEST(render_status_lists_daemon_targets_and_counters),
                TEST(render_leaks_never_says_nothing_grows_while_blind),
                TEST(render_leaks_lists_growing_caches_apart_from_leaks),
                TEST(render_json_pretty_prints_the_same_object),
                TEST(render_json_keeps_large_ids_as_digits),
                TEST(render_error_json_prints_code_and_message),
                TEST(render_report_folds_followed_processes_that_left_nothing),
        };

        /* The report's clock is local time: pin it. */
        setenv("TZ", "UTC", 1);
        tzset();
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
