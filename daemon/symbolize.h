/* SPDX-License-Identifier: GPL-2.0-only */
/* Symbolizer: file offset inside a mapped ELF file → function+offset and source file:line. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* Each module holds one open fd and one mapping of its file, so the count is capped. */
#define SYMBOLIZER_MODULES_MAX 8192U
/* Resolved addresses cached per module; past this, lookups still work but are not cached. */
#define SYMBOLIZER_CACHE_PER_MODULE_MAX 65536U

/* A cache of opened modules, keyed by (dev, inode). */
struct symbolizer;

/* Inlined calls deeper than this at one address are cut (the outermost frames are kept). */
#define SYMBOLIZER_INLINE_DEPTH_MAX 16U
/* Most frames one address can resolve to: its inlined calls and the function holding them. */
#define SYMBOLIZER_FRAMES_MAX (SYMBOLIZER_INLINE_DEPTH_MAX + 1)

/* One source-level frame at an address. An address inside inlined code resolves to several:
 * the innermost inlined function first, the function that holds the machine code last. */
struct symbol_frame {
        const char *symbol;     /* demangled (C++, Rust); NULL if nothing names it */
        bool has_offset;        /* offset is meaningful: the holding function's symbol */
        uint64_t offset;        /* address - symbol start */
        bool inlined;           /* an inlined call, not a real frame of its own */
        const char *file;       /* source file, NULL without debug info */
        int line;               /* 0 when unknown */
};      /* strings are owned by the symbolizer and live until symbolizer_free() */

int symbolizer_new(struct symbolizer **ret);
struct symbolizer *symbolizer_free(struct symbolizer *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct symbolizer *, symbolizer_free)

/* Registers the ELF file open on fd (O_RDONLY; it is duplicated, the caller keeps its own) as
 * module (dev, ino). path is the file's name as the target sees it: it is shown to users and
 * used to look for separate debug info (.gnu_debuglink next to it, /usr/lib/debug).
 * Registering a known (dev, ino) again is a no-op returning 0. Returns -ENOEXEC if the file is
 * not a loadable ELF file (ET_EXEC or ET_DYN), -ENOSPC past SYMBOLIZER_MODULES_MAX. */
/* Whether (dev, ino) was registered, or refused as not ELF: lets callers skip opening it again. */
bool symbolizer_has_module(struct symbolizer *s, uint64_t dev, uint64_t ino);

int symbolizer_add_module(struct symbolizer *s, uint64_t dev, uint64_t ino, int fd, const char *path);

/* Resolves file_offset (addr - map start + map pgoff) inside module (dev, ino) into at most
 * max frames, innermost first, stored in frames[]; *n_frames is how many (at least 1 when max
 * >= 1: an address no symbol covers is one frame with symbol == NULL). With is_return_address,
 * functions and lines are those of the call instruction before it (address - 1), while offset
 * still counts to the address itself, as debuggers print frames. Inlined frames come from the
 * DWARF inline scopes: each one's line is where the next inner one was called from.
 * Returns -ENOENT for an unknown module. */
int symbolizer_resolve(struct symbolizer *s, uint64_t dev, uint64_t ino, uint64_t file_offset,
                       bool is_return_address, struct symbol_frame *frames, size_t max, size_t *n_frames);

/* "LeakLib::slowMemoryLeak()" for C++ and "alloc::boxed::Box<T>::leak" for Rust (legacy and v0
 * manglings, hash suffix dropped); NULL when name is not a mangled name. malloc'd. */
char *symbol_demangle(const char *name);
