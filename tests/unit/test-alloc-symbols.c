/* Unit tests for finding allocator entry points in ELF objects, one site per address. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "alloc-sites.h"
#include "macro.h"
#include "test-util.h"

static const char *fixture_path, *libc_path, *text_path, *libstdcxx_path, *je_prefix_path, *rjem_prefix_path,
                  *adjacent_sites_path, *fake_runtime_path, *fake_runtime_nocfi_path,
                  *jump_forwarder_path;

static const struct alloc_site *find_site(const struct alloc_sites *s, enum alloc_kind kind)
{
        for (size_t i = 0; i < s->n; i++)
                if (s->sites[i].kind == kind)
                        return &s->sites[i];
        return NULL;
}

static void fixture_aliases_share_one_site(void)
{
        _cleanup_close_ int fd = open(fixture_path, O_RDONLY | O_CLOEXEC);
        struct alloc_sites s = {};
        const struct alloc_site *ma, *al;

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(alloc_sites_find(fd, &s), 0);
        /* malloc, free and one of memalign/aligned_alloc */
        ASSERT_EQ(s.n, 3);
        ASSERT_TRUE(find_site(&s, ALLOC_KIND_MALLOC));
        ASSERT_TRUE(find_site(&s, ALLOC_KIND_FREE));
        ma = find_site(&s, ALLOC_KIND_MEMALIGN);
        al = find_site(&s, ALLOC_KIND_ALIGNED_ALLOC);
        ASSERT_TRUE((ma == NULL) != (al == NULL));
        ASSERT_TRUE(find_site(&s, ALLOC_KIND_CALLOC) == NULL);
        /* a shared object's text is mapped at its file offset */
        ASSERT_EQ(find_site(&s, ALLOC_KIND_MALLOC)->file_offset, find_site(&s, ALLOC_KIND_MALLOC)->vaddr);
        alloc_sites_done(&s);
}

static void libc_defines_every_hooked_function(void)
{
        _cleanup_close_ int fd = open(libc_path, O_RDONLY | O_CLOEXEC);
        struct alloc_sites s = {};

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(alloc_sites_find(fd, &s), 0);
        for (int k = 0; k < _ALLOC_KIND_MAX; k++) {
                if (alloc_sites_kind_is_cxx(k)) {
                        ASSERT_TRUE(!find_site(&s, k));         /* the libc has no C++ operators */
                        continue;
                }
                if (k == ALLOC_KIND_ALIGNED_ALLOC || k == ALLOC_KIND_MEMALIGN)
                        continue;       /* may be one address in this glibc */
                if (k == ALLOC_KIND_RESIZE)
                        continue;       /* jemalloc's xallocx */
                if (!find_site(&s, k))
                        fprintf(stderr, "libc lacks %s\n", alloc_sites_kind_to_string(k));
                ASSERT_TRUE(find_site(&s, k));
        }
        ASSERT_TRUE(find_site(&s, ALLOC_KIND_ALIGNED_ALLOC) || find_site(&s, ALLOC_KIND_MEMALIGN));
        /* glibc 2.36's free starts with test %rdi,%rdi; je: its probe goes on the je, which the
         * kernel emulates; malloc starts with a push and stays at its entry */
        ASSERT_EQ(find_site(&s, ALLOC_KIND_FREE)->probe_offset - find_site(&s, ALLOC_KIND_FREE)->file_offset, 3);
        ASSERT_EQ(find_site(&s, ALLOC_KIND_MALLOC)->probe_offset, find_site(&s, ALLOC_KIND_MALLOC)->file_offset);
        /* glibc's own name for malloc marks it; it is malloc, not an allocator of its own */
        ASSERT_EQ(alloc_sites_family(&s), ALLOC_FAMILY_GLIBC);
        ASSERT_TRUE(alloc_sites_has_c_api(&s));
        /* the mmap family goes for targets attached without --mmap */
        alloc_sites_drop_mmap(&s);
        ASSERT_TRUE(!find_site(&s, ALLOC_KIND_MMAP) && !find_site(&s, ALLOC_KIND_MUNMAP) &&
                    !find_site(&s, ALLOC_KIND_MREMAP));
        ASSERT_TRUE(find_site(&s, ALLOC_KIND_MALLOC));
        for (size_t i = 0; i < s.n; i++)
                for (size_t j = i + 1; j < s.n; j++)
                        ASSERT_TRUE(s.sites[i].vaddr != s.sites[j].vaddr);
        alloc_sites_done(&s);
}

