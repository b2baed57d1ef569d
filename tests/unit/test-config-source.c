/* SPDX-License-Identifier: GPL-2.0-only */
/* The layered configuration: which files are read, in which order, and what wins. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config-source.h"
#include "macro.h"
#include "test-util.h"

static char *root;              /* a fresh directory per case: root/vendor and root/admin */
static char *vendor, *admin;

static void write_file(const char *dir, const char *name, const char *text)
{
        _cleanup_free_ char *path = NULL;
        FILE *f;

        ASSERT_TRUE(asprintf(&path, "%s/%s", dir, name) >= 0);
        f = fopen(path, "we");
        ASSERT_TRUE(f);
        ASSERT_EQ(fputs(text, f) >= 0, 1);
        ASSERT_EQ(fclose(f), 0);
}

static void make_dirs(void)
{
        char template[] = "/tmp/test-config-files-XXXXXX";
        _cleanup_free_ char *d1 = NULL, *d2 = NULL;

        ASSERT_TRUE(mkdtemp(template));
        free(root);
        free(vendor);
        free(admin);
        root = strdup(template);
        ASSERT_TRUE(asprintf(&vendor, "%s/vendor", root) >= 0);
        ASSERT_TRUE(asprintf(&admin, "%s/admin", root) >= 0);
        ASSERT_TRUE(asprintf(&d1, "%s/memleakd.conf.d", vendor) >= 0);
        ASSERT_TRUE(asprintf(&d2, "%s/memleakd.conf.d", admin) >= 0);
        ASSERT_EQ(mkdir(vendor, 0755), 0);
        ASSERT_EQ(mkdir(admin, 0755), 0);
        ASSERT_EQ(mkdir(d1, 0755), 0);
        ASSERT_EQ(mkdir(d2, 0755), 0);
}

static void remove_dirs(void)
{
        _cleanup_free_ char *cmd = NULL;

        ASSERT_TRUE(asprintf(&cmd, "rm -rf '%s'", root) >= 0);
        ASSERT_EQ(system(cmd), 0);
}

static char *dropin_dir(const char *dir)
{
        char *p;

        ASSERT_TRUE(asprintf(&p, "%s/memleakd.conf.d", dir) >= 0);
        return p;
}

static void test_dropins_sorted_by_name_admin_hides_vendor(void)
{
        struct config_dropin d[] = {
                { "50-b.conf", "/usr/share/memleakd" },
                { "10-a.conf", "/etc/memleakd" },
                { "10-a.conf", "/usr/share/memleakd" },
                { "50-b.conf", "/etc/memleakd" },
                { "30-c.conf", "/usr/share/memleakd" },
        };
        size_t n = config_source_dropins_order(d, ELEMENTSOF(d), "/etc/memleakd");

        ASSERT_EQ(n, 3);
        ASSERT_STREQ(d[0].name, "10-a.conf");
        ASSERT_STREQ(d[0].dir, "/etc/memleakd");
        ASSERT_STREQ(d[1].name, "30-c.conf");
        ASSERT_STREQ(d[1].dir, "/usr/share/memleakd");
        ASSERT_STREQ(d[2].name, "50-b.conf");
        ASSERT_STREQ(d[2].dir, "/etc/memleakd");
        ASSERT_EQ(config_source_dropins_order(d, 0, "/etc/memleakd"), 0);
}

static void test_layers_apply_in_order(void)
{
        _cleanup_(config_source_done) struct config_source s = {};
        _cleanup_(config_done) struct memleakd_config c = {};
        _cleanup_free_ char *files = NULL, *error = NULL, *expected = NULL;
        _cleanup_free_ char *vd = NULL, *ad = NULL;

        make_dirs();
        vd = dropin_dir(vendor);
        ad = dropin_dir(admin);
        write_file(vendor, "memleakd.conf", "[memleakd]\nring_depth = 10\nmax_targets = 3\n");
        write_file(admin, "memleakd.conf", "ring_depth = 20\nsnapshot_interval_ms = 500\n");
        write_file(vd, "10-a.conf", "max_targets = 5\nmax_allocs = 4096\n");
        write_file(ad, "10-a.conf", "max_targets = 7\n");       /* hides the vendor's 10-a */
        write_file(ad, "20-b.conf", "ring_depth = 30\n");
        write_file(ad, ".hidden.conf", "this is not a valid line\n");
        write_file(ad, "README", "neither is this\n");
        write_file(ad, "30-c.conf~", "nor this\n");
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_source_init(&s, NULL, vendor, admin), 0);
        ASSERT_EQ(config_source_load(&s, &c, &files, &error), 0);
        ASSERT_EQ(c.ring_depth, 30);
        ASSERT_EQ(c.snapshot_interval_ms, 500);
        ASSERT_EQ(c.max_targets, 7);
        ASSERT_EQ(c.max_allocs, CONFIG_MAX_ALLOCS_DEFAULT);     /* only in the hidden 10-a */
        ASSERT_TRUE(asprintf(&expected, "%s/memleakd.conf, %s/memleakd.conf, %s/10-a.conf, %s/20-b.conf",
                             vendor, admin, ad, ad) >= 0);
        ASSERT_STREQ(files, expected);
        remove_dirs();
}

