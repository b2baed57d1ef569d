/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/core/state-file.c: the targets a restart adopts, encoded and decoded,
 * whatever is not a whole valid file refused, /proc/PID/stat's start time read. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "state-file.h"
#include "test-util.h"

static char *objs[] = { (char *)"/usr/lib/libtcmalloc.so.4", (char *)"/opt/app/lib/libarena.so" };

static struct state_file sample(struct state_target t[2])
{
        t[0] = (struct state_target) {
                .pid = 4242, .start_time = 123456789012ULL, .slot = 3, .ring_depth = 60,
                .unwind = MEMLEAK_UNWIND_AUTO, .follow_forks = true, .attached_usec = 1795823458305336ULL,
        };
        for (size_t i = 0; i < _COUNTER_MAX; i++)
                t[0].counters_base[i] = UINT64_MAX - i;         /* beyond a double's exact range */
        t[1] = (struct state_target) {
                .pid = 77, .start_time = 5, .slot = 0, .ring_depth = 10, .unwind = MEMLEAK_UNWIND_FP,
                .track_mmap = true, .asked_by_user = true, .asker_uid = 1000, .asker_gid = 100,
                .objs = objs, .n_objs = 2, .forked_from = 76, .parent_pid = 4242,
                .parent_start_time = 123456789012ULL,
        };
        return (struct state_file) { .layout = 0x4404c2021b820e16ULL, .targets = t, .n_targets = 2 };
}

static void state_file_round_trips_every_field(void)
{
        struct state_target t[2];
        struct state_file s = sample(t), d = {};
        char *text = state_file_encode(&s), *error = NULL;

        ASSERT_TRUE(text);
        ASSERT_EQ(state_file_decode(text, strlen(text), &d, &error), 0);
        ASSERT_TRUE(!error);
        ASSERT_EQ(d.layout, s.layout);
        ASSERT_EQ(d.n_targets, 2);
        for (size_t i = 0; i < 2; i++) {
                ASSERT_EQ(d.targets[i].pid, t[i].pid);
                ASSERT_EQ(d.targets[i].start_time, t[i].start_time);
                ASSERT_EQ(d.targets[i].slot, t[i].slot);
                ASSERT_EQ(d.targets[i].ring_depth, t[i].ring_depth);
                ASSERT_EQ(d.targets[i].unwind, t[i].unwind);
                ASSERT_EQ(d.targets[i].track_mmap, t[i].track_mmap);
                ASSERT_EQ(d.targets[i].follow_forks, t[i].follow_forks);
                ASSERT_EQ(d.targets[i].asked_by_user, t[i].asked_by_user);
                ASSERT_EQ(d.targets[i].asker_uid, t[i].asker_uid);
                ASSERT_EQ(d.targets[i].asker_gid, t[i].asker_gid);
                ASSERT_EQ(d.targets[i].attached_usec, t[i].attached_usec);
                ASSERT_EQ(d.targets[i].forked_from, t[i].forked_from);
                ASSERT_EQ(d.targets[i].parent_pid, t[i].parent_pid);
                ASSERT_EQ(d.targets[i].parent_start_time, t[i].parent_start_time);
                ASSERT_TRUE(memcmp(d.targets[i].counters_base, t[i].counters_base, sizeof(t[i].counters_base)) == 0);
                ASSERT_EQ(d.targets[i].n_objs, t[i].n_objs);
                for (size_t j = 0; j < t[i].n_objs; j++)
                        ASSERT_STREQ(d.targets[i].objs[j], t[i].objs[j]);
        }
        state_file_done(&d);
        free(text);
}

/* Every cut of a valid file is refused with a message, never half taken. */
static void state_file_refuses_every_truncation(void)
{
        struct state_target t[2];
        struct state_file s = sample(t);
        char *text = state_file_encode(&s);
        size_t n = strlen(text);

        ASSERT_TRUE(text);
        for (size_t cut = 0; cut < n; cut++) {
                struct state_file d = {};
                char *error = NULL;

                ASSERT_EQ(state_file_decode(text, cut, &d, &error), -EBADMSG);
                ASSERT_TRUE(error);
                ASSERT_EQ(d.n_targets, 0);
                free(error);
        }
        free(text);
}

