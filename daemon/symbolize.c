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
#include <libiberty/demangle.h>

#include "elf-file.h"
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
        struct table resolved;          /* (file offset, is return address) → struct resolved_frames */
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

        _cleanup_(elf_endp) Elf *elf = NULL;
        GElf_Ehdr ehdr;
        int r = elf_file_open(fd, &elf);

        if (r < 0)
                return r;
        if (!gelf_getehdr(elf, &ehdr) || (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN))
                return -ENOEXEC;
        return 0;
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
static const char *module_source_path(struct module *m, Dwarf_Die *cu, const char *file)
{
        Dwarf_Attribute attr;
        const char *comp_dir;
        char *joined;

        if (file[0] == '/')
                return file;
        comp_dir = cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)) : NULL;
        if (!comp_dir || comp_dir[0] != '/')
                return file;
        if (asprintf(&joined, "%s/%s", comp_dir, file) < 0)
                return file;
        normalize_path(joined);
        return module_intern(m, joined) ?: file;
}

/* The frames one address resolves to, innermost first, as cached. */
struct resolved_frames {
        size_t n;
        struct symbol_frame frames[];
};

char *symbol_demangle(const char *name)
{
        /* "_Z": C++ (Itanium ABI) and Rust's legacy mangling; "_R": Rust's v0 mangling. */
        if (!name || (strncmp(name, "_Z", 2) != 0 && strncmp(name, "_R", 2) != 0))
                return NULL;
        /* libiberty's demangler (binutils and gdb use it) knows all three; for Rust legacy names
         * it drops the trailing ::h<hash>, as rustc-demangle's alternate form does. */
        return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

/* name demangled and kept for the module's lifetime, or name itself. */
static const char *module_demangle(struct module *m, const char *name)
{
        char *d = symbol_demangle(name);

        if (!d)
                return name;
        return module_intern(m, d) ?: name;
}

/* What a function's DWARF entry (or an inlined call of it) is called: its linkage name
 * demangled, qualified as the symbol table would have it, else its plain DW_AT_name. Follows
 * DW_AT_abstract_origin and DW_AT_specification to the declaration that holds the names. */
static const char *module_die_name(struct module *m, Dwarf_Die *die)
{
        Dwarf_Attribute attr;
        const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

        if (!name)
                name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
        if (name)
                return module_demangle(m, name);
        return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

/* Where an inlined call was made: DW_AT_call_file (an index into the CU's file table) and
 * DW_AT_call_line. Returns the file, NULL when unknown. */
static const char *module_call_site(struct module *m, Dwarf_Die *cu, Dwarf_Die *inlined, int *ret_line)
{
        Dwarf_Attribute attr;
        Dwarf_Word file_index, line;
        Dwarf_Files *files;
        size_t n_files;
        const char *file;

        *ret_line = 0;
        if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &line) == 0 && line <= INT32_MAX)
                *ret_line = (int) line;
        if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &file_index) != 0 ||
            dwarf_getsrcfiles(cu, &files, &n_files) != 0 || file_index >= n_files)
                return NULL;
        file = dwarf_filesrc(files, file_index, NULL, NULL);
        return file ? module_source_path(m, cu, file) : NULL;
}

/* Deepest nesting of functions, inlined calls and blocks looked at below a compile unit. */
#define SCOPE_PATH_MAX 64

/* Records in path[] the DIEs below parent whose code covers pc, outermost first: the function,
 * then lexical blocks and inlined calls. Descends namespaces, where Rust (and some C++) places
 * its functions: libdw's dwarf_getscopes() does not look inside them. Returns the new depth. */
static int scope_path(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *path, int depth)
{
        Dwarf_Die child;

        if (depth >= SCOPE_PATH_MAX || dwarf_child(parent, &child) != 0)
                return depth;
        do {
                switch (dwarf_tag(&child)) {
                case DW_TAG_subprogram:
                case DW_TAG_inlined_subroutine:
                case DW_TAG_lexical_block:
                        if (dwarf_haspc(&child, pc) == 1) {
                                path[depth] = child;
                                return scope_path(&path[depth], pc, path, depth + 1);
                        }
                        break;
                case DW_TAG_namespace:
                case DW_TAG_module: {
                        int d = scope_path(&child, pc, path, depth);

                        if (d > depth)
                                return d;
                        break;
                }
                default:
                        break;
                }
        } while (dwarf_siblingof(&child, &child) == 0);
        return depth;
}

/* The inlined calls covering addr (a libdwfl address), innermost first, into frames[] (at most
 * max). Entering, *file and *line are the line table's for addr; leaving, they are the call site
 * of the outermost inlined call, i.e. the line in the function that holds the code, and *holder
 * is that function's DWARF name (NULL if unknown). */
