/* SPDX-License-Identifier: GPL-2.0-only */
/* What examining an object file found (its allocator entry points and where to probe them, its
 * dependencies), kept by file identity: a process forked by a followed target, or a second
 * process of the same program, is attached without reading the same files again. Bounded (the
 * oldest entry goes first); safe to share between threads. */
#pragma once

#include <stddef.h>
#include <sys/stat.h>
#include "alloc-sites.h"
#include "elf-deps.h"
#include "macro.h"

struct object_cache;

#define OBJECT_CACHE_ENTRIES 256

int object_cache_new(struct object_cache **ret);
struct object_cache *object_cache_free(struct object_cache *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct object_cache *, object_cache_free)

/* Copies of what the file st identifies (device, inode, size, change and modification times) was
 * found to hold: 1, 0 when it is not cached, -ENOMEM. */
int object_cache_get(struct object_cache *c, const struct stat *st, struct alloc_sites *sites,
                     struct elf_deps *deps);
/* Keep copies (replacing what the same file had): 0, -ENOMEM. */
int object_cache_put(struct object_cache *c, const struct stat *st, const struct alloc_sites *sites,
                     const struct elf_deps *deps);
/* Entries held. */
size_t object_cache_size(struct object_cache *c);
