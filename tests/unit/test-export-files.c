/* SPDX-License-Identifier: MIT */
/* Unit tests for daemon/report/export-files.c: file names that sort by time, one profile per live
 * target (gzip'd pprof), a pid's oldest removed past keep. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "export-files.h"
#include "json-raw.h"
#include "json-util.h"
#include "macro.h"
#include "profile.pb-c.h"
#include "test-util.h"

static const char report_text[] =
        "{\"generated_at\":1700000000,\"targets\":["
        " {\"pid\":42,\"comm\":\"we/ird na;me\",\"exited\":false,\"sample_bytes\":0},"
        " {\"pid\":43,\"comm\":\"gone\",\"exited\":true,\"sample_bytes\":0}],"
        " \"stacks\":["
        " {\"pid\":42,\"stack_id\":1,\"bytes\":100,\"allocs\":1,\"frames\":[{\"addr\":\"0x401000\",\"symbol\":\"leak\","
        "   \"module\":\"/bin/x\",\"module_offset\":4096}]},"
        " {\"pid\":43,\"stack_id\":2,\"bytes\":7,\"allocs\":1,\"frames\":[]}],"
        " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0},\"lost\":{}}";

/* The report as memleakctl asks for it: each frame once in "locations", each stack raw text. */
static const char located_text[] =
        "{\"report\":{\"generated_at\":1700000000,\"targets\":["
        " {\"pid\":42,\"comm\":\"leaky\",\"exited\":false,\"sample_bytes\":0},"
        " {\"pid\":7,\"comm\":\"other\",\"exited\":false,\"sample_bytes\":0}],"
        " \"locations\":[{\"addr\":\"0x401000\",\"symbol\":\"leak\",\"module\":\"/bin/x\",\"module_offset\":4096},"
        "  {\"addr\":\"0x401100\",\"symbol\":\"main\",\"module\":\"/bin/x\",\"module_offset\":4352}],"
        " \"stacks\":["
        " {\"pid\":42,\"stack_id\":1,\"bytes\":100,\"allocs\":1,\"locations\":[0,1]},"
        " {\"pid\":7,\"stack_id\":3,\"bytes\":5,\"allocs\":1,\"locations\":[1]},"
        " {\"pid\":42,\"stack_id\":2,\"bytes\":8,\"allocs\":2,\"locations\":[1]}],"
        " \"other\":{\"stacks\":0,\"bytes\":0,\"allocs\":0},\"lost\":{}}}";

/* The profile in the gzip'd file at path: its samples' inuse_space summed, and how many. */
static void profile_samples(const char *path, size_t *ret_n, int64_t *ret_bytes)
{
        gzFile gz = gzopen(path, "rb");
        static uint8_t buf[1 << 16];
        Perftools__Profiles__Profile *p;
        int n;

        ASSERT_TRUE(gz);
        n = gzread(gz, buf, sizeof(buf));
        gzclose(gz);
        ASSERT_TRUE(n > 0 && n < (int)sizeof(buf));
        p = perftools__profiles__profile__unpack(NULL, (size_t)n, buf);
        ASSERT_TRUE(p);
        *ret_n = p->n_sample;
        *ret_bytes = 0;
        for (size_t i = 0; i < p->n_sample; i++)
                *ret_bytes += p->sample[i]->value[1];
        perftools__profiles__profile__free_unpacked(p, NULL);
}

static size_t files_in(const char *dir, const char *prefix, char *first, size_t size)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        ASSERT_TRUE(d);
        while ((de = readdir(d)))
                if (strncmp(de->d_name, prefix, strlen(prefix)) == 0) {
                        if (n++ == 0 && first)
                                snprintf(first, size, "%s", de->d_name);
                }
        closedir(d);
        return n;
}

