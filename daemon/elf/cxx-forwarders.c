/* SPDX-License-Identifier: GPL-2.0-only */
/* Find the C++ runtime's operators new and delete that only call malloc or free. */
#include <assert.h>
#include <errno.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include "cxx-forwarders.h"
#include "elf-deps.h"
#include "elf-file.h"
#include "macro.h"
#include "probe-placement.h"

/* A forwarder is a few instructions: a longer function is not looked into. */
#define FORWARDER_BYTES_MAX 512
/* What an object is read for, at most: the runtime has a few thousand relocations, a handful
 * of PLT sections and a few dozen allocator imports; a file past these (whatever it calls
 * itself) is not one, and is not read further. */
#define RELOCATIONS_MAX (1u << 18)
#define PLT_SECTIONS_MAX 8
#define ALLOCATOR_SLOTS_MAX 64

/* The object's PLT sections and the GOT slots of the allocator functions it imports. */
struct plt_index {
        struct {
                uint64_t addr, size, offset;
        } plts[PLT_SECTIONS_MAX];
        size_t n_plts;
        struct {
                uint64_t slot;
                enum alloc_kind kind;
        } slots[ALLOCATOR_SLOTS_MAX];
        size_t n_slots;
};

static bool is_cxx_runtime(Elf *elf)
{
        struct elf_deps d = {};
        bool yes = false;

        if (elf_deps_read_elf(elf, &d) < 0)
                return false;
        if (d.soname)
                yes = strncmp(d.soname, "libstdc++.so", 12) == 0 || strncmp(d.soname, "libc++.so", 9) == 0 ||
                      strncmp(d.soname, "libc++abi.so", 12) == 0;     /* LLVM's new and delete */
        elf_deps_done(&d);
        return yes;
}

/* Index one relocation section's jump-slot and GOT-data entries of allocator functions;
 * -E2BIG past the budget of relocations read. */
static int index_relocations(Elf *elf, const struct elf_file_section *sec, size_t *budget, struct plt_index *ix)
{
        Elf_Scn *symtab = elf_getscn(elf, sec->shdr.sh_link);
        Elf_Data *data = elf_getdata(sec->scn, NULL), *syms;
        GElf_Shdr symtab_header;
        size_t n;

        if (!data || !symtab || !gelf_getshdr(symtab, &symtab_header) || !(syms = elf_getdata(symtab, NULL)))
                return 0;
        n = sec->shdr.sh_size / sec->shdr.sh_entsize;
        if (n > *budget)
                return -E2BIG;
        *budget -= n;
        for (size_t i = 0; i < n && ix->n_slots < ALLOCATOR_SLOTS_MAX; i++) {
                enum alloc_kind kind;
                const char *name;
                GElf_Rela rela;
                GElf_Sym sym;

                if (!gelf_getrela(data, (int)i, &rela))
                        break;
                if (GELF_R_TYPE(rela.r_info) != R_X86_64_JUMP_SLOT && GELF_R_TYPE(rela.r_info) != R_X86_64_GLOB_DAT)
                        continue;
                if (!gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info), &sym) ||
                    !(name = elf_strptr(elf, symtab_header.sh_link, sym.st_name)) ||
                    alloc_sites_kind_of_symbol(name, &kind) < 0)
                        continue;
                ix->slots[ix->n_slots].slot = rela.r_offset;
                ix->slots[ix->n_slots++].kind = kind;
        }
        return 0;
}

