/* SPDX-License-Identifier: GPL-2.0-only */
/* One ELF file open for symbolization with libdwfl: file offset → function+offset, inlined
 * calls, source file:line; its separate debug file found safely (debuginfo.h). */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libiberty/demangle.h>

#include "debuginfo.h"
#include "elf-file.h"
#include "elf-symbols.h"
#include "macro.h"

/* A loadable segment's file range and where it is placed. */
struct segment {
        uint64_t offset;
        uint64_t filesz;
        uint64_t vaddr;
};

struct elf_symbols {
        Dwfl *dwfl;                     /* it owns the fd and the ELF mapping */
        Dwfl_Module *mod;
        GElf_Addr bias;                 /* libdwfl address = ELF vaddr + bias */
        struct segment *segments;
        size_t n_segments;
        bool use_dwarf;
        /* what the debug file search needs, and what it found */
        char *path;
        uint64_t dev, ino;
        uint8_t build_id[ELF_BUILD_ID_MAX];
        size_t build_id_len;
        uint64_t max_section_bytes, max_debug_bytes;
        uint64_t debug_bytes;
        char *refused_debug_path;
        uint64_t refused_debug_bytes;
};

/* What one lookup writes into: names kept in strings. */
struct lookup {
        struct elf_symbols *e;
        struct string_set *strings;
};

/* libdwfl's find_debuginfo callback: our own search (debuginfo_find), never libdwfl's standard
 * one, which opens candidates with a blocking open() and may ask a debuginfod server. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                          char **debuginfo_file_name)
{
        struct elf_symbols *e = *userdata;
        struct debuginfo_found found;
        int fd;

        if (!e || !e->use_dwarf)
                return -1;
        if (debuginfo_find(&(struct debuginfo_request) {
                        .object_path = e->path,
                        .object_dev = e->dev,
                        .object_ino = e->ino,
                        .build_id = e->build_id_len ? e->build_id : NULL,
                        .build_id_len = e->build_id_len,
                        .debuglink = debuglink_file,
                        .debuglink_crc = debuglink_crc,
                        .max_section_bytes = e->max_section_bytes,
                        .max_bytes = e->max_debug_bytes,
                }, &found) < 0)
                return -1;
        if (found.refused_path && !e->refused_debug_path) {
                e->refused_debug_path = TAKE_PTR(found.refused_path);
                e->refused_debug_bytes = found.refused_bytes;
        }
        if (found.fd < 0) {
                debuginfo_found_done(&found);
                return -1;
        }
        e->debug_bytes = found.inflated_bytes;
        *debuginfo_file_name = TAKE_PTR(found.path);
        fd = TAKE_FD(found.fd);
        debuginfo_found_done(&found);
        return fd;
}

/* The file is reported by fd: libdwfl never has to find it. */
static int find_no_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                       char **file_name, Elf **elfp)
{
        return -1;
}

/* -ENOEXEC unless fd is a regular file holding an executable or shared object. Checked here,
 * before libdwfl sees the fd, so libdwfl never takes it for a compressed or embedded image
 * (which it would inflate whole, and close the fd of even when reporting fails). */
static int check_loadable_elf(int fd)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        struct stat st;
        GElf_Ehdr ehdr;
        int r;

        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENOEXEC;
        r = elf_file_open(fd, &elf);
        if (r < 0)
                return r;
        if (!gelf_getehdr(elf, &ehdr) || (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN))
                return -ENOEXEC;
        return 0;
}

static int load_segments(struct elf_symbols *e)
{
        Elf *elf = dwfl_module_getelf(e->mod, &e->bias);
        size_t n_phdrs;

        if (!elf || elf_getphdrnum(elf, &n_phdrs) < 0)
                return -ENOEXEC;
        e->segments = calloc(n_phdrs > 0 ? n_phdrs : 1, sizeof(*e->segments));
        if (!e->segments)
                return -ENOMEM;
        for (size_t i = 0; i < n_phdrs; i++) {
                GElf_Phdr phdr;

                if (!gelf_getphdr(elf, i, &phdr))
                        return -ENOEXEC;
                if (phdr.p_type != PT_LOAD || phdr.p_filesz == 0)
                        continue;
                e->segments[e->n_segments++] = (struct segment) {
                        .offset = phdr.p_offset,
                        .filesz = phdr.p_filesz,
                        .vaddr = phdr.p_vaddr,
                };
        }
        return 0;
}

