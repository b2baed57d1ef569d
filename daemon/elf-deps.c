/* SPDX-License-Identifier: GPL-2.0-only */
/* What an ELF object says about its dependencies: DT_SONAME and DT_NEEDED, in order. */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include "elf-deps.h"

static int add_needed(struct elf_deps *d, const char *name)
{
        char **n = realloc(d->needed, (d->n_needed + 1) * sizeof(*n));

        if (!n)
                return -ENOMEM;
        d->needed = n;
        d->needed[d->n_needed] = strdup(name);
        if (!d->needed[d->n_needed])
                return -ENOMEM;
        d->n_needed++;
        return 0;
}

static int read_dynamic(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct elf_deps *d)
{
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t count;

        if (!data || sh->sh_entsize == 0)
                return 0;
        count = sh->sh_size / sh->sh_entsize;
        for (size_t i = 0; i < count; i++) {
                GElf_Dyn dyn;
                const char *name;
                int r;

                if (!gelf_getdyn(data, i, &dyn) || dyn.d_tag == DT_NULL)
                        break;
                if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_SONAME)
                        continue;
                name = elf_strptr(elf, sh->sh_link, dyn.d_un.d_val);
                if (!name)
                        continue;
                if (dyn.d_tag == DT_SONAME) {
                        if (d->soname)
                                continue;
                        d->soname = strdup(name);
                        if (!d->soname)
                                return -ENOMEM;
                        continue;
                }
                r = add_needed(d, name);
                if (r < 0)
                        return r;
        }
        return 0;
}

int elf_deps_read(int fd, struct elf_deps *ret)
{
        struct elf_deps d = {};
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

                if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
                        continue;
                r = read_dynamic(elf, scn, &sh, &d);
                break;
        }
        if (r >= 0) {
                *ret = d;
                d = (struct elf_deps) {};
        }
out:
        elf_deps_done(&d);
        elf_end(elf);
        return r;
}

void elf_deps_done(struct elf_deps *d)
{
        for (size_t i = 0; i < d->n_needed; i++)
                free(d->needed[i]);
        free(d->needed);
        free(d->soname);
        *d = (struct elf_deps) {};
}
