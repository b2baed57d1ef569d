/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/addrspace/proc-maps.c and module_map_from_proc_maps(), on fake /proc/PID/maps files from tests/unit/data/. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/sysmacros.h>

#include "macro.h"
#include "module-map.h"
#include "proc-maps.h"
#include "test-util.h"

#ifndef TEST_DATA_DIR
#error "TEST_DATA_DIR must name tests/unit/data"
#endif

static struct proc_maps parse_fixture(const char *name)
{
        _cleanup_free_ char *path = NULL;
        struct proc_maps m = {};
        int r;

        ASSERT_TRUE(asprintf(&path, "%s/%s", TEST_DATA_DIR, name) >= 0);
        r = proc_maps_parse_file(path, &m);
        if (r < 0) {
                fprintf(stderr, "parsing %s: %s\n", path, strerror(-r));
                abort();
        }
        return m;
}

static void assert_rejected(const char *text)
{
        struct proc_maps m = { .entries = (struct map_entry *)1, .n = 12345 };

        if (proc_maps_parse_string(text, &m) != -EINVAL) {
                fprintf(stderr, "accepted: '%s'\n", text);
                abort();
        }
        /* Not written on failure. */
        ASSERT_TRUE(m.entries == (struct map_entry *)1);
        ASSERT_EQ(m.n, 12345);
}

