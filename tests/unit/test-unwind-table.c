/* Unit tests for unwind tables: every row of the fixtures, of libc and of this test's own binary
 * checked against what `readelf --debug-dump=frames-interp` says, the frames whose shape is known
 * checked by name, and corrupt CFI read without a crash. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "macro.h"
#include "test-util.h"
#include "unwind-table.h"

static const char *o2_path, *o0_path, *debug_frame_path, *zdebug_frame_path, *libc_path, *readelf_path;

static struct unwind_table build_within(const char *path, const struct unwind_table_limits *limits)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct unwind_table t = {};

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(unwind_table_build(fd, limits, &t), 0);
        ASSERT_EQ(t.stats.rows, t.n_rows);
        ASSERT_EQ(t.stats.bytes, t.n_rows * sizeof(struct unwind_row));
        ASSERT_TRUE(t.n_rows <= limits->max_rows);
        ASSERT_TRUE(t.stats.replayed_bytes <= limits->max_replayed_bytes);
        return t;
}

static struct unwind_table build(const char *path)
{
        return build_within(path, &UNWIND_TABLE_LIMITS_DEFAULT);
}

/* ---- what the ELF file says, read the plain way ---- */

static Elf *open_elf(const char *path, int *ret_fd)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        Elf *elf;

        ASSERT_TRUE(fd >= 0);
        ASSERT_TRUE(elf_version(EV_CURRENT) != EV_NONE);
        elf = elf_begin(fd, ELF_C_READ, NULL);
        ASSERT_TRUE(elf);
        *ret_fd = fd;
        return elf;
}

/* A function's address and size from .symtab, else .dynsym (matching name or name@version). */
static uint64_t symbol(const char *path, const char *name, uint64_t *ret_size)
{
        int fd;
        Elf *elf = open_elf(path, &fd);
        size_t len = strlen(name);
        uint64_t found = 0;

        for (int pass = 0; pass < 2 && !found; pass++) {
                Elf_Scn *scn = NULL;

                while (!found && (scn = elf_nextscn(elf, scn))) {
                        GElf_Shdr shdr;
                        Elf_Data *data;

                        if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM))
                                continue;
                        data = elf_getdata(scn, NULL);
                        for (size_t i = 0; data && shdr.sh_entsize && i < shdr.sh_size / shdr.sh_entsize; i++) {
                                GElf_Sym sym;
                                const char *n;

                                if (!gelf_getsym(data, (int) i, &sym) || sym.st_value == 0)
                                        continue;
                                n = elf_strptr(elf, shdr.sh_link, sym.st_name);
                                if (!n || strncmp(n, name, len) != 0 || (n[len] != '\0' && n[len] != '@'))
                                        continue;
                                found = sym.st_value;
                                if (ret_size)
                                        *ret_size = sym.st_size;
                                break;
                        }
                }
        }
        elf_end(elf);
        close(fd);
        if (!found)
                fprintf(stderr, "%s: no symbol %s\n", path, name);
        ASSERT_TRUE(found);
        return found;
}

static uint64_t section_address(const char *path, const char *name, uint64_t *ret_size)
{
        int fd;
        Elf *elf = open_elf(path, &fd);
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        uint64_t found = 0;

        ASSERT_EQ(elf_getshdrstrndx(elf, &shstrndx), 0);
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                const char *n;

                if (!gelf_getshdr(scn, &shdr) || !(n = elf_strptr(elf, shstrndx, shdr.sh_name)) || strcmp(n, name))
                        continue;
                found = shdr.sh_addr;
                if (ret_size)
                        *ret_size = shdr.sh_size;
                break;
        }
        elf_end(elf);
        close(fd);
        ASSERT_TRUE(found);
        return found;
}

/* The file's bytes at [vaddr, vaddr + n), through the PT_LOAD segment that maps them. */
static void read_vaddr(const char *path, uint64_t vaddr, void *buf, size_t n)
{
        int fd;
        Elf *elf = open_elf(path, &fd);
        size_t phnum;
        bool done = false;

        ASSERT_EQ(elf_getphdrnum(elf, &phnum), 0);
        for (size_t i = 0; i < phnum && !done; i++) {
                GElf_Phdr ph;

                if (!gelf_getphdr(elf, (int) i, &ph) || ph.p_type != PT_LOAD)
                        continue;
                if (vaddr < ph.p_vaddr || vaddr + n > ph.p_vaddr + ph.p_filesz)
                        continue;
                ASSERT_EQ(pread(fd, buf, n, (off_t) (ph.p_offset + vaddr - ph.p_vaddr)), (ssize_t) n);
                done = true;
        }
        elf_end(elf);
        close(fd);
        ASSERT_TRUE(done);
}

/* ---- readelf -wF, the ground truth ---- */

struct readelf_rule {
        char cfa[24], ra[24], rbp[24];  /* as readelf prints them; rbp "" when it has no column */
        bool signal_frame;
};

struct readelf_span {
        uint64_t start, end;
        int section;                    /* 0 .eh_frame, 1 .debug_frame */
        struct readelf_rule rule;
};

struct readelf_cie {
        int section;
        uint64_t offset;
        struct readelf_rule rule;       /* its initial row */
};

struct readelf_frames {
        struct readelf_span *spans;
        size_t n;
        struct readelf_cie *cies;
        size_t n_cies;
};

static void copy_token(char *dst, size_t size, const char *src)
{
        snprintf(dst, size, "%s", src ? src : "");
}

/* The next value of a readelf row: "r9 (r9)" (in another register) is one. */
static char *next_value(char **save)
{
        char *tok;

        while ((tok = strtok_r(NULL, " \n", save)) && tok[0] == '(')
                ;
        return tok;
}

