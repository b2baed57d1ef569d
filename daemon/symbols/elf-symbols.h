/* SPDX-License-Identifier: GPL-2.0-only */
/* One ELF file open for symbolization with libdwfl: file offset → function+offset, inlined
 * calls, source file:line; its separate debug file found safely (debuginfo.h). */
#pragma once

#include <stdbool.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>
#include "elf-inspect.h"
#include "string-set.h"
#include "symbolizer.h"

struct elf_symbols;

struct elf_symbols_params {
        const char *path;               /* the file's name as the target sees it: shown, and
                                         * where its .gnu_debuglink is looked for */
        uint64_t dev, ino;
        const struct elf_inspection *inspection;        /* elf_inspect() of the file */
        bool use_dwarf;                 /* false: symbol tables only (DWARF refused as too large) */
        uint64_t max_section_bytes;     /* limits for its separate debug file */
        uint64_t max_debug_bytes;
};

/* Open the ELF file on fd (duplicated: the caller keeps its own) for lookups. -ENOEXEC unless it
 * is a regular ELF executable or shared object. */
int elf_symbols_open(int fd, const struct elf_symbols_params *p, struct elf_symbols **ret);
struct elf_symbols *elf_symbols_close(struct elf_symbols *e);

/* The frames at file_offset, innermost first, at most max (at least 1 when max >= 1: an address
 * no symbol covers is one frame with symbol NULL). Names and files are kept in strings, so they
 * outlive e. As symbolizer_resolve() describes. */
int elf_symbols_lookup(struct elf_symbols *e, uint64_t file_offset, bool is_return_address,
                       struct string_set *strings, struct symbol_frame *frames, size_t max, size_t *n_frames);

/* Its separate debug file, once a lookup looked for it: what it inflates to (0: none or none
 * compressed), and the path of one refused as too large (NULL: none) with what it claimed. */
uint64_t elf_symbols_debug_bytes(const struct elf_symbols *e);
/* The object file itself, as libelf reads it. */
Elf *elf_symbols_elf(struct elf_symbols *e);
const char *elf_symbols_refused_debug_file(const struct elf_symbols *e, uint64_t *ret_bytes);
