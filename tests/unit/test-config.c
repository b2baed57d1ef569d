/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/config.c: defaults, every key, error messages, atomic failure. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "macro.h"
#include "test-util.h"

#ifndef MEMLEAKD_CONF_PATH
#error "MEMLEAKD_CONF_PATH must name the shipped conf/memleakd.conf"
#endif

/* Every key the parser knows; the shipped file must document each one. */
static const char *const all_keys[] = {
        "snapshot_interval_ms", "ring_depth", "max_targets", "max_allocs", "max_stacks",
        "max_combined", "max_inflight", "max_mmaps", "max_stack_depth", "socket_path", "socket_mode", "socket_group",
        "admin_group", "reachability_concurrent_max_stop_ms",
        "default_min_size", "default_max_size", "symbols_max_open_files", "symbols_max_mb",
        "symbols_max_section_mb", "exited_max_mb", "unwind", "verdict_min_snapshots", "verdict_noise_factor",
        "verdict_flat_bytes", "verdict_flat_percent", "auto_sample_percent", "cache_directory", "unwind_cache_max_mb",
        "state_directory", "bpf_pin_directory", "metrics_textfile", "metrics_interval_ms",
        "export_dir", "export_interval_ms", "export_keep",
};

static char *tmp_dir;
static char *conf_path;         /* tmp_dir/memleakd.conf, rewritten by each case */

static void write_conf_bytes(const char *text, size_t n)
{
        FILE *f = fopen(conf_path, "we");

        ASSERT_TRUE(f);
        ASSERT_EQ(fwrite(text, 1, n, f), n);
        ASSERT_EQ(fclose(f), 0);
}

static void write_conf(const char *text)
{
        write_conf_bytes(text, strlen(text));
}

/* Parse text from a file; on error, *error holds the message. */
static int parse_text(const char *text, struct memleakd_config *c, char **error)
{
        write_conf(text);
        return config_parse_file(conf_path, c, error);
}

static bool str_eq_or_null(const char *a, const char *b)
{
        return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static bool config_equal(const struct memleakd_config *a, const struct memleakd_config *b)
{
        return a->snapshot_interval_ms == b->snapshot_interval_ms &&
                a->ring_depth == b->ring_depth &&
                a->max_targets == b->max_targets &&
                a->max_allocs == b->max_allocs &&
                a->max_stacks == b->max_stacks &&
                a->max_combined == b->max_combined &&
                a->max_inflight == b->max_inflight &&
                a->max_mmaps == b->max_mmaps &&
                a->max_stack_depth == b->max_stack_depth &&
                str_eq_or_null(a->socket_path, b->socket_path) &&
                a->socket_mode == b->socket_mode &&
                str_eq_or_null(a->socket_group, b->socket_group) &&
                str_eq_or_null(a->admin_group, b->admin_group) &&
                a->min_size == b->min_size &&
                a->max_size == b->max_size &&
                a->symbols_max_open_files == b->symbols_max_open_files &&
                a->symbols_max_mb == b->symbols_max_mb &&
                a->symbols_max_section_mb == b->symbols_max_section_mb &&
                a->exited_max_mb == b->exited_max_mb &&
                a->unwind == b->unwind &&
                a->verdict_min_snapshots == b->verdict_min_snapshots &&
                a->verdict_noise_factor == b->verdict_noise_factor &&
                a->verdict_flat_bytes == b->verdict_flat_bytes &&
                a->verdict_flat_percent == b->verdict_flat_percent &&
                a->auto_sample_percent == b->auto_sample_percent &&
                str_eq_or_null(a->cache_directory, b->cache_directory) &&
                a->unwind_cache_max_mb == b->unwind_cache_max_mb &&
                str_eq_or_null(a->state_directory, b->state_directory) &&
                str_eq_or_null(a->bpf_pin_directory, b->bpf_pin_directory) &&
                str_eq_or_null(a->metrics_textfile, b->metrics_textfile) &&
                a->metrics_interval_ms == b->metrics_interval_ms &&
                str_eq_or_null(a->export_dir, b->export_dir) &&
                a->export_interval_ms == b->export_interval_ms && a->export_keep == b->export_keep;
}

/* Expect text to fail with -EINVAL and exactly the message "<conf_path>:<rest>". */
static void assert_error(const char *text, const char *rest)
{
        struct memleakd_config c;
        _cleanup_free_ char *error = NULL, *expected = NULL;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(parse_text(text, &c, &error), -EINVAL);
        ASSERT_TRUE(asprintf(&expected, "%s:%s", conf_path, rest) >= 0);
        ASSERT_STREQ(error, expected);
        config_done(&c);
}

/* Expect "key = value" to be rejected as an invalid value, with a message naming line 1 and key. */
static void assert_invalid(const char *key, const char *value)
{
        struct memleakd_config c, defaults;
        _cleanup_free_ char *text = NULL, *error = NULL, *prefix = NULL;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_init_defaults(&defaults), 0);
        ASSERT_TRUE(asprintf(&text, "%s = %s\n", key, value) >= 0);
        ASSERT_TRUE(asprintf(&prefix, "%s:1: invalid value '%s' for '%s': expected ", conf_path, value, key) >= 0);
        if (parse_text(text, &c, &error) != -EINVAL) {
                fprintf(stderr, "'%s = %s' was accepted\n", key, value);
                abort();
        }
        if (!error || strncmp(error, prefix, strlen(prefix)) != 0) {
                fprintf(stderr, "'%s' does not start with '%s'\n", error ?: "(null)", prefix);
                abort();
        }
        ASSERT_TRUE(config_equal(&c, &defaults));
        config_done(&c);
        config_done(&defaults);
}