struct elf_symbols *elf_symbols_close(struct elf_symbols *e)
{
        if (!e)
                return NULL;
        /* Closes the fd libdwfl took and unmaps the file (and any separate debug file). */
        if (e->dwfl)
                dwfl_end(e->dwfl);
        free(e->segments);
        free(e->path);
        free(e->refused_debug_path);
        free(e);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct elf_symbols *, elf_symbols_close)

int elf_symbols_open(int fd, const struct elf_symbols_params *p, struct elf_symbols **ret)
{
        static const Dwfl_Callbacks callbacks = {
                .find_elf = find_no_elf,
                .find_debuginfo = find_debuginfo,
        };
        _cleanup_close_ int own_fd = -EBADF;
        _cleanup_(elf_symbols_closep) struct elf_symbols *e = NULL;
        void **userdata = NULL;
        int r;

        assert(p);
        assert(ret);
        own_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (own_fd < 0)
                return -errno;
        r = check_loadable_elf(own_fd);
        if (r < 0)
                return r;
        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->path = strdup(p->path);
        if (!e->path)
                return -ENOMEM;
        e->dev = p->dev;
        e->ino = p->ino;
        e->use_dwarf = p->use_dwarf;
        e->max_section_bytes = p->max_section_bytes;
        e->max_debug_bytes = p->max_debug_bytes;
        if (p->inspection) {
                memcpy(e->build_id, p->inspection->build_id, p->inspection->build_id_len);
                e->build_id_len = p->inspection->build_id_len;
        }
        e->dwfl = dwfl_begin(&callbacks);
        if (!e->dwfl)
                return -ENOMEM;
        dwfl_report_begin(e->dwfl);
        /* add_p_vaddr with base 0 places the file at its own p_vaddr for both ET_EXEC and ET_DYN:
         * libdwfl addresses are then ELF virtual addresses (bias 0). On success libdwfl owns
         * own_fd; on failure it left it open (see check_loadable_elf). */
        e->mod = dwfl_report_elf(e->dwfl, p->path, p->path, own_fd, 0, true);
        if (!e->mod)
                return -ENOEXEC;
        TAKE_FD(own_fd);
        if (dwfl_report_end(e->dwfl, NULL, NULL) != 0)
                return -EIO;
        /* The callbacks get the module's userdata: this. */
        if (dwfl_module_info(e->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL) && userdata)
                *userdata = e;
        r = load_segments(e);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(e);
        return 0;
}

Elf *elf_symbols_elf(struct elf_symbols *e)
{
        GElf_Addr bias;

        assert(e);
        return dwfl_module_getelf(e->mod, &bias);
}

uint64_t elf_symbols_debug_bytes(const struct elf_symbols *e)
{
        assert(e);
        return e->debug_bytes;
}

const char *elf_symbols_refused_debug_file(const struct elf_symbols *e, uint64_t *ret_bytes)
{
        assert(e);
        if (ret_bytes)
                *ret_bytes = e->refused_debug_bytes;
        return e->refused_debug_path;
}

/* Where the byte at file_offset is placed, via the PT_LOAD whose file range holds it. */
static int file_offset_to_vaddr(const struct elf_symbols *e, uint64_t file_offset, uint64_t *ret)
{
        for (size_t i = 0; i < e->n_segments; i++) {
                const struct segment *seg = &e->segments[i];

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

/* A relative file name in the line table is relative to its compile unit's DW_AT_comp_dir:
 * users want the path they can open. */
static const char *source_path(struct lookup *l, Dwarf_Die *cu, const char *file)
{
        Dwarf_Attribute attr;
        const char *comp_dir;
        char *joined;

        if (file[0] == '/')
                return string_set_intern(l->strings, file);
        comp_dir = cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)) : NULL;
        if (!comp_dir || comp_dir[0] != '/')
                return string_set_intern(l->strings, file);
        if (asprintf(&joined, "%s/%s", comp_dir, file) < 0)
                return string_set_intern(l->strings, file);
        normalize_path(joined);
        return string_set_intern_take(l->strings, joined);
}

char *symbolizer_demangle(const char *name)
{
        /* "_Z": C++ (Itanium ABI) and Rust's legacy mangling; "_R": Rust's v0 mangling. */
        if (!name || (strncmp(name, "_Z", 2) != 0 && strncmp(name, "_R", 2) != 0))
                return NULL;
        /* libiberty's demangler (binutils and gdb use it) knows all three; for Rust legacy names
         * it drops the trailing ::h<hash>, as rustc-demangle's alternate form does. */
        return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}

/* name demangled (or as it is), kept in the lookup's strings. */
static const char *demangled(struct lookup *l, const char *name)
{
        char *d = symbolizer_demangle(name);

        if (!d)
                return string_set_intern(l->strings, name);
        return string_set_intern_take(l->strings, d);
}

