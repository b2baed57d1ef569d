/* SPDX-License-Identifier: GPL-2.0-only */
/* Symbolizer: file offset inside a mapped ELF file → function+offset and source file:line. */

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "macro.h"
#include "symbolize.h"

/* Open-addressing hash table (linear probing) from a pair of u64 to a non-NULL pointer. */
struct table_slot {
        uint64_t a, b;
        void *value;                    /* NULL: empty slot */
};

struct table {
        struct table_slot *slots;
        size_t n_slots;                 /* 0 or a power of two */
        size_t n_used;
};

/* A loadable segment's file range and where it is placed. */
struct segment {
        uint64_t offset;
        uint64_t filesz;
        uint64_t vaddr;
};

struct module {
        Dwfl *dwfl;                     /* one per module: it owns the fd and the ELF mapping */
        Dwfl_Module *mod;
        GElf_Addr bias;                 /* libdwfl address = ELF vaddr + bias */
        struct segment *segments;
        size_t n_segments;
        struct table resolved;          /* (file offset, is return address) → struct symbol_info */
        char **strings;                 /* names made here (joined paths, demangled), owned */
        size_t n_strings;
};

struct symbolizer {
        struct table modules;           /* (dev, ino) → struct module */
        struct table not_elf;           /* (dev, ino) → a non-NULL marker: looked at, not ELF */
};

static uint64_t hash_pair(uint64_t a, uint64_t b)
{
        /* splitmix64's finalizer: file offsets and inode numbers are far from random. */
        uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);

        h ^= h >> 30;
        h *= 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 27;
        h *= 0x94d049bb133111ebULL;
        h ^= h >> 31;
        return h;
}

static void *table_get(const struct table *t, uint64_t a, uint64_t b)
{
        if (t->n_slots == 0)
                return NULL;

        size_t mask = t->n_slots - 1;
        for (size_t i = hash_pair(a, b) & mask;; i = (i + 1) & mask) {
                const struct table_slot *slot = &t->slots[i];

                if (!slot->value)
                        return NULL;
                if (slot->a == a && slot->b == b)
                        return slot->value;
        }
}

static void slots_place(struct table_slot *slots, size_t n_slots, uint64_t a, uint64_t b, void *value)
{
        size_t mask = n_slots - 1;
        size_t i = hash_pair(a, b) & mask;

        while (slots[i].value)
                i = (i + 1) & mask;
        slots[i] = (struct table_slot) { .a = a, .b = b, .value = value };
}

/* The key must not be present yet. */
static int table_put(struct table *t, uint64_t a, uint64_t b, void *value)
{
        /* Keep the load at most one half so probe runs stay short. */
        if ((t->n_used + 1) * 2 > t->n_slots) {
                size_t n = t->n_slots > 0 ? t->n_slots * 2 : 16;
                struct table_slot *slots = calloc(n, sizeof(*slots));

                if (!slots)
                        return -ENOMEM;
                for (size_t i = 0; i < t->n_slots; i++)
                        if (t->slots[i].value)
                                slots_place(slots, n, t->slots[i].a, t->slots[i].b, t->slots[i].value);
                free(t->slots);
                t->slots = slots;
                t->n_slots = n;
        }

        slots_place(t->slots, t->n_slots, a, b, value);
        t->n_used++;
        return 0;
}

/* Frees the table and, with free_value, every value in it. */
static void table_done(struct table *t, void (*free_value)(void *value))
{
        for (size_t i = 0; free_value && i < t->n_slots; i++)
                if (t->slots[i].value)
                        free_value(t->slots[i].value);
        free(t->slots);
        *t = (struct table) {};
}

static struct module *module_free(struct module *m)
{
        if (!m)
                return NULL;

        table_done(&m->resolved, free);
        for (size_t i = 0; i < m->n_strings; i++)
                free(m->strings[i]);
        free(m->strings);
        free(m->segments);
        /* Closes the fd libdwfl took and unmaps the file (and any separate debug file). */
        if (m->dwfl)
                dwfl_end(m->dwfl);
        free(m);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct module *, module_free)

static void module_free_void(void *p)
{
        module_free(p);
}

int symbolizer_new(struct symbolizer **ret)
{
        if (!ret)
                return -EINVAL;

        /* Tells libelf which ELF version we speak; it fails only on a broken libelf. */
        if (elf_version(EV_CURRENT) == EV_NONE)
                return -ELIBBAD;

        struct symbolizer *s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;

        *ret = s;
        return 0;
}

struct symbolizer *symbolizer_free(struct symbolizer *s)
{
        if (!s)
                return NULL;

        table_done(&s->modules, module_free_void);
        table_done(&s->not_elf, NULL);
        free(s);
        return NULL;
}