static void libstdcxx_defines_every_operator_new_and_delete(void)
{
        _cleanup_close_ int fd = open(libstdcxx_path, O_RDONLY | O_CLOEXEC);
        struct alloc_sites s = {};
        unsigned news = 0, deletes = 0;

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(alloc_sites_find(fd, &s), 0);
        for (size_t i = 0; i < s.n; i++) {
                news += s.sites[i].kind == ALLOC_KIND_NEW;
                deletes += s.sites[i].kind == ALLOC_KIND_DELETE;
                ASSERT_TRUE(strncmp(s.sites[i].name, "_Z", 2) == 0);
        }
        /* new, new[] x {plain, nothrow, aligned, aligned+nothrow}; delete, delete[] x {plain,
         * sized, nothrow, aligned, sized+aligned, aligned+nothrow}: each at its own address */
        ASSERT_EQ(news, 8);
        ASSERT_EQ(deletes, 12);
        ASSERT_EQ(s.n, 20);
        /* each calls malloc, aligned_alloc or free through the PLT, or another form of itself:
         * every one only passes the call on (cxx-forwarders.h) */
        for (size_t i = 0; i < s.n; i++) {
                if (!s.sites[i].forwards)
                        fprintf(stderr, "%s does not forward\n", s.sites[i].name);
                ASSERT_TRUE(s.sites[i].forwards);
                ASSERT_TRUE(s.sites[i].size > 0);
        }
        alloc_sites_done(&s);
}

static void nothing_forwards_outside_the_cxx_runtime(const char *path)
{
        struct alloc_sites s = {};
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(alloc_sites_find(fd, &s), 0);
        ASSERT_TRUE(s.n > 0);
        for (size_t i = 0; i < s.n; i++)
                ASSERT_TRUE(!s.sites[i].forwards);
        alloc_sites_done(&s);
}

/* An allocator's own operators (tcmalloc's, jemalloc's new is its malloc's code, not a call to
 * it) and libc's functions are probed themselves. */
static void allocators_operators_do_not_forward(void)
{
        nothing_forwards_outside_the_cxx_runtime(libc_path);
        nothing_forwards_outside_the_cxx_runtime("/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4");
        nothing_forwards_outside_the_cxx_runtime("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2");
        nothing_forwards_outside_the_cxx_runtime("/usr/lib/x86_64-linux-gnu/libmimalloc.so.2");
}

static const struct alloc_site *find_name(const struct alloc_sites *s, const char *name)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->sites[i].name, name) == 0)
                        return &s->sites[i];
        return NULL;
}

static void open_and_find(const char *path, struct alloc_sites *s)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(alloc_sites_find(fd, s), 0);
}

/* A runtime's new that calls malloc forwards only where its CFI lets a walk from malloc's return
 * reach new's caller; its delete jumps to free (a tail call: free returns to delete's caller). */
static void a_forwarding_call_needs_the_runtimes_cfi(void)
{
        struct alloc_sites s = {};

        open_and_find(fake_runtime_path, &s);
        ASSERT_EQ(s.n, 2);
        ASSERT_TRUE(find_name(&s, "_Znwm")->forwards);
        ASSERT_TRUE(find_name(&s, "_ZdlPv")->forwards);
        alloc_sites_done(&s);
        open_and_find(fake_runtime_nocfi_path, &s);
        ASSERT_EQ(s.n, 2);
        ASSERT_TRUE(!find_name(&s, "_Znwm")->forwards);
        ASSERT_TRUE(find_name(&s, "_ZdlPv")->forwards);
        alloc_sites_done(&s);
}

