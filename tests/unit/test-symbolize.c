/* SPDX-License-Identifier: MIT */
/* Tests for symbolize.c against a fixture library this process loads and runs, and against itself. */

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>
#include <libelf.h>

#include "elf-inspect.h"
#include "macro.h"
#include "symbolizer.h"
#include "test-util.h"

/* Paths from meson: the fixture library, its copy stripped of DWARF with a .gnu_debuglink to a
 * .debug file beside it, its copy stripped of DWARF with nothing to find, and its source. */
static const char *fixture_path;
static const char *fixture_split_path;
static const char *fixture_nodebug_path;
static const char *fixture_source_path;
static const char *fixture_zsplit_path;   /* like split, its .debug file with compressed sections */
static const char *fixture_zinline_path;  /* the fixture with its own debug sections compressed */
static const char *fixture_noid_path;     /* the fixture without its GNU build ID note */

/* Lives in this (non-PIE) test executable, for resolving inside an ET_EXEC file. */
int exe_function(int x);
__attribute__((noinline)) int exe_function(int x)
{
        return x * 5 + 3;
}

/* The number of the line of the fixture source holding the comment "line:<name>". */
static int marker_line(const char *name)
{
        _cleanup_fclose_ FILE *f = fopen(fixture_source_path, "re");
        _cleanup_free_ char *needle = NULL;
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        int found = 0;

        ASSERT_TRUE(f);
        ASSERT_TRUE(asprintf(&needle, "/* line:%s */", name) > 0);
        for (int n = 1; getline(&text, &size, f) >= 0; n++)
                if (strstr(text, needle)) {
                        ASSERT_EQ(found, 0);
                        found = n;
                }
        ASSERT_TRUE(found > 0);
        return found;
}

/* File offset of addr inside the file mapped from path, as the daemon computes it from
 * /proc/PID/maps: addr - start + pgoff. */