static void parses_every_field_of_a_file_backed_line(void)
{
        struct proc_maps m = parse_fixture("maps-glibc.txt");
        const struct map_entry *e;

        ASSERT_EQ(m.n, 26);
        e = &m.entries[13];
        ASSERT_EQ(e->start, 0x7f0211170000ull);
        ASSERT_EQ(e->end, 0x7f02112c6000ull);
        ASSERT_STREQ(e->perms, "r-xp");
        ASSERT_EQ(e->pgoff, 0x26000);
        ASSERT_EQ(e->dev_major, 0xfe);
        ASSERT_EQ(e->dev_minor, 0);
        ASSERT_EQ(e->inode, 332835);
        ASSERT_STREQ(e->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
        ASSERT_TRUE(!e->deleted);
        proc_maps_done(&m);
}

static void keeps_spaces_inside_paths(void)
{
        struct proc_maps m = parse_fixture("maps-glibc.txt");

        ASSERT_STREQ(m.entries[0].path, "/opt/my app/bin/leaky server");
        ASSERT_STREQ(m.entries[1].perms, "r-xp");
        ASSERT_STREQ(m.entries[10].path, "[anon:malloc arena]");
        proc_maps_done(&m);
}

static void anonymous_mappings_have_no_path(void)
{
        struct proc_maps m = parse_fixture("maps-glibc.txt");

        /* The kernel leaves a trailing space after the inode of anonymous lines. */
        ASSERT_TRUE(m.entries[6].path == NULL);
        ASSERT_EQ(m.entries[6].start, 0x7f02110c7000ull);
        ASSERT_EQ(m.entries[6].inode, 0);
        ASSERT_TRUE(!m.entries[6].deleted);
        ASSERT_TRUE(m.entries[17].path == NULL);
        proc_maps_done(&m);
}

static void pseudo_paths_are_kept_as_is(void)
{
        struct proc_maps m = parse_fixture("maps-glibc.txt");

        ASSERT_STREQ(m.entries[5].path, "[heap]");
        ASSERT_STREQ(m.entries[19].path, "[vvar]");
        ASSERT_STREQ(m.entries[20].path, "[vdso]");
        ASSERT_STREQ(m.entries[20].perms, "r-xp");
        ASSERT_STREQ(m.entries[24].path, "[stack]");
        ASSERT_STREQ(m.entries[25].path, "[vsyscall]");
        ASSERT_STREQ(m.entries[25].perms, "--xp");
        ASSERT_EQ(m.entries[25].start, 0xffffffffff600000ull);
        proc_maps_done(&m);
}

static void deleted_suffix_is_stripped_and_flagged(void)
{
        struct proc_maps m = parse_fixture("maps-glibc.txt");

        ASSERT_STREQ(m.entries[8].path, "/usr/lib/libplugin.so");
        ASSERT_TRUE(m.entries[8].deleted);
        ASSERT_EQ(m.entries[8].dev_major, 0x103);       /* majors above 0xff print wider */
        ASSERT_EQ(m.entries[8].dev_minor, 2);
        ASSERT_STREQ(m.entries[9].path, "/memfd:jit code");
        ASSERT_TRUE(m.entries[9].deleted);
        ASSERT_STREQ(m.entries[9].perms, "rwxs");
        proc_maps_done(&m);
}

static void module_map_keeps_the_file_mappings_and_finds_addresses_in_them(void)
{
        struct proc_maps m = parse_fixture("maps-glibc.txt");
        struct module_map mm = {};
        const struct module_mapping *e;

        ASSERT_EQ(module_map_from_proc_maps(&m, &mm), 0);
        for (size_t i = 0; i < mm.n; i++) {
                ASSERT_TRUE(mm.mappings[i].path[0] == '/');
                ASSERT_TRUE(mm.mappings[i].ino != 0);
        }
        e = module_map_find(&mm, 0x7f0211170000ull);                    /* first byte */
        ASSERT_TRUE(e != NULL);
        ASSERT_STREQ(e->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
        ASSERT_EQ(e->pgoff, 0x26000);
        ASSERT_EQ(e->dev, makedev(0xfe, 0));
        ASSERT_EQ(e->ino, 332835);
        ASSERT_TRUE(!e->not_code);
        ASSERT_TRUE(module_map_find(&mm, 0x7f02112c5fffull) == e);     /* last byte */
        e = module_map_find(&mm, 0x7f02112c6000ull);                    /* end is the next one's */
        ASSERT_TRUE(e != NULL && e->start == 0x7f02112c6000ull && e->not_code);
        e = module_map_find(&mm, 0x5561fd757123ull);
        ASSERT_TRUE(e != NULL);
        ASSERT_STREQ(e->path, "/opt/my app/bin/leaky server");
        ASSERT_TRUE(module_map_find(&mm, 0) == NULL);                   /* below the first */
        ASSERT_TRUE(module_map_find(&mm, 0x5561fd756fffull) == NULL);
        ASSERT_TRUE(module_map_find(&mm, 0x7f0211143000ull) == NULL);   /* in a gap */
        ASSERT_TRUE(module_map_find(&mm, 0x7f021133e000ull) == NULL);   /* in a gap */
        ASSERT_TRUE(module_map_find(&mm, m.entries[6].start) == NULL);  /* anonymous */
        ASSERT_TRUE(module_map_find(&mm, 0xffffffffff600fffull) == NULL); /* [vsyscall] */
        ASSERT_TRUE(module_map_find(&mm, UINT64_MAX) == NULL);

        /* Every mapping finds itself by its first and last byte. */
        for (size_t i = 0; i < mm.n; i++) {
                ASSERT_TRUE(module_map_find(&mm, mm.mappings[i].start) == &mm.mappings[i]);
                ASSERT_TRUE(module_map_find(&mm, mm.mappings[i].end - 1) == &mm.mappings[i]);
        }
        module_map_done(&mm);
        proc_maps_done(&m);
}

/* JIT code: executable memory no file backs, unnamed or named by the process; not the kernel's. */
static void module_map_keeps_anonymous_code_apart(void)
{
        static const char text[] =
                "1e2e5d400000-1e2e5d440000 rwxp 00000000 00:00 0 \n"
                "1e2e5d440000-1e2e5d480000 rw-p 00000000 00:00 0 \n"
                "5561fd757000-5561fd758000 r-xp 00001000 fe:00 42 /usr/bin/node\n"
                "7f0211000000-7f0211010000 r-xp 00000000 00:00 0 [anon:jit code]\n"
                "7ffd4b5fe000-7ffd4b600000 r-xp 00000000 00:00 0 [vdso]\n"
                "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";
        struct proc_maps m = {};
        struct module_map mm = {}, copy = {};

        ASSERT_EQ(proc_maps_parse_string(text, &m), 0);
        ASSERT_EQ(module_map_from_proc_maps(&m, &mm), 0);
        ASSERT_EQ(mm.n, 1);
        ASSERT_EQ(mm.n_anon_code, 2);
        ASSERT_TRUE(module_map_is_anon_code(&mm, 0x1e2e5d400000ull));
        ASSERT_TRUE(module_map_is_anon_code(&mm, 0x1e2e5d43ffffull));
        ASSERT_TRUE(!module_map_is_anon_code(&mm, 0x1e2e5d440000ull));   /* not executable */
        ASSERT_TRUE(module_map_is_anon_code(&mm, 0x7f0211000123ull));
        ASSERT_TRUE(!module_map_is_anon_code(&mm, 0x7ffd4b5fe000ull));   /* [vdso] */
        ASSERT_TRUE(!module_map_is_anon_code(&mm, 0xffffffffff600000ull));
        ASSERT_TRUE(!module_map_is_anon_code(&mm, 0x5561fd757000ull));   /* a file's */
        ASSERT_TRUE(module_map_find(&mm, 0x1e2e5d400000ull) == NULL);

        ASSERT_EQ(module_map_copy(&copy, &mm), 0);
        ASSERT_EQ(copy.n_anon_code, 2);
        ASSERT_TRUE(copy.anon_code != mm.anon_code);
        ASSERT_TRUE(module_map_is_anon_code(&copy, 0x7f0211000123ull));
        module_map_done(&copy);
        module_map_done(&mm);
        ASSERT_TRUE(mm.anon_code == NULL && mm.n_anon_code == 0);
        proc_maps_done(&m);
}

static void string_and_file_parsers_agree(void)
{
        struct proc_maps a = parse_fixture("maps-old-glibc-decoys.txt"), b = {};
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t size = 0;

        ASSERT_TRUE(asprintf(&path, "%s/maps-old-glibc-decoys.txt", TEST_DATA_DIR) >= 0);
        f = fopen(path, "re");
        ASSERT_TRUE(f);
        ASSERT_TRUE(getdelim(&text, &size, '\0', f) > 0);
        ASSERT_EQ(proc_maps_parse_string(text, &b), 0);
        ASSERT_EQ(a.n, b.n);
        for (size_t i = 0; i < a.n; i++) {
                ASSERT_EQ(a.entries[i].start, b.entries[i].start);
                ASSERT_EQ(a.entries[i].end, b.entries[i].end);
                ASSERT_EQ(a.entries[i].inode, b.entries[i].inode);
                ASSERT_STREQ(a.entries[i].perms, b.entries[i].perms);
                ASSERT_STREQ(a.entries[i].path, b.entries[i].path);
        }
        proc_maps_done(&a);
        proc_maps_done(&b);
}

static void last_line_without_newline_and_empty_text_parse(void)
{
        struct proc_maps m = {};

        ASSERT_EQ(proc_maps_parse_string("1000-2000 rw-p 00000000 00:00 0", &m), 0);
        ASSERT_EQ(m.n, 1);
        ASSERT_TRUE(m.entries[0].path == NULL);
        proc_maps_done(&m);

        /* A process with no mappings (a zombie) reads as empty. */
        ASSERT_EQ(proc_maps_parse_string("", &m), 0);
        ASSERT_EQ(m.n, 0);
        proc_maps_done(&m);
}

static void malformed_lines_are_rejected(void)
{
        assert_rejected("garbage\n");
        assert_rejected("1000 r--p 00000000 00:00 0\n");                   /* no end */
        assert_rejected("1000-2000 r--p 00000000 00:00\n");                /* no inode */
        assert_rejected("1000-2000 r--p 00000000 0000 0\n");               /* no ':' in dev */
        assert_rejected("1000-2000 rwx 00000000 00:00 0\n");               /* short perms */
        assert_rejected("1000-2000 r--q 00000000 00:00 0\n");              /* bad share flag */
        assert_rejected("1000-2000 R--p 00000000 00:00 0\n");
        assert_rejected("1000-2000 r--p 0000zz00 00:00 0\n");
        assert_rejected("1000-2000 r--p 00000000 00:00 12ab /x\n");        /* inode is decimal */
        assert_rejected("1000-g000 r--p 00000000 00:00 0\n");
        assert_rejected("2000-1000 r--p 00000000 00:00 0\n");              /* end before start */
        assert_rejected("1000-1000 r--p 00000000 00:00 0\n");              /* empty */
        assert_rejected("10000000000000000-10000000000000001 r--p 0 00:00 0\n"); /* > 64 bits */
        assert_rejected(" 1000-2000 r--p 00000000 00:00 0\n");
        /* Out of order or overlapping: lookups bisect, so this must not pass. */
        assert_rejected("3000-4000 r--p 00000000 00:00 0\n1000-2000 r--p 00000000 00:00 0\n");
        assert_rejected("1000-3000 r--p 00000000 00:00 0\n2000-4000 r--p 00000000 00:00 0\n");
        /* A good line after a bad one does not rescue the text. */
        assert_rejected("1000-2000 r--p 00000000 00:00 0\nbad\n3000-4000 r--p 00000000 00:00 0\n");
}

static void missing_file_returns_enoent(void)
{
        struct proc_maps m = { .n = 777 };

        ASSERT_EQ(proc_maps_parse_file(TEST_DATA_DIR "/no-such-maps.txt", &m), -ENOENT);
        ASSERT_EQ(m.n, 777);
}

static void done_accepts_zeroed_struct(void)
{
        struct proc_maps m = {};

        proc_maps_done(&m);
        proc_maps_done(&m);
        ASSERT_TRUE(m.entries == NULL);
}

static const struct unit_test tests[] = {
        TEST(parses_every_field_of_a_file_backed_line),
        TEST(keeps_spaces_inside_paths),
        TEST(anonymous_mappings_have_no_path),
        TEST(pseudo_paths_are_kept_as_is),
        TEST(deleted_suffix_is_stripped_and_flagged),
        TEST(module_map_keeps_the_file_mappings_and_finds_addresses_in_them),
        TEST(module_map_keeps_anonymous_code_apart),
        TEST(string_and_file_parsers_agree),
        TEST(last_line_without_newline_and_empty_text_parse),
        TEST(malformed_lines_are_rejected),
        TEST(missing_file_returns_enoent),
        TEST(done_accepts_zeroed_struct),
};

int main(void)
{
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
