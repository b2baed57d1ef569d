/* SPDX-License-Identifier: GPL-2.0-only */
/* An object's call-frame information (.eh_frame, and .debug_frame where .eh_frame says nothing)
 * as compact x86-64 rows sorted by address, the form a BPF stack walker reads: for each address,
 * how to find the frame's CFA, its return address and its caller's rbp. */
#pragma once

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How to find the canonical frame address (the caller's rsp just before its call instruction). */
enum unwind_table_cfa_rule {
        UNWIND_TABLE_CFA_NONE = 0,      /* no CFI covers these addresses: fall back to rbp, or stop */
        UNWIND_TABLE_CFA_RSP,           /* CFA = rsp + cfa_offset */
        UNWIND_TABLE_CFA_RBP,           /* CFA = rbp + cfa_offset */
        UNWIND_TABLE_CFA_RSP_DEREF,     /* CFA = *(u64 *)(rsp + cfa_offset): a signal trampoline's
                                         * saved rsp in the ucontext the kernel pushed */
        UNWIND_TABLE_CFA_RBP_DEREF,     /* CFA = *(u64 *)(rbp + cfa_offset): a function that realigns
                                         * its stack (gcc's DRAP), after its prologue */
        UNWIND_TABLE_CFA_PLT,           /* CFA = rsp + cfa_offset, plus 8 when (pc & 15) >= 11: the
                                         * entries of a lazy .plt (push at 6, jmp at 11) */
        UNWIND_TABLE_CFA_REGISTER,      /* CFA = another register + offset (r10 during a DRAP
                                         * prologue): only the interrupted frame's registers know it */
        UNWIND_TABLE_CFA_EXPRESSION,    /* any other DWARF expression: the walker cannot compute it */
        _UNWIND_TABLE_CFA_RULE_MAX,
};

/* Where the frame keeps a register of its caller (the return address, or rbp). */
enum unwind_table_reg_rule {
        UNWIND_TABLE_REG_UNDEFINED = 0, /* not recoverable; for the return address: the outermost
                                         * frame (_start, a thread's first), the walk ends cleanly */
        UNWIND_TABLE_REG_SAME_VALUE,    /* this frame did not change it: the register still holds it */
        UNWIND_TABLE_REG_AT_CFA,        /* saved at CFA + offset */
        UNWIND_TABLE_REG_AT_RSP,        /* saved at rsp + offset (a signal frame's ucontext) */
        UNWIND_TABLE_REG_AT_RBP,        /* saved at rbp + offset (a realigned frame) */
        UNWIND_TABLE_REG_OTHER,         /* a rule this table does not express (in another register,
                                         * a computed value, an expression) */
        _UNWIND_TABLE_REG_RULE_MAX,
};

/* reg_rules: the return address rule in bits 0-2, rbp's in bits 3-5, and bit 7 set in a signal
 * frame (the frame "called" by the kernel to run a handler: its caller's pc is the interrupted
 * instruction itself, not a return address, so the walker looks that pc up as is, not pc - 1). */
#define UNWIND_TABLE_ROW_RA_RULE_MASK   0x07u
#define UNWIND_TABLE_ROW_RBP_RULE_SHIFT 3
#define UNWIND_TABLE_ROW_RBP_RULE_MASK  0x38u
#define UNWIND_TABLE_ROW_SIGNAL_FRAME   0x80u

/* One row: its rule holds from start up to the next row's start. Fixed-width fields, no padding:
 * the layout a BPF map value can share. */
struct unwind_table_row {
        uint32_t start;                 /* first address covered, minus the table's base_vaddr */
        int32_t cfa_offset;             /* bytes added to the CFA rule's register */
        uint8_t cfa_rule;               /* enum unwind_table_cfa_rule */
        uint8_t reg_rules;              /* see UNWIND_TABLE_ROW_* above */
        int8_t ra_offset8;              /* the return address's AT_* offset, in 8-byte units */
        int8_t rbp_offset8;             /* rbp's AT_* offset, in 8-byte units */
};
_Static_assert(sizeof(struct unwind_table_row) == 12, "unwind_table_row is 12 bytes, unpadded");

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

/* An object's rows, addresses as its ELF file says (the space of p_vaddr and symbol values). */
struct unwind_table {
        uint64_t base_vaddr;            /* the lowest executable segment's start */
        struct unwind_table_row *rows;  /* sorted by start, adjacent rows never equal; a NONE row
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
const struct unwind_table_row *unwind_table_find(const struct unwind_table *t, uint64_t vaddr);

/* Free the rows (t itself is the caller's); t may be empty or already done. */
void unwind_table_done(struct unwind_table *t);

const char *unwind_table_cfa_rule_to_string(enum unwind_table_cfa_rule r);
const char *unwind_table_reg_rule_to_string(enum unwind_table_reg_rule r);

static inline enum unwind_table_reg_rule unwind_table_row_ra_rule(const struct unwind_table_row *row)
{
        return (enum unwind_table_reg_rule) (row->reg_rules & UNWIND_TABLE_ROW_RA_RULE_MASK);
}

static inline enum unwind_table_reg_rule unwind_table_row_rbp_rule(const struct unwind_table_row *row)
{
        return (enum unwind_table_reg_rule) ((row->reg_rules & UNWIND_TABLE_ROW_RBP_RULE_MASK) >>
                                             UNWIND_TABLE_ROW_RBP_RULE_SHIFT);
}

static inline bool unwind_table_row_is_signal_frame(const struct unwind_table_row *row)
{
        return row->reg_rules & UNWIND_TABLE_ROW_SIGNAL_FRAME;
}