static uint64_t file_offset_in_maps(const void *addr, const char *path)
{
        _cleanup_free_ char *real = realpath(path, NULL);
        _cleanup_fclose_ FILE *f = fopen("/proc/self/maps", "re");
        _cleanup_free_ char *text = NULL;
        size_t size = 0;

        ASSERT_TRUE(real);
        ASSERT_TRUE(f);
        while (getline(&text, &size, f) >= 0) {
                unsigned long long start, end, pgoff;
                int name_at = 0;

                if (sscanf(text, "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &pgoff, &name_at) < 3 ||
                    name_at == 0)
                        continue;
                text[strcspn(text, "\n")] = '\0';
                if (strcmp(text + name_at, real) != 0)
                        continue;
                if ((uintptr_t)addr >= start && (uintptr_t)addr < end)
                        return (uintptr_t)addr - start + pgoff;
        }
        fprintf(stderr, "%p is not mapped from %s\n", addr, real);
        abort();
}

static void *fixture_handle(void)
{
        static void *handle;

        if (!handle) {
                handle = dlopen(fixture_path, RTLD_NOW | RTLD_LOCAL);
                if (!handle)
                        fprintf(stderr, "dlopen: %s\n", dlerror());
                ASSERT_TRUE(handle);
        }
        return handle;
}

static void *fixture_symbol(const char *name)
{
        void *p = dlsym(fixture_handle(), name);

        ASSERT_TRUE(p);
        return p;
}

/* Runs fixture_caller() and returns the return address fixture_call() saw. */
static void *fixture_call_return_address(void)
{
        int (*caller)(int) = (int (*)(int))fixture_symbol("fixture_caller");
        void **saved = fixture_symbol("fixture_return_address");

        *saved = NULL;
        ASSERT_EQ(caller(2), 3);
        ASSERT_TRUE(*saved);
        return *saved;
}

/* A symbolizer with path registered as module (st_dev, st_ino); the test's own fd is closed. */
static struct symbolizer *symbolizer_with(const char *path, struct stat *ret_st)
{
        struct symbolizer *s = NULL;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(fstat(fd, ret_st), 0);
        ASSERT_EQ(symbolizer_new(NULL, &s), 0);
        ASSERT_EQ(symbolizer_add_module(s, ret_st->st_dev, ret_st->st_ino, fd, path, NULL), 0);
        close(fd);
        return s;
}

static const char *base_name(const char *path)
{
        const char *slash = path ? strrchr(path, '/') : NULL;

        return slash ? slash + 1 : path;
}

/* Resolve an address that no inlined code covers: exactly one frame. */
static int resolve_one(struct symbolizer *s, uint64_t dev, uint64_t ino, uint64_t offset,
                       bool is_return_address, struct symbol_frame *ret)
{
        struct symbol_frame frames[SYMBOLIZER_FRAMES_MAX];
        size_t n = 0;
        int r = symbolizer_resolve(s, dev, ino, offset, is_return_address, frames, ELEMENTSOF(frames), &n);

        if (r < 0)
                return r;
        ASSERT_EQ(n, 1);
        ASSERT_TRUE(!frames[0].inlined);
        *ret = frames[0];
        return 0;
}

static void inlined_calls_are_frames_with_their_call_sites(void)
{
        int (*caller)(int) = (int (*)(int))fixture_symbol("fixture_inline_caller");
        char *ret;
        uint64_t offset;
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        struct symbol_frame frames[SYMBOLIZER_FRAMES_MAX];
        size_t n = 0;
        struct stat st;

        ASSERT_EQ(caller(1), 11);       /* ((1 * 3 + 1) + 2) * 2 - 1 */
        ret = *(void **)fixture_symbol("fixture_return_address");
        offset = file_offset_in_maps(ret, fixture_path);
        s = symbolizer_with(fixture_path, &st);

        /* Twice: the second answer comes from the cache. */
        for (int i = 0; i < 2; i++) {
                ASSERT_EQ(symbolizer_resolve(s, st.st_dev, st.st_ino, offset, true, frames,
                                             ELEMENTSOF(frames), &n), 0);
                ASSERT_EQ(n, 3);
                /* innermost first: the helper's line is the call of fixture_call ... */
                ASSERT_STREQ(frames[0].symbol, "fixture_inline_helper");
                ASSERT_TRUE(frames[0].inlined && !frames[0].has_offset);
                ASSERT_EQ(frames[0].line, marker_line("inline-call"));
                ASSERT_STREQ(base_name(frames[0].file), "symbolize-fixture.c");
                /* ... the outer inlined function's line is where it called the helper ... */
                ASSERT_STREQ(frames[1].symbol, "fixture_inline_outer");
                ASSERT_TRUE(frames[1].inlined);
                ASSERT_EQ(frames[1].line, marker_line("inline-outer-call"));
                ASSERT_STREQ(base_name(frames[1].file), "symbolize-fixture.c");
                /* ... and the function holding the code is a real frame at the inline site. */
                ASSERT_STREQ(frames[2].symbol, "fixture_inline_caller");
                ASSERT_TRUE(!frames[2].inlined && frames[2].has_offset);
                ASSERT_EQ(frames[2].offset, ret - (char *)caller);
                ASSERT_EQ(frames[2].line, marker_line("inline-site"));
        }

        /* Room for one frame: the function holding the code is the one kept. */
        ASSERT_EQ(symbolizer_resolve(s, st.st_dev, st.st_ino, offset, true, frames, 1, &n), 0);
        ASSERT_EQ(n, 1);
        ASSERT_STREQ(frames[0].symbol, "fixture_inline_caller");
        ASSERT_EQ(frames[0].line, marker_line("inline-site"));
}

static void demangles_cxx_and_rust_legacy_and_v0(void)
{
        static const struct {
                const char *mangled, *demangled;
        } cases[] = {
                { "_ZN7LeakLib14slowMemoryLeakEv", "LeakLib::slowMemoryLeak()" },
                { "_Znwm", "operator new(unsigned long)" },
                /* Rust legacy: the ::h<hash> suffix is dropped */
                { "_ZN4core3fmt5write17h8e3b5c2a4f1d0e9bE", "core::fmt::write" },
                { "_ZN5alloc5boxed12Box$LT$T$GT$4leak17h0123456789abcdefE", "alloc::boxed::Box<T>::leak" },
                /* Rust v0 */
                { "_RNvCs1234_7mycrate4leak", "mycrate::leak" },
                { "_RNvNtCs9ltgdHTiPiY_4test4main4leak", "test::main::leak" },
        };
        char *d;

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                d = symbolizer_demangle(cases[i].mangled);
                ASSERT_STREQ(d, cases[i].demangled);
                free(d);
        }
        /* not mangled: C names, and junk after a mangling prefix */
        ASSERT_TRUE(!symbolizer_demangle("main"));
        ASSERT_TRUE(!symbolizer_demangle("_start"));
        ASSERT_TRUE(!symbolizer_demangle(NULL));
        d = symbolizer_demangle("_Z!!");
        ASSERT_TRUE(!d);
}