static size_t module_inline_frames(struct module *m, GElf_Addr addr, struct symbol_frame *frames,
                                   size_t max, const char **file, int *line, const char **holder)
{
        Dwarf_Addr dw_bias;
        Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, &dw_bias);
        Dwarf_Die path[SCOPE_PATH_MAX];
        size_t n = 0;
        int depth;

        *holder = NULL;
        if (!cu)
                return 0;
        depth = scope_path(cu, addr - dw_bias, path, 0);
        for (int i = depth - 1; i >= 0; i--) {
                int tag = dwarf_tag(&path[i]);

                if (tag == DW_TAG_subprogram) {
                        *holder = module_die_name(m, &path[i]);
                        break;
                }
                if (tag != DW_TAG_inlined_subroutine)
                        continue;       /* lexical blocks */
                if (n < max)
                        frames[n++] = (struct symbol_frame) {
                                .symbol = module_die_name(m, &path[i]),
                                .inlined = true,
                                .file = *file,
                                .line = *line,
                        };
                /* Deeper chains than max lose their outer inlined frames; lines stay right. */
                *file = module_call_site(m, cu, &path[i], line);
        }
        return n;
}

static struct resolved_frames *module_lookup(struct module *m, uint64_t file_offset, bool is_return_address)
{
        struct symbol_frame frames[SYMBOLIZER_FRAMES_MAX];
        struct symbol_frame outer = {};
        struct resolved_frames *r;
        const char *file = NULL, *holder = NULL;
        size_t n = 0;
        int lineno = 0;
        uint64_t vaddr;

        /* Outside every loaded segment nothing can cover it: no symbol, no line. */
        if (module_file_offset_to_vaddr(m, file_offset, &vaddr) < 0)
                goto done;

        GElf_Addr addr = vaddr + m->bias;
        /* A return address may be the first byte after a noreturn call that ends a function,
         * so both the function and the line are those of the call instruction before it. */
        GElf_Addr lookup = is_return_address && addr > 0 ? addr - 1 : addr;

        Dwfl_Line *line = dwfl_module_getsrc(m->mod, lookup);
        if (line) {
                const char *f = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

                if (f)
                        file = module_source_path(m, dwfl_linecu(line), f);
                lineno = MAX(lineno, 0);
        }
        n = module_inline_frames(m, lookup, frames, SYMBOLIZER_INLINE_DEPTH_MAX, &file, &lineno, &holder);

        GElf_Off sym_offset;
        GElf_Sym sym;
        const char *name = dwfl_module_addrinfo(m->mod, lookup, &sym_offset, &sym, NULL, NULL, NULL);
        if (name && name[0]) {
                outer.symbol = module_demangle(m, name);
                outer.has_offset = true;
                outer.offset = sym_offset + (addr - lookup);
        } else {
                outer.symbol = holder;  /* a function the symbol table lost, named by DWARF */
        }
        outer.file = file;
        outer.line = file ? lineno : 0;

done:
        frames[n++] = outer;
        r = malloc(sizeof(*r) + n * sizeof(r->frames[0]));
        if (!r)
                return NULL;
        r->n = n;
        memcpy(r->frames, frames, n * sizeof(frames[0]));
        return r;
}

/* Copy up to max frames out; when cut, the function holding the code is the one kept last. */
static void frames_copy_out(const struct resolved_frames *r, struct symbol_frame *frames, size_t max,
                            size_t *n_frames)
{
        size_t n = MIN(r->n, max);

        if (n == 0) {
                *n_frames = 0;
                return;
        }
        memcpy(frames, r->frames, (n - 1) * sizeof(frames[0]));
        frames[n - 1] = r->frames[r->n - 1];
        *n_frames = n;
}

int symbolizer_resolve(struct symbolizer *s, uint64_t dev, uint64_t ino, uint64_t file_offset,
                       bool is_return_address, struct symbol_frame *frames, size_t max, size_t *n_frames)
{
        if (!s || !n_frames || (max > 0 && !frames))
                return -EINVAL;

        struct module *m = table_get(&s->modules, dev, ino);
        if (!m)
                return -ENOENT;

        const struct resolved_frames *cached = table_get(&m->resolved, file_offset, is_return_address);
        if (cached) {
                frames_copy_out(cached, frames, max, n_frames);
                return 0;
        }

        /* The strings point into libdwfl's data for the module, which lives as long as we do. */
        _cleanup_free_ struct resolved_frames *r = module_lookup(m, file_offset, is_return_address);
        if (!r)
                return -ENOMEM;
        frames_copy_out(r, frames, max, n_frames);

        if (m->resolved.n_used < SYMBOLIZER_CACHE_PER_MODULE_MAX) {
                int k = table_put(&m->resolved, file_offset, is_return_address, r);

                if (k < 0)
                        return k;
                TAKE_PTR(r);
        }
        return 0;
}