/* Parse "key = value" alone and return the config. */
static struct memleakd_config parse_one(const char *key, const char *value)
{
        struct memleakd_config c;
        _cleanup_free_ char *text = NULL, *error = NULL;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_TRUE(asprintf(&text, "%s = %s\n", key, value) >= 0);
        if (parse_text(text, &c, &error) != 0) {
                fprintf(stderr, "'%s = %s' rejected: %s\n", key, value, error ?: "(null)");
                abort();
        }
        return c;
}

static void defaults_match_documented_values(void)
{
        struct memleakd_config c;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(c.snapshot_interval_ms, 1000);
        ASSERT_EQ(c.ring_depth, 60);
        ASSERT_EQ(c.max_targets, 64);
        ASSERT_EQ(c.max_allocs, 1048576);
        ASSERT_EQ(c.max_stacks, 131072);
        ASSERT_EQ(c.max_combined, 131072);
        ASSERT_EQ(c.max_inflight, 65536);
        ASSERT_EQ(c.max_mmaps, 65536);
        ASSERT_EQ(c.max_stack_depth, 119);
        ASSERT_STREQ(c.socket_path, "/run/memleakd/memleakd.sock");
        ASSERT_EQ(c.socket_mode, 0660);
        ASSERT_TRUE(c.socket_group == NULL);
        ASSERT_EQ(c.min_size, 0);
        ASSERT_EQ(c.max_size, 0);
        ASSERT_EQ(c.symbols_max_open_files, 1024);
        ASSERT_EQ(c.symbols_max_mb, 1024);
        ASSERT_EQ(c.symbols_max_section_mb, 512);
        ASSERT_EQ(c.exited_max_mb, 64);
        ASSERT_EQ(c.unwind, MEMLEAK_UNWIND_AUTO);
        ASSERT_EQ(c.verdict_min_snapshots, 6);
        ASSERT_EQ(c.verdict_noise_factor, 2);
        ASSERT_EQ(c.verdict_flat_bytes, 64);
        ASSERT_EQ(c.verdict_flat_percent, 1);
        ASSERT_EQ(c.auto_sample_percent, 80);
        ASSERT_STREQ(c.cache_directory, "/var/cache/memleakd");
        ASSERT_EQ(c.unwind_cache_max_mb, 256);
        config_done(&c);
}

static void done_accepts_zeroed_struct_and_twice(void)
{
        struct memleakd_config c = {};

        config_done(&c);
        ASSERT_EQ(config_init_defaults(&c), 0);
        config_done(&c);
        ASSERT_TRUE(c.socket_path == NULL);
        config_done(&c);
}

static void every_key_accepts_a_good_value(void)
{
        struct memleakd_config c;
        _cleanup_free_ char *error = NULL;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(parse_text("[memleakd]\n"
                             "snapshot_interval_ms = 250\n"
                             "ring_depth = 120\n"
                             "max_targets = 8\n"
                             "max_allocs = 2000000\n"
                             "max_stacks = 4096\n"
                             "max_combined = 8192\n"
                             "max_inflight = 2048\n"
                             "max_stack_depth = 16\n"
                             "socket_path = /run/other/leaks.sock\n"
                             "socket_mode = 0640\n"
                             "socket_group = memleak\n"
                             "admin_group = sre\n"
                             "default_min_size = 16\n"
                             "default_max_size = 1048576\n", &c, &error), 0);
        ASSERT_TRUE(error == NULL);
        ASSERT_EQ(c.snapshot_interval_ms, 250);
        ASSERT_EQ(c.ring_depth, 120);
        ASSERT_EQ(c.max_targets, 8);
        ASSERT_EQ(c.max_allocs, 2000000);
        ASSERT_EQ(c.max_stacks, 4096);
        ASSERT_EQ(c.max_combined, 8192);
        ASSERT_EQ(c.max_inflight, 2048);
        ASSERT_EQ(c.max_stack_depth, 16);
        ASSERT_STREQ(c.socket_path, "/run/other/leaks.sock");
        ASSERT_EQ(c.socket_mode, 0640);
        ASSERT_STREQ(c.socket_group, "memleak");
        ASSERT_STREQ(c.admin_group, "sre");
        ASSERT_EQ(c.min_size, 16);
        ASSERT_EQ(c.max_size, 1048576);
        config_done(&c);
}

