/* SPDX-License-Identifier: GPL-2.0-only */
/* An object's CFI, read with libdw one FDE at a time, evaluated at each of its rows and kept as the
 * sorted x86-64 rows a stack walker reads. */
#include <assert.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include "elf-file.h"
#include "macro.h"
#include "string-table.h"
#include "unwind-table.h"

/* x86-64 DWARF register numbers (System V psABI, "DWARF Register Number Mapping"). */
#define DWARF_REG_RBP 6
#define DWARF_REG_RSP 7
#define DWARF_REG_RIP 16

/* A row not yet placed: [start, end) in the file's addresses. seq orders rows with equal starts
 * (.eh_frame's before .debug_frame's). */
struct span {
        uint64_t start, end;
        size_t seq;
        struct unwind_row row;
};

struct segment {
        uint64_t start, end;
        uint64_t offset;                /* p_offset: the file offset of start */
};

struct builder {
        struct unwind_table_limits limits;
        size_t evaluations;             /* rows read from CFI, before equal neighbours merge */
        struct segment *text;           /* the executable PT_LOAD segments */
        size_t n_text;
        struct span *spans;
        size_t n_spans, n_allocated;
        struct unwind_table_stats stats;
};

static void builder_done(struct builder *b)
{
        free(b->text);
        free(b->spans);
}

static const char *const unwind_table_cfa_rule_table[_UNWIND_CFA_RULE_MAX] = {
        [UNWIND_CFA_NONE] = "none",
        [UNWIND_CFA_RSP] = "rsp",
        [UNWIND_CFA_RBP] = "rbp",
        [UNWIND_CFA_RSP_DEREF] = "*rsp",
        [UNWIND_CFA_RBP_DEREF] = "*rbp",
        [UNWIND_CFA_PLT] = "plt",
        [UNWIND_CFA_REGISTER] = "register",
        [UNWIND_CFA_EXPRESSION] = "expression",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(unwind_table_cfa_rule, enum unwind_cfa_rule);

static const char *const unwind_table_reg_rule_table[_UNWIND_REG_RULE_MAX] = {
        [UNWIND_REG_UNDEFINED] = "undefined",
        [UNWIND_REG_SAME_VALUE] = "same",
        [UNWIND_REG_AT_CFA] = "cfa",
        [UNWIND_REG_AT_RSP] = "rsp",
        [UNWIND_REG_AT_RBP] = "rbp",
        [UNWIND_REG_OTHER] = "other",
};
DEFINE_STRING_TABLE_LOOKUP_TO_STRING(unwind_table_reg_rule, enum unwind_reg_rule);

/* DW_OP_bregN or DW_OP_bregx: register + signed offset. */
static bool op_register_offset(const Dwarf_Op *op, uint64_t *ret_reg, int64_t *ret_offset)
{
        if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
                *ret_reg = op->atom - DW_OP_breg0;
                *ret_offset = (int64_t) op->number;
                return true;
        }
        if (op->atom == DW_OP_bregx) {
                *ret_reg = op->number;
                *ret_offset = (int64_t) op->number2;
                return true;
        }
        return false;
}

/* binutils' CFA for the entries of a lazy .plt: rsp + 8, and 8 more once the entry's push ran
 * (DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and; DW_OP_lit11; DW_OP_ge; DW_OP_lit3;
 * DW_OP_shl; DW_OP_plus). */
static bool is_lazy_plt_cfa(const Dwarf_Op *ops, size_t n, int64_t *ret_offset)
{
        static const uint8_t tail[] = { DW_OP_lit15, DW_OP_and, DW_OP_lit11, DW_OP_ge, DW_OP_lit3,
                                        DW_OP_shl, DW_OP_plus };
        uint64_t reg;
        int64_t offset;

        if (n != 2 + ELEMENTSOF(tail))
                return false;
        if (!op_register_offset(&ops[0], &reg, &offset) || reg != DWARF_REG_RSP)
                return false;
        if (ops[1].atom != DW_OP_breg0 + DWARF_REG_RIP || ops[1].number != 0)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(tail); i++)
                if (ops[2 + i].atom != tail[i])
                        return false;
        *ret_offset = offset;
        return true;
}