static void resolves_function_and_offset_inside_it(void)
{
        char *callee = fixture_symbol("fixture_call");
        uint64_t offset = file_offset_in_maps(callee + 1, fixture_path);
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        struct symbol_frame info;
        struct stat st;

        s = symbolizer_with(fixture_path, &st);
        ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino, offset, false, &info), 0);
        ASSERT_STREQ(info.symbol, "fixture_call");
        ASSERT_EQ(info.offset, 1);
        ASSERT_STREQ(base_name(info.file), "symbolize-fixture.c");
        ASSERT_EQ(info.line, marker_line("callee-entry"));
        /* meson compiles with a relative path: it is joined with DW_AT_comp_dir and normalized */
        {
                _cleanup_free_ char *real = realpath(fixture_source_path, NULL);

                ASSERT_TRUE(real);
                ASSERT_STREQ(info.file, real);
        }
}

static void return_address_resolves_to_line_of_call(void)
{
        char *ret = fixture_call_return_address();
        char *caller = fixture_symbol("fixture_caller");
        uint64_t offset = file_offset_in_maps(ret, fixture_path);
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        struct symbol_frame info;
        struct stat st;

        s = symbolizer_with(fixture_path, &st);
        /* Twice each way: the second answers come from the cache, which must key on both. */
        for (int i = 0; i < 2; i++) {
                ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino, offset, true, &info), 0);
                ASSERT_STREQ(info.symbol, "fixture_caller");
                ASSERT_EQ(info.offset, ret - caller);
                ASSERT_STREQ(base_name(info.file), "symbolize-fixture.c");
                ASSERT_EQ(info.line, marker_line("call"));

                /* The same address as a plain instruction address is on the next line. */
                ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino, offset, false, &info), 0);
                ASSERT_STREQ(info.symbol, "fixture_caller");
                ASSERT_EQ(info.offset, ret - caller);
                ASSERT_EQ(info.line, marker_line("after-call"));
        }
}

static void return_address_after_noreturn_call_stays_in_caller(void)
{
        int (*run)(void) = (int (*)(void))fixture_symbol("fixture_run_noreturn");
        void **saved = fixture_symbol("fixture_return_address");
        char *caller = fixture_symbol("fixture_noreturn_caller");
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        struct symbol_frame info;
        struct stat st;

        *saved = NULL;
        ASSERT_EQ(run(), 0);
        char *ret = *saved;
        /* The case under test: the call is the caller's last instruction. */
        ASSERT_TRUE(ret == (char *)fixture_symbol("fixture_after_noreturn"));

        s = symbolizer_with(fixture_path, &st);
        ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino, file_offset_in_maps(ret, fixture_path),
                                     true, &info), 0);
        ASSERT_STREQ(info.symbol, "fixture_noreturn_caller");
        ASSERT_EQ(info.offset, ret - caller);
        ASSERT_EQ(info.line, marker_line("noreturn-call"));
}

static void resolves_static_function_from_symtab(void)
{
        int (*run)(void) = (int (*)(void))fixture_symbol("fixture_run_noreturn");
        void **local = fixture_symbol("fixture_local_address");
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        struct symbol_frame info;
        struct stat st;

        ASSERT_EQ(run(), 0);
        ASSERT_TRUE(*local);
        ASSERT_TRUE(!dlsym(fixture_handle(), "fixture_local"));

        s = symbolizer_with(fixture_path, &st);
        ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino,
                                     file_offset_in_maps((char *)*local + 3, fixture_path), false, &info), 0);
        ASSERT_STREQ(info.symbol, "fixture_local");
        ASSERT_EQ(info.offset, 3);
}

static void separate_debug_file_is_found_through_debuglink(void)
{
        /* objcopy keeps loaded segments in place, so offsets in the loaded copy hold for both. */
        char *ret = fixture_call_return_address();
        uint64_t offset = file_offset_in_maps(ret, fixture_path);
        _cleanup_(symbolizer_freep) struct symbolizer *split = NULL, *nodebug = NULL;
        struct symbol_frame info;
        struct stat st_split, st_nodebug;

        split = symbolizer_with(fixture_split_path, &st_split);
        ASSERT_EQ(resolve_one(split, st_split.st_dev, st_split.st_ino, offset, true, &info), 0);
        ASSERT_STREQ(info.symbol, "fixture_caller");
        ASSERT_STREQ(base_name(info.file), "symbolize-fixture.c");
        ASSERT_EQ(info.line, marker_line("call"));

        /* The control: the same stripped file without a debug file to find has no lines. */
        nodebug = symbolizer_with(fixture_nodebug_path, &st_nodebug);
        ASSERT_EQ(resolve_one(nodebug, st_nodebug.st_dev, st_nodebug.st_ino, offset, true, &info), 0);
        ASSERT_STREQ(info.symbol, "fixture_caller");
        ASSERT_TRUE(!info.file);
        ASSERT_EQ(info.line, 0);
}

