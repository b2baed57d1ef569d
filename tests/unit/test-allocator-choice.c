/* SPDX-License-Identifier: MIT */
/* Unit tests for allocator-choice.c: which object's malloc serves a process, from the objects it
 * maps, their DT_NEEDED and LD_PRELOAD (made-up objects: no files). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "allocator-choice.h"
#include "macro.h"
#include "test-util.h"

static struct alloc_site malloc_site = { .kind = ALLOC_KIND_MALLOC, .name = "malloc" };
static struct alloc_site new_site = { .kind = ALLOC_KIND_NEW, .name = "_Znwm" };

static const struct alloc_sites glibc = { .sites = &malloc_site, .n = 1, .families = ALLOC_FAMILY_GLIBC };
static const struct alloc_sites tcmalloc = { .sites = &malloc_site, .n = 1, .families = ALLOC_FAMILY_TCMALLOC };
static const struct alloc_sites jemalloc = { .sites = &malloc_site, .n = 1, .families = ALLOC_FAMILY_JEMALLOC };
static const struct alloc_sites mimalloc = { .sites = &malloc_site, .n = 1, .families = ALLOC_FAMILY_MIMALLOC };
static const struct alloc_sites unnamed = { .sites = &malloc_site, .n = 1 };
/* a static musl: __libc_malloc (glibc's signature too) and __libc_malloc_impl */
static const struct alloc_sites static_musl = {
        .sites = &malloc_site, .n = 1, .families = ALLOC_FAMILY_GLIBC | ALLOC_FAMILY_MUSL,
};
static const struct alloc_sites cxx_only = { .sites = &new_site, .n = 1 };
static const struct alloc_sites none = { 0 };

static char *exe_needs_tc[] = { "libtcmalloc.so.4", "libstdc++.so.6", "libc.so.6" };
static char *exe_needs_libc[] = { "libc.so.6" };
static char *exe_needs_foo[] = { "libfoo.so", "libc.so.6" };
static char *foo_needs_je[] = { "libjemalloc.so.2" };

static const struct elf_deps exe_tc = { .needed = exe_needs_tc, .n_needed = 3 };
static const struct elf_deps exe_libc = { .needed = exe_needs_libc, .n_needed = 1 };
static const struct elf_deps exe_foo = { .needed = exe_needs_foo, .n_needed = 2 };
static const struct elf_deps foo = { .soname = "libfoo.so", .needed = foo_needs_je, .n_needed = 1 };
static const struct elf_deps libc = { .soname = "libc.so.6" };
static const struct elf_deps libtc = { .soname = "libtcmalloc.so.4" };
static const struct elf_deps libje = { .soname = "libjemalloc.so.2" };
static const struct elf_deps libmi = { .soname = "libmimalloc.so.2" };
static const struct elf_deps libstdcxx = { .soname = "libstdc++.so.6" };
static const struct elf_deps no_deps = { 0 };

#define OBJ(p, exe, d, s) { .path = (p), .is_executable = (exe), .deps = &(d), .sites = &(s) }

static void choose(const struct examined_object *objs, size_t n, char **preload, size_t n_preload,
                   struct allocator_choice *c)
{
        ASSERT_EQ(allocator_choice_find(objs, n, preload, n_preload, c), 0);
        ASSERT_TRUE(c->reason);
}

static void linked_tcmalloc_comes_before_libc(void)
{
        /* maps order (by address) puts libc first: the lookup order decides, not the maps */
        const struct examined_object objs[] = {
                OBJ("/usr/lib/x86_64-linux-gnu/libc.so.6", false, libc, glibc),
                OBJ("/srv/app", true, exe_tc, none),
                OBJ("/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", false, libstdcxx, cxx_only),
                OBJ("/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4.5.10", false, libtc, tcmalloc),
        };
        _cleanup_(allocator_choice_done) struct allocator_choice c = {};

        choose(objs, ELEMENTSOF(objs), NULL, 0, &c);
        ASSERT_EQ(c.object, 3);
        ASSERT_STREQ(c.allocator, "tcmalloc");
        ASSERT_TRUE(!c.is_static);
        ASSERT_TRUE(strstr(c.reason, "libtcmalloc.so.4.5.10 is the first object defining malloc"));
}

static void allocator_needed_only_by_a_library_loses_to_libc(void)
{
        /* breadth first: exe -> libfoo, libc -> libjemalloc; libc comes first */
        const struct examined_object objs[] = {
                OBJ("/srv/app", true, exe_foo, none),
                OBJ("/opt/lib/libfoo.so", false, foo, none),
                OBJ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", false, libje, jemalloc),
                OBJ("/usr/lib/x86_64-linux-gnu/libc.so.6", false, libc, glibc),
        };
        _cleanup_(allocator_choice_done) struct allocator_choice c = {};

        choose(objs, ELEMENTSOF(objs), NULL, 0, &c);
        ASSERT_EQ(c.object, 3);
        ASSERT_STREQ(c.allocator, "glibc");
}

static void preload_comes_right_after_the_executable(void)
{
        const struct examined_object objs[] = {
                OBJ("/srv/app", true, exe_libc, none),
                OBJ("/usr/lib/x86_64-linux-gnu/libc.so.6", false, libc, glibc),
                OBJ("/usr/lib/x86_64-linux-gnu/libmimalloc.so.2.0", false, libmi, mimalloc),
        };
        /* a path through a symlink (so.2 -> so.2.0) finds it by soname */
        char *preload[] = { "/nonexistent/libnothing.so", "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2" };
        _cleanup_(allocator_choice_done) struct allocator_choice c = {};

        choose(objs, ELEMENTSOF(objs), preload, ELEMENTSOF(preload), &c);
        ASSERT_EQ(c.object, 2);
        ASSERT_STREQ(c.allocator, "mimalloc");
}

