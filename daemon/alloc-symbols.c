/* SPDX-License-Identifier: GPL-2.0-only */
/* Find the allocator entry points an ELF object defines, one probe site per address. */
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include "alloc-symbols.h"
#include "macro.h"

static const char *const kind_names[_ALLOC_KIND_MAX] = {
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
};

/* Every symbol we probe, and what it does. The C++ operators take the size (new) or the pointer
 * (delete) first in every form: nothrow, std::align_val_t, sized, and their combinations. */
static const struct {
        const char *symbol;
        enum alloc_kind kind;
} entry_points[] = {
        { "malloc", ALLOC_KIND_MALLOC },
        { "calloc", ALLOC_KIND_CALLOC },
        { "realloc", ALLOC_KIND_REALLOC },
        { "reallocarray", ALLOC_KIND_REALLOCARRAY },
        { "posix_memalign", ALLOC_KIND_POSIX_MEMALIGN },
        { "aligned_alloc", ALLOC_KIND_ALIGNED_ALLOC },
        { "memalign", ALLOC_KIND_MEMALIGN },
        { "valloc", ALLOC_KIND_VALLOC },
        { "pvalloc", ALLOC_KIND_PVALLOC },
        { "free", ALLOC_KIND_FREE },
        { "_Znwm", ALLOC_KIND_NEW },                                    /* new(size_t) */
        { "_Znam", ALLOC_KIND_NEW },                                    /* new[](size_t) */
        { "_ZnwmRKSt9nothrow_t", ALLOC_KIND_NEW },
        { "_ZnamRKSt9nothrow_t", ALLOC_KIND_NEW },
        { "_ZnwmSt11align_val_t", ALLOC_KIND_NEW },
        { "_ZnamSt11align_val_t", ALLOC_KIND_NEW },
        { "_ZnwmSt11align_val_tRKSt9nothrow_t", ALLOC_KIND_NEW },
        { "_ZnamSt11align_val_tRKSt9nothrow_t", ALLOC_KIND_NEW },
        { "_ZdlPv", ALLOC_KIND_DELETE },                                /* delete(void *) */
        { "_ZdaPv", ALLOC_KIND_DELETE },                                /* delete[](void *) */
        { "_ZdlPvm", ALLOC_KIND_DELETE },                               /* sized */
        { "_ZdaPvm", ALLOC_KIND_DELETE },
        { "_ZdlPvRKSt9nothrow_t", ALLOC_KIND_DELETE },
        { "_ZdaPvRKSt9nothrow_t", ALLOC_KIND_DELETE },
        { "_ZdlPvSt11align_val_t", ALLOC_KIND_DELETE },
        { "_ZdaPvSt11align_val_t", ALLOC_KIND_DELETE },
        { "_ZdlPvmSt11align_val_t", ALLOC_KIND_DELETE },
        { "_ZdaPvmSt11align_val_t", ALLOC_KIND_DELETE },
        { "_ZdlPvSt11align_val_tRKSt9nothrow_t", ALLOC_KIND_DELETE },
        { "_ZdaPvSt11align_val_tRKSt9nothrow_t", ALLOC_KIND_DELETE },
};

const char *alloc_kind_to_string(enum alloc_kind k)
{
        return k < _ALLOC_KIND_MAX ? kind_names[k] : NULL;
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

static int add_site(struct alloc_sites *s, int entry, uint64_t vaddr, uint64_t off)
{
        struct alloc_site *n;

        for (size_t i = 0; i < s->n; i++)
                if (s->sites[i].vaddr == vaddr)
                        return 0;       /* an alias of a site we have: probe each address once */
        n = realloc(s->sites, (s->n + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        s->sites = n;
        s->sites[s->n++] = (struct alloc_site) {
                .kind = entry_points[entry].kind, .name = entry_points[entry].symbol,
                .file_offset = off, .vaddr = vaddr,
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
                if (!name || (entry = entry_point_index(name)) < 0)
                        continue;
                if (vaddr_to_file_offset(elf, sym.st_value, &off) < 0)
                        continue;
                r = add_site(s, entry, sym.st_value, off);
                if (r < 0)
                        return r;
        }
        return 0;
}

int alloc_sites_find(int fd, struct alloc_sites *ret)
{
        struct alloc_sites s = {};
        Elf_Scn *scn = NULL;
        Elf *elf;
        int r = 0;

        if (elf_version(EV_CURRENT) == EV_NONE)
                return -EIO;
        elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (!elf)
                return -ENOEXEC;
        if (elf_kind(elf) != ELF_K_ELF) {
                r = -ENOEXEC;
                goto out;
        }
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr sh;

                if (!gelf_getshdr(scn, &sh))
                        continue;
                if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
                        continue;
                r = scan_symbol_table(elf, scn, &sh, &s);
                if (r < 0)
                        goto out;
        }
        *ret = s;
        s = (struct alloc_sites) {};
out:
        alloc_sites_done(&s);
        elf_end(elf);
        return r;
}

void alloc_sites_done(struct alloc_sites *s)
{
        free(s->sites);
        *s = (struct alloc_sites) {};
}