/* One "LOC CFA reg..." row of readelf, by its column names. */
static void parse_rule_row(char *line, char columns[][8], size_t n_columns, struct readelf_rule *rule)
{
        char *save = NULL, *tok = strtok_r(line, " \n", &save);     /* LOC */

        tok = next_value(&save);
        copy_token(rule->cfa, sizeof(rule->cfa), tok);
        rule->rbp[0] = '\0';
        for (size_t c = 0; c < n_columns && (tok = next_value(&save)); c++) {
                if (strcmp(columns[c], "ra") == 0)
                        copy_token(rule->ra, sizeof(rule->ra), tok);
                else if (strcmp(columns[c], "rbp") == 0)
                        copy_token(rule->rbp, sizeof(rule->rbp), tok);
        }
}

static void push_readelf_span(struct readelf_frames *f, uint64_t start, uint64_t end, int section,
                              const struct readelf_rule *rule)
{
        if (end <= start)
                return;
        f->spans = reallocarray(f->spans, f->n + 1, sizeof(*f->spans));
        ASSERT_TRUE(f->spans);
        f->spans[f->n++] = (struct readelf_span) { start, end, section, *rule };
}

static struct readelf_frames readelf_frames(const char *path)
{
        _cleanup_free_ char *cmd = NULL, *line = NULL;
        struct readelf_frames f = {};
        char columns[64][8];
        size_t n_columns = 0, cap = 0;
        int section = -1;
        /* the entry being read: a CIE (its row) or an FDE (its rows, the last one still open) */
        bool in_cie = false, in_fde = false, have_row = false;
        uint64_t fde_lo = 0, fde_hi = 0, row_loc = 0;
        unsigned long long cie = 0;
        struct readelf_rule row = {};
        FILE *p;
        int status;

        ASSERT_TRUE(asprintf(&cmd, "'%s' --debug-dump=frames-interp '%s' 2>/dev/null", readelf_path, path) > 0);
        p = popen(cmd, "r");
        ASSERT_TRUE(p);
        for (;;) {
                ssize_t len = getline(&line, &cap, p);
                unsigned long long off, lo, hi;
                const char *aug;
                bool end_of_entry = len < 0 || line[0] == '\n' || strstr(line, "Contents of the");

                if (end_of_entry && in_fde) {
                        if (!have_row) {        /* no instructions: the CIE's row throughout */
                                for (size_t i = 0; i < f.n_cies; i++)
                                        if (f.cies[i].section == section && f.cies[i].offset == cie)
                                                row = f.cies[i].rule, have_row = true;
                                ASSERT_TRUE(have_row);
                                row_loc = fde_lo;
                        }
                        push_readelf_span(&f, row_loc, fde_hi, section, &row);
                }
                if (end_of_entry)
                        in_fde = in_cie = false;
                if (len < 0)
                        break;
                if (strstr(line, "Contents of the .eh_frame section"))
                        section = 0;
                else if (strstr(line, "Contents of the .debug_frame section"))
                        section = 1;
                else if (strstr(line, "Contents of the"))
                        section = -1;
                if (section < 0)
                        continue;

                if ((aug = strstr(line, " CIE \"")) && sscanf(line, "%llx", &off) == 1) {
                        /* the augmentation string: 'S' marks a signal frame */
                        aug += strlen(" CIE \"");
                        f.cies = reallocarray(f.cies, f.n_cies + 1, sizeof(*f.cies));
                        ASSERT_TRUE(f.cies);
                        f.cies[f.n_cies++] = (struct readelf_cie) {
                                .section = section, .offset = off,
                                .rule.signal_frame = memchr(aug, 'S', strcspn(aug, "\"")) != NULL };
                        in_cie = true;
                        continue;
                }
                if (sscanf(line, "%llx %*x %*x FDE cie=%llx pc=%llx..%llx", &off, &cie, &lo, &hi) == 4) {
                        in_fde = true;
                        have_row = false;
                        fde_lo = lo;
                        fde_hi = hi;
                        continue;
                }
                if (strstr(line, "   LOC ")) {
                        char *save = NULL, *tok = strtok_r(line, " \n", &save);

                        tok = strtok_r(NULL, " \n", &save);     /* CFA */
                        for (n_columns = 0; n_columns < ELEMENTSOF(columns) && (tok = strtok_r(NULL, " \n", &save));
                             n_columns++)
                                copy_token(columns[n_columns], sizeof(columns[n_columns]), tok);
                        continue;
                }
                if (len > 17 && line[16] == ' ' && sscanf(line, "%llx", &lo) == 1) {
                        struct readelf_rule r = {};
                        bool signal_frame = false;

                        parse_rule_row(line, columns, n_columns, &r);
                        if (in_cie) {
                                        r.signal_frame = f.cies[f.n_cies - 1].rule.signal_frame;
                                f.cies[f.n_cies - 1].rule = r;
                                continue;
                        }
                        if (!in_fde)
                                continue;
                        for (size_t i = 0; i < f.n_cies; i++)
                                if (f.cies[i].section == section && f.cies[i].offset == cie)
                                        signal_frame = f.cies[i].rule.signal_frame;
                        r.signal_frame = signal_frame;
                        if (have_row)
                                push_readelf_span(&f, row_loc, lo, section, &row);
                        else if (lo > fde_lo)
                                ASSERT_TRUE(!"a row after the FDE's start with none at it");
                        row = r;
                        row_loc = lo;
                        have_row = true;
                }
        }
        /* readelf exits 1 for some files it reads whole (libc.so.6, its debug link unfollowed) */
        status = pclose(p);
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) <= 1);
        return f;
}

static void readelf_frames_done(struct readelf_frames *f)
{
        free(f->spans);
        free(f->cies);
}

/* What the table must say for readelf's words: a rule, its offset, and for "exp" any rule that
 * stands for an expression. */
struct expectation {
        int rule;                       /* -1: any expression-like rule */
        int64_t offset;
};

static struct expectation expect_cfa(const char *s)
{
        long long off;

        if (strcmp(s, "exp") == 0)
                return (struct expectation) { -1, 0 };
        if (sscanf(s, "rsp%lld", &off) == 1)
                return (struct expectation) { UNWIND_CFA_RSP, off };
        if (sscanf(s, "rbp%lld", &off) == 1)
                return (struct expectation) { UNWIND_CFA_RBP, off };
        return (struct expectation) { UNWIND_CFA_REGISTER, 0 };
}