static void dlopened_allocator_does_not_serve_the_process(void)
{
        const struct examined_object objs[] = {
                OBJ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", false, libje, jemalloc),
                OBJ("/srv/app", true, exe_libc, none),
                OBJ("/usr/lib/x86_64-linux-gnu/libc.so.6", false, libc, glibc),
        };
        _cleanup_(allocator_choice_done) struct allocator_choice c = {};

        choose(objs, ELEMENTSOF(objs), NULL, 0, &c);
        ASSERT_STREQ(c.allocator, "glibc");
}

static void executable_with_its_own_malloc_is_static(void)
{
        const struct examined_object with_jemalloc[] = {
                OBJ("/srv/app", true, exe_libc, jemalloc),
                OBJ("/usr/lib/x86_64-linux-gnu/libc.so.6", false, libc, glibc),
        };
        const struct examined_object homemade[] = {
                OBJ("/srv/static-app", true, no_deps, unnamed),
        };
        _cleanup_(allocator_choice_done) struct allocator_choice a = {}, b = {};

        choose(with_jemalloc, ELEMENTSOF(with_jemalloc), NULL, 0, &a);
        ASSERT_EQ(a.object, 0);
        ASSERT_TRUE(a.is_static);
        ASSERT_STREQ(a.allocator, "jemalloc");
        ASSERT_STREQ(a.reason, "the executable /srv/app defines malloc itself (jemalloc linked in statically)");

        choose(homemade, ELEMENTSOF(homemade), NULL, 0, &b);
        ASSERT_STREQ(b.allocator, "other");
        ASSERT_TRUE(b.is_static);
}

/* musl, static (its own symbols say so) or linked (its stripped libc: the loader's name or
 * Debian's directory for it say so) */
static void musl_is_told_from_glibc(void)
{
        const struct examined_object static_exe[] = {
                OBJ("/srv/static-musl-app", true, no_deps, static_musl),
        };
        const struct examined_object debian[] = {
                OBJ("/srv/app", true, exe_libc, none),
                OBJ("/usr/lib/x86_64-linux-musl/libc.so", false, libc, unnamed),
        };
        const struct examined_object alpine[] = {
                OBJ("/srv/app", true, exe_libc, none),
                OBJ("/lib/ld-musl-x86_64.so.1", false, libc, unnamed),
        };
        _cleanup_(allocator_choice_done) struct allocator_choice a = {}, b = {}, c = {};

        choose(static_exe, ELEMENTSOF(static_exe), NULL, 0, &a);
        ASSERT_STREQ(a.allocator, "musl");
        ASSERT_TRUE(a.is_static);
        choose(debian, ELEMENTSOF(debian), NULL, 0, &b);
        ASSERT_STREQ(b.allocator, "musl");
        choose(alpine, ELEMENTSOF(alpine), NULL, 0, &c);
        ASSERT_STREQ(c.allocator, "musl");
}

static void without_the_executable_the_first_definer_is_taken(void)
{
        const struct examined_object objs[] = {
                OBJ("/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", false, libstdcxx, cxx_only),
                OBJ("/usr/lib/x86_64-linux-gnu/libc.so.6", false, libc, glibc),
        };
        _cleanup_(allocator_choice_done) struct allocator_choice c = {};

        choose(objs, ELEMENTSOF(objs), NULL, 0, &c);
        ASSERT_EQ(c.object, 1);
        ASSERT_TRUE(strstr(c.reason, "could not be followed"));
}

static void no_malloc_anywhere_is_enoent(void)
{
        const struct examined_object objs[] = {
                OBJ("/srv/app", true, exe_libc, none),
                OBJ("/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30", false, libstdcxx, cxx_only),
        };
        struct allocator_choice c = {};

        ASSERT_EQ(allocator_choice_find(objs, ELEMENTSOF(objs), NULL, 0, &c), -ENOENT);
        ASSERT_EQ(allocator_choice_find(NULL, 0, NULL, 0, &c), -ENOENT);
}

static void preload_value_splits_on_spaces_and_colons(void)
{
        char **names = NULL;
        size_t n = 0;

        ASSERT_EQ(allocator_choice_split_preload("  /a/libx.so:liby.so \t libz.so: ", &names, &n), 0);
        ASSERT_EQ(n, 3);
        ASSERT_STREQ(names[0], "/a/libx.so");
        ASSERT_STREQ(names[1], "liby.so");
        ASSERT_STREQ(names[2], "libz.so");
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        ASSERT_EQ(allocator_choice_split_preload("", &names, &n), 0);
        ASSERT_EQ(n, 0);
        ASSERT_EQ(allocator_choice_split_preload(NULL, &names, &n), 0);
        ASSERT_EQ(n, 0);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(linked_tcmalloc_comes_before_libc),
                TEST(allocator_needed_only_by_a_library_loses_to_libc),
                TEST(preload_comes_right_after_the_executable),
                TEST(dlopened_allocator_does_not_serve_the_process),
                TEST(executable_with_its_own_malloc_is_static),
                TEST(musl_is_told_from_glibc),
                TEST(without_the_executable_the_first_definer_is_taken),
                TEST(no_malloc_anywhere_is_enoent),
                TEST(preload_value_splits_on_spaces_and_colons),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