static void address_without_symbol_has_null_symbol(void)
{
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        struct symbol_frame info;
        struct stat st;

        s = symbolizer_with(fixture_path, &st);

        /* The ELF header: loaded, but no symbol covers it. */
        ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino, 0, false, &info), 0);
        ASSERT_TRUE(!info.symbol);
        ASSERT_TRUE(!info.file);

        /* Past the end of the file: in no loaded segment. */
        ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino, st.st_size + 4096, true, &info), 0);
        ASSERT_TRUE(!info.symbol);
        ASSERT_TRUE(!info.file);
        ASSERT_EQ(info.line, 0);
}

static void resolves_function_in_non_pie_executable(void)
{
        _cleanup_free_ char *exe = realpath("/proc/self/exe", NULL);
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct symbol_frame info;
        struct stat st;
        Elf64_Ehdr ehdr;

        ASSERT_TRUE(exe);
        /* The case under test: an ET_EXEC file, whose code is placed away from its file offset. */
        fd = open(exe, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(pread(fd, &ehdr, sizeof(ehdr), 0), sizeof(ehdr));
        ASSERT_EQ(ehdr.e_type, ET_EXEC);

        s = symbolizer_with(exe, &st);
        ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino,
                                     file_offset_in_maps((char *)exe_function + 2, exe), false, &info), 0);
        ASSERT_STREQ(info.symbol, "exe_function");
        ASSERT_EQ(info.offset, 2);
        ASSERT_STREQ(base_name(info.file), "test-symbolize.c");
        ASSERT_TRUE(info.line > 0);
}

static void non_elf_file_is_rejected_with_enoexec(void)
{
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        _cleanup_close_ int source = -EBADF, empty = -EBADF, truncated = -EBADF;
        struct symbol_frame info;

        ASSERT_EQ(symbolizer_new(NULL, &s), 0);

        source = open(fixture_source_path, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(source >= 0);
        ASSERT_EQ(symbolizer_add_module(s, 1, 1, source, fixture_source_path, NULL), -ENOEXEC);
        /* remembered: the daemon does not open it again on every refresh */
        ASSERT_TRUE(symbolizer_has_module(s, 1, 1));
        ASSERT_TRUE(!symbolizer_has_module(s, 1, 2));

        empty = memfd_create("empty", MFD_CLOEXEC);
        ASSERT_TRUE(empty >= 0);
        ASSERT_EQ(symbolizer_add_module(s, 1, 2, empty, "/empty", NULL), -ENOEXEC);

        truncated = memfd_create("truncated", MFD_CLOEXEC);
        ASSERT_TRUE(truncated >= 0);
        ASSERT_EQ(write(truncated, ELFMAG "\2\1\1", 7), 7);
        ASSERT_EQ(symbolizer_add_module(s, 1, 3, truncated, "/truncated", NULL), -ENOEXEC);

        /* Nothing rejected was registered. */
        ASSERT_EQ(resolve_one(s, 1, 1, 0, false, &info), -ENOENT);
        ASSERT_EQ(resolve_one(s, 1, 2, 0, false, &info), -ENOENT);
        ASSERT_EQ(resolve_one(s, 1, 3, 0, false, &info), -ENOENT);
}

static void unknown_module_is_enoent(void)
{
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        struct symbol_frame info = { .symbol = "untouched" };
        struct stat st;

        s = symbolizer_with(fixture_path, &st);
        ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino + 1, 0x1000, false, &info), -ENOENT);
        ASSERT_EQ(resolve_one(s, st.st_dev + 1, st.st_ino, 0x1000, false, &info), -ENOENT);
        ASSERT_STREQ(info.symbol, "untouched");
}

static void registering_module_again_is_noop(void)
{
        char *callee = fixture_symbol("fixture_call");
        uint64_t offset = file_offset_in_maps(callee, fixture_path);
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        _cleanup_close_ int other = -EBADF;
        struct symbol_frame info;
        struct stat st;

        s = symbolizer_with(fixture_path, &st);
        /* Same (dev, ino), different file: the first registration stands. */
        other = open(fixture_source_path, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(other >= 0);
        ASSERT_EQ(symbolizer_add_module(s, st.st_dev, st.st_ino, other, fixture_source_path, NULL), 0);

        ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino, offset, false, &info), 0);
        ASSERT_STREQ(info.symbol, "fixture_call");
        ASSERT_EQ(info.offset, 0);
}

static int count_open_fds(void)
{
        int n = 0;

        /* Probing each low number counts without opening a directory (which takes an fd). */
        for (int fd = 0; fd < 1024; fd++)
                if (fcntl(fd, F_GETFD) >= 0)
                        n++;
        return n;
}

