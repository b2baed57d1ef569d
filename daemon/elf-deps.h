/* SPDX-License-Identifier: GPL-2.0-only */
/* What an ELF object says about its dependencies: DT_SONAME and DT_NEEDED, in order. */
#pragma once

#include <stddef.h>

struct elf_deps {
        char *soname;           /* NULL without DT_SONAME (executables) */
        char **needed;          /* DT_NEEDED names in the order the loader reads them */
        size_t n_needed;
};

/* Read fd's dynamic section. -ENOEXEC if fd is not ELF; success with nothing set for an object
 * without one (a static executable). */
int elf_deps_read(int fd, struct elf_deps *ret);
void elf_deps_done(struct elf_deps *d);