/* What a function's DWARF entry (or an inlined call of it) is called: its linkage name
 * demangled, qualified as the symbol table would have it, else its plain DW_AT_name. Follows
 * DW_AT_abstract_origin and DW_AT_specification to the declaration that holds the names. */
static const char *die_name(struct lookup *l, Dwarf_Die *die)
{
        Dwarf_Attribute attr;
        const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

        if (!name)
                name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
        if (name)
                return demangled(l, name);
        return string_set_intern(l->strings, dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr)));
}

/* Where an inlined call was made: DW_AT_call_file (an index into the CU's file table) and
 * DW_AT_call_line. Returns the file, NULL when unknown. */
static const char *call_site(struct lookup *l, Dwarf_Die *cu, Dwarf_Die *inlined, int *ret_line)
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
        return file ? source_path(l, cu, file) : NULL;
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
static size_t inline_frames(struct lookup *l, GElf_Addr addr, struct symbol_frame *frames,
                            size_t max, const char **file, int *line, const char **holder)
{
        Dwarf_Addr dw_bias;
        Dwarf_Die *cu = dwfl_module_addrdie(l->e->mod, addr, &dw_bias);
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
                        *holder = die_name(l, &path[i]);
                        break;
                }
                if (tag != DW_TAG_inlined_subroutine)
                        continue;       /* lexical blocks */
                if (n < max)
                        frames[n++] = (struct symbol_frame) {
                                .symbol = die_name(l, &path[i]),
                                .inlined = true,
                                .file = *file,
                                .line = *line,
                        };
                /* Deeper chains than max lose their outer inlined frames; lines stay right. */
                *file = call_site(l, cu, &path[i], line);
        }
        return n;
}

/* The frames at vaddr: the inlined ones into found (innermost first, their count returned) and
 * the function holding the code into *outer. */
static size_t frames_at(struct lookup *l, uint64_t vaddr, bool is_return_address,
                        struct symbol_frame *found, struct symbol_frame *outer)
{
        struct elf_symbols *e = l->e;
        GElf_Addr addr = vaddr + e->bias;
        /* A return address may be the first byte after a noreturn call that ends a function,
         * so both the function and the line are those of the call instruction before it. */
        GElf_Addr lookup = is_return_address && addr > 0 ? addr - 1 : addr;
        const char *file = NULL, *holder = NULL, *name;
        GElf_Off sym_offset;
        GElf_Sym sym;
        int lineno = 0;
        size_t n = 0;

        if (e->use_dwarf) {
                Dwfl_Line *line = dwfl_module_getsrc(e->mod, lookup);

                if (line) {
                        const char *f = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);

                        if (f)
                                file = source_path(l, dwfl_linecu(line), f);
                        lineno = MAX(lineno, 0);
                }
                n = inline_frames(l, lookup, found, SYMBOLIZER_INLINE_DEPTH_MAX, &file, &lineno, &holder);
        }
        name = dwfl_module_addrinfo(e->mod, lookup, &sym_offset, &sym, NULL, NULL, NULL);
        if (name && name[0]) {
                outer->symbol = demangled(l, name);
                outer->has_offset = true;
                outer->offset = sym_offset + (addr - lookup);
        } else {
                outer->symbol = holder; /* a function the symbol table lost, named by DWARF */
        }
        outer->file = file;
        outer->line = file ? lineno : 0;
        return n;
}

int elf_symbols_lookup(struct elf_symbols *e, uint64_t file_offset, bool is_return_address,
                       struct string_set *strings, struct symbol_frame *frames, size_t max, size_t *n_frames)
{
        struct lookup l = { .e = e, .strings = strings };
        struct symbol_frame found[SYMBOLIZER_FRAMES_MAX];
        struct symbol_frame outer = {};
        uint64_t vaddr;
        size_t n = 0;

        assert(e);
        assert(strings);
        assert(frames);
        assert(n_frames);
        if (max == 0) {
                *n_frames = 0;
                return 0;
        }
        /* Outside every loaded segment nothing can cover it: no symbol, no line. */
        if (file_offset_to_vaddr(e, file_offset, &vaddr) >= 0)
                n = frames_at(&l, vaddr, is_return_address, found, &outer);
        found[n++] = outer;
        /* When cut, the function holding the code is the one kept last. */
        n = MIN(n, max);
        memcpy(frames, found, (n - 1) * sizeof(frames[0]));
        frames[n - 1] = outer;
        *n_frames = n;
        return 0;
}
