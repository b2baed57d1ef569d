/* SPDX-License-Identifier: GPL-2.0-only */
/* Look at every ELF object a process maps (or, before an exec, will map): which allocator entry
 * points each defines, what it needs, whether it is the main program; then which allocator serves
 * the process. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "allocator-choice.h"
#include "module-map.h"

struct discovered_object {
        char *path;             /* as the process sees it */
        uint64_t dev, ino;
        int fd;                 /* open on the file, for placing uprobes */
        bool is_executable;
        struct alloc_sites sites;
        struct elf_deps deps;
};

struct discovery {
        struct discovered_object *objects;
        size_t n;
};

/* Examine the distinct files in mm (skipping any whose (dev, ino) skip() says were seen, when
 * skip is set): those that are not ELF or cannot be opened are left out. What a file holds is
 * taken from cache when it is there, and kept there (cache may be NULL). */
struct object_cache;
int discovery_examine(struct object_cache *cache, pid_t pid, const struct module_map *mm,
                      bool (*skip)(void *userdata, uint64_t dev, uint64_t ino), void *userdata,
                      struct discovery *ret);

/* What the program pid runs is when it is not x86-64 (elf_file_foreign_abi() of /proc/PID/exe's
 * header): NULL for x86-64, or when it cannot be read (the attach then says what is wrong). */
const char *discovery_foreign_process(pid_t pid);

/* Examine the objects the program at exe will map once pid execs it (pid is held before its
 * exec: its root, working directory and environment are the program's), found as the dynamic
 * loader will find them (exec-plan.h). -ENOEXEC when exe (or its interpreter) is not an ELF
 * program, -ENOENT when it does not exist; *error says which, malloc'd. */
int discovery_plan_exec(pid_t pid, const char *exe, struct discovery *ret, char **error);

/* The allocator serving pid among d's objects (LD_PRELOAD read from its environment and its
 * /etc/ld.so.preload). -ENOENT when none defines malloc & co. */
int discovery_choose(pid_t pid, const struct discovery *d, struct allocator_choice *ret);

void discovery_done(struct discovery *d);
