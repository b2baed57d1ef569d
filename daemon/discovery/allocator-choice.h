/* SPDX-License-Identifier: GPL-2.0-only */
/* Which mapped object's malloc serves a process: the first object defining the allocation
 * functions in the dynamic loader's global lookup order (pure: the caller reads the files). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "alloc-sites.h"
#include "elf-deps.h"

/* One ELF object a process maps, as the caller examined it. */
struct examined_object {
        const char *path;               /* as the process sees it */
        bool is_executable;             /* the process's main program */
        const struct elf_deps *deps;    /* its DT_SONAME and DT_NEEDED */
        const struct alloc_sites *sites;
};

struct allocator_choice {
        size_t object;          /* index of the object whose allocator serves the process */
        const char *allocator;  /* "glibc", "tcmalloc", "jemalloc", "mimalloc", "musl", or "other" */
        bool is_static;         /* linked into the executable itself */
        char *reason;           /* malloc'd: why this one, for the attach reply and status */
};

/* The loader's global lookup order is the executable, then the LD_PRELOAD objects (preload[],
 * names or paths, in order), then the executable's DT_NEEDED entries breadth-first; the first
 * object there defining malloc & co wins (an object only dlopen()ed is not in that order, its
 * malloc serves nobody else). Falls back to the first object defining them when the order
 * cannot be followed (no executable among objs). Returns -ENOENT when no object defines any. */
int allocator_choice_find(const struct examined_object *objs, size_t n, char *const *preload, size_t n_preload,
                     struct allocator_choice *ret);
void allocator_choice_done(struct allocator_choice *c);

/* Split an LD_PRELOAD value (separated by spaces or colons) into names; malloc'd array of
 * malloc'd strings in *ret, count in *n. */
int allocator_choice_split_preload(const char *value, char ***ret, size_t *n);
