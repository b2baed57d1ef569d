/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/discovery/object-cache.c: what examining an object found, kept by file
 * identity, as copies, bounded. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "macro.h"
#include "object-cache.h"
#include "test-util.h"

static struct stat file(ino_t ino, time_t mtime)
{
        struct stat st = { .st_dev = 8, .st_ino = ino, .st_size = 4096 };

        st.st_mtim.tv_sec = mtime;
        st.st_ctim.tv_sec = mtime;
        return st;
}

static void example(struct alloc_sites *sites, struct elf_deps *deps)
{
        static char *needed[] = { "libc.so.6", "libm.so.6" };

        *sites = (struct alloc_sites) { .sites = calloc(2, sizeof(struct alloc_site)), .n = 2, .families = 5 };
        ASSERT_TRUE(sites->sites != NULL);
        sites->sites[0] = (struct alloc_site) { .kind = ALLOC_KIND_MALLOC, .name = "malloc", .file_offset = 0x1000,
                                                .probe_offset = 0x1004 };
        sites->sites[1] = (struct alloc_site) { .kind = ALLOC_KIND_FREE, .name = "free", .file_offset = 0x2000,
                                                .probe_offset = 0x2000 };
        *deps = (struct elf_deps) { .soname = "libx.so.1", .needed = needed, .n_needed = 2, .runpath = "$ORIGIN",
                                    .elf_class = 2, .machine = 62 };
}

static void a_cached_object_comes_back_as_a_copy(void)
{
        _cleanup_(object_cache_freep) struct object_cache *c = NULL;
        struct alloc_sites sites, got = {};
        struct elf_deps deps, got_deps = {};
        struct stat st = file(11, 100);

        ASSERT_EQ(object_cache_new(&c), 0);
        example(&sites, &deps);
        ASSERT_EQ(object_cache_get(c, &st, &got, &got_deps), 0);
        ASSERT_EQ(object_cache_put(c, &st, &sites, &deps), 0);
        free(sites.sites);              /* the cache kept its own */
        ASSERT_EQ(object_cache_get(c, &st, &got, &got_deps), 1);
        ASSERT_EQ(got.n, 2);
        ASSERT_EQ(got.families, 5);
        ASSERT_EQ(got.sites[0].probe_offset, 0x1004);
        ASSERT_STREQ(got.sites[1].name, "free");
        ASSERT_STREQ(got_deps.soname, "libx.so.1");
        ASSERT_EQ(got_deps.n_needed, 2);
        ASSERT_STREQ(got_deps.needed[1], "libm.so.6");
        ASSERT_STREQ(got_deps.runpath, "$ORIGIN");
        ASSERT_TRUE(got_deps.rpath == NULL && got_deps.interp == NULL);
        ASSERT_EQ(got_deps.machine, 62);
        ASSERT_TRUE(got_deps.needed != deps.needed && got_deps.soname != deps.soname);
        alloc_sites_done(&got);
        elf_deps_done(&got_deps);
        ASSERT_EQ(object_cache_size(c), 1);
}

static void a_file_changed_in_place_is_not_taken_for_the_old_one(void)
{
        _cleanup_(object_cache_freep) struct object_cache *c = NULL;
        struct alloc_sites sites, got = {};
        struct elf_deps deps, got_deps = {};
        struct stat old = file(12, 100), rewritten = file(12, 200), resized = file(12, 100), other = file(13, 100);

        resized.st_size = 8192;
        ASSERT_EQ(object_cache_new(&c), 0);
        example(&sites, &deps);
        ASSERT_EQ(object_cache_put(c, &old, &sites, &deps), 0);
        ASSERT_EQ(object_cache_get(c, &rewritten, &got, &got_deps), 0);
        ASSERT_EQ(object_cache_get(c, &resized, &got, &got_deps), 0);
        ASSERT_EQ(object_cache_get(c, &other, &got, &got_deps), 0);
        /* the same file put again replaces its entry */
        ASSERT_EQ(object_cache_put(c, &old, &sites, &deps), 0);
        ASSERT_EQ(object_cache_size(c), 1);
        free(sites.sites);
}

static void the_oldest_entry_goes_when_the_cache_is_full(void)
{
        _cleanup_(object_cache_freep) struct object_cache *c = NULL;
        struct alloc_sites sites, got = {};
        struct elf_deps deps, got_deps = {};
        struct stat first = file(1000, 1), last = file(1000 + OBJECT_CACHE_ENTRIES, 1), second = file(1001, 1);

        ASSERT_EQ(object_cache_new(&c), 0);
        example(&sites, &deps);
        for (ino_t i = 0; i <= OBJECT_CACHE_ENTRIES; i++) {
                struct stat st = file(1000 + i, 1);

                ASSERT_EQ(object_cache_put(c, &st, &sites, &deps), 0);
        }
        ASSERT_EQ(object_cache_size(c), OBJECT_CACHE_ENTRIES);
        ASSERT_EQ(object_cache_get(c, &first, &got, &got_deps), 0);
        ASSERT_EQ(object_cache_get(c, &last, &got, &got_deps), 1);
        alloc_sites_done(&got);
        elf_deps_done(&got_deps);
        ASSERT_EQ(object_cache_get(c, &second, &got, &got_deps), 1);
        alloc_sites_done(&got);
        elf_deps_done(&got_deps);
        free(sites.sites);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(a_cached_object_comes_back_as_a_copy),
                TEST(a_file_changed_in_place_is_not_taken_for_the_old_one),
                TEST(the_oldest_entry_goes_when_the_cache_is_full),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
