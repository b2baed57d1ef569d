/* SPDX-License-Identifier: GPL-2.0-only */
/* What an ELF object says about its dependencies: DT_SONAME, DT_NEEDED in order, where the loader
 * looks for them (DT_RPATH, DT_RUNPATH, DF_1_NODEFLIB) and its interpreter (PT_INTERP). */
#include <assert.h>
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include "elf-deps.h"
#include "elf-file.h"

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
                if (dyn.d_tag == DT_FLAGS_1) {
                        d->nodeflib = d->nodeflib || (dyn.d_un.d_val & DF_1_NODEFLIB);
                        continue;
                }
                if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_SONAME && dyn.d_tag != DT_RPATH &&
                    dyn.d_tag != DT_RUNPATH)
                        continue;
                name = elf_strptr(elf, sh->sh_link, dyn.d_un.d_val);
                if (!name)
                        continue;
                if (dyn.d_tag != DT_NEEDED) {
                        char **slot = dyn.d_tag == DT_SONAME ? &d->soname :
                                      dyn.d_tag == DT_RPATH ? &d->rpath : &d->runpath;

                        if (*slot)
                                continue;       /* the first one counts, as for the loader */
                        *slot = strdup(name);
                        if (!*slot)
                                return -ENOMEM;
                        continue;
                }
                r = add_needed(d, name);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Class, machine and PT_INTERP (read from the file: the segment holds the loader's path). */
static int read_header(Elf *elf, struct elf_deps *d)
{
        GElf_Ehdr eh;
        size_t n_phdrs;
        char *ident;

        if (!gelf_getehdr(elf, &eh) || !(ident = elf_getident(elf, NULL)))
                return -ENOEXEC;
        d->elf_class = (unsigned char)ident[EI_CLASS];
        d->machine = eh.e_machine;
        if (elf_getphdrnum(elf, &n_phdrs) < 0)
                return 0;
        for (size_t i = 0; i < n_phdrs; i++) {
                GElf_Phdr ph;
                size_t size;
                char *image;

                if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP)
                        continue;
                image = elf_rawfile(elf, &size);
                if (!image || ph.p_offset >= size || ph.p_filesz == 0 || ph.p_filesz > size - ph.p_offset)
                        return 0;
                d->interp = strndup(image + ph.p_offset, ph.p_filesz);
                return d->interp ? 0 : -ENOMEM;
        }
        return 0;
}

int elf_deps_read_elf(Elf *elf, struct elf_deps *ret)
{
        struct elf_deps d = {};
        struct elf_file_section s = {};
        int r;

        assert(ret);
        r = read_header(elf, &d);
        while (r >= 0 && elf_file_next_section(elf, &s)) {
                if (s.shdr.sh_type != SHT_DYNAMIC)
                        continue;
                r = read_dynamic(elf, s.scn, &s.shdr, &d);
                break;
        }
        if (r < 0) {
                elf_deps_done(&d);
                return r;
        }
        *ret = d;
        return 0;
}

int elf_deps_read(int fd, struct elf_deps *ret)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        int r;

        assert(ret);
        r = elf_file_open(fd, &elf);
        if (r < 0)
                return r;
        return elf_deps_read_elf(elf, ret);
}

void elf_deps_done(struct elf_deps *d)
{
        assert(d);
        for (size_t i = 0; i < d->n_needed; i++)
                free(d->needed[i]);
        free(d->needed);
        free(d->soname);
        free(d->rpath);
        free(d->runpath);
        free(d->interp);
        *d = (struct elf_deps) {};
}

static bool dup_or_null(const char *s, char **ret)
{
        *ret = s ? strdup(s) : NULL;
        return !s || *ret;
}

int elf_deps_copy(struct elf_deps *to, const struct elf_deps *from)
{
        struct elf_deps c = { .nodeflib = from->nodeflib, .elf_class = from->elf_class, .machine = from->machine };

        assert(to);
        assert(from);
        if (!dup_or_null(from->soname, &c.soname) || !dup_or_null(from->rpath, &c.rpath) ||
            !dup_or_null(from->runpath, &c.runpath) || !dup_or_null(from->interp, &c.interp))
                goto fail;
        if (from->n_needed > 0) {
                c.needed = calloc(from->n_needed, sizeof(*c.needed));
                if (!c.needed)
                        goto fail;
                for (; c.n_needed < from->n_needed; c.n_needed++)
                        if (!(c.needed[c.n_needed] = strdup(from->needed[c.n_needed])))
                                goto fail;
        }
        *to = c;
        return 0;
fail:
        elf_deps_done(&c);
        return -ENOMEM;
}