static struct expectation expect_register(const char *s, bool is_rbp)
{
        long long off;

        if (s[0] == '\0' || strcmp(s, "s") == 0)
                return (struct expectation) { UNWIND_REG_SAME_VALUE, 0 };
        if (strcmp(s, "u") == 0)
                /* readelf also says "u" for a register no instruction named yet: for rbp, a
                 * callee-saved register, that means unchanged */
                return (struct expectation) { is_rbp ? UNWIND_REG_SAME_VALUE : UNWIND_REG_UNDEFINED, 0 };
        if (strcmp(s, "exp") == 0)
                return (struct expectation) { -1, 0 };
        if (sscanf(s, "c%lld", &off) == 1)
                return (struct expectation) { UNWIND_REG_AT_CFA, off };
        return (struct expectation) { UNWIND_REG_OTHER, 0 };
}

static bool cfa_matches(const struct unwind_row *row, struct expectation e)
{
        if (e.rule < 0)
                return row->cfa_rule == UNWIND_CFA_RSP_DEREF || row->cfa_rule == UNWIND_CFA_RBP_DEREF ||
                        row->cfa_rule == UNWIND_CFA_PLT || row->cfa_rule == UNWIND_CFA_EXPRESSION;
        if (e.rule == UNWIND_CFA_REGISTER)
                return row->cfa_rule == e.rule;
        return row->cfa_rule == e.rule && row->cfa_offset == e.offset;
}

static bool register_matches(enum unwind_reg_rule rule, int8_t offset8, struct expectation e)
{
        if (e.rule < 0)
                return rule == UNWIND_REG_AT_RSP || rule == UNWIND_REG_AT_RBP ||
                        rule == UNWIND_REG_OTHER;
        if (e.rule == UNWIND_REG_AT_CFA)
                return (int) rule == e.rule && offset8 * 8 == e.offset;
        return rule == (enum unwind_reg_rule) e.rule;
}

static bool same_readelf_rule(const struct readelf_rule *a, const struct readelf_rule *b)
{
        return strcmp(a->cfa, b->cfa) == 0 && strcmp(a->ra, b->ra) == 0 && a->signal_frame == b->signal_frame &&
                expect_register(a->rbp, true).rule == expect_register(b->rbp, true).rule &&
                expect_register(a->rbp, true).offset == expect_register(b->rbp, true).offset;
}

static int readelf_span_by_start(const void *a, const void *b)
{
        const struct readelf_span *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

static void print_row(const char *what, const struct unwind_table *t, const struct unwind_row *row)
{
        fprintf(stderr, "%s %#" PRIx64 ": cfa %s%+d ra %s%+d rbp %s%+d%s\n", what, t->base_vaddr + row->start,
                unwind_table_cfa_rule_to_string(row->cfa_rule), row->cfa_offset,
                unwind_table_reg_rule_to_string(unwind_row_ra_rule(row)), row->ra_offset8 * 8,
                unwind_table_reg_rule_to_string(unwind_row_rbp_rule(row)), row->rbp_offset8 * 8,
                unwind_row_is_signal_frame(row) ? " signal" : "");
}

/* The whole table equals readelf's rows for the file: .eh_frame's, then .debug_frame's where
 * .eh_frame has none, equal neighbours merged, a "none" row in each gap and at the end. */
static void assert_table_matches_readelf(const struct unwind_table *t, const char *path)
{
        struct readelf_frames f = readelf_frames(path);
        struct readelf_span *want;
        size_t n_want = 0, n_eh = 0, k = 0;

        ASSERT_TRUE(f.n > 0);
        for (size_t i = 0; i < f.n; i++)
                n_eh += f.spans[i].section == 0;
        want = calloc(f.n, sizeof(*want));
        ASSERT_TRUE(want);
        for (size_t i = 0; i < f.n; i++) {
                bool overlaps_eh = false;

                for (size_t j = 0; f.spans[i].section == 1 && j < f.n; j++)
                        if (f.spans[j].section == 0 && f.spans[j].start < f.spans[i].end &&
                            f.spans[i].start < f.spans[j].end)
                                overlaps_eh = true;
                if (!overlaps_eh)
                        want[n_want++] = f.spans[i];
        }
        qsort(want, n_want, sizeof(*want), readelf_span_by_start);

        for (size_t i = 0; i < n_want; i++) {
                const struct readelf_span *w = &want[i];
                const struct unwind_row *row;
                bool merged = i > 0 && want[i - 1].end == w->start && same_readelf_rule(&want[i - 1].rule, &w->rule);

                if (merged)
                        continue;
                if (i > 0 && want[i - 1].end < w->start) {
                        /* the gap row: it starts where the previous run ended */
                        ASSERT_TRUE(k < t->n_rows);
                        ASSERT_EQ(t->rows[k].cfa_rule, UNWIND_CFA_NONE);
                        ASSERT_EQ(t->base_vaddr + t->rows[k].start, want[i - 1].end);
                        ASSERT_TRUE(unwind_table_find(t, want[i - 1].end) == NULL);
                        k++;
                }
                ASSERT_TRUE(k < t->n_rows);
                row = &t->rows[k];
                if (t->base_vaddr + row->start != w->start || !cfa_matches(row, expect_cfa(w->rule.cfa)) ||
                    !register_matches(unwind_row_ra_rule(row), row->ra_offset8,
                                      expect_register(w->rule.ra, false)) ||
                    !register_matches(unwind_row_rbp_rule(row), row->rbp_offset8,
                                      expect_register(w->rule.rbp, true)) ||
                    unwind_row_is_signal_frame(row) != w->rule.signal_frame) {
                        fprintf(stderr, "%s: row %zu differs from readelf's at %#" PRIx64 ": cfa %s ra %s rbp %s%s\n",
                                path, k, w->start, w->rule.cfa, w->rule.ra, w->rule.rbp,
                                w->rule.signal_frame ? " signal" : "");
                        print_row("  table says", t, row);
                        ASSERT_TRUE(false);
                }
                ASSERT_TRUE(unwind_table_find(t, w->start) == row);
                k++;
        }
        /* the closing row */
        ASSERT_TRUE(k < t->n_rows);
        ASSERT_EQ(t->rows[k].cfa_rule, UNWIND_CFA_NONE);
        ASSERT_EQ(k + 1, t->n_rows);
        ASSERT_EQ(t->stats.fdes_broken, 0);
        ASSERT_EQ(t->stats.fdes_misplaced, 0);
        free(want);
        readelf_frames_done(&f);
}

/* ---- the tests ---- */

static void fixture_tables_match_readelf_row_for_row(void)
{
        const char *paths[] = { o2_path, o0_path, debug_frame_path };

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                struct unwind_table t = build(paths[i]);

                assert_table_matches_readelf(&t, paths[i]);
                unwind_table_done(&t);
        }
}

