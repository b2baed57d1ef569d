/* SPDX-License-Identifier: GPL-2.0-only */
/* Kernel symbols: parse /proc/kallsyms text and resolve kernel addresses to symbol+offset (pure). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

/* kallsyms has no sizes: a symbol ends where the next one starts, and never further than this
 * past its start, so an address in a gap (between the kernel and a module, past the last
 * symbol) stays unresolved instead of landing in some far symbol. No kernel function is this
 * large. */
#define KALLSYMS_MAX_SYMBOL_SIZE (256U * 1024U)

/* A sorted table of text symbols. */
struct kallsyms;

struct kallsyms_info {
        const char *symbol;     /* owned by the table */
        uint64_t offset;        /* address - symbol start */
        const char *module;     /* "[kernel]" for the kernel image, else "[modname]" ("[bpf]", ...) */
};

/* Parse kallsyms text ("ffffffff81000000 T _stext\n", "... t name\t[module]\n"). Returns
 * -EINVAL for a malformed line, -EPERM when every address is zero (kptr_restrict hides them
 * from this reader: it needs root, or CAP_SYSLOG with kptr_restrict = 1), -ENOMEM. */
int kallsyms_parse_string(const char *text, struct kallsyms **ret);

/* Read and parse a file such as /proc/kallsyms: -errno of reading it, or the above. */
int kallsyms_parse_file(const char *path, struct kallsyms **ret);

struct kallsyms *kallsyms_free(struct kallsyms *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct kallsyms *, kallsyms_free)

size_t kallsyms_count(const struct kallsyms *k);

/* Resolve addr. With is_return_address, the symbol is that of the call instruction before it
 * (addr - 1: a call that ends a function returns past its end), while offset counts to addr
 * itself, as the symbolizer does for user frames. Returns -ENOENT when no text symbol covers it. */
int kallsyms_resolve(const struct kallsyms *k, uint64_t addr, bool is_return_address,
                     struct kallsyms_info *ret);
