/* SPDX-License-Identifier: GPL-2.0-only */
/* The objects a program will map once it runs, found before it runs the way glibc's dynamic
 * loader finds them. Pure: files are opened through a callback (tests feed it fixture trees). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "elf-deps.h"
#include "ld-cache.h"

#define EXEC_PLAN_NO_LOADER SIZE_MAX

/* One file the open callback found and read. */
struct exec_plan_file {
        int fd;                 /* O_RDONLY|O_CLOEXEC, for placing uprobes; -1 in tests */
        uint64_t dev, ino;
        char *real_path;        /* symlinks resolved, as the program sees it; NULL: the path itself */
        struct elf_deps deps;
};

/* Open path (absolute, as the program will see it) and read its ELF dynamic information.
 * Returns 0 and fills *ret, -ENOENT when nothing is there (or not a regular file), -ENOEXEC when
 * it is not ELF; any other -errno. The loader skips a file that fails, or whose class or machine
 * differ from the program's, and keeps searching. */
typedef int (*exec_plan_open_fn)(void *userdata, const char *path, struct exec_plan_file *ret);

struct exec_plan_settings {
        const char *exe;                /* absolute path of the program, as it will see it */
        const char *cwd;                /* absolute: relative paths in the search are taken from it */
        const char *ld_library_path;    /* the program's LD_LIBRARY_PATH; NULL: unset */
        const char *ld_preload;         /* its LD_PRELOAD; NULL: unset */
        const char *preload_file;       /* the text of its /etc/ld.so.preload; NULL: none */
        const struct ld_cache *cache;   /* its /etc/ld.so.cache; NULL: none (conf_dirs stand in) */
        char *const *conf_dirs;         /* /etc/ld.so.conf's directories: searched only without a cache */
        size_t n_conf_dirs;
        char *const *default_dirs;      /* the loader's built-in directories */
        size_t n_default_dirs;
        const char *lib;                /* what $LIB expands to ("lib/x86_64-linux-gnu" on Debian) */
        const char *platform;           /* what $PLATFORM expands to (AT_PLATFORM: "x86_64", "haswell") */
};

struct planned_object {
        char *path;             /* as the program will see it, symlinks resolved: as /proc/PID/maps shows it */
        char *name;             /* what the loader opens it as (its l_name): $ORIGIN is this one's directory */
        char **aliases;         /* the names it was asked for by (DT_NEEDED, LD_PRELOAD) */
        size_t n_aliases;
        int fd;
        uint64_t dev, ino;
        struct elf_deps deps;
        bool is_executable;
        bool is_interpreter;
        size_t loader;          /* the object whose DT_NEEDED (or LD_PRELOAD: the executable) brought
                                 * it in; EXEC_PLAN_NO_LOADER for the executable and its interpreter */
};

struct exec_plan {
        struct planned_object *objects;         /* the executable first, then its interpreter, then in load order */
        size_t n;
        char **missing;         /* names the loader will not find (it refuses to start the program then,
                                 * or ignores a missing preload) */
        size_t n_missing;
};

/* Resolve every object the program maps at start: the executable, its PT_INTERP, the LD_PRELOAD
 * and /etc/ld.so.preload objects, then DT_NEEDED breadth first. A name without a slash is
 * searched in the DT_RPATH of the object that needs it and of the objects that loaded that one,
 * up to the executable (unless it has a DT_RUNPATH), LD_LIBRARY_PATH, its DT_RUNPATH, the cache,
 * then the default directories (these two unless DF_1_NODEFLIB); a file already planned (same
 * name, soname or inode) is not planned twice. Not followed: glibc-hwcaps and legacy hwcaps
 * subdirectories, and secure-execution (setuid) restrictions.
 * Fails with the callback's error when the executable or its interpreter cannot be opened
 * (*ret_failed_path says which, malloc'd). */
int exec_plan_resolve(const struct exec_plan_settings *s, exec_plan_open_fn open_file, void *userdata,
                      struct exec_plan *ret, char **ret_failed_path);
void exec_plan_done(struct exec_plan *p);

/* s with its dynamic string tokens expanded: $ORIGIN/${ORIGIN} to origin, $LIB and $PLATFORM.
 * NULL when s needs $ORIGIN and origin is NULL (the loader drops such an entry) or on ENOMEM. */
char *exec_plan_expand_dst(const char *s, const char *origin, const char *lib, const char *platform);

/* The directory part of path ("/a/b" -> "/a", "/a" -> "/"), as the loader computes $ORIGIN. */
char *exec_plan_dirname(const char *path);
