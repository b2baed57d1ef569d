/* SPDX-License-Identifier: GPL-2.0-only */
/* Symbolizer: file offset inside a mapped ELF file → function+offset and source file:line, for
 * every file the targets map, within bounds a traced process cannot push it past: open files
 * (fds) and the memory of inflated debug sections are capped (least recently used closed first),
 * files are shared by build ID, and each is released with the last target that used it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

/* Files known at once (each a few dozen bytes; their symbols open or not). */
#define SYMBOLIZER_MODULES_MAX 65536U
/* Resolved addresses cached per file; past this, lookups still work but are not cached. */
#define SYMBOLIZER_CACHE_PER_MODULE_MAX 65536U

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
};      /* strings are owned by the symbolizer: they live as long as the module they come from, and
         * at least until symbolizer_read_end() */

struct symbolizer_limits {
        unsigned max_open_files;        /* files open for lookups at once (an fd and a mapping each) */
        uint64_t max_bytes;             /* inflated debug sections the open files may hold */
        uint64_t max_section_bytes;     /* one compressed section inflating past this: the file's
                                         * DWARF is refused (names from its symbol table only) */
};

/* Where a file can be opened again once it was closed to stay within the limits: the process
 * that maps it and how (module_map_open_file()). */
struct symbol_source {
        pid_t pid;
        const char *path;               /* as pid sees it */
        uint64_t start, end;            /* a mapping of it, or start == end */
};

/* Reopen file (dev, ino) from src; returns an O_RDONLY fd or -errno. */
typedef int (*symbolizer_reopen_fn)(void *userdata, uint64_t dev, uint64_t ino, const struct symbol_source *src);
/* Something operators should hear about (a file refused as too large to symbolize). */
typedef void (*symbolizer_note_fn)(void *userdata, const char *message);

struct symbolizer_settings {
        struct symbolizer_limits limits;
        symbolizer_reopen_fn reopen;    /* NULL: a closed file stays closed */
        symbolizer_note_fn note;        /* NULL: say nothing */
        void *userdata;
};

struct symbolizer_stats {
        unsigned files;                 /* (dev, ino) known */
        unsigned images;                /* distinct files by build ID */
        unsigned open;                  /* of those, open now */
        unsigned max_open;              /* the limit in effect */
        uint64_t open_bytes;            /* inflated debug sections they hold */
        uint64_t cache_bytes;           /* cached resolutions and names */
        uint64_t closed_for_limits;     /* files closed to stay within max_open_files/max_bytes */
        uint64_t reopened;
        uint64_t reopen_failed;         /* their frames stayed unresolved */
        uint64_t refused;               /* debug info or files refused as too large */
};

/* settings NULL: built-in defaults. */
int symbolizer_new(const struct symbolizer_settings *settings, struct symbolizer **ret);
struct symbolizer *symbolizer_free(struct symbolizer *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct symbolizer *, symbolizer_free)

/* Change the limits (a config reload); files over them are closed now. */
void symbolizer_set_limits(struct symbolizer *s, const struct symbolizer_limits *limits);

/* Whether (dev, ino) is registered (ELF, or refused): lets callers skip opening it again. */
bool symbolizer_has_module(struct symbolizer *s, uint64_t dev, uint64_t ino);

/* Register the file open on fd (O_RDONLY; it is duplicated, the caller keeps its own) as module
 * (dev, ino), taking a reference that symbolizer_release_module() gives back. path is the file's
 * name as the target sees it: shown to users and used to find its separate debug info. src (may
 * be NULL) says where to open it again. A known (dev, ino) just gets another reference.
 * Returns 0; -ENOEXEC for a file that is not a loadable ELF file and -EFBIG for one refused as
 * too large to symbolize (both registered and referenced too, so they are not opened again);
 * other errors register nothing (-ENOSPC past SYMBOLIZER_MODULES_MAX). */
int symbolizer_add_module(struct symbolizer *s, uint64_t dev, uint64_t ino, int fd, const char *path,
                          const struct symbol_source *src);
void symbolizer_release_module(struct symbolizer *s, uint64_t dev, uint64_t ino);

/* Resolves file_offset (addr - map start + map pgoff) inside module (dev, ino) into at most
 * max frames, innermost first, stored in frames[]; *n_frames is how many (at least 1 when max
 * >= 1: an address no symbol covers, or in a file that cannot be opened again, is one frame with
 * symbol == NULL). With is_return_address, functions and lines are those of the call instruction
 * before it (address - 1), while offset still counts to the address itself, as debuggers print
 * frames. Inlined frames come from the DWARF inline scopes: each one's line is where the next
 * inner one was called from. Returns -ENOENT for an unknown (or not ELF) module. */
int symbolizer_resolve(struct symbolizer *s, uint64_t dev, uint64_t ino, uint64_t file_offset,
                       bool is_return_address, struct symbol_frame *frames, size_t max, size_t *n_frames);

/* The GNU build ID of module (dev, ino) as lowercase hex, computed once when the file was
 * registered; NULL when it has none, is not registered or is not ELF. Owned by the symbolizer,
 * valid as resolved names are. */
const char *symbolizer_build_id(struct symbolizer *s, uint64_t dev, uint64_t ino);

void symbolizer_get_stats(struct symbolizer *s, struct symbolizer_stats *ret);

/* The symbolizer may be used from two threads (the event loop registers and releases, the worker
 * resolves): every call takes its lock. Names resolved between read_begin and read_end stay
 * valid until read_end, whatever is released meanwhile. */
void symbolizer_read_begin(struct symbolizer *s);
void symbolizer_read_end(struct symbolizer *s);

/* "LeakLib::slowMemoryLeak()" for C++ and "alloc::boxed::Box<T>::leak" for Rust (legacy and v0
 * manglings, hash suffix dropped); NULL when name is not a mangled name. malloc'd. */
char *symbolizer_demangle(const char *name);
