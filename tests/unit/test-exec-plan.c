/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/exec-plan.c, ld-cache.c and module-overlay.c: the objects a program will
 * map, found as glibc's loader finds them, in fixture directory trees (files exist or not on disk;
 * their ELF dynamic sections come from a table); ld.so.cache and ld.so.conf parsing; recorded
 * mappings laid over a module map. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "exec-plan.h"
#include "ld-cache.h"
#include "macro.h"
#include "util.h"
#include "module-overlay.h"
#include "test-util.h"

/* What a fixture file's dynamic section says. */
struct fake_elf {
        const char *path;               /* inside the fixture root */
        const char *soname, *rpath, *runpath, *interp;
        const char *needed[4];
        bool nodeflib;
        bool class32;
};

struct fixture {
        char root[PATH_MAX];
        const struct fake_elf *elves;
        size_t n_elves;
        unsigned opens;
};

static void mkdirs(const char *root, const char *path)
{
        char buf[PATH_MAX];

        snprintf(buf, sizeof(buf), "%s%s", root, path);
        for (char *p = buf + strlen(root) + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        mkdir(buf, 0755);
                        *p = '/';
                }
}

/* Create the fixture tree: every file in elves, plus extra_files (not ELF), under a fresh root. */
static void fixture_init(struct fixture *f, const struct fake_elf *elves, size_t n, const char *const *extra_files)
{
        char buf[PATH_MAX];

        snprintf(f->root, sizeof(f->root), "/tmp/test-exec-plan-XXXXXX");
        ASSERT_TRUE(mkdtemp(f->root));
        f->elves = elves;
        f->n_elves = n;
        f->opens = 0;
        for (size_t i = 0; i < n + 8; i++) {
                const char *path = i < n ? elves[i].path : extra_files ? extra_files[i - n] : NULL;

                if (!path)
                        break;
                mkdirs(f->root, path);
                snprintf(buf, sizeof(buf), "%s%s", f->root, path);
                close(open(buf, O_WRONLY | O_CREAT, 0755));
        }
}

static void fixture_link(const struct fixture *f, const char *target, const char *link)
{
        char buf[PATH_MAX];

        mkdirs(f->root, link);
        snprintf(buf, sizeof(buf), "%s%s", f->root, link);
        ASSERT_EQ(symlink(target, buf), 0);
}

static void fixture_done(struct fixture *f)
{
        char cmd[PATH_MAX + 16];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
        ASSERT_EQ(system(cmd), 0);
}

static char *maybe_strdup(const char *s)
{
        return s ? strdup(s) : NULL;
}

/* exec_plan_open_fn over the fixture: the file must exist on disk; its content is the table's. */
static int open_fixture(void *userdata, const char *path, struct exec_plan_file *ret)
{
        struct fixture *f = userdata;
        char full[PATH_MAX], real[PATH_MAX];
        struct stat st;
        size_t root_len = strlen(f->root);

        f->opens++;
        snprintf(full, sizeof(full), "%s%s", f->root, path);
        if (stat(full, &st) < 0 || !S_ISREG(st.st_mode))
                return -ENOENT;
        ASSERT_TRUE(realpath(full, real));
        ASSERT_EQ(strncmp(real, f->root, root_len), 0);
        for (size_t i = 0; i < f->n_elves; i++) {
                const struct fake_elf *e = &f->elves[i];
                struct exec_plan_file r = { .fd = -1, .dev = st.st_dev, .ino = st.st_ino };

                if (strcmp(e->path, real + root_len) != 0)
                        continue;
                r.real_path = strdup(real + root_len);
                r.deps.soname = maybe_strdup(e->soname);
                r.deps.rpath = maybe_strdup(e->rpath);
                r.deps.runpath = maybe_strdup(e->runpath);
                r.deps.interp = maybe_strdup(e->interp);
                r.deps.nodeflib = e->nodeflib;
                r.deps.elf_class = e->class32 ? ELFCLASS32 : ELFCLASS64;
                r.deps.machine = e->class32 ? EM_386 : EM_X86_64;
                for (size_t j = 0; j < ELEMENTSOF(e->needed) && e->needed[j]; j++) {
                        r.deps.needed = realloc(r.deps.needed, (j + 1) * sizeof(char *));
                        r.deps.needed[j] = strdup(e->needed[j]);
                        r.deps.n_needed = j + 1;
                }
                *ret = r;
                return 0;
        }
        return -ENOEXEC;
}