static void range_limits_are_inclusive(void)
{
        struct memleakd_config c;

        c = parse_one("snapshot_interval_ms", "10");
        ASSERT_EQ(c.snapshot_interval_ms, 10);
        config_done(&c);
        c = parse_one("snapshot_interval_ms", "3600000");
        ASSERT_EQ(c.snapshot_interval_ms, 3600000);
        config_done(&c);
        c = parse_one("ring_depth", "1");
        ASSERT_EQ(c.ring_depth, 1);
        config_done(&c);
        c = parse_one("ring_depth", "100000");
        ASSERT_EQ(c.ring_depth, 100000);
        config_done(&c);
        c = parse_one("max_targets", "4096");
        ASSERT_EQ(c.max_targets, 4096);
        config_done(&c);
        c = parse_one("max_allocs", "1024");
        ASSERT_EQ(c.max_allocs, 1024);
        config_done(&c);
        c = parse_one("max_allocs", "100000000");
        ASSERT_EQ(c.max_allocs, 100000000);
        config_done(&c);
        c = parse_one("max_stacks", "16777216");
        ASSERT_EQ(c.max_stacks, 16777216);
        config_done(&c);
        c = parse_one("unwind", "fp");
        ASSERT_EQ(c.unwind, MEMLEAK_UNWIND_FP);
        config_done(&c);
        c = parse_one("unwind", "dwarf");
        ASSERT_EQ(c.unwind, MEMLEAK_UNWIND_DWARF);
        config_done(&c);
        c = parse_one("socket_mode", "0777");
        ASSERT_EQ(c.socket_mode, 0777);
        config_done(&c);
        c = parse_one("socket_mode", "600");
        ASSERT_EQ(c.socket_mode, 0600);
        config_done(&c);
        c = parse_one("socket_mode", "0");
        ASSERT_EQ(c.socket_mode, 0);
        config_done(&c);
}

static void unknown_key_error_names_file_line_and_key(void)
{
        assert_error("# comment\n"
                     "\n"
                     "[memleakd]\n"
                     "ring_depth = 5\n"
                     "; another comment\n"
                     "\n"
                     "snapshot_intervall_ms = 500\n",
                     "7: unknown key 'snapshot_intervall_ms'");
}

static void invalid_value_error_says_what_is_expected(void)
{
        assert_error("\n\nring_depth = abc\n",
                     "3: invalid value 'abc' for 'ring_depth': expected an integer from 1 to 100000");
}

static void malformed_values_are_rejected(void)
{
        assert_invalid("ring_depth", "abc");
        assert_invalid("ring_depth", "-1");
        assert_invalid("ring_depth", "+5");
        assert_invalid("ring_depth", "5 6");
        assert_invalid("ring_depth", "0x10");
        assert_invalid("ring_depth", "10K");
        assert_invalid("ring_depth", "");
        assert_invalid("max_targets", "1.5");
        assert_invalid("max_allocs", "2M");             /* suffixes are for the *_size keys */
        assert_invalid("snapshot_interval_ms", "1.5s");
        assert_invalid("snapshot_interval_ms", "1m");
        assert_invalid("snapshot_interval_ms", "ms");
        assert_invalid("snapshot_interval_ms", "100 ms");
        assert_invalid("socket_mode", "0660x");
        assert_invalid("socket_mode", "rw-rw----");
        assert_invalid("socket_mode", "0668");
        assert_invalid("socket_mode", "");
        assert_invalid("socket_path", "run/memleakd.sock");
        assert_invalid("socket_path", "/run/memleakd/");
        assert_invalid("socket_path", "/");
        assert_invalid("socket_path", "");
        assert_invalid("socket_group", "1000");
        assert_invalid("socket_group", "-wheel");
        assert_invalid("socket_group", "mem leak");
        assert_invalid("socket_group", "a/b");
        assert_invalid("default_min_size", "4T");
        assert_invalid("default_min_size", "4KB");
        assert_invalid("default_min_size", "-4");
        assert_invalid("default_max_size", "K");
        assert_invalid("default_max_size", "");
}