static void test_nothing_there_gives_the_defaults(void)
{
        _cleanup_(config_source_done) struct config_source s = {};
        _cleanup_(config_done) struct memleakd_config c = {}, defaults = {};
        _cleanup_free_ char *files = NULL, *error = NULL, *missing = NULL;

        make_dirs();
        ASSERT_TRUE(asprintf(&missing, "%s/nowhere", root) >= 0);
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_init_defaults(&defaults), 0);
        ASSERT_EQ(config_source_init(&s, NULL, missing, admin), 0);
        ASSERT_EQ(config_source_load(&s, &c, &files, &error), 0);
        ASSERT_STREQ(files, "");
        ASSERT_EQ(c.ring_depth, defaults.ring_depth);
        ASSERT_EQ(c.max_targets, defaults.max_targets);
        remove_dirs();
}

static void test_a_bad_dropin_changes_nothing_and_is_named(void)
{
        _cleanup_(config_source_done) struct config_source s = {};
        _cleanup_(config_done) struct memleakd_config c = {};
        _cleanup_free_ char *error = NULL, *ad = NULL;

        make_dirs();
        ad = dropin_dir(admin);
        write_file(admin, "memleakd.conf", "ring_depth = 20\n");
        write_file(ad, "50-bad.conf", "ring_depth = 5\nnot_a_key = 1\n");
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_source_init(&s, NULL, vendor, admin), 0);
        ASSERT_EQ(config_source_load(&s, &c, NULL, &error), -EINVAL);
        ASSERT_TRUE(error && strstr(error, "50-bad.conf:2: unknown key 'not_a_key'"));
        ASSERT_EQ(c.ring_depth, CONFIG_RING_DEPTH_DEFAULT);     /* not even the valid files' */
        remove_dirs();
}

static void test_min_above_max_across_files_is_refused(void)
{
        _cleanup_(config_source_done) struct config_source s = {};
        _cleanup_(config_done) struct memleakd_config c = {};
        _cleanup_free_ char *error = NULL, *ad = NULL;

        make_dirs();
        ad = dropin_dir(admin);
        write_file(admin, "memleakd.conf", "default_max_size = 100\n");
        write_file(ad, "10-min.conf", "default_min_size = 200\n");
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_source_init(&s, NULL, vendor, admin), 0);
        ASSERT_EQ(config_source_load(&s, &c, NULL, &error), -EINVAL);
        ASSERT_TRUE(error && strstr(error, "10-min.conf"));
        remove_dirs();
}

static void test_explicit_file_is_read_alone_and_must_exist(void)
{
        _cleanup_(config_source_done) struct config_source s = {}, missing = {};
        _cleanup_(config_done) struct memleakd_config c = {};
        _cleanup_free_ char *files = NULL, *error = NULL, *path = NULL, *absent = NULL, *ad = NULL;

        make_dirs();
        ad = dropin_dir(admin);
        write_file(root, "mine.conf", "ring_depth = 42\n");
        write_file(admin, "memleakd.conf", "max_targets = 9\n");
        write_file(ad, "10-a.conf", "ring_depth = 7\n");
        ASSERT_TRUE(asprintf(&path, "%s/mine.conf", root) >= 0);
        ASSERT_TRUE(asprintf(&absent, "%s/absent.conf", root) >= 0);
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_source_init(&s, path, vendor, admin), 0);
        ASSERT_EQ(config_source_load(&s, &c, &files, &error), 0);
        ASSERT_STREQ(files, path);
        ASSERT_EQ(c.ring_depth, 42);
        ASSERT_EQ(c.max_targets, CONFIG_MAX_TARGETS_DEFAULT);
        ASSERT_EQ(config_source_init(&missing, absent, vendor, admin), 0);
        ASSERT_EQ(config_source_load(&missing, &c, NULL, &error), -ENOENT);
        ASSERT_TRUE(error && strstr(error, "absent.conf"));
        remove_dirs();
}

static void test_a_directory_in_place_of_a_file_is_an_error(void)
{
        _cleanup_(config_source_done) struct config_source s = {};
        _cleanup_(config_done) struct memleakd_config c = {};
        _cleanup_free_ char *error = NULL, *path = NULL;

        make_dirs();
        ASSERT_TRUE(asprintf(&path, "%s/memleakd.conf", admin) >= 0);
        ASSERT_EQ(mkdir(path, 0755), 0);
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_source_init(&s, NULL, vendor, admin), 0);
        ASSERT_EQ(config_source_load(&s, &c, NULL, &error), -EISDIR);
        ASSERT_TRUE(error && strstr(error, "not a regular file"));
        remove_dirs();
}

static const struct unit_test tests[] = {
        TEST(test_dropins_sorted_by_name_admin_hides_vendor),
        TEST(test_layers_apply_in_order),
        TEST(test_nothing_there_gives_the_defaults),
        TEST(test_a_bad_dropin_changes_nothing_and_is_named),
        TEST(test_min_above_max_across_files_is_refused),
        TEST(test_explicit_file_is_read_alone_and_must_exist),
        TEST(test_a_directory_in_place_of_a_file_is_an_error),
};

int main(void)
{
        int r = run_unit_tests(tests, ELEMENTSOF(tests));

        free(root);
        free(vendor);
        free(admin);
        return r;
}