static const char *const fixture_functions[] = {
        "unwind_fixture_leaf", "unwind_fixture_small_frame", "unwind_fixture_big_frame",
        "unwind_fixture_saves_registers", "unwind_fixture_variable_frame", "unwind_fixture_calls_through_plt",
};

static void assert_row(const struct unwind_table *t, uint64_t vaddr, enum unwind_cfa_rule cfa, int32_t cfa_offset,
                       enum unwind_reg_rule rbp, int rbp_offset)
{
        const struct unwind_row *row = unwind_table_find(t, vaddr);

        if (!row)
                fprintf(stderr, "no row at %#" PRIx64 "\n", vaddr);
        ASSERT_TRUE(row);
        if (row->cfa_rule != cfa || row->cfa_offset != cfa_offset || unwind_row_rbp_rule(row) != rbp ||
            row->rbp_offset8 * 8 != rbp_offset)
                print_row("unexpected", t, row);
        ASSERT_EQ(row->cfa_rule, cfa);
        ASSERT_EQ(row->cfa_offset, cfa_offset);
        ASSERT_EQ(unwind_row_rbp_rule(row), rbp);
        ASSERT_EQ(row->rbp_offset8 * 8, rbp_offset);
        /* x86-64: the call pushed the return address right below the CFA */
        ASSERT_EQ(unwind_row_ra_rule(row), UNWIND_REG_AT_CFA);
        ASSERT_EQ(row->ra_offset8 * 8, -8);
        ASSERT_TRUE(!unwind_row_is_signal_frame(row));
}

static void function_entry_has_cfa_rsp_plus_8_and_return_address_below_it(void)
{
        const char *paths[] = { o2_path, o0_path, debug_frame_path };

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                struct unwind_table t = build(paths[i]);

                for (size_t j = 0; j < ELEMENTSOF(fixture_functions); j++)
                        assert_row(&t, symbol(paths[i], fixture_functions[j], NULL), UNWIND_CFA_RSP, 8,
                                   UNWIND_REG_SAME_VALUE, 0);
                unwind_table_done(&t);
        }
}

/* At the address past `bytes` (after an endbr64 if the function starts with one). */
static uint64_t after_prologue(const char *path, uint64_t fn, const uint8_t *bytes, size_t n)
{
        static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
        uint8_t code[16];

        read_vaddr(path, fn, code, sizeof(code));
        if (memcmp(code, endbr64, sizeof(endbr64)) == 0) {
                fn += sizeof(endbr64);
                memmove(code, code + sizeof(endbr64), sizeof(code) - sizeof(endbr64));
        }
        ASSERT_TRUE(memcmp(code, bytes, n) == 0);
        return fn + n;
}

static void frame_pointer_code_has_cfa_rbp_plus_16_after_its_prologue(void)
{
        static const uint8_t push_rbp[] = { 0x55 }, push_mov[] = { 0x55, 0x48, 0x89, 0xe5 };  /* mov %rsp,%rbp */
        struct unwind_table t = build(o0_path);

        for (size_t j = 0; j < ELEMENTSOF(fixture_functions); j++) {
                uint64_t size, fn = symbol(o0_path, fixture_functions[j], &size);
                const struct unwind_row *row;
                uint8_t last;

                /* push %rbp: the CFA is 16 above rsp, the caller's rbp at CFA-16 */
                assert_row(&t, after_prologue(o0_path, fn, push_rbp, sizeof(push_rbp)), UNWIND_CFA_RSP, 16,
                           UNWIND_REG_AT_CFA, -16);
                /* mov %rsp,%rbp: the CFA follows rbp from here */
                assert_row(&t, after_prologue(o0_path, fn, push_mov, sizeof(push_mov)), UNWIND_CFA_RBP, 16,
                           UNWIND_REG_AT_CFA, -16);
                /* at the ret, after leave or pop %rbp: the CFA back on rsp (gcc leaves rbp's rule
                 * as it was: the slot still holds the caller's rbp, and so does rbp) */
                read_vaddr(o0_path, fn + size - 1, &last, 1);
                ASSERT_EQ(last, 0xc3);
                row = unwind_table_find(&t, fn + size - 1);
                ASSERT_TRUE(row);
                ASSERT_EQ(row->cfa_rule, UNWIND_CFA_RSP);
                ASSERT_EQ(row->cfa_offset, 8);
                ASSERT_EQ(unwind_row_ra_rule(row), UNWIND_REG_AT_CFA);
                ASSERT_EQ(row->ra_offset8 * 8, -8);
        }
        unwind_table_done(&t);
}

/* The rows of the function at fn: the largest rsp offset, whether rbp is a frame pointer, whether
 * rbp is saved by the function. */
static void rules_inside(const struct unwind_table *t, uint64_t fn, uint64_t size, int32_t *max_rsp_offset,
                         bool *rbp_based, bool *rbp_saved)
{
        *max_rsp_offset = 0;
        *rbp_based = *rbp_saved = false;
        for (uint64_t a = fn; a < fn + size; a++) {
                const struct unwind_row *row = unwind_table_find(t, a);

                ASSERT_TRUE(row);
                if (row->cfa_rule == UNWIND_CFA_RSP)
                        *max_rsp_offset = MAX(*max_rsp_offset, row->cfa_offset);
                *rbp_based |= row->cfa_rule == UNWIND_CFA_RBP;
                *rbp_saved |= unwind_row_rbp_rule(row) == UNWIND_REG_AT_CFA;
        }
}