static char *const no_dirs[] = { NULL };

static struct exec_plan_settings settings(const char *exe)
{
        return (struct exec_plan_settings) {
                .exe = exe,
                .cwd = "/",
                .default_dirs = no_dirs,
                .n_default_dirs = 0,
                .lib = LD_DST_LIB,
                .platform = "haswell",
        };
}

static int resolve(struct fixture *f, const struct exec_plan_settings *s, struct exec_plan *plan)
{
        _cleanup_free_ char *failed = NULL;

        return exec_plan_resolve(s, open_fixture, f, plan, &failed);
}

/* The planned object at path, or abort. */
static const struct planned_object *object(const struct exec_plan *p, const char *path)
{
        for (size_t i = 0; i < p->n; i++)
                if (strcmp(p->objects[i].path, path) == 0)
                        return &p->objects[i];
        fprintf(stderr, "%s is not planned; planned:", path);
        for (size_t i = 0; i < p->n; i++)
                fprintf(stderr, " %s", p->objects[i].path);
        fprintf(stderr, "\n");
        abort();
}

static bool planned(const struct exec_plan *p, const char *path)
{
        for (size_t i = 0; i < p->n; i++)
                if (strcmp(p->objects[i].path, path) == 0)
                        return true;
        return false;
}

#define LDSO "/lib64/ld-linux-x86-64.so.2"
#define LDSO_ELF { .path = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", .soname = "ld-linux-x86-64.so.2" }

static void plan_follows_rpath_with_origin_through_the_loader_chain(void)
{
        static const struct fake_elf elves[] = {
                { .path = "/app/bin/prog", .interp = LDSO, .rpath = "$ORIGIN/../lib", .needed = { "liba.so" } },
                { .path = "/app/lib/liba.so", .soname = "liba.so", .needed = { "libb.so", "ld-linux-x86-64.so.2" } },
                { .path = "/app/lib/libb.so", .soname = "libb.so" },
                LDSO_ELF,
        };
        struct fixture f;
        _cleanup_(exec_plan_done) struct exec_plan plan = {};
        struct exec_plan_settings s = settings("/app/bin/prog");

        fixture_init(&f, elves, ELEMENTSOF(elves), NULL);
        fixture_link(&f, "../usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", LDSO);
        ASSERT_EQ(resolve(&f, &s, &plan), 0);
        ASSERT_EQ(plan.n, 4);
        ASSERT_EQ(plan.n_missing, 0);
        ASSERT_STREQ(plan.objects[0].path, "/app/bin/prog");
        ASSERT_TRUE(plan.objects[0].is_executable);
        /* the interpreter by its real path; libc-style DT_NEEDED on it finds it by soname */
        ASSERT_STREQ(plan.objects[1].path, "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2");
        ASSERT_TRUE(plan.objects[1].is_interpreter);
        /* libb.so: not in liba's (absent) RPATH but in the executable's, with $ORIGIN its dir */
        ASSERT_STREQ(plan.objects[2].path, "/app/lib/liba.so");
        ASSERT_STREQ(plan.objects[3].path, "/app/lib/libb.so");
        ASSERT_EQ(plan.objects[3].loader, 2);
        ASSERT_STREQ(plan.objects[3].name, "/app/bin/../lib/libb.so");
        fixture_done(&f);
}