static void set_cfa_rule(const Dwarf_Op *ops, size_t n, struct unwind_row *row)
{
        uint64_t reg;
        int64_t offset;

        row->cfa_rule = UNWIND_CFA_EXPRESSION;
        row->cfa_offset = 0;
        if (n == 1 && op_register_offset(&ops[0], &reg, &offset))
                row->cfa_rule = reg == DWARF_REG_RSP ? UNWIND_CFA_RSP :
                                reg == DWARF_REG_RBP ? UNWIND_CFA_RBP : UNWIND_CFA_REGISTER;
        else if (n == 2 && op_register_offset(&ops[0], &reg, &offset) && ops[1].atom == DW_OP_deref &&
                 (reg == DWARF_REG_RSP || reg == DWARF_REG_RBP))
                row->cfa_rule = reg == DWARF_REG_RSP ? UNWIND_CFA_RSP_DEREF : UNWIND_CFA_RBP_DEREF;
        else if (is_lazy_plt_cfa(ops, n, &offset))
                row->cfa_rule = UNWIND_CFA_PLT;
        else
                return;
        if (offset < INT32_MIN || offset > INT32_MAX) {
                row->cfa_rule = UNWIND_CFA_EXPRESSION;
                return;
        }
        row->cfa_offset = (int32_t) offset;
}

/* What dwarf_frame_register() said about a register, as a rule and an offset in 8-byte units. */
static enum unwind_reg_rule saved_register_rule(int value_rule, const Dwarf_Op *ops, size_t n,
                                                      int8_t *ret_offset8)
{
        enum unwind_reg_rule rule;
        uint64_t reg;
        int64_t offset;

        *ret_offset8 = 0;
        if (n == 0)     /* libdw: ops_mem for "undefined", NULL for "same value" */
                return ops ? UNWIND_REG_UNDEFINED : UNWIND_REG_SAME_VALUE;
        if (value_rule || ops[0].atom != DW_OP_call_frame_cfa)
                return UNWIND_REG_OTHER;
        if (n == 1) {
                rule = UNWIND_REG_AT_CFA;
                offset = 0;
        } else if (n == 2 && ops[1].atom == DW_OP_plus_uconst) {
                rule = UNWIND_REG_AT_CFA;
                offset = (int64_t) ops[1].number;      /* libdw keeps the signed DW_CFA_offset here */
        } else if (n == 2 && op_register_offset(&ops[1], &reg, &offset) &&
                   (reg == DWARF_REG_RSP || reg == DWARF_REG_RBP))
                /* DW_CFA_expression: the CFA is pushed, then the address computed over it. */
                rule = reg == DWARF_REG_RSP ? UNWIND_REG_AT_RSP : UNWIND_REG_AT_RBP;
        else
                return UNWIND_REG_OTHER;
        if (offset % 8 != 0 || offset / 8 < INT8_MIN || offset / 8 > INT8_MAX)
                return UNWIND_REG_OTHER;
        *ret_offset8 = (int8_t) (offset / 8);
        return rule;
}

/* The rule libdw computed for one frame, as a row (start left to the caller). */
static int frame_to_row(Dwarf_Frame *frame, int ra_regno, bool signal_frame, struct unwind_row *ret)
{
        struct unwind_row row = {};
        enum unwind_reg_rule ra, rbp;
        Dwarf_Op ops_mem[3], *ops;
        size_t n;
        int r;

        if (dwarf_frame_cfa(frame, &ops, &n) < 0)
                return -EBADMSG;
        set_cfa_rule(ops, n, &row);
        r = dwarf_frame_register(frame, ra_regno, ops_mem, &ops, &n);
        if (r < 0)
                return -EBADMSG;
        ra = saved_register_rule(r, ops, n, &row.ra_offset8);
        r = dwarf_frame_register(frame, DWARF_REG_RBP, ops_mem, &ops, &n);
        if (r < 0)
                return -EBADMSG;
        rbp = saved_register_rule(r, ops, n, &row.rbp_offset8);
        row.reg_rules = (uint8_t) (ra | rbp << UNWIND_ROW_RBP_RULE_SHIFT |
                                   (signal_frame ? UNWIND_ROW_SIGNAL_FRAME : 0));
        *ret = row;
        return 0;
}