static void assert_refused(const char *text, const char *why)
{
        struct state_file d = {};
        char *error = NULL;

        ASSERT_EQ(state_file_decode(text, strlen(text), &d, &error), -EBADMSG);
        ASSERT_TRUE(error && strstr(error, why));
        free(error);
}

#define TARGET_FIELDS \
        "\"start_time\":1,\"ring_depth\":60,\"unwind\":\"auto\",\"track_mmap\":false," \
        "\"follow_forks\":false,\"asked_by_user\":false,\"asker_uid\":0,\"asker_gid\":0,\"attached_usec\":1," \
        "\"counters_base\":[\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\"," \
        "\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\",\"0\"],\"objs\":[]"

static void state_file_refuses_what_it_did_not_write(void)
{
        assert_refused("[]", "not a JSON object");
        assert_refused("{\"version\":2,\"layout\":\"0000000000000001\",\"targets\":[]}", "version 2");
        assert_refused("{\"version\":1,\"layout\":\"01\",\"targets\":[]}", "layout");
        assert_refused("{\"version\":1,\"layout\":\"000000000000000g\",\"targets\":[]}", "layout");
        assert_refused("{\"version\":1,\"layout\":\"0000000000000001\"}", "targets");
        assert_refused("{\"version\":1,\"layout\":\"0000000000000001\",\"targets\":[{\"pid\":0,\"slot\":0,"
                       TARGET_FIELDS "}]}", "\"pid\" is 0");
        assert_refused("{\"version\":1,\"layout\":\"0000000000000001\",\"targets\":[{\"pid\":-4,\"slot\":0,"
                       TARGET_FIELDS "}]}", "pid");
        assert_refused("{\"version\":1,\"layout\":\"0000000000000001\",\"targets\":[{\"pid\":4,\"slot\":0,"
                       TARGET_FIELDS "},{\"pid\":5,\"slot\":0," TARGET_FIELDS "}]}", "two targets");
}

/* A followed child's parent: absent (a file an earlier daemon wrote, a target attached itself) is
 * none; present, a pid and a start time in range. */
static void state_file_reads_a_followed_child_s_parent_or_none(void)
{
        static const char text[] = "{\"version\":1,\"layout\":\"0000000000000001\",\"targets\":[{\"pid\":4,"
                                   "\"slot\":0," TARGET_FIELDS "}]}";
        struct state_file d = {};
        char *error = NULL;

        ASSERT_EQ(state_file_decode(text, strlen(text), &d, &error), 0);
        ASSERT_EQ(d.n_targets, 1);
        ASSERT_EQ(d.targets[0].forked_from, 0);
        ASSERT_EQ(d.targets[0].parent_pid, 0);
        ASSERT_EQ(d.targets[0].parent_start_time, 0);
        state_file_done(&d);
        assert_refused("{\"version\":1,\"layout\":\"0000000000000001\",\"targets\":[{\"pid\":4,\"slot\":0,"
                       "\"parent_pid\":-1," TARGET_FIELDS "}]}", "parent_pid");
        assert_refused("{\"version\":1,\"layout\":\"0000000000000001\",\"targets\":[{\"pid\":4,\"slot\":0,"
                       "\"forked_from\":\"3\"," TARGET_FIELDS "}]}", "forked_from");
        assert_refused("{\"version\":1,\"layout\":\"0000000000000001\",\"targets\":[{\"pid\":4,\"slot\":0,"
                       "\"parent_pid\":3,\"parent_start_time\":1.5," TARGET_FIELDS "}]}", "parent_start_time");
}

