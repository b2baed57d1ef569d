/* SPDX-License-Identifier: GPL-2.0-only */
/* Find the allocator entry points an ELF object defines, one probe site per address. */
#include <assert.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include "alloc-sites.h"
#include "cxx-forwarders.h"
#include "elf-file.h"
#include "probe-placement.h"
#include "macro.h"
#include "string-table.h"

static const char *const alloc_sites_kind_table[_ALLOC_KIND_MAX] = {
        [ALLOC_KIND_MALLOC] = "malloc",
        [ALLOC_KIND_CALLOC] = "calloc",
        [ALLOC_KIND_REALLOC] = "realloc",
        [ALLOC_KIND_REALLOCARRAY] = "reallocarray",
        [ALLOC_KIND_POSIX_MEMALIGN] = "posix_memalign",
        [ALLOC_KIND_ALIGNED_ALLOC] = "aligned_alloc",
        [ALLOC_KIND_MEMALIGN] = "memalign",
        [ALLOC_KIND_VALLOC] = "valloc",
        [ALLOC_KIND_PVALLOC] = "pvalloc",
        [ALLOC_KIND_FREE] = "free",
        [ALLOC_KIND_NEW] = "operator new",
        [ALLOC_KIND_DELETE] = "operator delete",
        [ALLOC_KIND_RESIZE] = "xallocx",
        [ALLOC_KIND_MMAP] = "mmap",
        [ALLOC_KIND_MUNMAP] = "munmap",
        [ALLOC_KIND_MREMAP] = "mremap",
};

/* Every symbol we probe, what it does, and which allocator it is the signature of. The kind says
 * where the size and pointer are: allocators' extended APIs take them in the same places as the
 * standard function named by the kind (mi_malloc_aligned(size, align) is a malloc: size first;
 * jemalloc's sdallocx(ptr, size, flags) is a free). The C++ operators take the size (new) or the
 * pointer (delete) first in every form: nothrow, std::align_val_t, sized, and their combinations.
 * Where one address has several names of different kinds (tcmalloc's free = operator delete),
 * the earlier row's kind is used. Frees with more arguments (sized, aligned, with flags) usually
 * call or jump into the plain free: they are probed like operator delete, at entry and return, so
 * the free inside nests in them and the block is freed once, at their return. */
