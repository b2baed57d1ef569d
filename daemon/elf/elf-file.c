/* SPDX-License-Identifier: GPL-2.0-only */
/* Open a file descriptor as an ELF file for reading, the one way every reader here does it. */
#include <assert.h>
#include <errno.h>
#include <string.h>
#include "elf-file.h"

int elf_file_open(int fd, Elf **ret)
{
        Elf *elf;

        assert(ret);
        /* Tells libelf which ELF version we speak; it fails only on a broken libelf. */
        if (elf_version(EV_CURRENT) == EV_NONE)
                return -EIO;
        elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (!elf)
                return -ENOEXEC;
        if (elf_kind(elf) != ELF_K_ELF) {
                elf_end(elf);
                return -ENOEXEC;
        }
        *ret = elf;
        return 0;
}

const char *elf_file_foreign_abi(unsigned char elf_class, uint16_t machine)
{
        if (elf_class == ELFCLASS64 && machine == EM_X86_64)
                return NULL;
        if (elf_class == ELFCLASS32 && machine == EM_386)
                return "a 32-bit x86 (i386) program";
        if (elf_class == ELFCLASS32 && machine == EM_X86_64)
                return "an x32 program";
        return "a program for another machine";
}

bool elf_file_next_section(Elf *elf, struct elf_file_section *s)
{
        size_t shstrndx;

        assert(s);
        if (elf_getshdrstrndx(elf, &shstrndx) < 0)
                shstrndx = SHN_UNDEF;
        while ((s->scn = elf_nextscn(elf, s->scn))) {
                if (!gelf_getshdr(s->scn, &s->shdr))
                        continue;
                s->name = shstrndx != SHN_UNDEF ? elf_strptr(elf, shstrndx, s->shdr.sh_name) : NULL;
                if (!s->name)
                        s->name = "";
                return true;
        }
        return false;
}

int elf_file_find_section(Elf *elf, const char *name, struct elf_file_section *ret)
{
        struct elf_file_section s = {};

        assert(name);
        assert(ret);
        while (elf_file_next_section(elf, &s))
                if (strcmp(s.name, name) == 0) {
                        *ret = s;
                        return 0;
                }
        return -ENOENT;
}
