/* SPDX-License-Identifier: GPL-2.0-only */
/* Open a file descriptor as an ELF file for reading, the one way every reader here does it. */
#pragma once

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include "macro.h"

/* What an ELF object of this class and machine is when it is not x86-64, the ABI whose argument
 * registers memleakd's probes read (a 32-bit program passes malloc's size on the stack: read as
 * x86-64 it would be garbage): "a 32-bit x86 (i386) program", ...; NULL for x86-64. */
const char *elf_file_foreign_abi(unsigned char elf_class, uint16_t machine);

/* fd (kept open by the caller) read through a mapping. -ENOEXEC if it is not an ELF file, -EIO
 * if libelf is unusable. Release with elf_end(). */
int elf_file_open(int fd, Elf **ret);

DEFINE_TRIVIAL_CLEANUP_FUNC(Elf *, elf_end)

/* One section of an ELF file, as elf_file_next_section() walks them. */
struct elf_file_section {
        Elf_Scn *scn;                   /* NULL before the first */
        GElf_Shdr shdr;
        const char *name;               /* "" when the file names it not */
};

/* Advance s to the next section whose header is readable: for (struct elf_file_section s = {};
 * elf_file_next_section(elf, &s);). False past the last. */
bool elf_file_next_section(Elf *elf, struct elf_file_section *s);

/* The first section called name, into *ret; -ENOENT without one. */
int elf_file_find_section(Elf *elf, const char *name, struct elf_file_section *ret);
