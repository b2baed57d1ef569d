/* SPDX-License-Identifier: GPL-2.0-only */
/* What an ELF file would cost to symbolize, read from its headers before libdw sees it. */
#include <assert.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <gelf.h>
#include <lzma.h>
#include <string.h>
#include "elf-file.h"
#include "elf-inspect.h"
#include "macro.h"

/* liblzma's own bound on the decoder's dictionary and state, far above a real .gnu_debugdata's. */
#define MINIDEBUGINFO_DECODER_MEMLIMIT (64ULL << 20)

int elf_inspect_zdebug_size(const void *data, size_t size, uint64_t *ret)
{
        const uint8_t *p = data;
        uint64_t v = 0;

        assert(ret);
        if (size < 12 || memcmp(p, "ZLIB", 4) != 0)
                return -EBADMSG;
        for (int i = 4; i < 12; i++)
                v = (v << 8) | p[i];
        *ret = v;
        return 0;
}

/* How many bytes the xz stream in data inflates to, decoding at most limit + 1 of them. */
static int xz_inflated_size(const void *data, size_t size, uint64_t limit, uint64_t *ret, bool *ret_over)
{
        lzma_stream strm = LZMA_STREAM_INIT;
        uint8_t scratch[16384];
        uint64_t total = 0;
        lzma_ret lr;

        if (lzma_stream_decoder(&strm, MINIDEBUGINFO_DECODER_MEMLIMIT, 0) != LZMA_OK)
                return -ENOMEM;
        strm.next_in = data;
        strm.avail_in = size;
        do {
                strm.next_out = scratch;
                strm.avail_out = sizeof(scratch);
                lr = lzma_code(&strm, LZMA_FINISH);
                total += sizeof(scratch) - strm.avail_out;
                if (total > limit) {
                        lzma_end(&strm);
                        *ret = total;
                        *ret_over = true;
                        return 0;
                }
        } while (lr == LZMA_OK);
        lzma_end(&strm);
        if (lr != LZMA_STREAM_END)
                return -EBADMSG;
        *ret = total;
        *ret_over = false;
        return 0;
}

static bool is_debug_section(const char *name)
{
        return name && (strncmp(name, ".debug_", 7) == 0 || strncmp(name, ".zdebug_", 8) == 0);
}

/* The size one section takes once libdw inflates it; 0 when it is not compressed. */
static uint64_t inflated_size(Elf_Scn *scn, const GElf_Shdr *shdr, const char *name)
{
        uint64_t size = 0;

        if (shdr->sh_flags & SHF_COMPRESSED) {
                GElf_Chdr chdr;

                /* a header that cannot be read cannot be inflated either */
                return gelf_getchdr(scn, &chdr) ? chdr.ch_size : 0;
        }
        if (strncmp(name, ".zdebug_", 8) == 0 && shdr->sh_type != SHT_NOBITS) {
                Elf_Data *raw = elf_rawdata(scn, NULL);

                if (raw && elf_inspect_zdebug_size(raw->d_buf, raw->d_size, &size) == 0)
                        return size;
        }
        return 0;
}

int elf_inspect_minidebuginfo(Elf *elf, uint64_t max_bytes, uint64_t *ret_bytes, bool *ret_too_large)
{
        struct elf_file_section s;
        Elf_Data *raw;
        int r;

        assert(ret_bytes);
        assert(ret_too_large);
        *ret_bytes = 0;
        *ret_too_large = false;
        if (elf_file_find_section(elf, ".gnu_debugdata", &s) < 0 || s.shdr.sh_type == SHT_NOBITS ||
            !(raw = elf_rawdata(s.scn, NULL)))
                return 0;
        r = xz_inflated_size(raw->d_buf, raw->d_size, max_bytes, ret_bytes, ret_too_large);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                *ret_bytes = 0;
        return 0;
}

int elf_inspect(Elf *elf, struct elf_inspection *ret)
{
        struct elf_inspection in = {};
        struct elf_file_section s = {};
        const void *build_id = NULL;
        GElf_Ehdr ehdr;
        size_t shstrndx;
        ssize_t len;

        assert(ret);
        if (!gelf_getehdr(elf, &ehdr) || elf_getshdrstrndx(elf, &shstrndx) < 0)
                return -ENOEXEC;
        in.loadable = ehdr.e_type == ET_EXEC || ehdr.e_type == ET_DYN;
        len = dwelf_elf_gnu_build_id(elf, &build_id);
        if (len > 0 && (size_t)len <= sizeof(in.build_id)) {
                memcpy(in.build_id, build_id, len);
                in.build_id_len = len;
        }
        while (elf_file_next_section(elf, &s)) {
                uint64_t size;

                if (strcmp(s.name, ".debug_info") == 0 || strcmp(s.name, ".zdebug_info") == 0)
                        in.has_dwarf = true;
                if (strcmp(s.name, ".gnu_debugdata") == 0)
                        in.has_minidebuginfo = true;
                if (!is_debug_section(s.name))
                        continue;
                size = inflated_size(s.scn, &s.shdr, s.name);
                in.inflated_debug_bytes += size;
                in.largest_inflated_bytes = MAX(in.largest_inflated_bytes, size);
        }
        *ret = in;
        return 0;
}

void elf_inspect_build_id_hex(const uint8_t *id, size_t len, char ret[static ELF_BUILD_ID_HEX_MAX])
{
        static const char digits[] = "0123456789abcdef";
        size_t i;

        len = MIN(len, (size_t)ELF_BUILD_ID_MAX);
        for (i = 0; i < len; i++) {
                ret[2 * i] = digits[id[i] >> 4];
                ret[2 * i + 1] = digits[id[i] & 0xf];
        }
        ret[2 * i] = '\0';
}

/* Note headers and their name and descriptor are 4-byte aligned, in files (SHT_NOTE with
 * sh_addralign 4) as in the kernel's notes. */
static size_t note_align(size_t n)
{
        return (n + 3) & ~(size_t)3;
}

int elf_inspect_notes_build_id(const void *data, size_t n, uint8_t ret[static ELF_BUILD_ID_MAX], size_t *ret_len)
{
        const uint8_t *p = data;
        size_t at = 0;

        assert(data || n == 0);
        assert(ret_len);
        while (n - at >= sizeof(GElf_Nhdr)) {
                GElf_Nhdr h;
                size_t name_at, desc_at;

                memcpy(&h, p + at, sizeof(h));
                name_at = at + sizeof(h);
                if (h.n_namesz > n - name_at || note_align(h.n_namesz) > n - name_at)
                        return -EBADMSG;
                desc_at = name_at + note_align(h.n_namesz);
                if (h.n_descsz > n - desc_at)
                        return -EBADMSG;
                if (h.n_type == NT_GNU_BUILD_ID && h.n_namesz == sizeof(ELF_NOTE_GNU) &&
                    memcmp(p + name_at, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) == 0) {
                        if (h.n_descsz == 0 || h.n_descsz > ELF_BUILD_ID_MAX)
                                return -EBADMSG;
                        memcpy(ret, p + desc_at, h.n_descsz);
                        *ret_len = h.n_descsz;
                        return 0;
                }
                if (note_align(h.n_descsz) > n - desc_at)
                        break;          /* the last note, its padding left off */
                at = desc_at + note_align(h.n_descsz);
        }
        return -ENOENT;
}