static void code_without_frame_pointers_has_cfa_on_rsp_by_frame_size(void)
{
        struct unwind_table t = build(o2_path);
        uint64_t fn, size;
        int32_t max_rsp;
        bool rbp_based, rbp_saved;

        fn = symbol(o2_path, "unwind_fixture_small_frame", &size);
        rules_inside(&t, fn, size, &max_rsp, &rbp_based, &rbp_saved);
        ASSERT_TRUE(max_rsp >= 256 + 8);        /* the buffer, kept across the call */
        ASSERT_TRUE(max_rsp < 1024);
        ASSERT_TRUE(!rbp_based);

        fn = symbol(o2_path, "unwind_fixture_big_frame", &size);
        rules_inside(&t, fn, size, &max_rsp, &rbp_based, &rbp_saved);
        ASSERT_TRUE(max_rsp >= 70000 + 8);      /* past a 16-bit offset */
        ASSERT_TRUE(!rbp_based);

        /* rbp as an ordinary callee-saved register: pushed, its slot in the CFI */
        fn = symbol(o2_path, "unwind_fixture_saves_registers", &size);
        rules_inside(&t, fn, size, &max_rsp, &rbp_based, &rbp_saved);
        ASSERT_TRUE(!rbp_based);
        ASSERT_TRUE(rbp_saved);

        /* a frame sized at run time keeps a frame pointer even here */
        fn = symbol(o2_path, "unwind_fixture_variable_frame", &size);
        rules_inside(&t, fn, size, &max_rsp, &rbp_based, &rbp_saved);
        ASSERT_TRUE(rbp_based);
        ASSERT_TRUE(rbp_saved);
        unwind_table_done(&t);
}

static void lazy_plt_entries_get_the_plt_rule(void)
{
        const char *paths[] = { o2_path, libc_path };

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                struct unwind_table t = build(paths[i]);
                uint64_t size, plt = section_address(paths[i], ".plt", &size);
                const struct unwind_row *row;

                ASSERT_TRUE(size >= 32);
                /* PLT0 pushes the link map, then jumps to the resolver */
                row = unwind_table_find(&t, plt);
                ASSERT_TRUE(row);
                ASSERT_EQ(row->cfa_rule, UNWIND_CFA_RSP);
                ASSERT_EQ(row->cfa_offset, 16);
                /* each entry: rsp+8 before its push, rsp+16 after, one row for them all */
                row = unwind_table_find(&t, plt + 16);
                ASSERT_TRUE(row);
                ASSERT_EQ(row->cfa_rule, UNWIND_CFA_PLT);
                ASSERT_EQ(row->cfa_offset, 8);
                ASSERT_TRUE(unwind_table_find(&t, plt + size - 1) == row);
                ASSERT_EQ(unwind_row_ra_rule(row), UNWIND_REG_AT_CFA);
                ASSERT_EQ(row->ra_offset8, -1);
                unwind_table_done(&t);
        }
}

static void debug_frame_is_read_when_eh_frame_is_empty(void)
{
        struct unwind_table t = build(debug_frame_path);

        ASSERT_TRUE(t.stats.fdes_debug_frame >= ELEMENTSOF(fixture_functions));
        ASSERT_EQ(t.stats.fdes, t.stats.fdes_debug_frame);
        ASSERT_TRUE(!t.stats.debug_frame_refused);
        unwind_table_done(&t);
}

static void libc_table_matches_readelf_row_for_row(void)
{
        struct timespec a, b;
        struct unwind_table t;

        clock_gettime(CLOCK_MONOTONIC, &a);
        t = build(libc_path);
        clock_gettime(CLOCK_MONOTONIC, &b);
        fprintf(stderr, "%s: %zu FDEs, %zu rows, %zu bytes, %zu uncomputable, %zu signal, %zu outermost, "
                "built in %.1f ms\n", libc_path, t.stats.fdes, t.stats.rows, t.stats.bytes,
                t.stats.rows_uncomputable, t.stats.rows_signal_frame, t.stats.rows_ra_undefined,
                (double) (b.tv_sec - a.tv_sec) * 1e3 + (double) (b.tv_nsec - a.tv_nsec) / 1e6);
        ASSERT_TRUE(t.stats.fdes > 1000);
        ASSERT_TRUE(t.stats.rows > 10000);
        assert_table_matches_readelf(&t, libc_path);
        unwind_table_done(&t);
}