static void out_of_range_values_are_rejected(void)
{
        assert_invalid("snapshot_interval_ms", "9");
        assert_invalid("snapshot_interval_ms", "3600001");
        assert_invalid("snapshot_interval_ms", "3601s");
        assert_invalid("snapshot_interval_ms", "0s");
        assert_invalid("snapshot_interval_ms", "18446744073709551s");   /* overflows in * 1000 */
        assert_invalid("ring_depth", "0");
        assert_invalid("ring_depth", "100001");
        assert_invalid("ring_depth", "99999999999999999999999");       /* overflows uint64 */
        assert_invalid("max_targets", "0");
        assert_invalid("max_targets", "4097");
        assert_invalid("max_allocs", "1023");
        assert_invalid("max_allocs", "100000001");
        assert_invalid("max_stacks", "1023");
        assert_invalid("max_stacks", "16777217");
        assert_invalid("max_combined", "1023");
        assert_invalid("max_combined", "16777217");
        assert_invalid("max_inflight", "1023");
        assert_invalid("symbols_max_open_files", "15");
        assert_invalid("symbols_max_mb", "0");
        assert_invalid("symbols_max_section_mb", "0");
        assert_invalid("exited_max_mb", "0");
        assert_invalid("unwind", "default");
        assert_invalid("unwind", "DWARF");
        assert_invalid("unwind", "");
        assert_invalid("verdict_min_snapshots", "2");
        assert_invalid("verdict_noise_factor", "0");
        assert_invalid("verdict_flat_percent", "101");
        assert_invalid("auto_sample_percent", "101");
        assert_invalid("cache_directory", "var/cache/memleakd");
        assert_invalid("cache_directory", "");
        assert_invalid("unwind_cache_max_mb", "1048577");
        assert_invalid("max_stack_depth", "0");
        assert_invalid("max_stack_depth", "128");
        assert_invalid("max_inflight", "4294967296");                  /* would truncate to 0 */
        assert_invalid("socket_mode", "1000");
        assert_invalid("socket_mode", "01777");
        assert_invalid("default_min_size", "18446744073709551616");
        assert_invalid("default_max_size", "17179869184G");            /* 2^34 G overflows */
        /* 108 bytes: one more than sockaddr_un.sun_path holds with its NUL. */
        assert_invalid("socket_path", "/run/memleakd/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
}

static void socket_path_of_107_bytes_fits(void)
{
        const char *p = "/run/memleakd/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        struct memleakd_config c;

        ASSERT_EQ(strlen(p), 107);
        c = parse_one("socket_path", p);
        ASSERT_STREQ(c.socket_path, p);
        config_done(&c);
}

static void cache_directory_and_its_bound_parse(void)
{
        struct memleakd_config c;

        c = parse_one("cache_directory", "/srv/memleakd cache");
        ASSERT_STREQ(c.cache_directory, "/srv/memleakd cache");
        ASSERT_EQ(c.unwind_cache_max_mb, 256);
        config_done(&c);
        c = parse_one("unwind_cache_max_mb", "0");
        ASSERT_EQ(c.unwind_cache_max_mb, 0);
        ASSERT_STREQ(c.cache_directory, "/var/cache/memleakd");
        config_done(&c);
}

static void state_and_pin_directories_parse(void)
{
        struct memleakd_config c;

        c = parse_one("state_directory", "/srv/memleakd state");
        ASSERT_STREQ(c.state_directory, "/srv/memleakd state");
        ASSERT_STREQ(c.bpf_pin_directory, "/sys/fs/bpf/memleakd");
        config_done(&c);
        c = parse_one("bpf_pin_directory", "/sys/fs/bpf/memleakd-test");
        ASSERT_STREQ(c.bpf_pin_directory, "/sys/fs/bpf/memleakd-test");
        ASSERT_STREQ(c.state_directory, "/var/lib/memleakd");
        config_done(&c);
        ASSERT_TRUE(!config_key_reloadable("state_directory"));
        ASSERT_TRUE(!config_key_reloadable("bpf_pin_directory"));
        assert_invalid("state_directory", "var/lib/memleakd");
        assert_invalid("bpf_pin_directory", "");
}

static void metrics_keys_parse(void)
{
        struct memleakd_config c;

        c = parse_one("metrics_textfile", "/var/lib/node-exporter/memleakd.prom");
        ASSERT_STREQ(c.metrics_textfile, "/var/lib/node-exporter/memleakd.prom");
        ASSERT_EQ(c.metrics_interval_ms, 15000);
        config_done(&c);
        c = parse_one("metrics_textfile", "");
        ASSERT_TRUE(c.metrics_textfile == NULL);
        config_done(&c);
        c = parse_one("metrics_interval_ms", "2s");
        ASSERT_EQ(c.metrics_interval_ms, 2000);
        ASSERT_TRUE(c.metrics_textfile == NULL);
        config_done(&c);
        ASSERT_TRUE(!config_key_reloadable("metrics_textfile"));
        ASSERT_TRUE(config_key_reloadable("metrics_interval_ms"));
        assert_invalid("metrics_textfile", "memleakd.prom");
        assert_invalid("metrics_textfile", "/var/lib/node-exporter/");
        assert_invalid("metrics_interval_ms", "999");
        assert_invalid("metrics_interval_ms", "3601s");
        c = parse_one("export_dir", "/var/lib/memleakd/profiles");
        ASSERT_STREQ(c.export_dir, "/var/lib/memleakd/profiles");
        ASSERT_EQ(c.export_interval_ms, 60000);
        ASSERT_EQ(c.export_keep, 10);
        config_done(&c);
        c = parse_one("export_keep", "3");
        ASSERT_EQ(c.export_keep, 3);
        ASSERT_TRUE(c.export_dir == NULL);
        config_done(&c);
        ASSERT_TRUE(!config_key_reloadable("export_dir"));
        ASSERT_TRUE(config_key_reloadable("export_interval_ms"));
        ASSERT_TRUE(config_key_reloadable("export_keep"));
        assert_invalid("export_dir", "profiles");
        assert_invalid("export_keep", "0");
        assert_invalid("export_interval_ms", "86401s");
}

static void interval_accepts_ms_and_s_suffixes(void)
{
        struct memleakd_config c;

        c = parse_one("snapshot_interval_ms", "1s");
        ASSERT_EQ(c.snapshot_interval_ms, 1000);
        config_done(&c);
        c = parse_one("snapshot_interval_ms", "3600s");
        ASSERT_EQ(c.snapshot_interval_ms, 3600000);
        config_done(&c);
        c = parse_one("snapshot_interval_ms", "250ms");
        ASSERT_EQ(c.snapshot_interval_ms, 250);
        config_done(&c);
        c = parse_one("snapshot_interval_ms", "1500");
        ASSERT_EQ(c.snapshot_interval_ms, 1500);
        config_done(&c);
}

static void sizes_accept_binary_k_m_g_suffixes(void)
{
        struct memleakd_config c;

        c = parse_one("default_min_size", "64K");
        ASSERT_EQ(c.min_size, 64 * 1024);
        config_done(&c);
        c = parse_one("default_min_size", "3k");
        ASSERT_EQ(c.min_size, 3 * 1024);
        config_done(&c);
        c = parse_one("default_max_size", "2M");
        ASSERT_EQ(c.max_size, 2 * 1024 * 1024);
        config_done(&c);
        c = parse_one("default_max_size", "16G");
        ASSERT_EQ(c.max_size, 16ull << 30);
        config_done(&c);
        c = parse_one("default_max_size", "4096");
        ASSERT_EQ(c.max_size, 4096);
        config_done(&c);
        c = parse_one("default_max_size", "0");
        ASSERT_EQ(c.max_size, 0);
        config_done(&c);
}

static void min_size_above_max_size_is_rejected(void)
{
        struct memleakd_config c;
        _cleanup_free_ char *error = NULL;

        assert_error("default_min_size = 8K\n"
                     "default_max_size = 4K\n",
                     "2: 'default_min_size' (8192) is greater than 'default_max_size' (4096)");

        /* Equal bounds are fine, and either bound alone is fine (0 means none). */
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(parse_text("default_min_size = 4K\ndefault_max_size = 4096\n", &c, &error), 0);
        ASSERT_EQ(c.min_size, 4096);
        ASSERT_EQ(c.max_size, 4096);
        ASSERT_EQ(parse_text("default_max_size = 0\ndefault_min_size = 1G\n", &c, &error), 0);
        ASSERT_EQ(c.min_size, 1ull << 30);
        ASSERT_EQ(c.max_size, 0);
        config_done(&c);

        /* Checked against values kept from earlier, too. */
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(parse_text("default_max_size = 100\n", &c, &error), 0);
        ASSERT_EQ(parse_text("default_min_size = 101\n", &c, &error), -EINVAL);
        ASSERT_EQ(c.min_size, 0);
        ASSERT_EQ(c.max_size, 100);
        config_done(&c);
}

static void sections_other_than_memleakd_are_rejected(void)
{
        struct memleakd_config c;
        _cleanup_free_ char *error = NULL;

        assert_error("[memleakd]\nring_depth = 5\n[Service]\nring_depth = 6\n",
                     "3: unknown section '[Service]': only [memleakd] and [target] are allowed");
        assert_error("[memleakd\n", "1: invalid section header '[memleakd'");
        assert_error("[]\n", "1: unknown section '[]': only [memleakd] and [target] are allowed");

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(parse_text("  [memleakd]  \nring_depth=5\n", &c, &error), 0);
        ASSERT_EQ(c.ring_depth, 5);
        config_done(&c);
}

static void target_sections_declare_processes_to_attach(void)
{
        struct memleakd_config c, copy;
        _cleanup_free_ char *error = NULL, *where = NULL;
        const struct config_target *t;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(parse_text("ring_depth = 5\n"
                             "[target]\nunit = nginx.service\nsample_bytes = 64K\nunwind = fp\n"
                             "[memleakd]\nring_depth = 7\n"
                             "[target]\ncomm = php-fpm\nmmap = yes\n"
                             "objs = /usr/lib/libtcmalloc.so.4 /usr/lib/x.so\nmin_size = 16\nmax_size = 1M\n"
                             "[target]\nexe = /usr/sbin/redis-server\n"
                             "[target]\ncgroup = /system.slice/app.service/workers\n", &c, &error), 0);
        ASSERT_EQ(c.ring_depth, 7);
        ASSERT_EQ(c.targets.n, 4);
        t = &c.targets.v[0];
        ASSERT_EQ(t->match, CONFIG_TARGET_UNIT);
        ASSERT_STREQ(t->value, "nginx.service");
        ASSERT_EQ(t->sample_bytes, 65536);
        ASSERT_EQ(t->unwind, MEMLEAK_UNWIND_FP);
        ASSERT_TRUE(!t->mmap);
        ASSERT_TRUE(asprintf(&where, "%s:2", conf_path) >= 0);
        ASSERT_STREQ(t->where, where);
        t = &c.targets.v[1];
        ASSERT_EQ(t->match, CONFIG_TARGET_COMM);
        ASSERT_TRUE(t->mmap);
        ASSERT_EQ(t->n_objs, 2);
        ASSERT_STREQ(t->objs[1], "/usr/lib/x.so");
        ASSERT_EQ(t->min_size, 16);
        ASSERT_EQ(t->max_size, 1 << 20);
        ASSERT_EQ(c.targets.v[2].match, CONFIG_TARGET_EXE);
        ASSERT_EQ(c.targets.v[3].match, CONFIG_TARGET_CGROUP);
        /* copied whole; a second file adds its own */
        ASSERT_EQ(config_copy(&c, &copy), 0);
        ASSERT_EQ(copy.targets.n, 4);
        ASSERT_TRUE(config_targets_same(&copy.targets.v[1], &c.targets.v[1]));
        ASSERT_EQ(parse_text("[target]\ncomm = bash\n", &c, &error), 0);
        ASSERT_EQ(c.targets.n, 5);
        config_done(&copy);
        config_done(&c);
}

/* Expect text to fail at the end of its [target] section of line header_line, for why. */
static void assert_target_error(const char *text, unsigned header_line, const char *why)
{
        _cleanup_free_ char *rest = NULL;

        ASSERT_TRUE(asprintf(&rest, " [target] at %s:%u: %s", conf_path, header_line, why) >= 0);
        assert_error(text, rest);
}

static void target_sections_are_checked_whole(void)
{
        struct memleakd_config c;
        _cleanup_free_ char *error = NULL;

        assert_target_error("[target]\nmmap = yes\n", 1,
                            "a [target] section names what it matches: unit, cgroup, exe or comm");
        assert_target_error("[target]\nmmap = yes\n[memleakd]\nring_depth = 5\n", 1,
                            "a [target] section names what it matches: unit, cgroup, exe or comm");
        assert_target_error("[target]\ncomm = a\nmin_size = 2K\nmax_size = 1K\n", 1,
                            "its min_size is greater than its max_size");
        assert_error("[target]\nunit = a.service\ncomm = a\n",
                     "3: 'comm': a [target] section matches by one of unit, cgroup, exe or comm, and says it once");
        assert_error("[target]\nring_depth = 5\n",
                     "2: unknown key 'ring_depth' in [target] (unit, cgroup, exe, comm, objs, min_size, max_size, "
                     "sample_bytes, unwind, mmap)");
        assert_error("[target]\nunit = nginx\n", "2: invalid value 'nginx' for 'unit': expected a unit's name "
                     "ending in .service, .scope or .slice");
        assert_error("[target]\ncgroup = a/../b\n", "2: invalid value 'a/../b' for 'cgroup': expected a cgroup v2 "
                     "directory's path, in the cgroup2 tree or relative to it");
        assert_error("[target]\nexe = nginx\n", "2: invalid value 'nginx' for 'exe': expected an executable's "
                     "absolute path");
        assert_error("[target]\ncomm = a-name-of-16-byte\n", "2: invalid value 'a-name-of-16-byte' for 'comm': "
                     "expected a process name of 1 to 15 bytes, without '/'");
        assert_error("[target]\ncomm = a\nobjs = lib.so\n", "3: invalid value 'lib.so' for 'objs': expected "
                     "absolute paths of shared objects or programs, separated by spaces (16 at most)");
        assert_error("[target]\ncomm = a\nsample_bytes = 5G\n", "3: invalid value '5G' for 'sample_bytes': "
                     "expected a number of bytes up to 4G, optionally with suffix K, M or G");
        assert_error("[target]\ncomm = a\nmmap = maybe\n", "3: invalid value 'maybe' for 'mmap': expected yes or no");
        assert_error("[target]\ncomm = a\nunwind = walk\n", "3: invalid value 'walk' for 'unwind': expected auto, "
                     "dwarf or fp");
        /* one matching the same as an earlier one replaces it (a later file's wins) */
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(parse_text("[target]\ncomm = a\nmmap = yes\n[target]\ncomm = b\n[target]\ncomm = a\n", &c,
                             &error), 0);
        ASSERT_EQ(c.targets.n, 2);
        ASSERT_STREQ(c.targets.v[0].value, "a");
        ASSERT_TRUE(!c.targets.v[0].mmap);
        ASSERT_EQ(parse_text("[target]\ncomm = b\nsample_bytes = 4K\n", &c, &error), 0);
        ASSERT_EQ(c.targets.n, 2);
        ASSERT_EQ(c.targets.v[1].sample_bytes, 4096);
        config_done(&c);
        /* a failed file adds none */
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(parse_text("[target]\ncomm = a\n[target]\n", &c, &error), -EINVAL);
        ASSERT_EQ(c.targets.n, 0);
        config_done(&c);
}

static void lines_without_key_value_are_rejected(void)
{
        assert_error("ring_depth 5\n", "1: expected 'key = value', got 'ring_depth 5'");
        assert_error("= 5\n", "1: missing key before '=' (value '5')");
}

static void nul_byte_in_a_line_is_rejected(void)
{
        static const char text[] = "ring_depth = 5\nring_depth = 6\0\n";
        struct memleakd_config c;
        _cleanup_free_ char *error = NULL, *expected = NULL;

        ASSERT_EQ(config_init_defaults(&c), 0);
        write_conf_bytes(text, sizeof(text) - 1);
        ASSERT_EQ(config_parse_file(conf_path, &c, &error), -EINVAL);
        ASSERT_TRUE(asprintf(&expected, "%s:2: line contains a NUL byte", conf_path) >= 0);
        ASSERT_STREQ(error, expected);
        ASSERT_EQ(c.ring_depth, 60);
        config_done(&c);
}

static void whitespace_comments_and_duplicates(void)
{
        struct memleakd_config c;
        _cleanup_free_ char *error = NULL;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(parse_text("\xef\xbb\xbf# leading byte order mark\n"
                             "\t ring_depth\t=\t7 \r\n"
                             "   # indented comment\n"
                             "; semicolon comment\n"
                             "\n"
                             "max_targets=3\n"
                             "ring_depth = 9\n"
                             "socket_group = wheel\n"
                             "socket_group =\n", &c, &error), 0);
        ASSERT_EQ(c.ring_depth, 9);             /* the later duplicate wins */
        ASSERT_EQ(c.max_targets, 3);
        ASSERT_TRUE(c.socket_group == NULL);    /* empty means root's group */
        config_done(&c);
}

static void error_leaves_struct_unchanged(void)
{
        struct memleakd_config c, before;
        _cleanup_free_ char *error = NULL;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(parse_text("ring_depth = 11\nsocket_group = adm\nsocket_path = /run/a.sock\n", &c, &error), 0);
        ASSERT_EQ(config_init_defaults(&before), 0);
        ASSERT_EQ(parse_text("ring_depth = 11\nsocket_group = adm\nsocket_path = /run/a.sock\n", &before, &error), 0);

        /* Good lines before the bad one must not leak into c. */
        ASSERT_EQ(parse_text("ring_depth = 12\n"
                             "max_targets = 5\n"
                             "socket_path = /run/b.sock\n"
                             "socket_group =\n"
                             "default_min_size = 1K\n"
                             "max_allocs = lots\n", &c, &error), -EINVAL);
        ASSERT_TRUE(config_equal(&c, &before));
        ASSERT_STREQ(c.socket_path, "/run/a.sock");
        ASSERT_STREQ(c.socket_group, "adm");

        /* And a later valid file still applies on top of the earlier values. */
        ASSERT_EQ(parse_text("max_targets = 5\n", &c, &error), 0);
        ASSERT_EQ(c.max_targets, 5);
        ASSERT_EQ(c.ring_depth, 11);
        ASSERT_STREQ(c.socket_group, "adm");
        config_done(&c);
        config_done(&before);
}

static void missing_file_returns_enoent_naming_it(void)
{
        struct memleakd_config c, defaults;
        _cleanup_free_ char *error = NULL, *path = NULL, *expected = NULL;

        ASSERT_TRUE(asprintf(&path, "%s/does-not-exist.conf", tmp_dir) >= 0);
        ASSERT_TRUE(asprintf(&expected, "%s: %s", path, strerror(ENOENT)) >= 0);
        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_init_defaults(&defaults), 0);
        ASSERT_EQ(config_parse_file(path, &c, &error), -ENOENT);
        ASSERT_STREQ(error, expected);
        ASSERT_TRUE(config_equal(&c, &defaults));
        /* The message is optional. */
        ASSERT_EQ(config_parse_file(path, &c, NULL), -ENOENT);
        config_done(&c);
        config_done(&defaults);
}

