/* SPDX-License-Identifier: GPL-2.0-only */
/* The running kernel's symbols (/proc/kallsyms), shared by the kernel target and the reports that
 * name its frames, reloaded when a frame names code newer than the table (a module, a BPF
 * program). Thread-safe; reference counted. */
#pragma once

#include <stdint.h>
#include "kallsyms.h"

/* A frame no table knows reloads the file, at most this often. */
#define KERNEL_SYMBOLS_REFRESH_USEC (10ull * 1000000ull)

struct kernel_symbols;

/* Read path (/proc/kallsyms) now. A table that cannot be read is no failure: frames are then shown
 * as addresses, and kernel_symbols_error() says why. -ENOMEM. */
int kernel_symbols_new(const char *path, struct kernel_symbols **ret);
struct kernel_symbols *kernel_symbols_ref(struct kernel_symbols *k);
struct kernel_symbols *kernel_symbols_unref(struct kernel_symbols *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct kernel_symbols *, kernel_symbols_unref)

/* Why the last load failed (-EPERM: kptr_restrict hides the addresses), 0 when it did not. */
int kernel_symbols_error(struct kernel_symbols *k);

/* Resolve a kernel stack's return address (kallsyms_resolve()). The strings stay valid until
 * the second reload after this call. -ENOENT when no symbol covers it. */
int kernel_symbols_resolve(struct kernel_symbols *k, uint64_t addr, struct kallsyms_info *ret);

/* The running kernel image's GNU build ID (/sys/kernel/notes) as lowercase hex, read once when k
 * was made; NULL when it could not be read. Valid as long as k. */
const char *kernel_symbols_build_id(struct kernel_symbols *k);
