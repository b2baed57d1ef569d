/* SPDX-License-Identifier: GPL-2.0-only */
/* An object's call-frame information (.eh_frame, and .debug_frame where .eh_frame says nothing)
 * as compact x86-64 rows sorted by address, the form a BPF stack walker reads: for each address,
 * how to find the frame's CFA, its return address and its caller's rbp. */
#pragma once

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bpf-types.h"

_Static_assert(sizeof(struct unwind_row) == 12, "unwind_row is 12 bytes, unpadded");

struct unwind_table_stats {
        size_t fdes;                    /* FDEs whose rows are in the table */
        size_t fdes_debug_frame;        /* of which from .debug_frame */
        size_t fdes_broken;             /* FDEs libdw could not read or evaluate, skipped */
        size_t fdes_misplaced;          /* FDEs (or rows of them) outside the executable
                                         * segments or overlapping another, skipped */
        bool debug_frame_refused;       /* .debug_frame not read: the file's compressed debug
                                         * sections would inflate past max_inflated_bytes */
        uint64_t replayed_bytes;        /* FDE bytes libdw interpreted (see max_replayed_bytes) */
        size_t rows;                    /* = n_rows */
        size_t bytes;                   /* the rows' memory */
        size_t rows_uncomputable;       /* rows whose CFA the walker cannot compute (REGISTER,
                                         * EXPRESSION) */
        size_t rows_signal_frame;
        size_t rows_ra_undefined;       /* rows where a walk ends: the outermost frames */
};

/* An executable PT_LOAD segment: where its bytes are in the file and in the ELF's addresses. */
struct unwind_table_segment {
        uint64_t vaddr, offset, size;
};
#define UNWIND_TABLE_SEGMENTS_MAX 8

/* An object's rows, addresses as its ELF file says (the space of p_vaddr and symbol values). */
struct unwind_table {
        uint64_t base_vaddr;            /* the lowest executable segment's start */
        struct unwind_table_segment segments[UNWIND_TABLE_SEGMENTS_MAX];  /* the first few */
        size_t n_segments;
        struct unwind_row *rows;  /* sorted by start, adjacent rows never equal; a NONE row
                                         * fills each gap between FDEs and closes the last one */
        size_t n_rows;
        struct unwind_table_stats stats;
};

/* What reading one file may cost; each limit passed is -EFBIG (a hostile file cannot make us
 * allocate or spin without bound). */
struct unwind_table_limits {
        size_t max_rows;
        uint64_t max_replayed_bytes;    /* CFI instructions libdw may interpret: it starts an FDE
                                         * over for each of its rows, so n rows of an FDE cost n times
                                         * its length (measured: libc.so.6 1.5 MB; node 23 MB; gcc's
                                         * 30 MB lto-dump 221 MB, 0.2 s) */
        uint64_t max_inflated_bytes;    /* what a file's compressed .debug sections may inflate to
                                         * for its .debug_frame to be read (libdw inflates them all);
                                         * past it .debug_frame is left unread, not an error */
};

/* Enough for the largest objects a distribution ships (a few MB of CFI, half a million rows). */
#define UNWIND_TABLE_LIMITS_DEFAULT ((struct unwind_table_limits) {     \
                .max_rows = 1u << 22,                                   \
                .max_replayed_bytes = 1ull << 30,                       \
                .max_inflated_bytes = 256ull << 20,                     \
        })

/* Read the x86-64 ELF file fd (kept open by the caller) into *ret, within limits. CFI that libdw
 * cannot read is skipped one FDE at a time and counted. -EFBIG past a limit; -ENOEXEC when fd is
 * no ELF file or has no executable segment; -EPROTONOSUPPORT for another architecture; -ENOMEM.
 * A file without CFI gives an empty table. Takes tens of milliseconds per MB of CFI (libc.so.6: 5 ms):
 * a job for the worker, not the event loop. */
int unwind_table_build(int fd, const struct unwind_table_limits *limits, struct unwind_table *ret);
/* The same from an open ELF file. It may inflate elf's compressed debug sections in place. */
int unwind_table_build_elf(Elf *elf, const struct unwind_table_limits *limits, struct unwind_table *ret);

/* The row whose rule holds at vaddr, NULL where no CFI covers it. */
const struct unwind_row *unwind_table_find(const struct unwind_table *t, uint64_t vaddr);

/* For a mapping of the file at [start, ...) from file offset pgoff: the bias to subtract from a
 * pc in it to get the row address (relative to base_vaddr). -ENOENT: it maps no executable
 * segment. */
int unwind_table_mapping_bias(const struct unwind_table *t, uint64_t start, uint64_t pgoff, uint64_t *ret);

/* Free the rows (t itself is the caller's); t may be empty or already done. */
void unwind_table_done(struct unwind_table *t);

const char *unwind_table_cfa_rule_to_string(enum unwind_cfa_rule r);
const char *unwind_table_reg_rule_to_string(enum unwind_reg_rule r);

static inline enum unwind_reg_rule unwind_row_ra_rule(const struct unwind_row *row)
{
        return (enum unwind_reg_rule) (row->reg_rules & UNWIND_ROW_RA_RULE_MASK);
}

static inline enum unwind_reg_rule unwind_row_rbp_rule(const struct unwind_row *row)
{
        return (enum unwind_reg_rule) ((row->reg_rules & UNWIND_ROW_RBP_RULE_MASK) >>
                                             UNWIND_ROW_RBP_RULE_SHIFT);
}

static inline bool unwind_row_is_signal_frame(const struct unwind_row *row)
{
        return row->reg_rules & UNWIND_ROW_SIGNAL_FRAME;
}