static int index_plt(Elf *elf, struct plt_index *ix)
{
        size_t budget = RELOCATIONS_MAX;

        for (struct elf_file_section sec = {}; elf_file_next_section(elf, &sec);) {
                if (sec.shdr.sh_type == SHT_PROGBITS && strncmp(sec.name, ".plt", 4) == 0) {
                        if (ix->n_plts == PLT_SECTIONS_MAX)
                                return -E2BIG;
                        ix->plts[ix->n_plts].addr = sec.shdr.sh_addr;
                        ix->plts[ix->n_plts].size = sec.shdr.sh_size;
                        ix->plts[ix->n_plts++].offset = sec.shdr.sh_offset;
                } else if (sec.shdr.sh_type == SHT_RELA && sec.shdr.sh_entsize > 0) {
                        int r = index_relocations(elf, &sec, &budget, ix);

                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

/* Where a PLT stub jumps through: the GOT slot of `[endbr64] [bnd] jmp *disp(%rip)`. */
static int stub_got_slot(const uint8_t *p, size_t room, uint64_t addr, uint64_t *ret)
{
        size_t i = probe_placement_endbr64_length(p, room);
        int32_t disp;

        if (i < room && p[i] == 0xf2)
                i++;
        if (i + 6 > room || p[i] != 0xff || p[i + 1] != 0x25)
                return -ENOENT;
        memcpy(&disp, p + i + 2, sizeof(disp));
        *ret = addr + i + 6 + (int64_t)disp;
        return 0;
}

/* The allocator kind of the function whose PLT stub is at addr; -ENOENT if addr is no PLT stub
 * of an allocator function. */
static int plt_target_kind(const struct plt_index *ix, const uint8_t *image, size_t image_size, uint64_t addr,
                           enum alloc_kind *ret)
{
        for (size_t i = 0; i < ix->n_plts; i++) {
                uint64_t at, slot;

                if (addr < ix->plts[i].addr || addr - ix->plts[i].addr >= ix->plts[i].size)
                        continue;
                at = addr - ix->plts[i].addr + ix->plts[i].offset;
                if (at >= image_size ||
                    stub_got_slot(image + at, MIN((size_t)(ix->plts[i].size - (addr - ix->plts[i].addr)), image_size - at),
                                  addr, &slot) < 0)
                        return -ENOENT;
                for (size_t k = 0; k < ix->n_slots; k++)
                        if (ix->slots[k].slot == slot) {
                                *ret = ix->slots[k].kind;
                                return 0;
                        }
                return -ENOENT;
        }
        return -ENOENT;
}

/* Whether a call to a function of kind to does what a call of kind from asks. */
static bool same_side(enum alloc_kind from, enum alloc_kind to)
{
        if (from == ALLOC_KIND_DELETE)
                return to == ALLOC_KIND_FREE || to == ALLOC_KIND_DELETE;
        return to == ALLOC_KIND_MALLOC || to == ALLOC_KIND_CALLOC || to == ALLOC_KIND_ALIGNED_ALLOC ||
               to == ALLOC_KIND_MEMALIGN || to == ALLOC_KIND_POSIX_MEMALIGN || to == ALLOC_KIND_VALLOC ||
               to == ALLOC_KIND_PVALLOC || to == ALLOC_KIND_NEW;
}

/* Whether the object's call-frame information covers pc: a walk from a return there (malloc's,
 * into the operator) can go on to the operator's caller. */
static bool has_cfi_at(Dwarf_CFI *cfi, uint64_t pc)
{
        Dwarf_Frame *frame = NULL;
        bool yes;

        if (!cfi)
                return false;
        yes = dwarf_cfi_addrframe(cfi, pc, &frame) == 0;
        free(frame);
        return yes;
}

/* A jump on is a tail call: the allocator returns to the operator's caller. A call returns into
 * the operator: its frame must be walkable by its CFI (without, a frame-pointer walk from there
 * would skip the caller). */
static bool forwards(const struct plt_index *ix, Dwarf_CFI *cfi, const uint8_t *image, size_t image_size,
                     const struct alloc_site *site)
{
        const uint8_t *code;

        if (!alloc_sites_kind_is_cxx(site->kind) || site->size == 0 || site->size > FORWARDER_BYTES_MAX ||
            site->file_offset > image_size || site->size > image_size - site->file_offset)
                return false;
        code = image + site->file_offset;
        for (size_t i = 0; i + 5 <= site->size; i++) {
                enum alloc_kind kind;
                uint64_t target;
                int32_t rel;

                if (code[i] != 0xe8 && code[i] != 0xe9)        /* call rel32, jmp rel32 */
                        continue;
                memcpy(&rel, code + i + 1, sizeof(rel));
                target = site->vaddr + i + 5 + (int64_t)rel;
                if (plt_target_kind(ix, image, image_size, target, &kind) == 0 && same_side(site->kind, kind) &&
                    (code[i] == 0xe9 || has_cfi_at(cfi, site->vaddr + i + 5)))
                        return true;
        }
        return false;
}

void cxx_forwarders_mark(Elf *elf, struct alloc_sites *s)
{
        struct plt_index ix = {};
        Dwarf_CFI *cfi;
        const uint8_t *image;
        size_t size;

        assert(elf);
        assert(s);
        if (s->n == 0 || alloc_sites_has_c_api(s) || !is_cxx_runtime(elf))
                return;
        image = (const uint8_t *)elf_rawfile(elf, &size);
        if (!image || index_plt(elf, &ix) < 0 || ix.n_slots == 0)
                return;
        cfi = dwarf_getcfi_elf(elf);    /* .eh_frame; NULL without */
        for (size_t i = 0; i < s->n; i++)
                s->sites[i].forwards = forwards(&ix, cfi, image, size, &s->sites[i]);
        if (cfi)
                dwarf_cfi_end(cfi);
}
