/* SPDX-License-Identifier: GPL-2.0-only */
/* An unwind table as the table store keeps it on disk: a header naming the file it was built for
 * and checking what follows, then the rows. Pure (no I/O): for the unit tests. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "unwind-table.h"

#define TABLE_FILE_MAGIC "MLKUNWT\n"
/* Bump with any change to the header, the rows' layout or what the builder puts in them
 * (unwind-table.c): a file of another version is rejected and rebuilt. */
#define TABLE_FILE_VERSION 1u
#define TABLE_FILE_KEY_BUILD_ID_MAX 64

enum table_file_key_kind {
        TABLE_FILE_KEY_BUILD_ID = 1,         /* the file's GNU build ID, and its size */
        TABLE_FILE_KEY_IDENTITY = 2,         /* a file without one: dev, inode, size, mtime, ctime */
};

/* What a table was built for. Keyed by build ID where there is one, so every copy of a library
 * (another container, a reinstalled package) shares it; the size goes with it, since a stripped
 * file and its unstripped original share the ID but not their .debug_frame. Fixed layout: it is
 * written as is. */
struct table_file_key {
        uint32_t kind;                  /* enum table_file_key_kind */
        uint32_t build_id_len;
        uint8_t build_id[TABLE_FILE_KEY_BUILD_ID_MAX];
        uint64_t size;
        uint64_t dev, ino;              /* TABLE_FILE_KEY_IDENTITY only (0 otherwise) */
        int64_t mtime_ns, ctime_ns;
};
_Static_assert(sizeof(struct table_file_key) == 112, "table_key has no padding");

struct table_file_segment {
        uint64_t vaddr, offset, size;
};

struct table_file_header {
        char magic[8];                  /* TABLE_FILE_MAGIC */
        uint32_t version;               /* TABLE_FILE_VERSION */
        uint32_t header_bytes;          /* sizeof(struct table_file_header) */
        struct table_file_key key;
        uint64_t base_vaddr;
        uint32_t n_segments;
        uint32_t row_bytes;             /* sizeof(struct unwind_row) */
        struct table_file_segment segments[UNWIND_TABLE_SEGMENTS_MAX];
        uint64_t n_rows;
        uint64_t checksum;              /* table_file_checksum() of this header (checksum 0) and rows */
};
_Static_assert(sizeof(struct table_file_header) == 352, "table_file_header has no padding");

/* The longest name table_file_key_name() gives, with its NUL. */
#define TABLE_FILE_KEY_NAME_MAX 192

/* The key of a file with this build ID (len 1..TABLE_FILE_KEY_BUILD_ID_MAX) and size. */
int table_file_key_from_build_id(const uint8_t *build_id, size_t len, uint64_t size, struct table_file_key *ret);
/* The key of a file without one. */
void table_file_key_from_identity(uint64_t dev, uint64_t ino, uint64_t size, int64_t mtime_ns, int64_t ctime_ns,
                             struct table_file_key *ret);
/* The name of k's file in the store's directory ("b-HEX-SIZE.unwind", "i-DEV-INO-SIZE-MTIME-CTIME.unwind"):
 * only [0-9a-z.-], never starting with '.'. -EINVAL for a key of no known kind. */
int table_file_key_name(const struct table_file_key *k, char *buf, size_t size);
/* Whether name is one table_file_key_name() could give (what the store may evict); temporary files
 * (".tmp-...") are not. */
bool table_file_name_is_table(const char *name);

/* A 64-bit checksum (FNV-1a over 8-byte words): any change to one word changes it. For
 * corruption, not for an adversary (the store's directory is root's alone). */
uint64_t table_file_checksum(uint64_t h, const void *data, size_t size);
#define TABLE_FILE_CHECKSUM_INIT 0xcbf29ce484222325ull

/* The header of t's file for key k (its checksum over the header and t's rows). -EFBIG: more
 * segments than a header holds (never from unwind_table_build()). */
int table_file_header_make(const struct table_file_key *k, const struct unwind_table *t, struct table_file_header *ret);

/* Why a file is refused; each a distinct -errno so the store can say which. */
#define TABLE_FILE_EBADMAGIC   EBADMSG          /* not a table file, or a header cut short */
#define TABLE_FILE_EVERSION    EPROTONOSUPPORT  /* another format version */
#define TABLE_FILE_EKEY        ESTALE           /* built for another file */
#define TABLE_FILE_ESIZE       EFBIG            /* rows past max_rows, or a size that does not
                                                 * match the rows it says (truncated, padded) */
#define TABLE_FILE_ECHECKSUM   EILSEQ           /* the bytes are not what was written */
#define TABLE_FILE_EROWS       EUCLEAN          /* rows out of order or of unknown rules */

/* Check header h of a file of file_bytes bytes, expected to be key's. 0, or one of the above. */
int table_file_header_check(const struct table_file_header *h, const struct table_file_key *key, size_t max_rows,
                            uint64_t file_bytes);
/* Check rows (h->n_rows of them, after a header that passed) against h's checksum and the
 * order a walker's binary search needs. 0, or one of the above. */
int table_file_rows_check(const struct table_file_header *h, const struct unwind_row *rows);
/* t from a checked header and its rows (taken: t->rows = rows, freed with unwind_table_done()). */
void table_file_to_table(const struct table_file_header *h, struct unwind_row *rows, struct unwind_table *ret);

/* All of the above on a file read whole into memory: 0 and *ret (rows copied), one of the
 * errors above, or -ENOMEM. */
int table_file_decode(const void *data, size_t size, const struct table_file_key *key, size_t max_rows,
                      struct unwind_table *ret);
