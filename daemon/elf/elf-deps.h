/* SPDX-License-Identifier: GPL-2.0-only */
/* What an ELF object says about its dependencies: DT_SONAME, DT_NEEDED in order, where the loader
 * looks for them (DT_RPATH, DT_RUNPATH, DF_1_NODEFLIB) and its interpreter (PT_INTERP). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <libelf.h>

struct elf_deps {
        char *soname;           /* NULL without DT_SONAME (executables) */
        char **needed;          /* DT_NEEDED names in the order the loader reads them */
        size_t n_needed;
        char *rpath;            /* DT_RPATH as written ($ORIGIN unexpanded); NULL without one */
        char *runpath;          /* DT_RUNPATH, likewise */
        bool nodeflib;          /* DF_1_NODEFLIB: the loader skips its cache and default dirs */
        char *interp;           /* PT_INTERP: the dynamic loader a program asks for; NULL if static */
        unsigned char elf_class; /* ELFCLASS32 / ELFCLASS64 */
        uint16_t machine;       /* e_machine: the loader skips objects of another machine */
};

/* Read fd's dynamic section. -ENOEXEC if fd is not ELF; success with nothing set for an object
 * without one (a static executable). */
int elf_deps_read(int fd, struct elf_deps *ret);
/* The same from an ELF file already open (elf-file.h). */
int elf_deps_read_elf(Elf *elf, struct elf_deps *ret);
void elf_deps_done(struct elf_deps *d);
/* A deep copy of from: 0, -ENOMEM (to untouched). */
int elf_deps_copy(struct elf_deps *to, const struct elf_deps *from);