static void empty_file_keeps_values(void)
{
        struct memleakd_config c, defaults;
        _cleanup_free_ char *error = NULL;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_init_defaults(&defaults), 0);
        ASSERT_EQ(parse_text("", &c, &error), 0);
        ASSERT_TRUE(config_equal(&c, &defaults));
        config_done(&c);
        config_done(&defaults);
}

/* A reload applies what takes effect at run time and names, without applying them, the keys
 * that need a restart (map sizes, the socket, the cache). */
static void reload_applies_run_time_keys_and_names_the_rest(void)
{
        struct memleakd_config c, fresh;
        _cleanup_free_ char *error = NULL, *restart = NULL, *none = NULL;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_init_defaults(&fresh), 0);
        ASSERT_EQ(parse_text("[memleakd]\nreachability_max_pause_ms = 75\nverdict_min_snapshots = 9\n"
                             "unwind = fp\nsnapshot_interval_ms = 2s\nreachability_concurrent = 0\n"
                             "max_allocs = 4096\nsocket_group = nogroup\nsocket_path = /run/other.sock\n",
                             &fresh, &error), 0);
        ASSERT_EQ(config_reload(&c, &fresh, &restart), 0);
        ASSERT_EQ(c.reachability_max_pause_ms, 75);
        ASSERT_EQ(c.verdict_min_snapshots, 9);
        ASSERT_EQ(c.unwind, MEMLEAK_UNWIND_FP);
        ASSERT_EQ(c.snapshot_interval_ms, 2000);
        ASSERT_EQ(c.reachability_concurrent, 0);
        ASSERT_EQ(c.max_allocs, CONFIG_MAX_ALLOCS_DEFAULT);
        ASSERT_TRUE(c.socket_group == NULL);
        ASSERT_STREQ(c.socket_path, MEMLEAK_DEFAULT_SOCKET);
        ASSERT_STREQ(restart, "max_allocs, socket_path, socket_group");
        /* the same again: nothing left to apply or name */
        ASSERT_EQ(config_reload(&c, &c, &none), 0);
        ASSERT_TRUE(none == NULL);
        config_done(&c);
        config_done(&fresh);
}

