/* SPDX-License-Identifier: GPL-2.0-only */
/* What an ELF file would cost to symbolize, read from its headers before libdw sees it: its
 * build ID, and how much its compressed sections inflate to (a 1 MB section can claim 1 GB). */
#pragma once

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_BUILD_ID_MAX 64
/* A build ID as lowercase hex, with its NUL. */
#define ELF_BUILD_ID_HEX_MAX (2 * ELF_BUILD_ID_MAX + 1)

struct elf_inspection {
        uint8_t build_id[ELF_BUILD_ID_MAX];
        size_t build_id_len;            /* 0: no GNU build ID note */
        bool loadable;                  /* ET_EXEC or ET_DYN */
        bool has_dwarf;                 /* .debug_info or .zdebug_info */
        uint64_t inflated_debug_bytes;  /* what libdw would allocate to inflate the compressed
                                         * .debug_* / .zdebug_* sections, all together */
        uint64_t largest_inflated_bytes;/* the largest one of those */
        bool has_minidebuginfo;         /* .gnu_debugdata: an xz-compressed symbol table */
};

/* Inspect elf (its headers only). -ENOEXEC when elf is not a readable ELF file. */
int elf_inspect(Elf *elf, struct elf_inspection *ret);

/* What elf's .gnu_debugdata inflates to: its xz stream states no size one can trust, so it is
 * decoded into a scratch buffer and counted, stopping past max_bytes (*ret_too_large). 0 without
 * one (or one that does not decode: libdwfl fails to read it too, harmlessly). -ENOMEM. */
int elf_inspect_minidebuginfo(Elf *elf, uint64_t max_bytes, uint64_t *ret_bytes, bool *ret_too_large);

/* id (len bytes, at most ELF_BUILD_ID_MAX) as lowercase hex into ret: "" for len 0. Pure. */
void elf_inspect_build_id_hex(const uint8_t *id, size_t len, char ret[static ELF_BUILD_ID_HEX_MAX]);

/* The GNU build ID among the ELF notes at data (n bytes, the native byte order: what
 * /sys/kernel/notes and /sys/module/NAME/notes/.note.gnu.build-id hold) into ret, its length
 * into *ret_len. Pure. -ENOENT without one, -EBADMSG for notes cut short or one longer than
 * ELF_BUILD_ID_MAX. */
int elf_inspect_notes_build_id(const void *data, size_t n, uint8_t ret[static ELF_BUILD_ID_MAX], size_t *ret_len);

/* The bytes a debug-section header states: SHF_COMPRESSED's ch_size, or the size after a
 * .zdebug section's "ZLIB" magic (big-endian). Pure: for the unit tests. -EBADMSG when short. */
int elf_inspect_zdebug_size(const void *data, size_t size, uint64_t *ret);