static void state_file_keeps_the_kernel_target_apart(void)
{
        struct state_target t = { .kernel = true, .pid = 0, .slot = 5, .ring_depth = 60, .unwind = MEMLEAK_UNWIND_AUTO };
        struct state_file s = { .layout = 1, .targets = &t, .n_targets = 1 }, d = {};
        char *text = state_file_encode(&s), *error = NULL;

        ASSERT_TRUE(text);
        ASSERT_EQ(state_file_decode(text, strlen(text), &d, &error), 0);
        ASSERT_EQ(d.n_targets, 1);
        ASSERT_TRUE(d.targets[0].kernel);
        ASSERT_EQ(d.targets[0].pid, 0);
        ASSERT_EQ(d.targets[0].slot, 5);
        state_file_done(&d);
        free(text);
        /* a process's entry says nothing of it: not the kernel */
        struct state_target p[2];
        struct state_file ps = sample(p);

        text = state_file_encode(&ps);
        ASSERT_TRUE(text && !strstr(text, "kernel"));
        ASSERT_EQ(state_file_decode(text, strlen(text), &d, &error), 0);
        ASSERT_TRUE(!d.targets[0].kernel && !d.targets[1].kernel);
        state_file_done(&d);
        free(text);
        assert_refused("{\"version\":1,\"layout\":\"0000000000000001\",\"targets\":[{\"pid\":4,\"kernel\":true,"
                       "\"slot\":0," TARGET_FIELDS "}]}", "the kernel target's \"pid\" is not 0");
        assert_refused("{\"version\":1,\"layout\":\"0000000000000001\",\"targets\":[{\"pid\":0,\"kernel\":1,"
                       "\"slot\":0," TARGET_FIELDS "}]}", "\"kernel\" is not a boolean");
}

static void state_file_reads_the_start_time_after_any_comm(void)
{
        uint64_t v = 0;

        ASSERT_EQ(state_file_parse_start_time("4242 (a) b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 "
                                              "1 0 987654321 1000 10 18446744073709551615", &v), 0);
        ASSERT_EQ(v, 987654321);
        ASSERT_EQ(state_file_parse_start_time("4242 (a) S 1 2", &v), -EINVAL);
        ASSERT_EQ(state_file_parse_start_time("no paren", &v), -EINVAL);
}

static void state_file_is_written_whole_and_read_back(void)
{
        char template[] = "/tmp/test-state-file-XXXXXX", *dir = mkdtemp(template), *text = NULL, *path = NULL;
        size_t n = 0;

        ASSERT_TRUE(dir);
        ASSERT_EQ(state_file_read(dir, STATE_FILE_NAME, STATE_FILE_MAX_BYTES, &text, &n), -ENOENT);
        ASSERT_EQ(state_file_write(dir, STATE_FILE_NAME, "{\"a\":1}"), 0);
        ASSERT_EQ(state_file_write(dir, STATE_FILE_NAME, "{}"), 0);       /* replaced whole */
        ASSERT_EQ(state_file_read(dir, STATE_FILE_NAME, STATE_FILE_MAX_BYTES, &text, &n), 0);
        ASSERT_STREQ(text, "{}");
        ASSERT_EQ(n, 2);
        free(text);
        ASSERT_TRUE(asprintf(&path, "%s/%s", dir, STATE_FILE_NAME) >= 0);
        ASSERT_EQ(unlink(path), 0);
        free(path);
        ASSERT_EQ(rmdir(dir), 0);       /* no temporary file left */
}

static const struct unit_test tests[] = {
        TEST(state_file_round_trips_every_field),
        TEST(state_file_refuses_every_truncation),
        TEST(state_file_refuses_what_it_did_not_write),
        TEST(state_file_keeps_the_kernel_target_apart),
        TEST(state_file_reads_a_followed_child_s_parent_or_none),
        TEST(state_file_reads_the_start_time_after_any_comm),
        TEST(state_file_is_written_whole_and_read_back),
};

int main(void)
{
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