/* memleakd.conf(5) marks "Reloadable." exactly the keys a reload applies. */
static void man_page_marks_the_reloadable_keys(void)
{
        _cleanup_fclose_ FILE *f = fopen(MEMLEAKD_CONF_MAN_PATH, "re");
        _cleanup_free_ char *text = NULL;
        size_t n = 0;

        ASSERT_TRUE(f != NULL);
        ASSERT_TRUE(getdelim(&text, &n, 0, f) > 0);
        for (size_t i = 0; i < ELEMENTSOF(all_keys); i++) {
                _cleanup_free_ char *heading = NULL;
                const char *entry, *next;
                bool marked;

                ASSERT_TRUE(asprintf(&heading, "\n*%s =*", all_keys[i]) > 0);
                entry = strstr(text, heading);
                if (!entry) {
                        fprintf(stderr, "%s: no entry\n", all_keys[i]);
                        abort();
                }
                /* up to the next entry or section */
                next = strstr(entry + 1, "\n*");
                if (!next || (strstr(entry + 1, "\n# ") && strstr(entry + 1, "\n# ") < next))
                        next = strstr(entry + 1, "\n# ");
                marked = memmem(entry, next ? (size_t)(next - entry) : strlen(entry), "Reloadable.", 11) != NULL;
                if (marked != config_key_reloadable(all_keys[i])) {
                        fprintf(stderr, "%s: the man page says it is %s, the code that it is not\n",
                                all_keys[i], marked ? "reloadable" : "applied only at a restart");
                        abort();
                }
        }
}