static void plan_puts_ld_library_path_between_rpath_and_runpath_and_runpath_hides_rpath(void)
{
        static const struct fake_elf elves[] = {
                { .path = "/bin/prog", .rpath = "/r", .runpath = "/rp", .needed = { "libc2.so", "libd.so" } },
                { .path = "/r/libc2.so" },
                { .path = "/llp/libc2.so" },
                { .path = "/rp/libc2.so" },
                { .path = "/rp/libd.so", .needed = { "libe.so" } },
                { .path = "/rp/libe.so" },
        };
        struct fixture f;
        struct exec_plan_settings s = settings("/bin/prog");

        fixture_init(&f, elves, ELEMENTSOF(elves), NULL);
        {
                _cleanup_(exec_plan_done) struct exec_plan plan = {};

                s.ld_library_path = "/llp";
                ASSERT_EQ(resolve(&f, &s, &plan), 0);
                ASSERT_TRUE(planned(&plan, "/llp/libc2.so"));
                ASSERT_TRUE(!planned(&plan, "/r/libc2.so"));
        }
        {
                _cleanup_(exec_plan_done) struct exec_plan plan = {};

                s.ld_library_path = NULL;
                ASSERT_EQ(resolve(&f, &s, &plan), 0);
                /* DT_RPATH is ignored next to a DT_RUNPATH */
                ASSERT_TRUE(planned(&plan, "/rp/libc2.so"));
                ASSERT_TRUE(planned(&plan, "/rp/libd.so"));
                /* DT_RUNPATH serves only the object's own needs: libd.so's libe.so is not found */
                ASSERT_TRUE(!planned(&plan, "/rp/libe.so"));
                ASSERT_EQ(plan.n_missing, 1);
                ASSERT_STREQ(plan.missing[0], "libe.so");
        }
        fixture_done(&f);
}

static void plan_expands_origin_in_ld_library_path_and_reads_empty_entries_as_cwd(void)
{
        static const struct fake_elf elves[] = {
                { .path = "/app/bin/prog", .needed = { "libx.so", "liby.so" } },
                { .path = "/work/libx.so" },
                { .path = "/app/plugins/liby.so" },
        };
        struct fixture f;
        _cleanup_(exec_plan_done) struct exec_plan plan = {};
        struct exec_plan_settings s = settings("/app/bin/prog");

        fixture_init(&f, elves, ELEMENTSOF(elves), NULL);
        s.cwd = "/work";
        s.ld_library_path = "${ORIGIN}/../plugins::/nothere;";
        ASSERT_EQ(resolve(&f, &s, &plan), 0);
        ASSERT_EQ(plan.n_missing, 0);
        ASSERT_TRUE(planned(&plan, "/work/libx.so"));
        ASSERT_TRUE(planned(&plan, "/app/plugins/liby.so"));
        fixture_done(&f);
}

