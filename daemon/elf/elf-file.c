/* SPDX-License-Identifier: GPL-2.0-only */
/* Open a file descriptor as an ELF file for reading, the one way every reader here does it. */
#include <errno.h>
#include "elf-file.h"

int elf_file_open(int fd, Elf **ret)
{
        Elf *elf;

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