static bool same_rule(const struct unwind_row *a, const struct unwind_row *b)
{
        return a->cfa_rule == b->cfa_rule && a->cfa_offset == b->cfa_offset && a->reg_rules == b->reg_rules &&
                a->ra_offset8 == b->ra_offset8 && a->rbp_offset8 == b->rbp_offset8;
}

static bool in_text(const struct builder *b, uint64_t start, uint64_t end)
{
        for (size_t i = 0; i < b->n_text; i++)
                if (start >= b->text[i].start && end <= b->text[i].end)
                        return true;
        return false;
}

/* Add a row of the FDE whose rows begin at spans[fde_first]. */
static int push_span(struct builder *b, size_t fde_first, uint64_t start, uint64_t end,
                     const struct unwind_row *row)
{
        struct span *last = b->n_spans > fde_first ? &b->spans[b->n_spans - 1] : NULL;

        /* an FDE's rows come in order: merge its equal neighbours now, it keeps the array small */
        if (last && last->end == start && same_rule(&last->row, row)) {
                last->end = end;
                return 0;
        }
        if (b->n_spans == b->n_allocated) {
                size_t n = MAX(b->n_allocated * 2, (size_t) 256);
                struct span *s = reallocarray(b->spans, n, sizeof(*s));

                if (!s)
                        return -ENOMEM;
                b->spans = s;
                b->n_allocated = n;
        }
        b->spans[b->n_spans] = (struct span) { .start = start, .end = end, .seq = b->n_spans, .row = *row };
        b->n_spans++;
        return 0;
}

/* Evaluate one FDE covering [lo, hi) at each of its rows: 1 when its rows were added, 0 when it
 * was skipped (a broken FDE leaves no row behind). */
static int add_fde(struct builder *b, Dwarf_CFI *cfi, uint64_t lo, uint64_t hi, size_t fde_bytes)
{
        size_t n_before = b->n_spans;
        uint64_t addr = lo;
        int r;

        if (hi <= lo)
                return 0;       /* covers nothing (assemblers may leave such FDEs) */
        if (!in_text(b, lo, hi)) {
                b->stats.fdes_misplaced++;
                return 0;
        }
        while (addr < hi) {
                _cleanup_free_ Dwarf_Frame *frame = NULL;
                struct unwind_row row;
                Dwarf_Addr end;
                bool signal_frame;
                int ra_regno;

                /* libdw replays the FDE from its start for each row asked about */
                if (++b->evaluations > b->limits.max_rows ||
                    b->stats.replayed_bytes + fde_bytes > b->limits.max_replayed_bytes)
                        return -EFBIG;
                b->stats.replayed_bytes += fde_bytes;
                if (dwarf_cfi_addrframe(cfi, addr, &frame) < 0)
                        goto broken;
                /* the start libdw gives may name an earlier row after DW_CFA_restore_state: addr
                 * is where this one begins, end where the next does */
                ra_regno = dwarf_frame_info(frame, NULL, &end, &signal_frame);
                if (ra_regno < 0 || end <= addr)
                        goto broken;
                if (frame_to_row(frame, ra_regno, signal_frame, &row) < 0)
                        goto broken;
                end = MIN(end, hi);
                r = push_span(b, n_before, addr, end, &row);
                if (r < 0)
                        return r;
                addr = end;
        }
        b->stats.fdes++;
        return 1;

broken:
        b->n_spans = n_before;
        b->stats.fdes_broken++;
        return 0;
}

/* Bytes of a fixed-size DW_EH_PE_* value format, 0 for those this reader does not take. */
static size_t encoded_size(uint8_t encoding)
{
        switch (encoding & 0x0f) {
        case DW_EH_PE_absptr:
        case DW_EH_PE_udata8:
        case DW_EH_PE_sdata8:
                return 8;
        case DW_EH_PE_udata4:
        case DW_EH_PE_sdata4:
                return 4;
        case DW_EH_PE_udata2:
        case DW_EH_PE_sdata2:
                return 2;
        default:
                return 0;       /* LEB128: never used for FDE addresses by gcc, clang or ld */
        }
}