static void free_closes_every_file_it_opened(void)
{
        uint64_t offset = file_offset_in_maps(fixture_call_return_address(), fixture_path);
        struct symbolizer *s = NULL;
        struct symbol_frame info;
        struct stat st;
        int before = count_open_fds();
        int fd;

        ASSERT_EQ(symbolizer_new(NULL, &s), 0);

        /* The split copy also opens its .debug file while resolving. */
        fd = open(fixture_split_path, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(fstat(fd, &st), 0);
        ASSERT_EQ(symbolizer_add_module(s, st.st_dev, st.st_ino, fd, fixture_split_path, NULL), 0);
        close(fd);
        ASSERT_EQ(resolve_one(s, st.st_dev, st.st_ino, offset, true, &info), 0);
        ASSERT_EQ(info.line, marker_line("call"));

        /* A rejected file leaves nothing open either. */
        fd = open(fixture_source_path, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(symbolizer_add_module(s, 1, 1, fd, fixture_source_path, NULL), -ENOEXEC);
        close(fd);

        ASSERT_TRUE(count_open_fds() > before);
        ASSERT_TRUE(!symbolizer_free(s));
        ASSERT_EQ(count_open_fds(), before);
}

static void free_accepts_null(void)
{
        ASSERT_TRUE(!symbolizer_free(NULL));
}

/* A copy of path in dir as name; with a different build ID when tweak != 0 (its last byte xor'ed). */
static char *copy_fixture(const char *dir, const char *name, const char *path, uint8_t tweak)
{
        _cleanup_free_ char *data = NULL;
        char *out = NULL;
        size_t size = 0;
        FILE *f = fopen(path, "re");

        ASSERT_TRUE(f);
        {
                char buf[65536];
                size_t k;

                while ((k = fread(buf, 1, sizeof(buf), f)) > 0) {
                        data = realloc(data, size + k);
                        ASSERT_TRUE(data);
                        memcpy(data + size, buf, k);
                        size += k;
                }
        }
        fclose(f);
        if (tweak) {
                Elf *elf;
                const void *id = NULL;
                ssize_t len;
                char *at;

                ASSERT_TRUE(elf_version(EV_CURRENT) != EV_NONE);
                elf = elf_memory(data, size);
                ASSERT_TRUE(elf);
                len = dwelf_elf_gnu_build_id(elf, &id);
                ASSERT_TRUE(len > 0);
                at = memmem(data, size, id, len);
                ASSERT_TRUE(at);
                elf_end(elf);
                at[len - 1] ^= tweak;
        }
        ASSERT_TRUE(asprintf(&out, "%s/%s", dir, name) > 0);
        f = fopen(out, "we");
        ASSERT_TRUE(f);
        ASSERT_EQ(fwrite(data, 1, size, f), size);
        ASSERT_EQ(fclose(f), 0);
        return out;
}

static void add_path(struct symbolizer *s, const char *path, struct stat *st, int expect)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(fstat(fd, st), 0);
        ASSERT_EQ(symbolizer_add_module(s, st->st_dev, st->st_ino, fd, path,
                                        &(struct symbol_source) { .pid = 0, .path = path }), expect);
}

static int reopen_by_path(void *userdata, uint64_t dev, uint64_t ino, const struct symbol_source *src)
{
        int fd = open(src->path, O_RDONLY | O_CLOEXEC);

        (*(unsigned *)userdata)++;
        return fd >= 0 ? fd : -errno;
}

static void copies_with_one_build_id_share_one_file(void)
{
        char dir[] = "/tmp/test-symbolize.XXXXXX";
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        uint64_t offset = file_offset_in_maps(fixture_symbol("fixture_call"), fixture_path);
        struct symbolizer_stats stats;
        struct symbol_frame info;
        struct stat st[5];
        char *paths[5];

        ASSERT_TRUE(mkdtemp(dir));
        ASSERT_EQ(symbolizer_new(NULL, &s), 0);
        for (int i = 0; i < 5; i++) {
                char name[32];

                snprintf(name, sizeof(name), "copy%d.so", i);
                paths[i] = copy_fixture(dir, name, fixture_path, 0);
                add_path(s, paths[i], &st[i], 0);
        }
        symbolizer_get_stats(s, &stats);
        ASSERT_EQ(stats.files, 5);
        ASSERT_EQ(stats.images, 1);
        ASSERT_EQ(stats.open, 1);
        ASSERT_EQ(resolve_one(s, st[4].st_dev, st[4].st_ino, offset, false, &info), 0);
        ASSERT_STREQ(info.symbol, "fixture_call");
        for (int i = 0; i < 5; i++) {
                ASSERT_EQ(unlink(paths[i]), 0);
                free(paths[i]);
        }
        ASSERT_EQ(rmdir(dir), 0);
}

static void open_files_stay_within_the_limit_and_reopen_when_needed(void)
{
        char dir[] = "/tmp/test-symbolize.XXXXXX";
        unsigned reopens = 0;
        uint64_t offset = file_offset_in_maps(fixture_symbol("fixture_call"), fixture_path);
        struct symbolizer *s = NULL;
        struct symbolizer_stats stats;
        struct symbol_frame info;
        struct stat st[20];
        char *paths[20];
        int before = count_open_fds();

        ASSERT_TRUE(mkdtemp(dir));
        ASSERT_EQ(symbolizer_new(&(struct symbolizer_settings) {
                .limits = { .max_open_files = 16 },
                .reopen = reopen_by_path,
                .userdata = &reopens,
        }, &s), 0);
        for (int i = 0; i < 20; i++) {
                char name[32];

                snprintf(name, sizeof(name), "distinct%d.so", i);
                paths[i] = copy_fixture(dir, name, fixture_path, (uint8_t)(i + 1));
                add_path(s, paths[i], &st[i], 0);
                symbolizer_get_stats(s, &stats);
                ASSERT_TRUE(stats.open <= 16);
        }
        ASSERT_EQ(stats.images, 20);
        ASSERT_EQ(stats.open, 16);
        ASSERT_TRUE(count_open_fds() <= before + 16);
        /* The first ones were closed: resolving one opens it again (closing another). */
        ASSERT_EQ(resolve_one(s, st[0].st_dev, st[0].st_ino, offset, false, &info), 0);
        ASSERT_STREQ(info.symbol, "fixture_call");
        ASSERT_EQ(reopens, 1);
        symbolizer_get_stats(s, &stats);
        ASSERT_EQ(stats.open, 16);
        ASSERT_EQ(stats.reopened, 1);
        /* Cached: no reopening for an address resolved before, even closed again. */
        for (int i = 1; i < 20; i++)
                ASSERT_EQ(resolve_one(s, st[i].st_dev, st[i].st_ino, offset, false, &info), 0);
        ASSERT_EQ(resolve_one(s, st[0].st_dev, st[0].st_ino, offset, false, &info), 0);
        ASSERT_STREQ(info.symbol, "fixture_call");
        /* A file that cannot be opened again: its frames stay unnamed, nothing fails. */
        ASSERT_EQ(unlink(paths[1]), 0);
        ASSERT_EQ(resolve_one(s, st[1].st_dev, st[1].st_ino, offset + 1, false, &info), 0);
        ASSERT_TRUE(info.symbol == NULL);
        symbolizer_get_stats(s, &stats);
        ASSERT_EQ(stats.reopen_failed, 1);

        /* Released with the last reference: nothing stays open or known. */
        for (int i = 0; i < 20; i++) {
                symbolizer_release_module(s, st[i].st_dev, st[i].st_ino);
                if (i != 1)
                        ASSERT_EQ(unlink(paths[i]), 0);
                free(paths[i]);
        }
        symbolizer_get_stats(s, &stats);
        ASSERT_EQ(stats.files, 0);
        ASSERT_EQ(stats.images, 0);
        ASSERT_EQ(stats.open, 0);
        ASSERT_EQ(count_open_fds(), before);
        ASSERT_TRUE(!symbolizer_free(s));
        ASSERT_EQ(rmdir(dir), 0);
}

static void each_reference_is_released_once(void)
{
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        struct symbolizer_stats stats;
        struct stat st;

        ASSERT_EQ(symbolizer_new(NULL, &s), 0);
        add_path(s, fixture_path, &st, 0);
        add_path(s, fixture_path, &st, 0);
        add_path(s, fixture_source_path, &st, -ENOEXEC);
        add_path(s, fixture_source_path, &st, -ENOEXEC);
        symbolizer_release_module(s, st.st_dev, st.st_ino);
        ASSERT_TRUE(symbolizer_has_module(s, st.st_dev, st.st_ino));
        symbolizer_release_module(s, st.st_dev, st.st_ino);
        ASSERT_TRUE(!symbolizer_has_module(s, st.st_dev, st.st_ino));
        symbolizer_release_module(s, st.st_dev, st.st_ino);     /* one too many: ignored */
        ASSERT_EQ(stat(fixture_path, &st), 0);
        symbolizer_release_module(s, st.st_dev, st.st_ino);
        ASSERT_TRUE(symbolizer_has_module(s, st.st_dev, st.st_ino));
        symbolizer_release_module(s, st.st_dev, st.st_ino);
        symbolizer_get_stats(s, &stats);
        ASSERT_EQ(stats.files, 0);
        ASSERT_EQ(stats.images, 0);
}

static void note_message(void *userdata, const char *message)
{
        char **kept = userdata;

        free(*kept);
        *kept = strdup(message);
}

static void debug_info_inflating_past_the_limit_is_refused_with_names_kept(void)
{
        uint64_t offset = file_offset_in_maps(fixture_call_return_address(), fixture_path);
        _cleanup_free_ char *said = NULL;
        struct symbolizer_stats stats;
        struct symbol_frame info;
        struct stat st;

        /* Compressed debug sections in the object itself, and in its separate debug file. */
        for (int i = 0; i < 2; i++) {
                const char *path = i == 0 ? fixture_zinline_path : fixture_zsplit_path;
                _cleanup_(symbolizer_freep) struct symbolizer *roomy = NULL, *tight = NULL;

                ASSERT_EQ(symbolizer_new(NULL, &roomy), 0);
                add_path(roomy, path, &st, 0);
                ASSERT_EQ(resolve_one(roomy, st.st_dev, st.st_ino, offset, true, &info), 0);
                ASSERT_STREQ(info.symbol, "fixture_caller");
                ASSERT_EQ(info.line, marker_line("call"));

                ASSERT_EQ(symbolizer_new(&(struct symbolizer_settings) {
                        .limits = { .max_section_bytes = 64 },
                        .note = note_message,
                        .userdata = &said,
                }, &tight), 0);
                add_path(tight, path, &st, 0);
                ASSERT_EQ(resolve_one(tight, st.st_dev, st.st_ino, offset, true, &info), 0);
                ASSERT_STREQ(info.symbol, "fixture_caller");
                ASSERT_TRUE(info.file == NULL);
                ASSERT_EQ(info.line, 0);
                ASSERT_TRUE(said && strstr(said, "inflate") && strstr(said, path));
                symbolizer_get_stats(tight, &stats);
                ASSERT_EQ(stats.refused, 1);
        }
}

struct loaded_notes {
        const char *path;
        char hex[ELF_BUILD_ID_HEX_MAX];
};

/* dl_iterate_phdr's callback: the build ID in the PT_NOTE segments of the object loaded from
 * ->path, as the loader mapped them (not as libdw reads the file). */
static int find_loaded_build_id(struct dl_phdr_info *info, size_t size, void *userdata)
{
        struct loaded_notes *want = userdata;
        uint8_t id[ELF_BUILD_ID_MAX];
        size_t len = 0;

        if (!info->dlpi_name || strcmp(info->dlpi_name, want->path) != 0)
                return 0;
        for (int i = 0; i < info->dlpi_phnum; i++) {
                const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

                if (ph->p_type == PT_NOTE &&
                    elf_inspect_notes_build_id((const void *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz, id, &len) == 0) {
                        elf_inspect_build_id_hex(id, len, want->hex);
                        return 1;
                }
        }
        return 0;
}

static void build_id_is_the_file_s_note_as_lowercase_hex(void)
{
        _cleanup_(symbolizer_freep) struct symbolizer *s = NULL;
        _cleanup_close_ int source = -EBADF;
        struct loaded_notes loaded = { .path = fixture_path };
        struct stat st, noid;
        const char *id;

        (void)fixture_handle();
        ASSERT_EQ(dl_iterate_phdr(find_loaded_build_id, &loaded), 1);
        ASSERT_EQ(strlen(loaded.hex), 40);      /* ld's default: SHA-1 */
        ASSERT_EQ(strspn(loaded.hex, "0123456789abcdef"), 40);

        s = symbolizer_with(fixture_path, &st);
        id = symbolizer_build_id(s, st.st_dev, st.st_ino);
        ASSERT_STREQ(id, loaded.hex);
        /* the same again: kept with the file, not made per call */
        ASSERT_TRUE(symbolizer_build_id(s, st.st_dev, st.st_ino) == id);
        /* a file without the note, one not registered, one not ELF: none */
        add_path(s, fixture_noid_path, &noid, 0);
        ASSERT_TRUE(symbolizer_build_id(s, noid.st_dev, noid.st_ino) == NULL);
        ASSERT_TRUE(symbolizer_build_id(s, st.st_dev, st.st_ino + 1) == NULL);
        source = open(fixture_source_path, O_RDONLY | O_CLOEXEC);
        ASSERT_TRUE(source >= 0);
        ASSERT_EQ(symbolizer_add_module(s, 1, 1, source, fixture_source_path, NULL), -ENOEXEC);
        ASSERT_TRUE(symbolizer_build_id(s, 1, 1) == NULL);
        ASSERT_TRUE(symbolizer_build_id(NULL, st.st_dev, st.st_ino) == NULL);
}

/* Notes as the kernel's /sys/kernel/notes holds them: several, each padded to 4 bytes. */
static void build_id_is_found_among_notes_and_refused_when_cut(void)
{
        uint8_t notes[128] = {}, id[ELF_BUILD_ID_MAX];
        char hex[ELF_BUILD_ID_HEX_MAX];
        Elf64_Nhdr h;
        size_t n = 0, len = 0;

        /* "Linux" (6 bytes, padded to 8), a 4-byte descriptor */
        h = (Elf64_Nhdr) { .n_namesz = 6, .n_descsz = 4, .n_type = 0x100 };
        memcpy(notes + n, &h, sizeof(h));
        memcpy(notes + n + sizeof(h), "Linux", 6);
        n += sizeof(h) + 8 + 4;
        /* a GNU note of another type first */
        h = (Elf64_Nhdr) { .n_namesz = 4, .n_descsz = 16, .n_type = NT_GNU_ABI_TAG };
        memcpy(notes + n, &h, sizeof(h));
        memcpy(notes + n + sizeof(h), "GNU", 4);
        n += sizeof(h) + 4 + 16;
        /* the build ID: 5 bytes, padded to 8 */
        h = (Elf64_Nhdr) { .n_namesz = 4, .n_descsz = 5, .n_type = NT_GNU_BUILD_ID };
        memcpy(notes + n, &h, sizeof(h));
        memcpy(notes + n + sizeof(h), "GNU", 4);
        memcpy(notes + n + sizeof(h) + 4, "\x0a\xb1\xff\x00\x7e", 5);
        n += sizeof(h) + 4 + 8;

        ASSERT_EQ(elf_inspect_notes_build_id(notes, n, id, &len), 0);
        ASSERT_EQ(len, 5);
        elf_inspect_build_id_hex(id, len, hex);
        ASSERT_STREQ(hex, "0ab1ff007e");
        /* its padding left off (the last note): still whole */
        ASSERT_EQ(elf_inspect_notes_build_id(notes, n - 3, id, &len), 0);
        /* cut in its descriptor: refused; in its header: no note there */
        ASSERT_EQ(elf_inspect_notes_build_id(notes, n - 4, id, &len), -EBADMSG);
        ASSERT_EQ(elf_inspect_notes_build_id(notes, n - 8 - 4 - 2, id, &len), -ENOENT);
        /* without it */
        ASSERT_EQ(elf_inspect_notes_build_id(notes, n - 8 - 4 - 12, id, &len), -ENOENT);
        ASSERT_EQ(elf_inspect_notes_build_id(notes, 0, id, &len), -ENOENT);
        /* a name claiming more than there is */
        h = (Elf64_Nhdr) { .n_namesz = 1000, .n_descsz = 0, .n_type = 1 };
        memcpy(notes, &h, sizeof(h));
        ASSERT_EQ(elf_inspect_notes_build_id(notes, n, id, &len), -EBADMSG);
        elf_inspect_build_id_hex(id, 0, hex);
        ASSERT_STREQ(hex, "");
}

int main(int argc, char *argv[])
{
        static const struct unit_test tests[] = {
                TEST(resolves_function_and_offset_inside_it),
                TEST(return_address_resolves_to_line_of_call),
                TEST(return_address_after_noreturn_call_stays_in_caller),
                TEST(resolves_static_function_from_symtab),
                TEST(separate_debug_file_is_found_through_debuglink),
                TEST(address_without_symbol_has_null_symbol),
                TEST(resolves_function_in_non_pie_executable),
                TEST(non_elf_file_is_rejected_with_enoexec),
                TEST(unknown_module_is_enoent),
                TEST(registering_module_again_is_noop),
                TEST(free_closes_every_file_it_opened),
                TEST(free_accepts_null),
                TEST(inlined_calls_are_frames_with_their_call_sites),
                TEST(demangles_cxx_and_rust_legacy_and_v0),
                TEST(copies_with_one_build_id_share_one_file),
                TEST(open_files_stay_within_the_limit_and_reopen_when_needed),
                TEST(each_reference_is_released_once),
                TEST(debug_info_inflating_past_the_limit_is_refused_with_names_kept),
                TEST(build_id_is_the_file_s_note_as_lowercase_hex),
                TEST(build_id_is_found_among_notes_and_refused_when_cut),
        };

        if (argc != 8) {
                fprintf(stderr, "usage: %s FIXTURE.so SPLIT.so NODEBUG.so FIXTURE.c ZSPLIT.so ZINLINE.so NOID.so\n",
                        argv[0]);
                return EXIT_FAILURE;
        }
        fixture_noid_path = argv[7];
        fixture_zsplit_path = argv[5];
        fixture_zinline_path = argv[6];
        fixture_path = argv[1];
        fixture_split_path = argv[2];
        fixture_nodebug_path = argv[3];
        fixture_source_path = argv[4];

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
