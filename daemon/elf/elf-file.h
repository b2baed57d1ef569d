/* SPDX-License-Identifier: GPL-2.0-only */
/* Open a file descriptor as an ELF file for reading, the one way every reader here does it. */
#pragma once

#include <libelf.h>
#include "macro.h"

/* fd (kept open by the caller) read through a mapping. -ENOEXEC if it is not an ELF file, -EIO
 * if libelf is unusable. Release with elf_end(). */
int elf_file_open(int fd, Elf **ret);

DEFINE_TRIVIAL_CLEANUP_FUNC(Elf *, elf_end)