/* Read a little-endian DW_EH_PE_* value at *p (moved past it); pcrel relative to field_vaddr. */
static int read_encoded(const uint8_t **p, const uint8_t *end, uint8_t encoding, bool apply,
                        uint64_t field_vaddr, uint64_t *ret)
{
        size_t size = encoded_size(encoding);
        uint64_t v = 0;

        if (size == 0 || (size_t) (end - *p) < size)
                return -EBADMSG;
        for (size_t i = 0; i < size; i++)
                v |= (uint64_t) (*p)[i] << (8 * i);
        if ((encoding & DW_EH_PE_signed) && size < 8 && (v >> (8 * size - 1)) & 1)
                v |= ~0ull << (8 * size);
        *p += size;
        if (apply)
                switch (encoding & 0x70) {
                case DW_EH_PE_absptr:
                        break;
                case DW_EH_PE_pcrel:
                        v += field_vaddr;
                        break;
                default:
                        return -EBADMSG;        /* textrel, datarel, funcrel, aligned: not on x86-64 */
                }
        if (encoding & DW_EH_PE_indirect)
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* The FDE address encoding a .eh_frame CIE declares ('R' in its augmentation). */
static int cie_fde_encoding(const Dwarf_CIE *cie, uint8_t *ret)
{
        const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
        const char *a = cie->augmentation;
        uint8_t encoding = DW_EH_PE_absptr;

        if (a[0] == '\0')
                goto done;
        if (a[0] != 'z')
                return -EBADMSG;        /* gcc 2's "eh", or unknown: the layout is not knowable */
        for (a++; *a; a++)
                switch (*a) {
                case 'R':
                        if (p >= end)
                                return -EBADMSG;
                        encoding = *p++;
                        break;
                case 'L':
                        if (p >= end)
                                return -EBADMSG;
                        p++;
                        break;
                case 'P': {
                        size_t size;

                        if (p >= end)
                                return -EBADMSG;
                        size = encoded_size(*p++);
                        if (size == 0 || (size_t) (end - p) < size)
                                return -EBADMSG;
                        p += size;
                        break;
                }
                case 'S':
                case 'B':
                case 'G':
                        break;
                default:
                        return -EBADMSG;
                }
done:
        *ret = encoding;
        return 0;
}

struct cfi_section {
        Elf_Scn *scn;
        GElf_Shdr shdr;
        Elf_Data *data;
        bool eh_frame;
};

/* The address range [*lo, *hi) an FDE describes. */
static int fde_range(const unsigned char *e_ident, const struct cfi_section *s, const Dwarf_FDE *fde,
                     Dwarf_Off *cached_cie, uint8_t *cached_encoding, uint64_t *lo, uint64_t *hi)
{
        const uint8_t *p = fde->start, *base = s->data->d_buf;
        uint8_t encoding = DW_EH_PE_udata8;     /* .debug_frame: target addresses, 8 bytes */
        uint64_t start, length;
        int r;

        if (s->eh_frame) {
                if (fde->CIE_pointer != *cached_cie) {
                        Dwarf_CFI_Entry cie;
                        Dwarf_Off next;

                        if (dwarf_next_cfi(e_ident, s->data, true, fde->CIE_pointer, &next, &cie) != 0 ||
                            cie.CIE_id != DW_CIE_ID_64)
                                return -EBADMSG;
                        r = cie_fde_encoding(&cie.cie, cached_encoding);
                        if (r < 0)
                                return r;
                        *cached_cie = fde->CIE_pointer;
                }
                encoding = *cached_encoding;
        }
        r = read_encoded(&p, fde->end, encoding, true, s->shdr.sh_addr + (uint64_t) (p - base), &start);
        if (r < 0)
                return r;
        r = read_encoded(&p, fde->end, encoding, false, 0, &length);
        if (r < 0)
                return r;
        if (start + length < start)
                return -EBADMSG;
        *lo = start;
        *hi = start + length;
        return 0;
}

static int span_by_start(const void *a, const void *b)
{
        const struct span *x = a, *y = b;

        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void sort_spans(struct builder *b)
{
        if (b->n_spans > 0)     /* spans may be NULL: not for qsort */
                qsort(b->spans, b->n_spans, sizeof(*b->spans), span_by_start);
}

/* Whether [lo, hi) meets any of the first n spans (sorted, not overlapping). */
static bool covered(const struct span *spans, size_t n, uint64_t lo, uint64_t hi)
{
        size_t l = 0, h = n;

        while (l < h) {         /* the first span ending after lo */
                size_t m = l + (h - l) / 2;

                if (spans[m].end <= lo)
                        l = m + 1;
                else
                        h = m;
        }
        return l < n && spans[l].start < hi;
}

/* Walk every FDE of a CFI section; with covered_n, skip those meeting the first covered_n spans. */
static int add_section(struct builder *b, Elf *elf, const struct cfi_section *s, Dwarf_CFI *cfi,
                       size_t covered_n)
{
        const unsigned char *e_ident = (const unsigned char *) elf_getident(elf, NULL);
        Dwarf_Off offset = 0, next, cached_cie = (Dwarf_Off) -1;
        uint8_t cached_encoding = DW_EH_PE_absptr;
        int r;

        if (!e_ident)
                return -ENOEXEC;
        for (;; offset = next) {
                Dwarf_CFI_Entry entry;
                uint64_t lo, hi;

                r = dwarf_next_cfi(e_ident, s->data, s->eh_frame, offset, &next, &entry);
                if (r > 0)
                        return 0;
                if (r < 0) {
                        /* the section's framing is lost from here: nothing further is readable */
                        b->stats.fdes_broken++;
                        return 0;
                }
                if (entry.CIE_id == DW_CIE_ID_64)
                        continue;
                if (fde_range(e_ident, s, &entry.fde, &cached_cie, &cached_encoding, &lo, &hi) < 0) {
                        b->stats.fdes_broken++;
                        continue;
                }
                if (covered_n > 0 && covered(b->spans, covered_n, lo, hi)) {
                        b->stats.fdes_misplaced++;
                        continue;
                }
                r = add_fde(b, cfi, lo, hi, (size_t) (entry.fde.end - entry.fde.start));
                if (r < 0)
                        return r;
                if (r > 0 && !s->eh_frame)
                        b->stats.fdes_debug_frame++;
        }
}

static int find_cfi_section(Elf *elf, const char *name, bool eh_frame, struct cfi_section *ret)
{
        struct elf_file_section s;

        if (elf_file_find_section(elf, name, &s) < 0)
                return -ENOENT;
        /* lld and gold may type .eh_frame SHT_X86_64_UNWIND (libLLVM as Debian ships it) */
        if (s.shdr.sh_type != SHT_PROGBITS && !(eh_frame && s.shdr.sh_type == SHT_X86_64_UNWIND))
                return -ENOENT;
        *ret = (struct cfi_section) { .scn = s.scn, .shdr = s.shdr, .eh_frame = eh_frame };
        return 0;
}

static int section_data(struct cfi_section *s)
{
        s->data = elf_getdata(s->scn, NULL);
        if (!s->data || !s->data->d_buf || s->data->d_size == 0)
                return -ENOENT;
        return 0;
}

static int add_eh_frame(struct builder *b, Elf *elf)
{
        struct cfi_section s;
        Dwarf_CFI *cfi;
        int r;

        if (find_cfi_section(elf, ".eh_frame", true, &s) < 0 || section_data(&s) < 0)
                return 0;
        cfi = dwarf_getcfi_elf(elf);
        if (!cfi)
                return 0;
        r = add_section(b, elf, &s, cfi, 0);
        dwarf_cfi_end(cfi);
        return r;
}

/* What libdw would inflate the debug sections to; UINT64_MAX for the old .zdebug_* ones, whose
 * size this does not read. */
static uint64_t debug_sections_inflated_bytes(Elf *elf)
{
        struct elf_file_section s = {};
        uint64_t total = 0;

        while (elf_file_next_section(elf, &s)) {
                GElf_Chdr chdr;

                if (strncmp(s.name, ".zdebug", 7) == 0)
                        return UINT64_MAX;
                if (strncmp(s.name, ".debug", 6) != 0 || !(s.shdr.sh_flags & SHF_COMPRESSED))
                        continue;
                if (!gelf_getchdr(s.scn, &chdr))
                        return UINT64_MAX;
                total += MIN(chdr.ch_size, UINT64_MAX / 2);
                if (total > UINT64_MAX / 2)
                        return UINT64_MAX;
        }
        return total;
}

/* .debug_frame, for the FDEs .eh_frame has no word on (code built without unwind tables). */
static int add_debug_frame(struct builder *b, Elf *elf)
{
        struct cfi_section s;
        Dwarf *dwarf;
        Dwarf_CFI *cfi;
        size_t covered_n;
        int r;

        if (find_cfi_section(elf, ".debug_frame", false, &s) < 0)
                return 0;
        if (debug_sections_inflated_bytes(elf) > b->limits.max_inflated_bytes) {
                b->stats.debug_frame_refused = true;
                return 0;
        }
        /* sorted, so that covered() can search .eh_frame's rows */
        sort_spans(b);
        covered_n = b->n_spans;
        dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
        if (!dwarf)
                return 0;
        cfi = dwarf_getcfi(dwarf);
        /* after dwarf_begin_elf: the section is inflated now if it was compressed */
        if (!cfi || section_data(&s) < 0) {
                dwarf_end(dwarf);
                return 0;
        }
        r = add_section(b, elf, &s, cfi, covered_n);
        dwarf_end(dwarf);
        return r;
}

static int read_text_segments(struct builder *b, Elf *elf)
{
        size_t n;

        if (elf_getphdrnum(elf, &n) < 0)
                return -ENOEXEC;
        b->text = calloc(MAX(n, (size_t) 1), sizeof(*b->text));
        if (!b->text)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                GElf_Phdr phdr;

                if (!gelf_getphdr(elf, (int) i, &phdr) || phdr.p_type != PT_LOAD || !(phdr.p_flags & PF_X))
                        continue;
                if (phdr.p_vaddr + phdr.p_memsz < phdr.p_vaddr)
                        continue;
                b->text[b->n_text++] = (struct segment) { phdr.p_vaddr, phdr.p_vaddr + phdr.p_memsz, phdr.p_offset };
        }
        return b->n_text > 0 ? 0 : -ENOEXEC;
}

/* Sort the spans, drop overlapping ones, fill gaps with NONE rows, merge equal neighbours. */
static int place_rows(struct builder *b, uint64_t base, struct unwind_table *t)
{
        _cleanup_free_ struct unwind_row *rows = NULL;
        uint64_t covered_end = 0;
        size_t n = 0;

        sort_spans(b);
        /* each span adds at most itself and the gap row before it, plus the closing row */
        rows = calloc(b->n_spans * 2 + 1, sizeof(*rows));
        if (!rows)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_spans; i++) {
                const struct span *s = &b->spans[i];

                if (n > 0 && s->start < covered_end) {
                        /* only a broken file has FDEs overlapping: keep the first */
                        b->stats.fdes_misplaced++;
                        continue;
                }
                if (n > 0 && s->start > covered_end)
                        rows[n++] = (struct unwind_row) { .start = (uint32_t) (covered_end - base) };
                if (n == 0 || !same_rule(&rows[n - 1], &s->row)) {
                        rows[n] = s->row;
                        rows[n].start = (uint32_t) (s->start - base);
                        n++;
                }
                covered_end = s->end;
        }
        if (n > 0)
                rows[n++] = (struct unwind_row) { .start = (uint32_t) (covered_end - base) };
        if (n > b->limits.max_rows)
                return -EFBIG;

        t->base_vaddr = base;
        t->n_rows = n;
        if (n == 0)
                t->rows = NULL;
        else {
                struct unwind_row *shrunk = reallocarray(rows, n, sizeof(*rows));

                t->rows = shrunk ? shrunk : rows;
                rows = NULL;
        }
        return 0;
}