/* A "#key = value" line documenting a known key, or NULL. */
static const char *commented_key(const char *line)
{
        const char *p = line;

        if (*p != '#')
                return NULL;
        p++;
        while (*p == ' ')
                p++;
        for (size_t i = 0; i < ELEMENTSOF(all_keys); i++) {
                size_t n = strlen(all_keys[i]);
                const char *q = p + n;

                if (strncmp(p, all_keys[i], n) != 0)
                        continue;
                while (*q == ' ')
                        q++;
                if (*q == '=')
                        return all_keys[i];
        }
        return NULL;
}

static void shipped_conf_parses_to_the_defaults(void)
{
        struct memleakd_config c, defaults;
        _cleanup_free_ char *error = NULL;

        ASSERT_EQ(config_init_defaults(&c), 0);
        ASSERT_EQ(config_init_defaults(&defaults), 0);
        if (config_parse_file(MEMLEAKD_CONF_PATH, &c, &error) != 0) {
                fprintf(stderr, "%s\n", error ?: "(null)");
                abort();
        }
        ASSERT_TRUE(config_equal(&c, &defaults));
        config_done(&c);
        config_done(&defaults);
}

/* Uncomment every "#key = value" line of the shipped file: each key must appear exactly once,
 * and the values shown must be the real defaults. */
