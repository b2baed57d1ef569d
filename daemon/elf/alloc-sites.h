/* SPDX-License-Identifier: GPL-2.0-only */
/* Find the allocator entry points an ELF object defines, one probe site per address. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>
#include "bpf-types.h"

struct alloc_site {
        enum alloc_kind kind;
        const char *name;       /* static: the symbol probed (the first of its aliases found) */
        uint64_t file_offset;   /* the function's entry */
        uint64_t probe_offset;  /* where its uprobe goes: the entry, or a few harmless bytes on
                                 * (probe-placement.h) */
        uint64_t entry_cookie;  /* its entry probe's attach cookie: where the arguments are there
                                 * (MEMLEAK_ARGS_MOVED) */
        uint64_t vaddr;
        uint64_t size;          /* the function's bytes (its symbol's st_size); 0 if unknown */
        int entry;              /* its row in the table of entry points (lower: preferred name) */
        bool forwards;          /* a C++ operator of the standard runtime that only passes the
                                 * call on to malloc & co or free (cxx-forwarders.h) */
};

/* Which allocator a symbol is the signature of (bits of alloc_sites.families). */
enum alloc_family {
        ALLOC_FAMILY_GLIBC = 1 << 0,            /* __libc_malloc */
        ALLOC_FAMILY_TCMALLOC = 1 << 1,         /* tc_malloc, tc_new, ... (gperftools) */
        ALLOC_FAMILY_JEMALLOC = 1 << 2,         /* mallocx, rallocx, ..., or je_malloc */
        ALLOC_FAMILY_MIMALLOC = 1 << 3,         /* mi_malloc, mi_new, ... */
        ALLOC_FAMILY_MUSL = 1 << 4,             /* __libc_malloc_impl, __malloc_donate (musl's own
                                                 * names: a static musl has __libc_malloc too) */
};

struct alloc_sites {
        struct alloc_site *sites;
        size_t n;
        unsigned families;      /* enum alloc_family bits of every symbol seen, aliases included */
};

/* Read fd's .symtab and .dynsym. -ENOEXEC if it is not an ELF object; success with n == 0 when
 * it defines none of the entry points, or is not an x86-64 object (i386, x32: their arguments
 * are not where the probes read them). Aliases (several names, one address) yield one site. */
int alloc_sites_find(int fd, struct alloc_sites *ret);
/* The same from an ELF file already open (elf-file.h). */
int alloc_sites_read(Elf *elf, struct alloc_sites *ret);
void alloc_sites_done(struct alloc_sites *s);
/* A copy of from (its names are static): 0, -ENOMEM (to untouched). */
int alloc_sites_copy(struct alloc_sites *to, const struct alloc_sites *from);

const char *alloc_sites_kind_to_string(enum alloc_kind k);

/* The kind of the entry point called name ("malloc", "_Znwm", "je_free", ...); -ENOENT if name
 * is none of them. */
int alloc_sites_kind_of_symbol(const char *name, enum alloc_kind *ret);

/* How many argument registers kind's entry program reads (bpf/memleak.bpf.c). */
unsigned alloc_sites_kind_arguments(enum alloc_kind k);

/* "tcmalloc" for ALLOC_FAMILY_TCMALLOC..., NULL for anything else. */
const char *alloc_sites_family_to_string(unsigned family);

/* The allocator families sites belongs to, most specific first: a static tcmalloc binary also
 * holds glibc, so tcmalloc, jemalloc and mimalloc outrank glibc. 0 if none. */
unsigned alloc_sites_family(const struct alloc_sites *s);

static inline int alloc_sites_kind_is_cxx(enum alloc_kind k)
{
        return k == ALLOC_KIND_NEW || k == ALLOC_KIND_DELETE;
}

static inline int alloc_kind_is_mmap(enum alloc_kind k)
{
        return k == ALLOC_KIND_MMAP || k == ALLOC_KIND_MUNMAP || k == ALLOC_KIND_MREMAP;
}

/* Whether memleakd places a return probe on a site of kind k besides its entry probe: every
 * allocating kind, and delete (which frees at its return); not free. */
static inline bool alloc_kind_has_return_probe(enum alloc_kind k)
{
        return k != ALLOC_KIND_FREE;
}

/* Keep only the sites whose kind keep() accepts (alloc_sites_kind_is_cxx: the C++ operators). */
void alloc_sites_keep(struct alloc_sites *s, int (*keep)(enum alloc_kind k));

/* Drop the mmap family from s (targets attached without --mmap). */
void alloc_sites_drop_mmap(struct alloc_sites *s);

/* Whether s has a C-level allocation entry point (malloc and friends, in any allocator's naming),
 * as opposed to only C++ operators (or the mmap family). */
bool alloc_sites_has_c_api(const struct alloc_sites *s);