int unwind_table_build_elf(Elf *elf, const struct unwind_table_limits *limits, struct unwind_table *ret)
{
        _cleanup_(builder_done) struct builder b = {};
        struct unwind_table t = {};
        uint64_t base = UINT64_MAX, end = 0;
        GElf_Ehdr ehdr;
        int r;

        assert(elf);
        assert(limits);
        assert(ret);

        b.limits = *limits;
        if (!gelf_getehdr(elf, &ehdr))
                return -ENOEXEC;
        if (ehdr.e_ident[EI_CLASS] != ELFCLASS64 || ehdr.e_ident[EI_DATA] != ELFDATA2LSB ||
            ehdr.e_machine != EM_X86_64)
                return -EPROTONOSUPPORT;
        r = read_text_segments(&b, elf);
        if (r < 0)
                return r;
        for (size_t i = 0; i < b.n_text; i++) {
                base = MIN(base, b.text[i].start);
                end = MAX(end, b.text[i].end);
        }
        if (end - base > UINT32_MAX)
                return -EFBIG;  /* rows hold 32-bit offsets from base */

        r = add_eh_frame(&b, elf);
        if (r < 0)
                return r;
        r = add_debug_frame(&b, elf);
        if (r < 0)
                return r;
        r = place_rows(&b, base, &t);
        if (r < 0)
                return r;

        for (size_t i = 0; i < b.n_text && t.n_segments < UNWIND_TABLE_SEGMENTS_MAX; i++)
                t.segments[t.n_segments++] = (struct unwind_table_segment) {
                        .vaddr = b.text[i].start, .offset = b.text[i].offset, .size = b.text[i].end - b.text[i].start,
                };
        t.stats = b.stats;
        t.stats.rows = t.n_rows;
        t.stats.bytes = t.n_rows * sizeof(*t.rows);
        for (size_t i = 0; i < t.n_rows; i++) {
                const struct unwind_row *row = &t.rows[i];

                if (row->cfa_rule == UNWIND_CFA_REGISTER || row->cfa_rule == UNWIND_CFA_EXPRESSION)
                        t.stats.rows_uncomputable++;
                if (row->cfa_rule == UNWIND_CFA_NONE)
                        continue;
                if (unwind_row_is_signal_frame(row))
                        t.stats.rows_signal_frame++;
                if (unwind_row_ra_rule(row) == UNWIND_REG_UNDEFINED)
                        t.stats.rows_ra_undefined++;
        }
        *ret = t;
        return 0;
}