static void plan_uses_the_cache_then_default_dirs_unless_nodeflib(void)
{
        static const struct fake_elf elves[] = {
                { .path = "/bin/prog", .needed = { "libz.so.1", "libw.so", "libn.so" } },
                { .path = "/cached/libz.so.1" },
                { .path = "/usr/lib/x86_64-linux-gnu/libz.so.1" },
                { .path = "/usr/lib/libw.so" },
                { .path = "/opt/n/libn.so", .nodeflib = true, .needed = { "libw2.so" } },
                { .path = "/usr/lib/libw2.so" },
                { .path = "/conf/libw.so" },
        };
        static char *const defaults[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib" };
        static char *const conf[] = { "/conf" };
        struct ld_cache_entry entries[] = { { "libz.so.1", "/cached/libz.so.1" } };
        struct ld_cache cache = { .entries = entries, .n = 1 };
        struct fixture f;
        struct exec_plan_settings s = settings("/bin/prog");

        fixture_init(&f, elves, ELEMENTSOF(elves), NULL);
        s.default_dirs = defaults;
        s.n_default_dirs = ELEMENTSOF(defaults);
        s.ld_library_path = "/opt/n";
        {
                _cleanup_(exec_plan_done) struct exec_plan plan = {};

                s.cache = &cache;
                s.conf_dirs = conf;     /* with a cache, ld.so.conf is not read */
                s.n_conf_dirs = 1;
                ASSERT_EQ(resolve(&f, &s, &plan), 0);
                ASSERT_TRUE(planned(&plan, "/cached/libz.so.1"));
                ASSERT_TRUE(planned(&plan, "/usr/lib/libw.so"));
                ASSERT_TRUE(planned(&plan, "/opt/n/libn.so"));
                /* libn.so has DF_1_NODEFLIB: its libw2.so is not looked for in the default dirs */
                ASSERT_TRUE(!planned(&plan, "/usr/lib/libw2.so"));
                ASSERT_EQ(plan.n_missing, 1);
                ASSERT_STREQ(plan.missing[0], "libw2.so");
        }
        {
                _cleanup_(exec_plan_done) struct exec_plan plan = {};

                s.cache = NULL;         /* no cache: ld.so.conf's dirs stand in for it */
                ASSERT_EQ(resolve(&f, &s, &plan), 0);
                ASSERT_TRUE(planned(&plan, "/usr/lib/x86_64-linux-gnu/libz.so.1"));
                ASSERT_TRUE(planned(&plan, "/conf/libw.so"));
        }
        fixture_done(&f);
}

static void plan_preloads_first_and_maps_a_file_once_by_soname_or_inode(void)
{
        static const struct fake_elf elves[] = {
                { .path = "/bin/prog", .needed = { "libq.so.1", "libalias.so" } },
                { .path = "/pre/libpre.so", .soname = "libpre.so", .needed = { "libq.so.1" } },
                { .path = "/usr/lib/libp2.so.2", .soname = "libp2.so" },
                { .path = "/usr/lib/libq.so.1.2.3", .soname = "libq.so.1" },
        };
        static char *const defaults[] = { "/usr/lib" };
        struct fixture f;
        _cleanup_(exec_plan_done) struct exec_plan plan = {};
        struct exec_plan_settings s = settings("/bin/prog");

        fixture_init(&f, elves, ELEMENTSOF(elves), NULL);
        fixture_link(&f, "libq.so.1.2.3", "/usr/lib/libq.so.1");
        fixture_link(&f, "libq.so.1.2.3", "/usr/lib/libalias.so");
        fixture_link(&f, "libp2.so.2", "/usr/lib/libp2.so");
        s.default_dirs = defaults;
        s.n_default_dirs = 1;
        s.ld_preload = "/pre/libpre.so:libmissing.so";
        s.preload_file = "libp2.so\n";
        ASSERT_EQ(resolve(&f, &s, &plan), 0);
        ASSERT_EQ(plan.n, 4);
        ASSERT_STREQ(plan.objects[1].path, "/pre/libpre.so");
        ASSERT_STREQ(plan.objects[2].path, "/usr/lib/libp2.so.2");
        /* the executable's needs come before the preloads' */
        ASSERT_STREQ(plan.objects[3].path, "/usr/lib/libq.so.1.2.3");
        ASSERT_EQ(plan.objects[3].loader, 0);
        /* a second name for the same inode is an alias, not a second object */
        ASSERT_EQ(object(&plan, "/usr/lib/libq.so.1.2.3")->n_aliases, 2);
        ASSERT_EQ(plan.n_missing, 1);
        ASSERT_STREQ(plan.missing[0], "libmissing.so");
        fixture_done(&f);
}

static void plan_skips_objects_of_another_class_and_files_that_are_not_elf(void)
{
        static const struct fake_elf elves[] = {
                { .path = "/bin/prog", .needed = { "libk.so" } },
                { .path = "/a/libk.so", .class32 = true },
                { .path = "/c/libk.so" },
        };
        static const char *const not_elf[] = { "/b/libk.so", NULL };
        struct fixture f;
        _cleanup_(exec_plan_done) struct exec_plan plan = {};
        struct exec_plan_settings s = settings("/bin/prog");

        fixture_init(&f, elves, ELEMENTSOF(elves), not_elf);
        s.ld_library_path = "/a:/b:/c";
        ASSERT_EQ(resolve(&f, &s, &plan), 0);
        ASSERT_TRUE(planned(&plan, "/c/libk.so"));
        ASSERT_EQ(plan.n, 2);
        fixture_done(&f);
}

static void plan_fails_on_a_missing_program_or_interpreter(void)
{
        static const struct fake_elf elves[] = {
                { .path = "/bin/prog", .interp = "/lib/ld-missing.so" },
        };
        static const char *const not_elf[] = { "/bin/script", NULL };
        struct fixture f;
        struct exec_plan plan = {};
        struct exec_plan_settings s = settings("/bin/nothing");
        char *failed = NULL;

        fixture_init(&f, elves, ELEMENTSOF(elves), not_elf);
        ASSERT_EQ(exec_plan_resolve(&s, open_fixture, &f, &plan, &failed), -ENOENT);
        ASSERT_STREQ(failed, "/bin/nothing");
        free(failed);
        s.exe = "/bin/script";
        ASSERT_EQ(exec_plan_resolve(&s, open_fixture, &f, &plan, &failed), -ENOEXEC);
        free(failed);
        s.exe = "/bin/prog";
        ASSERT_EQ(exec_plan_resolve(&s, open_fixture, &f, &plan, &failed), -ENOENT);
        ASSERT_STREQ(failed, "/lib/ld-missing.so");
        free(failed);
        ASSERT_EQ(plan.n, 0);
        fixture_done(&f);
}

static void expand_dst_knows_origin_lib_and_platform(void)
{
        struct { const char *in, *origin, *out; } cases[] = {
                { "$ORIGIN/../lib", "/app/bin", "/app/bin/../lib" },
                { "${ORIGIN}/x:$ORIGIN", "/o", "/o/x:/o" },
                { "/usr/$LIB/${PLATFORM}", NULL, "/usr/lib/x86_64-linux-gnu/haswell" },
                { "$ORIGINAL/$HOME", NULL, "$ORIGINAL/$HOME" },     /* not tokens */
                { "$ORIGIN/x", NULL, NULL },                        /* dropped, as the loader does */
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *out = exec_plan_expand_dst(cases[i].in, cases[i].origin, LD_DST_LIB, "haswell");

                if (!cases[i].out)
                        ASSERT_TRUE(!out);
                else
                        ASSERT_STREQ(out, cases[i].out);
        }
        {
                _cleanup_free_ char *a = exec_plan_dirname("/a/b"), *b = exec_plan_dirname("/a"),
                                    *c = exec_plan_dirname("rel");
                ASSERT_STREQ(a, "/a");
                ASSERT_STREQ(b, "/");
                ASSERT_STREQ(c, ".");
        }
}

/* A new-format cache with the given entries ({flags, hwcap, name, path}). */
struct cache_spec {
        int32_t flags;
        uint64_t hwcap;
        const char *name, *path;
};

static size_t build_cache(char *buf, size_t size, const struct cache_spec *specs, size_t n, size_t prefix)
{
        size_t header = 48, strings = prefix + header + n * 24, off = strings;

        memset(buf, 0, size);
        memcpy(buf + prefix, "glibc-ld.so.cache1.1", 20);
        memcpy(buf + prefix + 20, &(uint32_t){ (uint32_t)n }, 4);
        for (size_t i = 0; i < n; i++) {
                char *e = buf + prefix + header + i * 24;
                uint32_t key = (uint32_t)(off - prefix), value;

                strcpy(buf + off, specs[i].name);
                off += strlen(specs[i].name) + 1;
                value = (uint32_t)(off - prefix);
                strcpy(buf + off, specs[i].path);
                off += strlen(specs[i].path) + 1;
                memcpy(e, &specs[i].flags, 4);
                memcpy(e + 4, &key, 4);
                memcpy(e + 8, &value, 4);
                memcpy(e + 16, &specs[i].hwcap, 8);
        }
        return off;
}

static void ld_cache_keeps_x86_64_baseline_entries_in_order(void)
{
        static const struct cache_spec specs[] = {
                { 0x0303, 1ULL << 62, "libm.so.6", "/usr/lib/glibc-hwcaps/x86-64-v3/libm.so.6" },
                { 0x0303, 0, "libm.so.6", "/lib/x86_64-linux-gnu/libm.so.6" },
                { 0x0003, 0, "libm.so.6", "/lib32/libm.so.6" },
                { 0x0303, 0, "libm.so.6", "/usr/local/lib/libm.so.6" },
        };
        char buf[4096];
        size_t n = build_cache(buf, sizeof(buf), specs, ELEMENTSOF(specs), 0);

        {
                _cleanup_(ld_cache_done) struct ld_cache c = {};

                ASSERT_EQ(ld_cache_parse(buf, n, &c), 0);
                ASSERT_EQ(c.n, 2);
                ASSERT_STREQ(ld_cache_lookup(&c, "libm.so.6"), "/lib/x86_64-linux-gnu/libm.so.6");
                ASSERT_TRUE(!ld_cache_lookup(&c, "libnope.so"));
        }
        {
                /* after an old-format table of two entries: 16 + 2 * 12 bytes, 8-aligned */
                _cleanup_(ld_cache_done) struct ld_cache c = {};

                n = build_cache(buf, sizeof(buf), specs, ELEMENTSOF(specs), 40);
                memcpy(buf, "ld.so-1.7.0", 11);
                memcpy(buf + 12, &(uint32_t){ 2 }, 4);
                ASSERT_EQ(ld_cache_parse(buf, n, &c), 0);
                ASSERT_EQ(c.n, 2);
        }
        {
                struct ld_cache c = {};

                ASSERT_EQ(ld_cache_parse(buf, 30, &c), -EBADMSG);
                n = build_cache(buf, sizeof(buf), specs, ELEMENTSOF(specs), 0);
                memcpy(buf + 20, &(uint32_t){ 1000 }, 4);  /* more entries than the file holds */
                ASSERT_EQ(ld_cache_parse(buf, n, &c), -EBADMSG);
                n = build_cache(buf, sizeof(buf), specs, ELEMENTSOF(specs), 0);
                memcpy(buf + 48 + 24 + 4, &(uint32_t){ 4000 }, 4); /* a name past the end */
                ASSERT_EQ(ld_cache_parse(buf, n, &c), -EBADMSG);
        }
        {
                /* this system's own cache names its libc */
                _cleanup_(ld_cache_done) struct ld_cache c = {};
                const char *libc;

                ASSERT_EQ(ld_cache_read(AT_FDCWD, &c), 0);
                libc = ld_cache_lookup(&c, "libc.so.6");
                ASSERT_TRUE(libc);
                ASSERT_STREQ(strrchr(libc, '/'), "/libc.so.6");
                ASSERT_TRUE(strstr(libc, "x86_64") != NULL);
        }
}

static void write_file(const char *root, const char *path, const char *text)
{
        char buf[PATH_MAX];
        FILE *f;

        mkdirs(root, path);
        snprintf(buf, sizeof(buf), "%s%s", root, path);
        f = fopen(buf, "we");
        ASSERT_TRUE(f);
        fputs(text, f);
        fclose(f);
}

static void ld_conf_follows_includes_in_order(void)
{
        struct fixture f;
        char **dirs = NULL, path[PATH_MAX + 64];
        size_t n = 0;
        int root_fd;

        fixture_init(&f, NULL, 0, NULL);
        write_file(f.root, "/etc/ld.so.conf", "# comment\ninclude /etc/ld.so.conf.d/*.conf\n/usr/local/lib  # trailing\n"
                   "include rel.d/*.conf\nhwcap 1 foo\n");
        write_file(f.root, "/etc/ld.so.conf.d/b.conf", "/opt/b=libc6\n");
        write_file(f.root, "/etc/ld.so.conf.d/a.conf", "/opt/a, /opt/a2\n");
        write_file(f.root, "/etc/rel.d/r.conf", "/opt/r\n");
        /* A FIFO where a file is expected is skipped, not waited on for ever; an absolute symlink
         * resolves inside the root, as the process whose root it is sees it. */
        snprintf(path, sizeof(path), "%s/etc/ld.so.conf.d/c.conf", f.root);
        ASSERT_EQ(mkfifo(path, 0600), 0);
        snprintf(path, sizeof(path), "%s/etc/ld.so.conf.d/d.conf", f.root);
        ASSERT_EQ(symlink("/etc/inside.conf", path), 0);
        write_file(f.root, "/etc/inside.conf", "/opt/inside\n");
        root_fd = open(f.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        ASSERT_TRUE(root_fd >= 0);
        ASSERT_EQ(ld_cache_read_conf_dirs(root_fd, &dirs, &n), 0);
        ASSERT_EQ(n, 6);
        ASSERT_STREQ(dirs[0], "/opt/a");
        ASSERT_STREQ(dirs[1], "/opt/a2");
        ASSERT_STREQ(dirs[2], "/opt/b");
        ASSERT_STREQ(dirs[3], "/opt/inside");
        ASSERT_STREQ(dirs[4], "/usr/local/lib");
        ASSERT_STREQ(dirs[5], "/opt/r");
        strv_free_n(dirs, n);
        close(root_fd);
        fixture_done(&f);
}

static const char *path_of(void *userdata, uint64_t dev, uint64_t ino)
{
        return ino == 1 ? "/x.so" : ino == 2 ? "/y.so" : NULL;
}

static void overlay_lays_newer_mappings_over_older_ones(void)
{
        struct module_mapping base[] = {
                { .start = 0x1000, .end = 0x5000, .pgoff = 0, .dev = 7, .ino = 1, .path = strdup("/x.so") },
                { .start = 0x9000, .end = 0xa000, .pgoff = 0, .dev = 7, .ino = 9, .path = strdup("/gone.so") },
        };
        struct module_map mm = { .mappings = malloc(sizeof(base)), .n = 2 };
        struct recorded_mapping rec[] = {
                { .start = 0x20000, .end = 0x21000, .dev = 7, .ino = 2, .mm = 1, .timestamp_ns = 1 },   /* older program */
                { .start = 0x2000, .end = 0x3000, .pgoff = 0x10000, .dev = 7, .ino = 2, .mm = 2, .timestamp_ns = 5 },
                { .start = 0x9000, .end = 0xa000, .dev = 7, .ino = 3, .mm = 2, .timestamp_ns = 6 },    /* unnamed */
                { .start = 0xb000, .end = 0xc000, .pgoff = 0x1000, .dev = 7, .ino = 1, .mm = 2, .timestamp_ns = 4 },
        };
        size_t n;

        memcpy(mm.mappings, base, sizeof(base));
        n = module_overlay_latest(rec, ELEMENTSOF(rec));
        ASSERT_EQ(n, 3);
        ASSERT_EQ(rec[0].timestamp_ns, 4);
        ASSERT_EQ(module_overlay_apply(&mm, rec, n, path_of, NULL), 0);
        ASSERT_EQ(mm.n, 4);
        ASSERT_EQ(mm.mappings[0].start, 0x1000);
        ASSERT_EQ(mm.mappings[0].end, 0x2000);
        ASSERT_STREQ(mm.mappings[1].path, "/y.so");
        ASSERT_EQ(mm.mappings[1].pgoff, 0x10000);
        /* the part of x.so after y.so keeps its own file offsets */
        ASSERT_EQ(mm.mappings[2].start, 0x3000);
        ASSERT_EQ(mm.mappings[2].pgoff, 0x2000);
        ASSERT_STREQ(mm.mappings[2].path, "/x.so");
        /* /gone.so was covered by a file nobody can name: it is cleared, not kept */
        ASSERT_EQ(mm.mappings[3].start, 0xb000);
        ASSERT_EQ(mm.mappings[3].pgoff, 0x1000);
        for (size_t i = 0; i < mm.n; i++)
                ASSERT_TRUE(!(mm.mappings[i].start <= 0x9800 && 0x9800 < mm.mappings[i].end));
        for (size_t i = 0; i < mm.n; i++)
                free(mm.mappings[i].path);
        free(mm.mappings);
}

static void overlay_keeps_what_it_does_not_cover(void)
{
        struct module_map mm = { .mappings = calloc(1, sizeof(struct module_mapping)), .n = 1 };
        struct module_map empty = {};

        /* a data segment stays marked as no code through an overlay that does not touch it */
        mm.mappings[0] = (struct module_mapping) { .start = 0x1000, .end = 0x2000, .dev = 7, .ino = 1,
                                                   .path = strdup("/x.so"), .not_code = true };
        ASSERT_EQ(module_overlay_apply(&mm, NULL, 0, path_of, NULL), 0);
        ASSERT_EQ(mm.n, 1);
        ASSERT_TRUE(mm.mappings[0].not_code);
        free(mm.mappings[0].path);
        free(mm.mappings);
        /* nothing over nothing (a process that exited before its maps were read) */
        ASSERT_EQ(module_overlay_apply(&empty, NULL, 0, path_of, NULL), 0);
        ASSERT_EQ(empty.n, 0);
        free(empty.mappings);
}

static void overlay_skips_mappings_recorded_before_the_maps_were_read(void)
{
        /* the loader mapped /y.so for a moment (as ld.so.cache) and unmapped it; JIT code took its
         * addresses; then the maps were read: they have the JIT code, and /y.so may not come back */
        struct module_map mm = { .mappings = calloc(1, sizeof(struct module_mapping)), .n = 1, .read_ns = 100 };
        struct address_range jit = { .start = 0x5000, .end = 0x6000 };
        struct recorded_mapping rec[] = {
                { .start = 0x5000, .end = 0x7000, .dev = 7, .ino = 2, .mm = 1, .timestamp_ns = 50 },
                { .start = 0x8000, .end = 0x9000, .pgoff = 0x3000, .dev = 7, .ino = 1, .mm = 1, .timestamp_ns = 150 },
        };

        mm.mappings[0] = (struct module_mapping) { .start = 0x1000, .end = 0x2000, .dev = 7, .ino = 1,
                                                   .path = strdup("/x.so") };
        mm.anon_code = &jit;
        mm.n_anon_code = 1;
        ASSERT_EQ(module_overlay_apply(&mm, rec, ELEMENTSOF(rec), path_of, NULL), 0);
        /* the one mapped after the read is laid on */
        ASSERT_EQ(mm.n, 2);
        ASSERT_EQ(mm.mappings[0].start, 0x1000);
        ASSERT_EQ(mm.mappings[1].start, 0x8000);
        ASSERT_EQ(mm.mappings[1].pgoff, 0x3000);
        ASSERT_TRUE(module_map_find(&mm, 0x5800) == NULL);
        ASSERT_EQ(mm.read_ns, 100);
        for (size_t i = 0; i < mm.n; i++)
                free(mm.mappings[i].path);
        free(mm.mappings);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(plan_follows_rpath_with_origin_through_the_loader_chain),
                TEST(overlay_keeps_what_it_does_not_cover),
                TEST(plan_puts_ld_library_path_between_rpath_and_runpath_and_runpath_hides_rpath),
                TEST(plan_expands_origin_in_ld_library_path_and_reads_empty_entries_as_cwd),
                TEST(plan_uses_the_cache_then_default_dirs_unless_nodeflib),
                TEST(plan_preloads_first_and_maps_a_file_once_by_soname_or_inode),
                TEST(plan_skips_objects_of_another_class_and_files_that_are_not_elf),
                TEST(plan_fails_on_a_missing_program_or_interpreter),
                TEST(expand_dst_knows_origin_lib_and_platform),
                TEST(ld_cache_keeps_x86_64_baseline_entries_in_order),
                TEST(ld_conf_follows_includes_in_order),
                TEST(overlay_lays_newer_mappings_over_older_ones),
                TEST(overlay_skips_mappings_recorded_before_the_maps_were_read),
        };

        return run_unit_tests(tests, ELEMENTSOF(tests));
}