static void export_files_names_sort_by_time(void)
{
        char a[EXPORT_FILES_NAME_MAX], b[EXPORT_FILES_NAME_MAX];

        export_files_name(a, sizeof(a), 42, "we/ird na;me", 1700000000123456ULL);
        ASSERT_STREQ(a, "memleakd-42-we_ird_na_me-20231114T221320.123Z.pb.gz");
        export_files_name(b, sizeof(b), 42, "we/ird na;me", 1700000001000000ULL);
        ASSERT_TRUE(strcmp(a, b) < 0);
        export_files_name(a, sizeof(a), 7, NULL, 0);
        ASSERT_STREQ(a, "memleakd-7--19700101T000000.000Z.pb.gz");
}

static void export_files_write_live_targets_and_rotate(void)
{
        _cleanup_json_ cJSON *report = cJSON_Parse(report_text);
        char dir[] = "/tmp/test-export-files-XXXXXX", name[256], path[512];
        unsigned char magic[2] = {};
        FILE *f;

        ASSERT_TRUE(report);
        ASSERT_TRUE(mkdtemp(dir));
        ASSERT_EQ(export_files_write(dir, report, 2, 1700000000000000ULL), 1);      /* the exited one: not */
        ASSERT_EQ(files_in(dir, "memleakd-42-", name, sizeof(name)), 1);
        ASSERT_EQ(files_in(dir, "memleakd-43-", NULL, 0), 0);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "rb");
        ASSERT_TRUE(f);
        ASSERT_EQ(fread(magic, 1, 2, f), 2);
        fclose(f);
        ASSERT_TRUE(magic[0] == 0x1f && magic[1] == 0x8b);                 /* gzip */
        /* three more: the newest two kept */
        for (uint64_t i = 1; i <= 3; i++)
                ASSERT_EQ(export_files_write(dir, report, 2, 1700000000000000ULL + i * 1000000), 1);
        ASSERT_EQ(files_in(dir, "memleakd-42-", NULL, 0), 2);
        ASSERT_EQ(files_in(dir, ".memleakd-", NULL, 0), 0);                  /* no temporary left */
        export_files_name(name, sizeof(name), 42, "we/ird na;me", 1700000000000000ULL + 3 * 1000000);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        ASSERT_EQ(access(path, F_OK), 0);
        export_files_name(name, sizeof(name), 42, "we/ird na;me", 1700000000000000ULL + 1 * 1000000);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        ASSERT_TRUE(access(path, F_OK) < 0);
        /* a directory that is not there */
        ASSERT_TRUE(export_files_write("/nonexistent/memleakd", report, 2, 0) < 0);
        ASSERT_EQ(system(strcat(strcpy(path, "rm -rf "), dir)), 0);
}

/* A report of raw stacks referring to its locations: each target's profile has its own. */
static void export_files_write_stacks_kept_as_text(void)
{
        _cleanup_json_ cJSON *reply = NULL;
        char dir[] = "/tmp/test-export-files-XXXXXX", name[256], path[512];
        int64_t bytes;
        size_t n;

        ASSERT_EQ(json_parse_raw_array(located_text, strlen(located_text),
                                       (const char *const[]) { "report", "stacks", NULL }, &reply), 0);
        ASSERT_TRUE(cJSON_IsRaw(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(reply, "report"), "stacks"), 0)));
        ASSERT_TRUE(mkdtemp(dir));
        ASSERT_EQ(export_files_write(dir, cJSON_GetObjectItem(reply, "report"), 2, 1700000000000000ULL), 2);
        ASSERT_EQ(files_in(dir, "memleakd-42-", name, sizeof(name)), 1);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        profile_samples(path, &n, &bytes);
        ASSERT_EQ(n, 2u);
        ASSERT_EQ(bytes, 108);
        ASSERT_EQ(files_in(dir, "memleakd-7-", name, sizeof(name)), 1);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        profile_samples(path, &n, &bytes);
        ASSERT_EQ(n, 1u);
        ASSERT_EQ(bytes, 5);
        ASSERT_EQ(system(strcat(strcpy(path, "rm -rf "), dir)), 0);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(export_files_names_sort_by_time),
                TEST(export_files_write_live_targets_and_rotate),
                TEST(export_files_write_stacks_kept_as_text),
        };
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