int unwind_table_build(int fd, const struct unwind_table_limits *limits, struct unwind_table *ret)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        int r;

        assert(fd >= 0);
        assert(limits);
        assert(ret);

        r = elf_file_open(fd, &elf);
        if (r < 0)
                return r;
        return unwind_table_build_elf(elf, limits, ret);
}

const struct unwind_row *unwind_table_find(const struct unwind_table *t, uint64_t vaddr)
{
        size_t l = 0, h;
        uint64_t offset;

        assert(t);

        if (t->n_rows == 0 || vaddr < t->base_vaddr || vaddr - t->base_vaddr > UINT32_MAX)
                return NULL;
        offset = vaddr - t->base_vaddr;
        h = t->n_rows;
        while (l < h) {         /* the first row starting after offset */
                size_t m = l + (h - l) / 2;

                if (t->rows[m].start <= offset)
                        l = m + 1;
                else
                        h = m;
        }
        if (l == 0 || t->rows[l - 1].cfa_rule == UNWIND_CFA_NONE)
                return NULL;
        return &t->rows[l - 1];
}

void unwind_table_done(struct unwind_table *t)
{
        if (!t)
                return;
        free(t->rows);
        *t = (struct unwind_table) {};
}

int unwind_table_mapping_bias(const struct unwind_table *t, uint64_t start, uint64_t pgoff, uint64_t *ret)
{
        assert(t);
        assert(ret);
        for (size_t i = 0; i < t->n_segments; i++) {
                const struct unwind_table_segment *s = &t->segments[i];
                uint64_t page_offset = s->offset & ~UINT64_C(4095);

                if (pgoff < page_offset || pgoff >= s->offset + s->size)
                        continue;
                /* vaddr(pc) = pc - start + pgoff - offset + vaddr; rows count from base_vaddr */
                *ret = start - pgoff + s->offset - s->vaddr + t->base_vaddr;
                return 0;
        }
        return -ENOENT;
}