/* -ENOEXEC unless fd is a regular file holding an executable or shared object. Checked here,
 * before libdwfl sees the fd, so libdwfl never takes it for a compressed or embedded image
 * (in which case it closes the fd itself even when reporting fails). */
static int check_loadable_elf(int fd)
{
        struct stat st;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENOEXEC;

        Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        if (!elf)
                return -ENOEXEC;

        GElf_Ehdr ehdr;
        int r = 0;
        if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) ||
            (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN))
                r = -ENOEXEC;

        elf_end(elf);
        return r;
}

static int module_load_segments(struct module *m)
{
        Elf *elf = dwfl_module_getelf(m->mod, &m->bias);
        size_t n_phdrs;

        if (!elf || elf_getphdrnum(elf, &n_phdrs) < 0)
                return -ENOEXEC;

        m->segments = calloc(n_phdrs > 0 ? n_phdrs : 1, sizeof(*m->segments));
        if (!m->segments)
                return -ENOMEM;

        for (size_t i = 0; i < n_phdrs; i++) {
                GElf_Phdr phdr;

                if (!gelf_getphdr(elf, i, &phdr))
                        return -ENOEXEC;
                if (phdr.p_type != PT_LOAD || phdr.p_filesz == 0)
                        continue;
                m->segments[m->n_segments++] = (struct segment) {
                        .offset = phdr.p_offset,
                        .filesz = phdr.p_filesz,
                        .vaddr = phdr.p_vaddr,
                };
        }

        return 0;
}

static int module_new(int fd, const char *path, struct module **ret)
{
        /* Lookups by build ID and .gnu_debuglink (next to path, in its .debug/ and under
         * /usr/lib/debug) come from the standard callbacks; find_elf is unused because the
         * ELF file is reported by fd. */
        static const Dwfl_Callbacks callbacks = {
                .find_elf = dwfl_build_id_find_elf,
                .find_debuginfo = dwfl_standard_find_debuginfo,
        };
        _cleanup_close_ int own_fd = -EBADF;
        _cleanup_(module_freep) struct module *m = NULL;
        int r;

        own_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (own_fd < 0)
                return -errno;

        r = check_loadable_elf(own_fd);
        if (r < 0)
                return r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;

        m->dwfl = dwfl_begin(&callbacks);
        if (!m->dwfl)
                return -ENOMEM;

        dwfl_report_begin(m->dwfl);
        /* add_p_vaddr with base 0 places the file at its own p_vaddr for both ET_EXEC and ET_DYN:
         * libdwfl addresses are then ELF virtual addresses (bias 0). On success libdwfl owns
         * own_fd; on failure it left it open (see check_loadable_elf). */
        m->mod = dwfl_report_elf(m->dwfl, path, path, own_fd, 0, true);
        if (!m->mod)
                return -ENOEXEC;
        TAKE_FD(own_fd);
        if (dwfl_report_end(m->dwfl, NULL, NULL) != 0)
                return -EIO;

        r = module_load_segments(m);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(m);
        return 0;
}

bool symbolizer_has_module(struct symbolizer *s, uint64_t dev, uint64_t ino)
{
        return s && (table_get(&s->modules, dev, ino) || table_get(&s->not_elf, dev, ino));
}

int symbolizer_add_module(struct symbolizer *s, uint64_t dev, uint64_t ino, int fd, const char *path)
{
        _cleanup_(module_freep) struct module *m = NULL;
        int r;

        if (!s || fd < 0 || !path)
                return -EINVAL;

        if (table_get(&s->modules, dev, ino))
                return 0;
        if (s->modules.n_used >= SYMBOLIZER_MODULES_MAX)
                return -ENOSPC;

        r = module_new(fd, path, &m);
        if (r == -ENOEXEC) {
                /* Remember it (locale archives, fonts...) so nobody opens it again to find out. */
                if (s->not_elf.n_used < SYMBOLIZER_MODULES_MAX)
                        (void)table_put(&s->not_elf, dev, ino, s);
                return r;
        }
        if (r < 0)
                return r;

        r = table_put(&s->modules, dev, ino, m);
        if (r < 0)
                return r;
        TAKE_PTR(m);
        return 0;
}

/* Where the byte at file_offset is placed, via the PT_LOAD whose file range holds it. */
static int module_file_offset_to_vaddr(const struct module *m, uint64_t file_offset, uint64_t *ret)
{
        for (size_t i = 0; i < m->n_segments; i++) {
                const struct segment *seg = &m->segments[i];

                if (file_offset >= seg->offset && file_offset - seg->offset < seg->filesz) {
                        *ret = file_offset - seg->offset + seg->vaddr;
                        return 0;
                }
        }
        return -ENOENT;
}

