/* SPDX-License-Identifier: GPL-2.0-only */
/* The dynamic loader's view of the system: /etc/ld.so.cache (parsed from the file, no ldconfig
 * -p) and the directories /etc/ld.so.conf lists, read through a root directory. */
#pragma once

#include <stddef.h>

/* The directories glibc's loader searches last, as Debian builds it for x86_64 (multiarch). */
#define LD_DEFAULT_DIRS { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib" }
/* $LIB, likewise. */
#define LD_DST_LIB "lib/x86_64-linux-gnu"

struct ld_cache_entry {
        char *name;             /* the soname or file name asked for: "libc.so.6" */
        char *path;             /* the file the loader opens for it */
};

/* The x86-64 entries of an ld.so.cache, in file order (the loader takes the first match). */
struct ld_cache {
        struct ld_cache_entry *entries;
        size_t n;
};

/* Parse a cache in the "glibc-ld.so.cache1.1" format, alone or after the old "ld.so-1.7.0" one.
 * Only libc6 x86-64 entries without hwcaps (those serve the baseline CPU) are kept. -EBADMSG
 * for anything malformed or in the old format alone. */
int ld_cache_parse(const void *data, size_t size, struct ld_cache *ret);

/* The path the cache gives for name; NULL if it has none. */
const char *ld_cache_lookup(const struct ld_cache *c, const char *name);
void ld_cache_done(struct ld_cache *c);

/* /etc/ld.so.cache inside root_fd (a process's root, safe_open_root(); AT_FDCWD for the daemon's
 * own) parsed; -ENOENT without one, -EBADMSG for one that is not a regular file or too large. */
int ld_cache_read(int root_fd, struct ld_cache *ret);

/* The directories /etc/ld.so.conf inside root_fd names, following "include" patterns (relative
 * to the file that includes them; wildcards in the last component), in order, as paths inside
 * the root. No file: none. Each file is read bounded, and only if it is a regular file. */
int ld_cache_read_conf_dirs(int root_fd, char ***ret, size_t *n);

