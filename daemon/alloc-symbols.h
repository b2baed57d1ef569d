/* SPDX-License-Identifier: GPL-2.0-only */
/* Find the allocator entry points an ELF object defines, one probe site per address. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "bpf-types.h"

struct alloc_site {
        enum alloc_kind kind;
        const char *name;       /* static: the symbol probed (the first of its aliases found) */
        uint64_t file_offset;   /* where the uprobe goes */
        uint64_t vaddr;
};

struct alloc_sites {
        struct alloc_site *sites;
        size_t n;
};

/* Read fd's .symtab and .dynsym. -ENOEXEC if it is not an ELF object; success with n == 0 when
 * it defines none of the entry points. Aliases (several names, one address) yield one site. */
int alloc_sites_find(int fd, struct alloc_sites *ret);
void alloc_sites_done(struct alloc_sites *s);

const char *alloc_kind_to_string(enum alloc_kind k);

static inline int alloc_kind_is_cxx(enum alloc_kind k)
{
        return k == ALLOC_KIND_NEW || k == ALLOC_KIND_DELETE;
}