static void tcmalloc_is_known_by_its_tc_names(void)
{
        struct alloc_sites s = {};

        open_and_find("/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4", &s);
        ASSERT_EQ(alloc_sites_family(&s), ALLOC_FAMILY_TCMALLOC);
        ASSERT_TRUE(alloc_sites_has_c_api(&s));
        /* free = cfree = tc_free = operator delete(void *): one site, with free's kind (entry only) */
        ASSERT_TRUE(find_name(&s, "free"));
        ASSERT_EQ(find_name(&s, "free")->kind, ALLOC_KIND_FREE);
        ASSERT_TRUE(!find_name(&s, "_ZdlPv") && !find_name(&s, "tc_free") && !find_name(&s, "cfree"));
        /* tc_new is operator new: one site, named by the earlier row */
        ASSERT_TRUE(find_name(&s, "_Znwm") && !find_name(&s, "tc_new"));
        /* the sized free forwards to free: probed like delete, so the inner free nests */
        ASSERT_TRUE(find_name(&s, "tc_free_sized"));
        ASSERT_EQ(find_name(&s, "tc_free_sized")->kind, ALLOC_KIND_DELETE);
        for (size_t i = 0; i < s.n; i++)
                for (size_t j = i + 1; j < s.n; j++)
                        ASSERT_TRUE(s.sites[i].vaddr != s.sites[j].vaddr);
        alloc_sites_done(&s);
}

static void jemalloc_is_known_by_its_extended_api(void)
{
        struct alloc_sites s = {};

        open_and_find("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", &s);
        ASSERT_EQ(alloc_sites_family(&s), ALLOC_FAMILY_JEMALLOC);
        ASSERT_EQ(find_name(&s, "mallocx")->kind, ALLOC_KIND_MALLOC);
        ASSERT_EQ(find_name(&s, "rallocx")->kind, ALLOC_KIND_REALLOC);
        ASSERT_EQ(find_name(&s, "xallocx")->kind, ALLOC_KIND_RESIZE);
        ASSERT_EQ(find_name(&s, "sdallocx")->kind, ALLOC_KIND_DELETE);
        ASSERT_EQ(find_name(&s, "dallocx")->kind, ALLOC_KIND_DELETE);
        ASSERT_EQ(find_name(&s, "malloc")->kind, ALLOC_KIND_MALLOC);
        alloc_sites_done(&s);
}

static void check_prefixed_jemalloc(const char *path, const char *prefix)
{
        static const struct {
                const char *name;
                enum alloc_kind kind;
        } expected[] = {
                { "malloc", ALLOC_KIND_MALLOC }, { "free", ALLOC_KIND_FREE }, { "mallocx", ALLOC_KIND_MALLOC },
                { "xallocx", ALLOC_KIND_RESIZE }, { "sdallocx", ALLOC_KIND_DELETE },
        };
        struct alloc_sites s = {};

        open_and_find(path, &s);
        ASSERT_EQ(alloc_sites_family(&s), ALLOC_FAMILY_JEMALLOC);
        ASSERT_TRUE(alloc_sites_has_c_api(&s));
        for (size_t i = 0; i < ELEMENTSOF(expected); i++) {
                char name[64];

                snprintf(name, sizeof(name), "%s%s", prefix, expected[i].name);
                ASSERT_TRUE(find_name(&s, name));
                ASSERT_EQ(find_name(&s, name)->kind, expected[i].kind);
        }
        ASSERT_EQ(s.n, ELEMENTSOF(expected));
        alloc_sites_done(&s);
}

static void jemalloc_with_a_prefix_is_jemalloc_too(void)
{
        check_prefixed_jemalloc(je_prefix_path, "je_");
        /* Rust's tikv-jemallocator: the program itself defines _rjem_malloc & co */
        check_prefixed_jemalloc(rjem_prefix_path, "_rjem_");
}