static void shipped_conf_documents_every_key_with_its_default(void)
{
        _cleanup_fclose_ FILE *in = NULL, *out = NULL;
        _cleanup_free_ char *line = NULL, *error = NULL;
        unsigned seen[ELEMENTSOF(all_keys)] = {};
        struct memleakd_config c, defaults;
        size_t size = 0;

        ASSERT_EQ(config_init_defaults(&defaults), 0);
        /* Start from values that differ from the defaults, so each line must set its key. */
        c = parse_one("ring_depth", "2");
        ASSERT_EQ(parse_text("snapshot_interval_ms = 20\nmax_targets = 2\nmax_allocs = 2048\n"
                             "max_stacks = 2048\nmax_combined = 2048\nmax_inflight = 2048\n"
                             "socket_path = /x/y\nsocket_mode = 0600\nsocket_group = nogroup\n"
                             "default_min_size = 1\ndefault_max_size = 2\n", &c, &error), 0);
        ASSERT_TRUE(!config_equal(&c, &defaults));

        in = fopen(MEMLEAKD_CONF_PATH, "re");
        ASSERT_TRUE(in);
        out = fopen(conf_path, "we");
        ASSERT_TRUE(out);
        while (getline(&line, &size, in) >= 0) {
                const char *key = commented_key(line);

                if (!key) {
                        ASSERT_TRUE(fputs(line, out) >= 0);
                        continue;
                }
                for (size_t i = 0; i < ELEMENTSOF(all_keys); i++)
                        if (strcmp(all_keys[i], key) == 0)
                                seen[i]++;
                ASSERT_TRUE(fputs(line + 1, out) >= 0);
        }
        ASSERT_EQ(fclose(TAKE_PTR(out)), 0);
        for (size_t i = 0; i < ELEMENTSOF(all_keys); i++)
                if (seen[i] != 1) {
                        fprintf(stderr, "key '%s' appears %u times as '#%s = ...'\n",
                                all_keys[i], seen[i], all_keys[i]);
                        abort();
                }

        if (config_parse_file(conf_path, &c, &error) != 0) {
                fprintf(stderr, "uncommented shipped conf: %s\n", error ?: "(null)");
                abort();
        }
        ASSERT_TRUE(config_equal(&c, &defaults));
        config_done(&c);
        config_done(&defaults);
}

static const struct unit_test tests[] = {
        TEST(defaults_match_documented_values),
        TEST(reload_applies_run_time_keys_and_names_the_rest),
        TEST(man_page_marks_the_reloadable_keys),
        TEST(done_accepts_zeroed_struct_and_twice),
        TEST(every_key_accepts_a_good_value),
        TEST(range_limits_are_inclusive),
        TEST(unknown_key_error_names_file_line_and_key),
        TEST(invalid_value_error_says_what_is_expected),
        TEST(malformed_values_are_rejected),
        TEST(out_of_range_values_are_rejected),
        TEST(socket_path_of_107_bytes_fits),
        TEST(cache_directory_and_its_bound_parse),
        TEST(state_and_pin_directories_parse),
        TEST(metrics_keys_parse),
        TEST(interval_accepts_ms_and_s_suffixes),
        TEST(sizes_accept_binary_k_m_g_suffixes),
        TEST(min_size_above_max_size_is_rejected),
        TEST(sections_other_than_memleakd_are_rejected),
        TEST(target_sections_declare_processes_to_attach),
        TEST(target_sections_are_checked_whole),
        TEST(lines_without_key_value_are_rejected),
        TEST(nul_byte_in_a_line_is_rejected),
        TEST(whitespace_comments_and_duplicates),
        TEST(error_leaves_struct_unchanged),
        TEST(missing_file_returns_enoent_naming_it),
        TEST(empty_file_keeps_values),
        TEST(shipped_conf_parses_to_the_defaults),
        TEST(shipped_conf_documents_every_key_with_its_default),
};

int main(void)
{
        char template[] = "/tmp/test-config-XXXXXX";
        int r;

        tmp_dir = mkdtemp(template);
        ASSERT_TRUE(tmp_dir);
        ASSERT_TRUE(asprintf(&conf_path, "%s/memleakd.conf", tmp_dir) >= 0);

        r = run_unit_tests(tests, ELEMENTSOF(tests));

        (void) unlink(conf_path);
        (void) rmdir(tmp_dir);
        free(conf_path);
        return r;
}