/* Drop "." and "dir/.." components lexically: "/src/build/../demo/x.c" -> "/src/demo/x.c". */
static void normalize_path(char *path)
{
        char *out = path, *p = path;

        while (*p) {
                char *end = strchrnul(p + 1, '/');
                size_t len = end - p;   /* the component with its leading '/' */

                if (len == 2 && p[1] == '.') {
                        /* "/." */
                } else if (len == 3 && p[1] == '.' && p[2] == '.') {
                        while (out > path && *--out != '/')
                                ;
                } else {
                        memmove(out, p, len);
                        out += len;
                }
                p = end;
        }
        if (out == path)
                *out++ = '/';
        *out = 0;
}

/* Keep s (malloc'd, taken) for the module's lifetime, once: returns the kept copy, or NULL
 * (and s freed) when out of memory. */
static const char *module_intern(struct module *m, char *s)
{
        char **n;

        for (size_t i = 0; i < m->n_strings; i++)
                if (strcmp(m->strings[i], s) == 0) {
                        free(s);
                        return m->strings[i];
                }
        n = realloc(m->strings, (m->n_strings + 1) * sizeof(*n));
        if (!n) {
                free(s);
                return NULL;
        }
        m->strings = n;
        m->strings[m->n_strings++] = s;
        return s;
}

/* A relative file name in the line table is relative to its compile unit's DW_AT_comp_dir:
 * users want the path they can open. Returns file itself when it cannot do better. */
static const char *module_source_path(struct module *m, Dwfl_Line *line, const char *file)
{
        Dwarf_Die *cu;
        Dwarf_Attribute attr;
        const char *comp_dir;
        char *joined;

        if (file[0] == '/')
                return file;
        cu = dwfl_linecu(line);
        comp_dir = cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)) : NULL;
        if (!comp_dir || comp_dir[0] != '/')
                return file;
        if (asprintf(&joined, "%s/%s", comp_dir, file) < 0)
                return file;
        normalize_path(joined);
        return module_intern(m, joined) ?: file;
}

/* The C++ runtime's demangler (libstdc++, which every C++ program on the system uses too). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* "LeakLib::slowMemoryLeak()" for "_ZN7LeakLib14slowMemoryLeakEv"; other names as they are. */
static const char *module_demangle(struct module *m, const char *name)
{
        int status = 0;
        char *d;

        if (strncmp(name, "_Z", 2) != 0)
                return name;
        d = __cxa_demangle(name, NULL, NULL, &status);
        if (!d || status != 0) {
                free(d);
                return name;
        }
        return module_intern(m, d) ?: name;
}

static void module_lookup(struct module *m, uint64_t file_offset, bool is_return_address,
                          struct symbol_info *ret)
{
        struct symbol_info info = {};
        uint64_t vaddr;

        /* Outside every loaded segment nothing can cover it: no symbol, no line. */
        if (module_file_offset_to_vaddr(m, file_offset, &vaddr) < 0) {
                *ret = info;
                return;
        }

        GElf_Addr addr = vaddr + m->bias;
        /* A return address may be the first byte after a noreturn call that ends a function,
         * so both the function and the line are those of the call instruction before it. */
        GElf_Addr lookup = is_return_address && addr > 0 ? addr - 1 : addr;

        GElf_Off sym_offset;
        GElf_Sym sym;
        const char *name = dwfl_module_addrinfo(m->mod, lookup, &sym_offset, &sym, NULL, NULL, NULL);
        if (name && name[0]) {
                info.symbol = module_demangle(m, name);
                info.offset = sym_offset + (addr - lookup);
        }

        Dwfl_Line *line = dwfl_module_getsrc(m->mod, lookup);
        if (line) {
                int lineno = 0;
                const char *file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

                if (file) {
                        info.file = module_source_path(m, line, file);
                        info.line = MAX(lineno, 0);
                }
        }

        *ret = info;
}

int symbolizer_resolve(struct symbolizer *s, uint64_t dev, uint64_t ino, uint64_t file_offset,
                       bool is_return_address, struct symbol_info *ret)
{
        if (!s || !ret)
                return -EINVAL;

        struct module *m = table_get(&s->modules, dev, ino);
        if (!m)
                return -ENOENT;

        const struct symbol_info *cached = table_get(&m->resolved, file_offset, is_return_address);
        if (cached) {
                *ret = *cached;
                return 0;
        }

        struct symbol_info info;
        module_lookup(m, file_offset, is_return_address, &info);

        /* The strings point into libdwfl's data for the module, which lives as long as we do. */
        if (m->resolved.n_used < SYMBOLIZER_CACHE_PER_MODULE_MAX) {
                _cleanup_free_ struct symbol_info *entry = malloc(sizeof(*entry));
                int r;

                if (!entry)
                        return -ENOMEM;
                *entry = info;
                r = table_put(&m->resolved, file_offset, is_return_address, entry);
                if (r < 0)
                        return r;
                TAKE_PTR(entry);
        }

        *ret = info;
        return 0;
}