static void mimalloc_is_known_by_its_mi_names(void)
{
        struct alloc_sites s = {};

        open_and_find("/usr/lib/x86_64-linux-gnu/libmimalloc.so.2", &s);
        ASSERT_EQ(alloc_sites_family(&s), ALLOC_FAMILY_MIMALLOC);
        /* malloc = mi_malloc: one site */
        ASSERT_TRUE(find_name(&s, "malloc") && !find_name(&s, "mi_malloc"));
        ASSERT_EQ(find_name(&s, "mi_malloc_aligned")->kind, ALLOC_KIND_MALLOC);     /* (size, align) */
        ASSERT_EQ(find_name(&s, "mi_mallocn")->kind, ALLOC_KIND_CALLOC);            /* (count, size) */
        ASSERT_EQ(find_name(&s, "mi_free_size")->kind, ALLOC_KIND_DELETE);
        /* malloc copies its size to %rsi and reuses %rdi before its first branch: the probe goes
         * on that branch (emulated, no single step) and reads the size from %rsi */
        ASSERT_TRUE(find_name(&s, "malloc")->probe_offset > find_name(&s, "malloc")->file_offset);
        ASSERT_EQ(find_name(&s, "malloc")->entry_cookie, MEMLEAK_ARGS_MOVED | 6 /* rsi */);
        /* calloc(n, size): n in %rax, size still in %rsi */
        ASSERT_EQ(find_name(&s, "calloc")->entry_cookie, MEMLEAK_ARGS_MOVED | 0 /* rax */ | 6 << 4);
        alloc_sites_done(&s);
}

static void a_probe_never_moves_onto_another_site(void)
{
        struct alloc_sites s = {};
        const struct alloc_site *ma, *fr;

        open_and_find(adjacent_sites_path, &s);
        ma = find_site(&s, ALLOC_KIND_MALLOC);
        fr = find_site(&s, ALLOC_KIND_FREE);
        ASSERT_TRUE(ma && fr);
        ASSERT_EQ(fr->file_offset, ma->file_offset + 3);
        /* free's push is emulated where it is; malloc's probe may not step onto it */
        ASSERT_EQ(fr->probe_offset, fr->file_offset);
        ASSERT_EQ(ma->probe_offset, ma->file_offset);
        alloc_sites_done(&s);
}

/* A site that only jumps to another with its arguments is left to that one: probing both would
 * count a call twice (a free of a block already freed). */
static void a_jump_to_another_site_is_left_to_it(void)
{
        struct alloc_sites s = {};

        open_and_find(jump_forwarder_path, &s);
        ASSERT_TRUE(find_name(&s, "__libc_free") != NULL);
        ASSERT_TRUE(find_name(&s, "free") == NULL);
        ASSERT_TRUE(find_name(&s, "aligned_alloc") != NULL);
        ASSERT_TRUE(find_name(&s, "memalign") == NULL);
        ASSERT_TRUE(find_name(&s, "malloc") != NULL);          /* to no site */
        ASSERT_TRUE(find_name(&s, "calloc") != NULL);          /* to free: other arguments */
        ASSERT_EQ(s.n, 4);
        alloc_sites_done(&s);
}

static void non_elf_file_is_enoexec(void)
{
        _cleanup_close_ int fd = open(text_path, O_RDONLY | O_CLOEXEC);
        struct alloc_sites s = {};

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(alloc_sites_find(fd, &s), -ENOEXEC);
}

static void program_importing_malloc_defines_none(void)
{
        _cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        struct alloc_sites s = {};

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(alloc_sites_find(fd, &s), 0);
        ASSERT_EQ(s.n, 0);
        alloc_sites_done(&s);
}

int main(int argc, char *argv[])
{
        static const struct unit_test tests[] = {
                TEST(fixture_aliases_share_one_site),
                TEST(libc_defines_every_hooked_function),
                TEST(libstdcxx_defines_every_operator_new_and_delete),
                TEST(allocators_operators_do_not_forward),
                TEST(a_forwarding_call_needs_the_runtimes_cfi),
                TEST(tcmalloc_is_known_by_its_tc_names),
                TEST(jemalloc_is_known_by_its_extended_api),
                TEST(mimalloc_is_known_by_its_mi_names),
                TEST(jemalloc_with_a_prefix_is_jemalloc_too),
                TEST(a_probe_never_moves_onto_another_site),
                TEST(a_jump_to_another_site_is_left_to_it),
                TEST(non_elf_file_is_enoexec),
                TEST(program_importing_malloc_defines_none),
        };

        ASSERT_EQ(argc, 11);
        fixture_path = argv[1];
        libc_path = argv[2];
        text_path = argv[3];
        libstdcxx_path = argv[4];
        je_prefix_path = argv[5];
        rjem_prefix_path = argv[6];
        adjacent_sites_path = argv[7];
        fake_runtime_path = argv[8];
        fake_runtime_nocfi_path = argv[9];
        jump_forwarder_path = argv[10];
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