static const struct {
        const char *symbol;
        enum alloc_kind kind;
        unsigned family;
} entry_points[] = {
        { "malloc", ALLOC_KIND_MALLOC, 0 },
        { "calloc", ALLOC_KIND_CALLOC, 0 },
        { "realloc", ALLOC_KIND_REALLOC, 0 },
        { "reallocarray", ALLOC_KIND_REALLOCARRAY, 0 },
        { "posix_memalign", ALLOC_KIND_POSIX_MEMALIGN, 0 },
        { "aligned_alloc", ALLOC_KIND_ALIGNED_ALLOC, 0 },
        { "memalign", ALLOC_KIND_MEMALIGN, 0 },
        { "valloc", ALLOC_KIND_VALLOC, 0 },
        { "pvalloc", ALLOC_KIND_PVALLOC, 0 },
        { "free", ALLOC_KIND_FREE, 0 },
        { "cfree", ALLOC_KIND_FREE, 0 },
        /* glibc: its internal names (aliases of the above, marking a static glibc) */
        { "__libc_malloc", ALLOC_KIND_MALLOC, ALLOC_FAMILY_GLIBC },
        { "__libc_free", ALLOC_KIND_FREE, ALLOC_FAMILY_GLIBC },
        /* gperftools tcmalloc: tc_* are mostly aliases of the standard names */
        { "tc_malloc", ALLOC_KIND_MALLOC, ALLOC_FAMILY_TCMALLOC },
        { "tc_malloc_skip_new_handler", ALLOC_KIND_MALLOC, ALLOC_FAMILY_TCMALLOC },
        { "tc_calloc", ALLOC_KIND_CALLOC, ALLOC_FAMILY_TCMALLOC },
        { "tc_realloc", ALLOC_KIND_REALLOC, ALLOC_FAMILY_TCMALLOC },
        { "tc_memalign", ALLOC_KIND_MEMALIGN, ALLOC_FAMILY_TCMALLOC },
        { "tc_posix_memalign", ALLOC_KIND_POSIX_MEMALIGN, ALLOC_FAMILY_TCMALLOC },
        { "tc_valloc", ALLOC_KIND_VALLOC, ALLOC_FAMILY_TCMALLOC },
        { "tc_pvalloc", ALLOC_KIND_PVALLOC, ALLOC_FAMILY_TCMALLOC },
        { "tc_free", ALLOC_KIND_FREE, ALLOC_FAMILY_TCMALLOC },
        { "tc_cfree", ALLOC_KIND_FREE, ALLOC_FAMILY_TCMALLOC },
        { "tc_free_sized", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },           /* (ptr, size) */
        /* jemalloc's extended API, unprefixed (Debian's libjemalloc2) or with je_ (--with-jemalloc-prefix) */
        { "mallocx", ALLOC_KIND_MALLOC, ALLOC_FAMILY_JEMALLOC },               /* (size, flags) */
        { "rallocx", ALLOC_KIND_REALLOC, ALLOC_FAMILY_JEMALLOC },              /* (ptr, size, flags) */
        { "sdallocx", ALLOC_KIND_DELETE, ALLOC_FAMILY_JEMALLOC },                /* (ptr, size, flags) */
        { "dallocx", ALLOC_KIND_DELETE, ALLOC_FAMILY_JEMALLOC },                 /* (ptr, flags) */
        { "xallocx", ALLOC_KIND_RESIZE, ALLOC_FAMILY_JEMALLOC },                 /* (ptr, size, extra, flags) */
        { "je_xallocx", ALLOC_KIND_RESIZE, ALLOC_FAMILY_JEMALLOC },
        { "je_malloc", ALLOC_KIND_MALLOC, ALLOC_FAMILY_JEMALLOC },
        { "je_calloc", ALLOC_KIND_CALLOC, ALLOC_FAMILY_JEMALLOC },
        { "je_realloc", ALLOC_KIND_REALLOC, ALLOC_FAMILY_JEMALLOC },
        { "je_posix_memalign", ALLOC_KIND_POSIX_MEMALIGN, ALLOC_FAMILY_JEMALLOC },
        { "je_aligned_alloc", ALLOC_KIND_ALIGNED_ALLOC, ALLOC_FAMILY_JEMALLOC },
        { "je_memalign", ALLOC_KIND_MEMALIGN, ALLOC_FAMILY_JEMALLOC },
        { "je_valloc", ALLOC_KIND_VALLOC, ALLOC_FAMILY_JEMALLOC },
        { "je_free", ALLOC_KIND_FREE, ALLOC_FAMILY_JEMALLOC },
        { "je_mallocx", ALLOC_KIND_MALLOC, ALLOC_FAMILY_JEMALLOC },
        { "je_rallocx", ALLOC_KIND_REALLOC, ALLOC_FAMILY_JEMALLOC },
        { "je_sdallocx", ALLOC_KIND_DELETE, ALLOC_FAMILY_JEMALLOC },
        { "je_dallocx", ALLOC_KIND_DELETE, ALLOC_FAMILY_JEMALLOC },
        /* ... or with _rjem_: Rust's tikv-jemallocator, linked into the program */
        { "_rjem_xallocx", ALLOC_KIND_RESIZE, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_malloc", ALLOC_KIND_MALLOC, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_calloc", ALLOC_KIND_CALLOC, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_realloc", ALLOC_KIND_REALLOC, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_posix_memalign", ALLOC_KIND_POSIX_MEMALIGN, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_aligned_alloc", ALLOC_KIND_ALIGNED_ALLOC, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_memalign", ALLOC_KIND_MEMALIGN, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_valloc", ALLOC_KIND_VALLOC, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_free", ALLOC_KIND_FREE, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_mallocx", ALLOC_KIND_MALLOC, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_rallocx", ALLOC_KIND_REALLOC, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_sdallocx", ALLOC_KIND_DELETE, ALLOC_FAMILY_JEMALLOC },
        { "_rjem_dallocx", ALLOC_KIND_DELETE, ALLOC_FAMILY_JEMALLOC },
        /* mimalloc's own API (its malloc, free, new, ... are aliases of mi_*) */
        { "mi_malloc", ALLOC_KIND_MALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_malloc_small", ALLOC_KIND_MALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_zalloc", ALLOC_KIND_MALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_zalloc_small", ALLOC_KIND_MALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_malloc_aligned", ALLOC_KIND_MALLOC, ALLOC_FAMILY_MIMALLOC },     /* (size, align) */
        { "mi_malloc_aligned_at", ALLOC_KIND_MALLOC, ALLOC_FAMILY_MIMALLOC },  /* (size, align, offset) */
        { "mi_zalloc_aligned", ALLOC_KIND_MALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_zalloc_aligned_at", ALLOC_KIND_MALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_calloc", ALLOC_KIND_CALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_mallocn", ALLOC_KIND_CALLOC, ALLOC_FAMILY_MIMALLOC },            /* (count, size) */
        { "mi_calloc_aligned", ALLOC_KIND_CALLOC, ALLOC_FAMILY_MIMALLOC },     /* (count, size, align) */
        { "mi_calloc_aligned_at", ALLOC_KIND_CALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_realloc", ALLOC_KIND_REALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_rezalloc", ALLOC_KIND_REALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_realloc_aligned", ALLOC_KIND_REALLOC, ALLOC_FAMILY_MIMALLOC },   /* (ptr, size, align) */
        { "mi_realloc_aligned_at", ALLOC_KIND_REALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_rezalloc_aligned", ALLOC_KIND_REALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_reallocn", ALLOC_KIND_REALLOCARRAY, ALLOC_FAMILY_MIMALLOC },     /* (ptr, count, size) */
        { "mi_recalloc", ALLOC_KIND_REALLOCARRAY, ALLOC_FAMILY_MIMALLOC },
        { "mi_reallocarray", ALLOC_KIND_REALLOCARRAY, ALLOC_FAMILY_MIMALLOC },
        { "mi_posix_memalign", ALLOC_KIND_POSIX_MEMALIGN, ALLOC_FAMILY_MIMALLOC },
        { "mi_aligned_alloc", ALLOC_KIND_ALIGNED_ALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_memalign", ALLOC_KIND_MEMALIGN, ALLOC_FAMILY_MIMALLOC },
        { "mi_valloc", ALLOC_KIND_VALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_pvalloc", ALLOC_KIND_PVALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_free", ALLOC_KIND_FREE, ALLOC_FAMILY_MIMALLOC },
        { "mi_cfree", ALLOC_KIND_FREE, ALLOC_FAMILY_MIMALLOC },
        { "mi_free_size", ALLOC_KIND_DELETE, ALLOC_FAMILY_MIMALLOC },            /* (ptr, size) */
        { "mi_free_aligned", ALLOC_KIND_DELETE, ALLOC_FAMILY_MIMALLOC },
        { "mi_free_size_aligned", ALLOC_KIND_DELETE, ALLOC_FAMILY_MIMALLOC },
        { "mi_new", ALLOC_KIND_NEW, ALLOC_FAMILY_MIMALLOC },
        { "mi_new_aligned", ALLOC_KIND_NEW, ALLOC_FAMILY_MIMALLOC },           /* (size, align) */
        { "mi_new_nothrow", ALLOC_KIND_NEW, ALLOC_FAMILY_MIMALLOC },
        { "mi_new_aligned_nothrow", ALLOC_KIND_NEW, ALLOC_FAMILY_MIMALLOC },
        { "mi_new_n", ALLOC_KIND_CALLOC, ALLOC_FAMILY_MIMALLOC },              /* (count, size) */
        { "mi_new_realloc", ALLOC_KIND_REALLOC, ALLOC_FAMILY_MIMALLOC },
        { "mi_new_reallocn", ALLOC_KIND_REALLOCARRAY, ALLOC_FAMILY_MIMALLOC },
        /* anonymous mappings, probed only for targets attached with --mmap */
        { "mmap", ALLOC_KIND_MMAP, 0 },
        { "mmap64", ALLOC_KIND_MMAP, 0 },
        { "munmap", ALLOC_KIND_MUNMAP, 0 },
        { "mremap", ALLOC_KIND_MREMAP, 0 },
        /* C++ operator new, every form (tcmalloc's tc_new* are aliases) */
        { "_Znwm", ALLOC_KIND_NEW, 0 },                                        /* new(size_t) */
        { "_Znam", ALLOC_KIND_NEW, 0 },                                        /* new[](size_t) */
        { "_ZnwmRKSt9nothrow_t", ALLOC_KIND_NEW, 0 },
        { "_ZnamRKSt9nothrow_t", ALLOC_KIND_NEW, 0 },
        { "_ZnwmSt11align_val_t", ALLOC_KIND_NEW, 0 },
        { "_ZnamSt11align_val_t", ALLOC_KIND_NEW, 0 },
        { "_ZnwmSt11align_val_tRKSt9nothrow_t", ALLOC_KIND_NEW, 0 },
        { "_ZnamSt11align_val_tRKSt9nothrow_t", ALLOC_KIND_NEW, 0 },
        { "tc_new", ALLOC_KIND_NEW, ALLOC_FAMILY_TCMALLOC },
        { "tc_newarray", ALLOC_KIND_NEW, ALLOC_FAMILY_TCMALLOC },
        { "tc_new_nothrow", ALLOC_KIND_NEW, ALLOC_FAMILY_TCMALLOC },
        { "tc_newarray_nothrow", ALLOC_KIND_NEW, ALLOC_FAMILY_TCMALLOC },
        { "tc_new_aligned", ALLOC_KIND_NEW, ALLOC_FAMILY_TCMALLOC },
        { "tc_newarray_aligned", ALLOC_KIND_NEW, ALLOC_FAMILY_TCMALLOC },
        { "tc_new_aligned_nothrow", ALLOC_KIND_NEW, ALLOC_FAMILY_TCMALLOC },
        { "tc_newarray_aligned_nothrow", ALLOC_KIND_NEW, ALLOC_FAMILY_TCMALLOC },
        /* C++ operator delete, every form */
        { "_ZdlPv", ALLOC_KIND_DELETE, 0 },                                    /* delete(void *) */
        { "_ZdaPv", ALLOC_KIND_DELETE, 0 },                                    /* delete[](void *) */
        { "_ZdlPvm", ALLOC_KIND_DELETE, 0 },                                   /* sized */
        { "_ZdaPvm", ALLOC_KIND_DELETE, 0 },
        { "_ZdlPvRKSt9nothrow_t", ALLOC_KIND_DELETE, 0 },
        { "_ZdaPvRKSt9nothrow_t", ALLOC_KIND_DELETE, 0 },
        { "_ZdlPvSt11align_val_t", ALLOC_KIND_DELETE, 0 },
        { "_ZdaPvSt11align_val_t", ALLOC_KIND_DELETE, 0 },
        { "_ZdlPvmSt11align_val_t", ALLOC_KIND_DELETE, 0 },
        { "_ZdaPvmSt11align_val_t", ALLOC_KIND_DELETE, 0 },
        { "_ZdlPvSt11align_val_tRKSt9nothrow_t", ALLOC_KIND_DELETE, 0 },
        { "_ZdaPvSt11align_val_tRKSt9nothrow_t", ALLOC_KIND_DELETE, 0 },
        { "tc_delete", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_deletearray", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_delete_sized", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_deletearray_sized", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_delete_nothrow", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_deletearray_nothrow", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_delete_aligned", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_deletearray_aligned", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_delete_sized_aligned", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_deletearray_sized_aligned", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_delete_aligned_nothrow", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
        { "tc_deletearray_aligned_nothrow", ALLOC_KIND_DELETE, ALLOC_FAMILY_TCMALLOC },
};

static const struct {
        unsigned family;
        const char *name;
} family_names[] = {
        /* most specific first: see alloc_sites_family() */
        { ALLOC_FAMILY_TCMALLOC, "tcmalloc" },
        { ALLOC_FAMILY_JEMALLOC, "jemalloc" },
        { ALLOC_FAMILY_MIMALLOC, "mimalloc" },
        { ALLOC_FAMILY_MUSL, "musl" },
        { ALLOC_FAMILY_GLIBC, "glibc" },
};

const char *alloc_sites_family_to_string(unsigned family)
{
        for (size_t i = 0; i < ELEMENTSOF(family_names); i++)
                if (family_names[i].family == family)
                        return family_names[i].name;
        return NULL;
}

unsigned alloc_sites_family(const struct alloc_sites *s)
{
        assert(s);
        for (size_t i = 0; i < ELEMENTSOF(family_names); i++)
                if (s->families & family_names[i].family)
                        return family_names[i].family;
        return 0;
}

void alloc_sites_keep(struct alloc_sites *s, int (*keep)(enum alloc_kind k))
{
        size_t out = 0;

        assert(s);
        assert(keep);
        for (size_t i = 0; i < s->n; i++)
                if (keep(s->sites[i].kind))
                        s->sites[out++] = s->sites[i];
        s->n = out;
}

static int alloc_kind_is_not_mmap(enum alloc_kind k)
{
        return !alloc_kind_is_mmap(k);
}

void alloc_sites_drop_mmap(struct alloc_sites *s)
{
        assert(s);
        alloc_sites_keep(s, alloc_kind_is_not_mmap);
}

bool alloc_sites_has_c_api(const struct alloc_sites *s)
{
        assert(s);
        for (size_t i = 0; i < s->n; i++)
                if (!alloc_sites_kind_is_cxx(s->sites[i].kind) && !alloc_kind_is_mmap(s->sites[i].kind))
                        return true;
        return false;
}

unsigned alloc_sites_kind_arguments(enum alloc_kind k)
{
        switch (k) {
        case ALLOC_KIND_MALLOC:
        case ALLOC_KIND_VALLOC:
        case ALLOC_KIND_PVALLOC:
        case ALLOC_KIND_FREE:
        case ALLOC_KIND_NEW:
        case ALLOC_KIND_DELETE:
                return 1;
        case ALLOC_KIND_CALLOC:
        case ALLOC_KIND_REALLOC:
        case ALLOC_KIND_ALIGNED_ALLOC:
        case ALLOC_KIND_MEMALIGN:
        case ALLOC_KIND_RESIZE:
        case ALLOC_KIND_MUNMAP:
                return 2;
        case ALLOC_KIND_REALLOCARRAY:
        case ALLOC_KIND_POSIX_MEMALIGN:
        case ALLOC_KIND_MREMAP:
                return 3;
        case ALLOC_KIND_MMAP:
                return 4;
        default:
                return 6;       /* unknown: protect every argument register */
        }
}

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(alloc_sites_kind, enum alloc_kind);

/* Symbols that tell an allocator apart without being an entry point to probe. */
static const struct {
        const char *symbol;
        unsigned family;
} family_markers[] = {
        { "__libc_malloc_impl", ALLOC_FAMILY_MUSL },    /* musl >= 1.2.1: malloc's body */
        { "__malloc_donate", ALLOC_FAMILY_MUSL },
        { "__simple_malloc", ALLOC_FAMILY_MUSL },       /* musl's malloc for programs that never free */
};

static unsigned family_marked_by(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(family_markers); i++)
                if (strcmp(name, family_markers[i].symbol) == 0)
                        return family_markers[i].family;
        return 0;
}

static int entry_point_index(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(entry_points); i++)
                if (strcmp(name, entry_points[i].symbol) == 0)
                        return (int)i;
        return -1;
}

/* File offset of vaddr through the PT_LOAD segment that maps it. */
static int vaddr_to_file_offset(Elf *elf, uint64_t vaddr, uint64_t *ret)
{
        size_t n;

        if (elf_getphdrnum(elf, &n) < 0)
                return -ENOEXEC;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr ph;

                if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
                        continue;
                if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
                        *ret = vaddr - ph.p_vaddr + ph.p_offset;
                        return 0;
                }
        }
        return -ENOENT;
}

int alloc_sites_kind_of_symbol(const char *name, enum alloc_kind *ret)
{
        int entry;

        assert(name);
        assert(ret);
        entry = entry_point_index(name);
        if (entry < 0)
                return -ENOENT;
        *ret = entry_points[entry].kind;
        return 0;
}

static int add_site(struct alloc_sites *s, int entry, uint64_t vaddr, uint64_t off, uint64_t size)
{
        struct alloc_site *n;

        for (size_t i = 0; i < s->n; i++)
                if (s->sites[i].vaddr == vaddr) {
                        s->sites[i].size = MAX(s->sites[i].size, size);
                        /* An alias of a site we have: probe each address once, with the kind of
                         * the name listed first in entry_points. */
                        if (entry < s->sites[i].entry) {
                                s->sites[i].kind = entry_points[entry].kind;
                                s->sites[i].name = entry_points[entry].symbol;
                                s->sites[i].entry = entry;
                        }
                        return 0;
                }
        n = realloc(s->sites, (s->n + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        s->sites = n;
        s->sites[s->n++] = (struct alloc_site) {
                .kind = entry_points[entry].kind, .name = entry_points[entry].symbol,
                .file_offset = off, .probe_offset = off, .vaddr = vaddr, .size = size, .entry = entry,
        };
        return 0;
}

static int scan_symbol_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct alloc_sites *s)
{
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t count;

        if (!data || sh->sh_entsize == 0)
                return 0;
        count = sh->sh_size / sh->sh_entsize;
        for (size_t i = 0; i < count; i++) {
                GElf_Sym sym;
                const char *name;
                uint64_t off;
                int entry, r;

                if (!gelf_getsym(data, i, &sym))
                        continue;
                if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
                        continue;
                name = elf_strptr(elf, sh->sh_link, sym.st_name);
                if (!name)
                        continue;
                s->families |= family_marked_by(name);
                if ((entry = entry_point_index(name)) < 0)
                        continue;
                if (vaddr_to_file_offset(elf, sym.st_value, &off) < 0)
                        continue;
                s->families |= entry_points[entry].family;
                r = add_site(s, entry, sym.st_value, off, sym.st_size);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The attach cookie telling an entry program where placement left its arguments, or -ERANGE
 * if it needs more than the cookie holds. */
static int64_t entry_cookie(const struct probe_placement *p, unsigned n_args)
{
        uint64_t cookie = MEMLEAK_ARGS_MOVED;

        if (!p->moved)
                return 0;
        if (n_args > MEMLEAK_COOKIE_ARGS)
                return -ERANGE;
        for (unsigned i = 0; i < n_args; i++)
                cookie |= (uint64_t)p->arg_register[i] << (4 * i);
        return (int64_t)cookie;
}

/* How many bytes from site i's entry its probe may move over: up to the next site's entry, so
 * that no two sites share a probe (a call to the next would count as a call to both). */
static size_t placement_room(const struct alloc_sites *s, size_t i, size_t file_size)
{
        uint64_t at = s->sites[i].file_offset, end = MIN((uint64_t)file_size, at + PROBE_PLACEMENT_BYTES);

        for (size_t j = 0; j < s->n; j++)
                if (s->sites[j].file_offset > at && s->sites[j].file_offset < end)
                        end = s->sites[j].file_offset;
        return (size_t)(end - at);
}

/* Move each entry probe past harmless first instructions onto one the kernel emulates, and say
 * where its arguments are there. */
static void place_probes(Elf *elf, struct alloc_sites *s)
{
        size_t size;
        const uint8_t *image = (const uint8_t *)elf_rawfile(elf, &size);

        if (!image)
                return;         /* an x86-64 object: alloc_sites_read() reads no other */
        for (size_t i = 0; i < s->n; i++) {
                struct alloc_site *site = &s->sites[i];
                unsigned n_args = alloc_sites_kind_arguments(site->kind);
                struct probe_placement p;
                int64_t cookie;

                if (site->file_offset >= size)
                        continue;
                probe_placement_find_x86_64(image + site->file_offset, placement_room(s, i, size), n_args, &p);
                cookie = entry_cookie(&p, n_args);
                if (cookie < 0)
                        continue;               /* stays at the entry */
                site->probe_offset = site->file_offset + p.skip;
                site->entry_cookie = (uint64_t)cookie;
        }
}

/* Whether a call that enters a site of kind from, unchanged, is one site to to record. */
static bool same_arguments(enum alloc_kind from, enum alloc_kind to)
{
        return from == to || (from == ALLOC_KIND_MEMALIGN && to == ALLOC_KIND_ALIGNED_ALLOC) ||
               (from == ALLOC_KIND_ALIGNED_ALLOC && to == ALLOC_KIND_MEMALIGN);
}

/* The site i's code jumps to straight away (jmp as its first instruction, after an endbr64),
 * when that is another site: else -1. */
static ssize_t jump_target(const struct alloc_sites *s, size_t i, const uint8_t *image, size_t size)
{
        const struct alloc_site *site = &s->sites[i];
        uint64_t at = site->file_offset, target;

        if (at >= size)
                return -1;
        at += probe_placement_endbr64_length(image + at, size - at);
        if (at + 5 <= size && image[at] == 0xe9) {
                int32_t rel;

                memcpy(&rel, image + at + 1, sizeof(rel));
                target = site->vaddr + (at - site->file_offset) + 5 + (int64_t)rel;
        } else if (at + 2 <= size && image[at] == 0xeb) {
                target = site->vaddr + (at - site->file_offset) + 2 + (int64_t)(int8_t)image[at + 1];
        } else {
                return -1;
        }
        for (size_t j = 0; j < s->n; j++)
                if (j != i && s->sites[j].vaddr == target)
                        return (ssize_t)j;
        return -1;
}

/* Leave unprobed a site that only jumps to another with the same arguments (musl's static free is
 * `jmp __libc_free`, its memalign `jmp aligned_alloc`): a jump keeps the caller's registers and
 * stack, so the site it lands on records the call whole, once, where probing both would count it
 * twice (a free of a block already freed) or trap twice. */
static void drop_jump_forwarders(Elf *elf, struct alloc_sites *s)
{
        size_t size, out = 0;
        const uint8_t *image = (const uint8_t *)elf_rawfile(elf, &size);
        _cleanup_free_ bool *drop = NULL;

        if (!image || s->n < 2 || !(drop = calloc(s->n, sizeof(bool))))
                return;
        for (size_t i = 0; i < s->n; i++) {
                ssize_t j = jump_target(s, i, image, size);

                /* (two that jump to each other, which no allocator does, stay) */
                drop[i] = j >= 0 && same_arguments(s->sites[i].kind, s->sites[j].kind) &&
                          jump_target(s, (size_t)j, image, size) != (ssize_t)i;
        }
        for (size_t i = 0; i < s->n; i++)
                if (!drop[i])
                        s->sites[out++] = s->sites[i];
        s->n = out;
}

int alloc_sites_read(Elf *elf, struct alloc_sites *ret)
{
        struct alloc_sites s = {};
        struct elf_file_section sec = {};
        GElf_Ehdr ehdr;
        int r;

        assert(ret);
        /* An object of another ABI (i386, x32) passes its arguments where the probes do not read
         * them: none of its functions is a site. */
        if (!gelf_getehdr(elf, &ehdr) || elf_file_foreign_abi(ehdr.e_ident[EI_CLASS], ehdr.e_machine)) {
                *ret = s;
                return 0;
        }
        while (elf_file_next_section(elf, &sec)) {
                if (sec.shdr.sh_type != SHT_SYMTAB && sec.shdr.sh_type != SHT_DYNSYM)
                        continue;
                r = scan_symbol_table(elf, sec.scn, &sec.shdr, &s);
                if (r < 0) {
                        alloc_sites_done(&s);
                        return r;
                }
        }
        place_probes(elf, &s);
        drop_jump_forwarders(elf, &s);
        cxx_forwarders_mark(elf, &s);
        *ret = s;
        return 0;
}

int alloc_sites_find(int fd, struct alloc_sites *ret)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        int r;

        assert(ret);
        r = elf_file_open(fd, &elf);
        if (r < 0)
                return r;
        return alloc_sites_read(elf, ret);
}

void alloc_sites_done(struct alloc_sites *s)
{
        assert(s);
        free(s->sites);
        *s = (struct alloc_sites) {};
}

int alloc_sites_copy(struct alloc_sites *to, const struct alloc_sites *from)
{
        struct alloc_site *v = NULL;

        assert(to);
        assert(from);
        if (from->n > 0) {
                v = malloc(from->n * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                memcpy(v, from->sites, from->n * sizeof(*v));
        }
        *to = (struct alloc_sites) { .sites = v, .n = from->n, .families = from->families };
        return 0;
}