/* gdb finds the signal trampoline by its code (amd64_linux_sigtramp_p): mov $15,%rax; syscall. */
static uint64_t find_restore_rt(const char *path)
{
        static const uint8_t code[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
        uint64_t size, text = section_address(path, ".text", &size), found = 0;
        _cleanup_free_ uint8_t *bytes = malloc(size);

        ASSERT_TRUE(bytes);
        read_vaddr(path, text, bytes, size);
        for (uint64_t i = 0; i + sizeof(code) <= size; i++)
                if (memcmp(bytes + i, code, sizeof(code)) == 0) {
                        ASSERT_EQ(found, 0);    /* one trampoline */
                        found = text + i;
                }
        ASSERT_TRUE(found);
        return found;
}

static void libc_signal_trampoline_is_a_signal_frame_reading_the_ucontext(void)
{
        struct unwind_table t = build(libc_path);
        uint64_t restore_rt = find_restore_rt(libc_path);
        const struct unwind_row *row = unwind_table_find(&t, restore_rt);

        ASSERT_TRUE(row);
        print_row("__restore_rt", &t, row);
        ASSERT_TRUE(unwind_row_is_signal_frame(row));
        /* glibc's FDE starts a byte early, so that a walker looking up pc - 1 finds it too */
        ASSERT_TRUE(unwind_table_find(&t, restore_rt - 1) == row);
        /* rsp points at the ucontext the kernel pushed: the interrupted rsp, rip and rbp are there */
        ASSERT_EQ(row->cfa_rule, UNWIND_CFA_RSP_DEREF);
        ASSERT_EQ(row->cfa_offset, offsetof(ucontext_t, uc_mcontext.gregs[REG_RSP]));
        ASSERT_EQ(unwind_row_ra_rule(row), UNWIND_REG_AT_RSP);
        ASSERT_EQ(row->ra_offset8 * 8, offsetof(ucontext_t, uc_mcontext.gregs[REG_RIP]));
        ASSERT_EQ(unwind_row_rbp_rule(row), UNWIND_REG_AT_RSP);
        ASSERT_EQ(row->rbp_offset8 * 8, offsetof(ucontext_t, uc_mcontext.gregs[REG_RBP]));
        ASSERT_EQ(t.stats.rows_signal_frame, 1);
        unwind_table_done(&t);
}

/* A pc in a mapping of the text segment, less the bias, is the row address (vaddr - base_vaddr). */
static void mapping_bias_turns_a_pc_into_its_row_address(void)
{
        struct unwind_table t = build(libc_path);
        const struct unwind_table_segment *s;
        uint64_t start = UINT64_C(0x7f1234560000), page, vaddr, pc, bias;

        ASSERT_TRUE(t.n_segments >= 1);
        s = &t.segments[0];
        page = s->offset & ~UINT64_C(4095);
        vaddr = s->vaddr + s->size / 2;
        /* mapped from the page holding the segment's start: vaddr's byte is this far into it */
        pc = start + (s->offset - page) + (vaddr - s->vaddr);
        ASSERT_EQ(unwind_table_mapping_bias(&t, start, page, &bias), 0);
        ASSERT_EQ(pc - bias, vaddr - t.base_vaddr);
        ASSERT_TRUE(unwind_table_find(&t, vaddr) != NULL);
        /* a mapping of bytes past every executable segment maps no code */
        ASSERT_EQ(unwind_table_mapping_bias(&t, start, (s->offset + s->size + 0x100000) & ~UINT64_C(4095), &bias),
                  -ENOENT);
        unwind_table_done(&t);
}

static void libc_thread_start_in_clone_ends_the_walk(void)
{
        struct unwind_table t = build(libc_path);
        uint64_t size, clone = symbol(libc_path, "__clone", &size);
        bool outermost = false;

        /* the child's side of clone (and clone3): "cfi_undefined (rip)", no caller to return to */
        ASSERT_TRUE(t.stats.rows_ra_undefined >= 2);
        for (uint64_t a = clone; a < clone + size; a++) {
                const struct unwind_row *row = unwind_table_find(&t, a);

                outermost |= row && unwind_row_ra_rule(row) == UNWIND_REG_UNDEFINED;
        }
        ASSERT_TRUE(outermost);
        /* the parent's side returns normally */
        ASSERT_EQ(unwind_row_ra_rule(unwind_table_find(&t, clone)), UNWIND_REG_AT_CFA);
        unwind_table_done(&t);
}

static void program_start_ends_the_walk(void)
{
        /* this test's own binary, by a path readelf (another process) sees as the same file */
        _cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
        struct unwind_table t;
        const struct unwind_row *row;

        ASSERT_TRUE(self);
        t = build(self);
        row = unwind_table_find(&t, symbol(self, "_start", NULL));
        ASSERT_TRUE(row);
        /* crt1's _start says "cfi_undefined (rip)": nothing called it */
        ASSERT_EQ(unwind_row_ra_rule(row), UNWIND_REG_UNDEFINED);
        assert_table_matches_readelf(&t, self);
        unwind_table_done(&t);
}

static void find_returns_null_where_no_cfi_is(void)
{
        struct unwind_table t = build(o2_path);
        const struct unwind_row *last = &t.rows[t.n_rows - 1];

        ASSERT_TRUE(t.n_rows >= 3);
        ASSERT_TRUE(unwind_table_find(&t, 0) == NULL);
        ASSERT_TRUE(unwind_table_find(&t, t.base_vaddr + t.rows[0].start - 1) == NULL);
        ASSERT_TRUE(unwind_table_find(&t, t.base_vaddr + t.rows[0].start) == &t.rows[0]);
        ASSERT_EQ(last->cfa_rule, UNWIND_CFA_NONE);
        ASSERT_TRUE(unwind_table_find(&t, t.base_vaddr + last->start) == NULL);
        ASSERT_TRUE(unwind_table_find(&t, UINT64_MAX) == NULL);
        for (size_t i = 1; i < t.n_rows; i++)
                ASSERT_TRUE(t.rows[i - 1].start < t.rows[i].start);
        unwind_table_done(&t);
        unwind_table_done(&t);  /* done twice is harmless */
}

static void files_past_a_limit_are_refused(void)
{
        _cleanup_close_ int fd = open(libc_path, O_RDONLY | O_CLOEXEC);
        struct unwind_table_limits limits = UNWIND_TABLE_LIMITS_DEFAULT;
        struct unwind_table t = { .n_rows = 12345 }, all = build(libc_path);

        ASSERT_TRUE(fd >= 0);
        /* rows */
        limits.max_rows = 1000;
        ASSERT_EQ(unwind_table_build(fd, &limits, &t), -EFBIG);
        ASSERT_EQ(t.n_rows, 12345);     /* untouched */
        limits.max_rows = all.n_rows;
        t = build_within(libc_path, &limits);
        ASSERT_EQ(t.n_rows, all.n_rows);
        unwind_table_done(&t);
        /* the CFI libdw replays to read them */
        limits = UNWIND_TABLE_LIMITS_DEFAULT;
        limits.max_replayed_bytes = all.stats.replayed_bytes - 1;
        t = (struct unwind_table) { .n_rows = 12345 };
        ASSERT_EQ(unwind_table_build(fd, &limits, &t), -EFBIG);
        ASSERT_EQ(t.n_rows, 12345);
        limits.max_replayed_bytes = all.stats.replayed_bytes;
        t = build_within(libc_path, &limits);
        ASSERT_EQ(t.n_rows, all.n_rows);
        unwind_table_done(&t);
        unwind_table_done(&all);
}

static void compressed_debug_frame_is_read_within_its_inflate_limit(void)
{
        struct unwind_table_limits limits = UNWIND_TABLE_LIMITS_DEFAULT;
        struct unwind_table plain = build(debug_frame_path), t = build(zdebug_frame_path);

        ASSERT_TRUE(!t.stats.debug_frame_refused);
        ASSERT_EQ(t.n_rows, plain.n_rows);
        ASSERT_TRUE(memcmp(t.rows, plain.rows, t.n_rows * sizeof(*t.rows)) == 0);
        unwind_table_done(&t);
        /* .debug_info and the rest would inflate past the limit: .debug_frame is left unread */
        limits.max_inflated_bytes = 1;
        t = build_within(zdebug_frame_path, &limits);
        ASSERT_TRUE(t.stats.debug_frame_refused);
        ASSERT_EQ(t.n_rows, 0);
        ASSERT_TRUE(unwind_table_find(&t, symbol(zdebug_frame_path, "unwind_fixture_leaf", NULL)) == NULL);
        unwind_table_done(&t);
        unwind_table_done(&plain);
}

static void non_elf_and_empty_files_are_refused(void)
{
        _cleanup_close_ int fd = memfd_create("not-elf", MFD_CLOEXEC);
        struct unwind_table t = {};

        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(unwind_table_build(fd, &UNWIND_TABLE_LIMITS_DEFAULT, &t), -ENOEXEC);
        ASSERT_EQ(write(fd, "#!/bin/sh\n", 10), 10);
        ASSERT_EQ(unwind_table_build(fd, &UNWIND_TABLE_LIMITS_DEFAULT, &t), -ENOEXEC);
}

/* The fixture's bytes, with what corrupt() does to them, as a file. */
static int corrupted_copy(const uint8_t *image, size_t size, size_t keep_bytes,
                          void (*corrupt)(uint8_t *bytes, void *userdata), void *userdata)
{
        _cleanup_free_ uint8_t *copy = malloc(size);
        int fd = memfd_create("unwind-corrupt", MFD_CLOEXEC);

        ASSERT_TRUE(copy);
        ASSERT_TRUE(fd >= 0);
        memcpy(copy, image, size);
        if (corrupt)
                corrupt(copy, userdata);
        ASSERT_EQ(write(fd, copy, keep_bytes), (ssize_t) keep_bytes);
        return fd;
}

/* What to do to the bytes [offset, offset + size) of a CFI section in the file: set one byte, or
 * (when flips > 0) set that many bytes chosen by seed. */
struct garble {
        uint64_t offset, size;
        uint64_t position;
        uint8_t value;
        unsigned seed, flips;
};

static void garble_bytes(uint8_t *bytes, void *userdata)
{
        struct garble *g = userdata;
        unsigned s = g->seed;

        if (g->flips == 0) {
                bytes[g->offset + g->position] = g->value;
                return;
        }
        for (unsigned i = 0; i < g->flips; i++) {
                s = s * 1103515245 + 12345;
                bytes[g->offset + (s >> 8) % g->size] = (uint8_t) (s >> 20);
        }
}

/* Where section name is in the file: its bytes (and size), and its section header. */
static void find_section(const char *path, const char *name, uint64_t *ret_offset, uint64_t *ret_size,
                         uint64_t *ret_header)
{
        int fd;
        Elf *elf = open_elf(path, &fd);
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        bool found = false;
        GElf_Ehdr ehdr;

        ASSERT_EQ(elf_getshdrstrndx(elf, &shstrndx), 0);
        ASSERT_TRUE(gelf_getehdr(elf, &ehdr));
        while ((scn = elf_nextscn(elf, scn))) {
                GElf_Shdr shdr;
                const char *n;

                if (gelf_getshdr(scn, &shdr) && (n = elf_strptr(elf, shstrndx, shdr.sh_name)) && !strcmp(n, name)) {
                        *ret_offset = shdr.sh_offset;
                        *ret_size = shdr.sh_size;
                        *ret_header = ehdr.e_shoff + elf_ndxscn(scn) * ehdr.e_shentsize;
                        found = true;
                        break;
                }
        }
        elf_end(elf);
        close(fd);
        ASSERT_TRUE(found);
}

static uint64_t section_file_offset(const char *path, const char *name, uint64_t *ret_size)
{
        uint64_t offset, header;

        find_section(path, name, &offset, ret_size, &header);
        return offset;
}

/* Where the section header of name is in the file (its sh_type is the first word after sh_name). */
static uint64_t section_header_offset(const char *path, const char *name)
{
        uint64_t offset, size, header;

        find_section(path, name, &offset, &size, &header);
        return header;
}

/* lld and gold may type .eh_frame SHT_X86_64_UNWIND (Debian's libLLVM): the same rows. */
static void eh_frame_typed_x86_64_unwind_is_read(void)
{
        struct unwind_table good = build(o2_path), t = {};
        _cleanup_close_ int src = open(o2_path, O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int fd = memfd_create("unwind-typed", MFD_CLOEXEC);
        _cleanup_free_ uint8_t *image = NULL;
        uint32_t type = SHT_X86_64_UNWIND;
        struct stat st;

        ASSERT_TRUE(src >= 0 && fd >= 0);
        ASSERT_EQ(fstat(src, &st), 0);
        image = malloc(st.st_size);
        ASSERT_TRUE(image);
        ASSERT_EQ(read(src, image, st.st_size), st.st_size);
        memcpy(image + section_header_offset(o2_path, ".eh_frame") + offsetof(Elf64_Shdr, sh_type), &type,
               sizeof(type));
        ASSERT_EQ(write(fd, image, st.st_size), st.st_size);
        ASSERT_EQ(unwind_table_build(fd, &UNWIND_TABLE_LIMITS_DEFAULT, &t), 0);
        ASSERT_TRUE(good.n_rows > 0);
        ASSERT_EQ(t.n_rows, good.n_rows);
        ASSERT_TRUE(memcmp(t.rows, good.rows, t.n_rows * sizeof(*t.rows)) == 0);
        unwind_table_done(&t);
        unwind_table_done(&good);
}

static void check_invariants(const struct unwind_table *t)
{
        ASSERT_EQ(t->stats.rows, t->n_rows);
        for (size_t i = 1; i < t->n_rows; i++)
                ASSERT_TRUE(t->rows[i - 1].start < t->rows[i].start);
        if (t->n_rows > 0)
                ASSERT_EQ(t->rows[t->n_rows - 1].cfa_rule, UNWIND_CFA_NONE);
        for (size_t i = 0; i < t->n_rows; i++) {
                ASSERT_TRUE(t->rows[i].cfa_rule < _UNWIND_CFA_RULE_MAX);
                ASSERT_TRUE(unwind_row_ra_rule(&t->rows[i]) < _UNWIND_REG_RULE_MAX);
                ASSERT_TRUE(unwind_row_rbp_rule(&t->rows[i]) < _UNWIND_REG_RULE_MAX);
        }
}

/* Build from the garbled copy: a table that holds together, or an error; never a crash. */
static void build_garbled(const uint8_t *image, size_t size, size_t keep_bytes, struct garble *g,
                          const struct unwind_table *good, size_t *built, size_t *skipped, size_t *refused)
{
        _cleanup_close_ int bad = corrupted_copy(image, size, keep_bytes, g ? garble_bytes : NULL, g);
        struct unwind_table t = {};

        if (unwind_table_build(bad, &UNWIND_TABLE_LIMITS_DEFAULT, &t) < 0) {
                (*refused)++;
                return;
        }
        (*built)++;
        check_invariants(&t);
        *skipped += t.stats.fdes_broken + t.stats.fdes_misplaced;
        if (keep_bytes < size)  /* cut short: never more than the whole file says */
                ASSERT_TRUE(t.n_rows <= good->n_rows);
        unwind_table_done(&t);
}

static void corrupt_cfi_is_skipped_and_counted_never_a_crash(void)
{
        const char *paths[] = { o2_path, o2_path, debug_frame_path };
        const char *sections[] = { ".eh_frame", ".eh_frame_hdr", ".debug_frame" };
        static const uint8_t values[] = { 0x00, 0xff, 0x7f, 0x80, 0x40 };
        size_t skipped = 0, built = 0, refused = 0;

        for (size_t p = 0; p < ELEMENTSOF(paths); p++) {
                _cleanup_close_ int fd = open(paths[p], O_RDONLY | O_CLOEXEC);
                _cleanup_free_ uint8_t *image = NULL;
                struct stat st;
                uint64_t size, offset = section_file_offset(paths[p], sections[p], &size);
                struct unwind_table good = build(paths[p]);

                ASSERT_TRUE(fd >= 0);
                ASSERT_EQ(fstat(fd, &st), 0);
                image = malloc(st.st_size);
                ASSERT_TRUE(image);
                ASSERT_EQ(pread(fd, image, st.st_size, 0), st.st_size);

                /* every byte of the section set to each of a few telling values */
                for (uint64_t i = 0; i < size; i++)
                        for (size_t v = 0; v < ELEMENTSOF(values); v++) {
                                struct garble g = { .offset = offset, .size = size, .position = i, .value = values[v] };

                                build_garbled(image, st.st_size, st.st_size, &g, &good, &built, &skipped, &refused);
                        }
                /* a few bytes, or many, set at random */
                for (unsigned seed = 1; seed <= 200; seed++) {
                        struct garble g = { .offset = offset, .size = size, .seed = seed,
                                            .flips = seed % 3 == 0 ? 64 : 2 + seed % 5 };

                        build_garbled(image, st.st_size, st.st_size, &g, &good, &built, &skipped, &refused);
                }
                /* the file cut inside the section */
                for (uint64_t cut = offset + 1; cut < offset + size; cut += 5)
                        build_garbled(image, st.st_size, cut, NULL, &good, &built, &skipped, &refused);
                unwind_table_done(&good);
        }
        fprintf(stderr, "corrupt CFI: %zu tables built (%zu FDEs skipped in them), %zu refused\n", built,
                skipped, refused);
        ASSERT_TRUE(built > 0);
        ASSERT_TRUE(skipped > 0);
}

int main(int argc, char **argv)
{
        static const struct unit_test tests[] = {
                TEST(fixture_tables_match_readelf_row_for_row),
                TEST(function_entry_has_cfa_rsp_plus_8_and_return_address_below_it),
                TEST(frame_pointer_code_has_cfa_rbp_plus_16_after_its_prologue),
                TEST(code_without_frame_pointers_has_cfa_on_rsp_by_frame_size),
                TEST(lazy_plt_entries_get_the_plt_rule),
                TEST(debug_frame_is_read_when_eh_frame_is_empty),
                TEST(libc_table_matches_readelf_row_for_row),
                TEST(libc_signal_trampoline_is_a_signal_frame_reading_the_ucontext),
                TEST(libc_thread_start_in_clone_ends_the_walk),
                TEST(program_start_ends_the_walk),
                TEST(find_returns_null_where_no_cfi_is),
                TEST(mapping_bias_turns_a_pc_into_its_row_address),
                TEST(eh_frame_typed_x86_64_unwind_is_read),
                TEST(files_past_a_limit_are_refused),
                TEST(compressed_debug_frame_is_read_within_its_inflate_limit),
                TEST(non_elf_and_empty_files_are_refused),
                TEST(corrupt_cfi_is_skipped_and_counted_never_a_crash),
        };

        ASSERT_EQ(argc, 7);
        o2_path = argv[1];
        o0_path = argv[2];
        debug_frame_path = argv[3];
        zdebug_frame_path = argv[4];
        libc_path = argv[5];
        readelf_path = argv[6];
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
