/* SPDX-License-Identifier: GPL-2.0 */
/* The user-stack walker for targets with unwind tables: from the registers at an allocator's
 * return, each frame is stepped by its object's CFI rows (struct unwind_row, built by the daemon
 * from .eh_frame/.debug_frame), or by its frame pointer where the object has no CFI or keeps rbp.
 * A bpf_loop() callback per frame: the verifier checks it once whatever the depth (the depth is
 * bpf_loop's index, not a value it tracks per iteration), and the row's binary search is a
 * bpf_loop of its own. Per frame the costs are finding the row and the user-memory reads: rows
 * come from the thread's cache by pc when the frame was walked before, consecutive frames in one
 * mapping skip the mapping search, and a frame whose rbp is saved right below its return
 * address is read in one (bench/RESULTS.md, deep stacks); a walk from the same registers as the
 * thread's last reads the words that one read again and, when they are unchanged, takes its
 * stack without stepping a frame (walk-memo.h). Included
 * once, by memleak.bpf.c, after stack-table.h. */
#pragma once

/* An object's rows; each object's own array, sized to it, is put in a slot of unwind_tables. */
struct unwind_rows {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        /* the arrays differ in size; the daemon copies each one's rows in through a mapping
         * (TABLE_SLOTS_ROWS_FLAGS in daemon/unwind/table-slots.h: the same flags) */
        __uint(map_flags, BPF_F_INNER_MAP | BPF_F_MMAPABLE);
        __uint(max_entries, 1);
        __uint(key_size, sizeof(__u32));
        __uint(value_size, sizeof(struct unwind_row));
};

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
        __uint(max_entries, UNWIND_TABLES_MAX);
        __type(key, __u32);
        __array(values, struct unwind_rows);
} unwind_tables SEC(".maps");

/* By the target's slot of target_slots. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 64);                /* max_targets */
        __type(key, __u32);
        __type(value, struct unwind_target);
} unwind_targets SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, UNWIND_TABLES_MAX);
        __type(key, struct unwind_file_key);
        __type(value, struct unwind_file);
} unwind_files SEC(".maps");

/* Each target's mappings, UNWIND_MAPPINGS_MAX per slot. A map of its own rather than an array in
 * unwind_targets' value: indexing an array by the binary search's midpoint would make the
 * verifier follow every path of the search; a map key does not. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 64 * 2 * UNWIND_MAPPINGS_MAX);      /* max_targets * 2 lists */
        __type(key, __u32);
        __type(value, struct unwind_mapping);
} unwind_mappings SEC(".maps");

/* Each thread's cache of the rows its walks used, by pc: a hot allocation site's frames skip
 * the mapping and row searches. An entry holds only under the target's list generation it was
 * filled under (the daemon changes it with every list it writes: a table loaded, a library
 * mapped or gone). Task storage: a thread runs one program at a time, nothing tears an entry. */
#define UNWIND_ROW_CACHE_SIZE 128               /* a power of two; 256 before the 4 KiB chunk */

/* ROW_CACHE_NO_CFI: a pc in an object with CFI that no row covers (unwind_step_no_cfi()) */
enum { ROW_CACHE_EMPTY, ROW_CACHE_ROW, ROW_CACHE_FRAME_POINTER, ROW_CACHE_NO_CFI };

struct row_cache_entry {
        __u64 pc;
        __u32 tgid;
        __u32 generation;
        struct unwind_row row;
        __u32 kind;             /* ROW_CACHE_* */
};

struct row_cache {
        struct row_cache_entry entries[UNWIND_ROW_CACHE_SIZE];
};

/* The walker reads user stack a chunk at a time: each read of user memory has a fixed price
 * (the fault-safe copy and the kernel's usercopy checks) well above the copy's, and a stack's
 * next frames often lie in the KiBs right above the last one read. 2 KiB: redis-server's
 * return probe took 1,230 ns with it, 1,500 with 512 bytes, 2,280 with 128. 4 KiB: a walk memo
 * holds a span of stack one chunk long, and python3's allocations span 2,176 bytes from malloc's
 * return to _start (with 2 KiB, 10% of its walks came from memos, at 787 ns a session run; with
 * 4 KiB 100%, at 337 ns; C churn, deep stacks and redis-server measured the same either way). */
#define STACK_CHUNK_WORDS 512

/* The stack the walker (and a memo's compare) read last. */
struct stack_chunk {
        __u64 start;                    /* the user address of w[0] */
        __u64 words;                    /* words of w read; 0: none this walk */
        __u64 w[STACK_CHUNK_WORDS + 1]; /* + 1: room for a 2-word read at any index */
};

#include "walk-memo.h"

/* What a thread's stack captures work in: where a uprobe program captures a stack before it is
 * interned, the chunk of stack the walker read, its row cache, and its walk memos with the words
 * the walk in progress read. Task storage, not per CPU: uprobe programs run preemptible (only
 * migration is disabled), so another task on the same CPU could overwrite a per-CPU buffer
 * midway; a task runs one of our programs at a time. One storage for them all: one look-up per
 * capture. */
struct user_stack_scratch {
        struct stack_trace trace;       /* first: the stack table stores it as it is */
        struct stack_chunk chunk;
        struct row_cache rows;
        struct walk_reads reads;        /* what the walk in progress read */
        __u32 memo_clock;               /* counts the memos made and taken: their age */
        __u32 memo_pending;             /* the memo the walk in progress may become */
        __u8 memo_last[WALK_MEMO_SETS]; /* the way of each set made or taken last: looked at first */
        struct walk_memo memo[WALK_MEMOS];      /* in sets, by walk_memo_set_first() of their registers */
};

/* The kernel allocates a task storage element (a 72-byte header, then the value) past 8 KiB from
 * the page allocator, in power-of-two blocks: kept within 32 KiB, a thread's scratch takes 32 KiB,
 * not 64. */
_Static_assert(sizeof(struct user_stack_scratch) <= 32768 - 72, "a thread's stack scratch fits 32 KiB");

struct {
        __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, int);
        __type(value, struct user_stack_scratch);
} user_stack_scratch SEC(".maps");

#define UNWIND_MAPPING_SEARCH_STEPS 10          /* log2(UNWIND_MAPPINGS_MAX) + 1 */
#define UNWIND_ROW_SEARCH_STEPS 24              /* tables of up to 2^23 rows */

/* Where a pc's object is, as unwind_step() needs it. */
struct unwind_place {
        __u64 bias;
        __u32 table;
        __u32 n_rows;           /* 0: walk by frame pointer */
};

struct unwind_walk {
        __u64 pc;               /* this frame's pc: a return address, or an exact pc below a
                                 * signal frame */
        __u64 sp;
        __u64 bp;
        __u32 tgid;
        __u32 depth;            /* frames written to the scratch trace */
        __u32 exact_pc;         /* pc is the interrupted instruction itself, not a return address */
        __u32 stop;             /* enum unwind_stop */
        __u32 max_depth;
        __u32 list_base;        /* where its target's current mapping list is in unwind_mappings */
        __u32 list_n;           /* and how long, as the walk began */
        /* looked up once per walk, not per frame */
        struct stack_trace *trace;              /* the thread's scratch trace */
        struct user_stack_scratch *scratch;     /* which holds it and the chunk of stack read */
        struct row_cache *cache;                /* the thread's, in its scratch */
        __u32 generation;                       /* target->generation when the walk began */
        __u8 bp_from_regs;                      /* bp is still the registers' rbp */
        __u8 used_regs_bp;                      /* a rule read the registers' rbp */
        __u8 uncacheable;                       /* a frame's mapping was not in the list */
        __u8 pad2;
        __u64 bp_addr;                          /* where bp was read from, until a rule reads bp
                                                 * (it is noted then); 0: nothing to note */
        /* the mapping of the last frame stepped by CFI: the next frame is often in it too */
        __u64 last_start, last_end;
        struct unwind_place last_place;
};

struct mapping_search {
        __u64 pc;
        __u32 base;             /* the target's slot's first key */
        __u32 lo, hi;           /* the window left: keys base + [lo .. hi) */
        __u32 failed;
};

/* One step of the binary search for the last mapping whose start <= pc: a bpf_loop() callback,
 * which the verifier checks once rather than once per step. */
static long mapping_search_step(__u32 index, struct mapping_search *s)
{
        const struct unwind_mapping *m;
        __u32 mid, key;

        if (s->lo >= s->hi)
                return 1;
        mid = s->lo + (s->hi - s->lo) / 2;
        key = s->base + mid;
        m = bpf_map_lookup_elem(&unwind_mappings, &key);
        if (!m) {
                s->failed = 1;
                return 1;
        }
        if (m->start <= s->pc)
                s->lo = mid + 1;
        else
                s->hi = mid;
        return 0;
}

static __always_inline const struct unwind_mapping *unwind_find_mapping(const struct unwind_walk *w, __u64 pc)
{
        struct mapping_search s = { .pc = pc, .base = w->list_base, .hi = w->list_n };
        const struct unwind_mapping *m;
        __u32 key;

        if (s.hi > UNWIND_MAPPINGS_MAX)
                return NULL;
        bpf_loop(UNWIND_MAPPING_SEARCH_STEPS, mapping_search_step, &s, 0);
        if (s.failed || s.lo == 0)
                return NULL;
        key = s.base + s.lo - 1;
        m = bpf_map_lookup_elem(&unwind_mappings, &key);
        if (!m || pc >= m->end)
                return NULL;
        return m;
}

#define VM_EXEC 0x00000004ull            /* include/linux/mm.h: not in BTF, a macro */

struct vma_place {
        __u64 pc;
        __u64 start;
        __u64 pgoff;
        struct unwind_file_key key;
        __u32 found;            /* the vma maps a file */
        __u32 exec;             /* and is executable */
};

static long vma_of_pc(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
        struct vma_place *v = data;
        struct file *file = vma->vm_file;

        if (!file)
                return 0;
        v->start = vma->vm_start;
        v->pgoff = (__u64)vma->vm_pgoff * 4096;
        v->key.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
        v->key.ino = BPF_CORE_READ(file, f_inode, i_ino);
        v->found = 1;
        v->exec = (BPF_CORE_READ(vma, vm_flags) & VM_EXEC) != 0;
        return 0;
}

/* The place of pc found from its vma and its file's entry in unwind_files: for mappings the
 * daemon has not listed yet. 0 (n_rows 0: a file examined and found without CFI, walked by frame
 * pointer); -EBUSY when the mm lock was busy (nothing is known of pc then); -ENOENT when pc is
 * in an executable mapping of a file the daemon has not examined, or whose table is still
 * building (a library just dlopen()ed, a program just exec'd): stepping it by frame pointer
 * would cut the stack where it keeps none, and the cut stack would read as complete; or -1 when
 * there is none (no file: JIT code, the vDSO; or no segment of the file covers pc). */
static __always_inline int unwind_place_by_vma(__u64 pc, struct unwind_place *ret)
{
        struct vma_place v = { .pc = pc };
        const struct unwind_file *f;
        long err;

        err = bpf_find_vma(bpf_get_current_task_btf(), pc, vma_of_pc, &v, 0);
        if (err == -EBUSY)
                return -EBUSY;
        if (err < 0 || !v.found)
                return -1;
        f = bpf_map_lookup_elem(&unwind_files, &v.key);
        if (!f)
                return v.exec ? -ENOENT : -1;
        if (f->n_rows == 0) {
                ret->n_rows = 0;
                return 0;
        }
        for (int i = 0; i < UNWIND_FILE_SEGMENTS; i++) {
                const struct unwind_file_segment *s = &f->segments[i];

                if (i >= f->n_segments)
                        break;
                if (v.pgoff < (s->offset & ~4095ull) || v.pgoff >= s->offset + s->size)
                        continue;
                ret->bias = v.start - v.pgoff + s->offset - s->vaddr + f->base_vaddr;
                ret->table = f->table;
                ret->n_rows = f->n_rows;
                return 0;
        }
        return -1;
}

struct row_search {
        void *rows;
        __u32 lo, hi;           /* the window left: rows[lo .. hi) */
        __u32 rel;
        __u32 failed;
};

/* One step of the binary search: a bpf_loop() callback, which the verifier checks once. */
static long row_search_step(__u32 index, struct row_search *s)
{
        const struct unwind_row *row;
        __u32 mid;

        if (s->lo >= s->hi)
                return 1;
        mid = s->lo + (s->hi - s->lo) / 2;
        row = bpf_map_lookup_elem(s->rows, &mid);
        if (!row) {
                s->failed = 1;
                return 1;
        }
        if (row->start <= s->rel)
                s->lo = mid + 1;
        else
                s->hi = mid;
        return 0;
}

/* The row of rows[0..n) that covers rel: the last whose start <= rel. */
static __always_inline const struct unwind_row *unwind_find_row(void *rows, __u32 n, __u32 rel)
{
        struct row_search s = { .rows = rows, .hi = n, .rel = rel };
        __u32 key;

        bpf_loop(UNWIND_ROW_SEARCH_STEPS, row_search_step, &s, 0);
        if (s.failed || s.lo == 0)
                return NULL;
        key = s.lo - 1;
        return bpf_map_lookup_elem(rows, &key);
}

struct user_words {
        __u64 w[2];
};

/* Copy words (1 or 2) of user memory at addr into ret from s's chunk of stack, reading the
 * chunk from addr up first when they are not in it: 0, or -1 when addr is unreadable. A global
 * function: the verifier checks its branches once, not at every read. */
__noinline int read_user_words(struct user_stack_scratch *s, __u64 addr, struct user_words *ret, __u32 words)
{
        __u64 off, i;

        if (!s || !ret || words == 0 || words > 2)
                return -1;
        off = addr - s->chunk.start;
        if (addr < s->chunk.start || (off & 7) || off / 8 + words > s->chunk.words) {
                __u64 page_rest = (4096 - (addr & 4095)) & ~7ull;

                s->chunk.start = addr;
                s->chunk.words = STACK_CHUNK_WORDS;
                off = 0;
                if (bpf_probe_read_user(s->chunk.w, STACK_CHUNK_WORDS * sizeof(__u64), (const void *)addr)) {
                        /* The stack's mapping ends inside the chunk: up to the end of addr's page
                         * then, or, when that cannot hold the words either, the words alone. */
                        s->chunk.words = 0;
                        if (page_rest < words * sizeof(__u64) || page_rest >= STACK_CHUNK_WORDS * sizeof(__u64) ||
                            bpf_probe_read_user(s->chunk.w, page_rest, (const void *)addr)) {
                                if (words == 2)
                                        return bpf_probe_read_user(ret, 2 * sizeof(__u64), (const void *)addr) ? -1 : 0;
                                return bpf_probe_read_user(ret, sizeof(__u64), (const void *)addr) ? -1 : 0;
                        }
                        s->chunk.words = page_rest / 8;
                }
        }
        i = (off / 8) & (STACK_CHUNK_WORDS - 1);        /* a no-op the verifier can follow */
        ret->w[0] = s->chunk.w[i];
        ret->w[1] = s->chunk.w[i + 1];
        return 0;
}

/* A word the walk read: noted in s->reads, of which the walk's memo is made, when note. The
 * saved rbp a frame restores is not noted here: only a rule that reads it later makes the walk
 * depend on it (walk_bp()), and it often holds data that changes from call to call. */
static __always_inline int read_user_u64(const struct unwind_walk *w, __u64 addr, __u64 *ret, bool note)
{
        struct user_words got;

        if (!w->scratch || read_user_words(w->scratch, addr, &got, 1))
                return -1;
        *ret = got.w[0];
        if (note)
                walk_reads_note(&w->scratch->reads, addr, got.w[0]);
        return 0;
}

/* A frame-pointer frame's saved rbp at addr and the return address above it, in one read (the
 * return address noted). */
static __always_inline int read_user_frame(const struct unwind_walk *w, __u64 addr, __u64 *bp, __u64 *ra)
{
        struct user_words got;

        if (!w->scratch || read_user_words(w->scratch, addr, &got, 2))
                return -1;
        *bp = got.w[0];
        *ra = got.w[1];
        walk_reads_note(&w->scratch->reads, addr + 8, got.w[1]);
        return 0;
}

/* w's rbp, for a rule that uses it: the walk depends on it from now on. The registers' rbp is
 * then part of the memo's key; one read from the stack, one of the words the memo compares. */
static __always_inline __u64 walk_bp(struct unwind_walk *w)
{
        if (w->bp_from_regs) {
                w->used_regs_bp = 1;
        } else if (w->bp_addr && w->scratch) {
                walk_reads_note(&w->scratch->reads, w->bp_addr, w->bp);
                w->bp_addr = 0;
        }
        return w->bp;
}

/* rbp where a rule for it could not be computed (not 0, which marks the deepest frame) */
#define UNWIND_BP_UNKNOWN (~0ull)

/* Take the frame at frame (a frame pointer): the caller's rbp saved there, its return address
 * above it. */
static __always_inline void unwind_take_fp_frame(struct unwind_walk *w, __u64 frame, __u64 bp, __u64 ra)
{
        w->sp = frame + 16;
        w->bp = bp;
        w->bp_from_regs = 0;
        w->bp_addr = frame;
        w->pc = ra;
        w->exact_pc = 0;
}

/* One frame by frame pointer: rbp points at the caller's rbp, the return address above it.
 * Where there is no chain to take (rbp 0, not known, or below the stack pointer: code that keeps
 * no frame pointer), the walk stops NO_CFI: it has neither CFI nor a frame pointer here, and it
 * is not the outermost frame unless unwind_user_stack() finds it at the stack's start with rbp
 * 0 (the psABI's mark of the deepest frame). Never END here: a frame skipped or cut there would
 * read as a complete stack. */
static __always_inline int unwind_step_fp(struct unwind_walk *w)
{
        __u64 ra, bp, frame = walk_bp(w);

        if (frame == 0 || frame == UNWIND_BP_UNKNOWN || frame < w->sp)
                return UNWIND_STOP_NO_CFI;      /* no frame pointer chain here */
        if (read_user_frame(w, frame, &bp, &ra))
                return UNWIND_STOP_UNREADABLE;
        unwind_take_fp_frame(w, frame, bp, ra);
        return -1;
}

struct vma_exec {
        __u32 exec;
};

static long vma_is_exec(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
        struct vma_exec *v = data;

        v->exec = (BPF_CORE_READ(vma, vm_flags) & VM_EXEC) != 0;
        return 0;
}

/* How far above the stack pointer a frame pointer may point in code without CFI: a thread's
 * stack, at most (8 MiB by default). */
#define NO_CFI_FRAME_MAX (8ull << 20)

/* A pc in an object with CFI that no row covers: assembly written without CFI directives, V8's
 * builtins (node's code that calls into and out of its JIT code). Where such code keeps a frame
 * pointer (push %rbp; mov %rsp, %rbp), as V8's does, it is stepped by it, as elfutils' x86_64
 * unwinder does where CFI is missing: when rbp points into the stack above the stack pointer and
 * the word above the frame returns into executable memory. Else the walk stops here, NO_CFI:
 * a function without a frame of its own would have its caller skipped, and an rbp that holds
 * data would take the walk anywhere. */
static __always_inline int unwind_step_no_cfi(struct unwind_walk *w)
{
        struct vma_exec v = {};
        __u64 ra, bp, frame = walk_bp(w);

        if (frame == 0 || frame == UNWIND_BP_UNKNOWN || frame < w->sp || frame - w->sp > NO_CFI_FRAME_MAX ||
            (frame & 7))
                return UNWIND_STOP_NO_CFI;
        if (read_user_frame(w, frame, &bp, &ra) || ra == 0)
                return UNWIND_STOP_NO_CFI;
        if (bpf_find_vma(bpf_get_current_task_btf(), ra - 1, vma_is_exec, &v, 0) < 0 || !v.exec)
                return UNWIND_STOP_NO_CFI;
        unwind_take_fp_frame(w, frame, bp, ra);
        return -1;
}

/* A register saved by rule (the return address, note; or rbp, whose address goes to *addr). */
static __always_inline int unwind_read_reg(struct unwind_walk *w, __u8 rule, __s8 offset8, __u64 cfa,
                                           __u64 *ret, bool note, __u64 *addr)
{
        __u64 base;

        switch (rule) {
        case UNWIND_REG_AT_CFA: base = cfa; break;
        case UNWIND_REG_AT_RSP: base = w->sp; break;
        case UNWIND_REG_AT_RBP: base = walk_bp(w); break;
        default: return -1;
        }
        *addr = base + (__s64)offset8 * 8;
        return read_user_u64(w, *addr, ret, note) ? -2 : 0;
}

/* One frame by its CFI row. */
static __always_inline int unwind_step_row(struct unwind_walk *w, const struct unwind_row *row)
{
        __u8 ra_rule = row->reg_rules & UNWIND_ROW_RA_RULE_MASK;
        __u8 bp_rule = (row->reg_rules & UNWIND_ROW_RBP_RULE_MASK) >> UNWIND_ROW_RBP_RULE_SHIFT;
        __u64 cfa, ra, bp = w->bp, ra_addr, bp_addr = 0;
        bool bp_read = false;
        int r;

        switch (row->cfa_rule) {
        case UNWIND_CFA_NONE:
                return UNWIND_STOP_NO_CFI;
        case UNWIND_CFA_RSP:
                cfa = w->sp + row->cfa_offset;
                break;
        case UNWIND_CFA_RBP:
                cfa = walk_bp(w) + row->cfa_offset;
                break;
        case UNWIND_CFA_PLT:
                cfa = w->sp + row->cfa_offset + ((w->pc & 15) >= 11 ? 8 : 0);
                break;
        case UNWIND_CFA_RSP_DEREF:
                if (read_user_u64(w, w->sp + row->cfa_offset, &cfa, true))
                        return UNWIND_STOP_UNREADABLE;
                break;
        case UNWIND_CFA_RBP_DEREF:
                if (read_user_u64(w, walk_bp(w) + row->cfa_offset, &cfa, true))
                        return UNWIND_STOP_UNREADABLE;
                break;
        default:
                return UNWIND_STOP_UNCOMPUTABLE;
        }
        if (ra_rule == UNWIND_REG_UNDEFINED)
                return UNWIND_STOP_END;         /* _start, a thread's first frame */
        if (ra_rule == UNWIND_REG_AT_CFA && row->ra_offset8 == -1 && bp_rule == UNWIND_REG_AT_CFA &&
            row->rbp_offset8 == -2) {
                /* a frame-pointer frame: rbp saved right below the return address */
                if (read_user_frame(w, cfa - 16, &bp, &ra))
                        return UNWIND_STOP_UNREADABLE;
                bp_read = true;
                bp_addr = cfa - 16;
                goto stepped;
        }
        r = unwind_read_reg(w, ra_rule, row->ra_offset8, cfa, &ra, true, &ra_addr);
        if (r == -1)
                return UNWIND_STOP_UNCOMPUTABLE;
        if (r < 0)
                return UNWIND_STOP_UNREADABLE;
        if (bp_rule != UNWIND_REG_UNDEFINED && bp_rule != UNWIND_REG_SAME_VALUE) {
                r = unwind_read_reg(w, bp_rule, row->rbp_offset8, cfa, &bp, false, &bp_addr);
                if (r == -1) {
                        bp = UNWIND_BP_UNKNOWN; /* from here only CFI can go on */
                        bp_addr = 0;
                } else if (r < 0) {
                        return UNWIND_STOP_UNREADABLE;
                }
                bp_read = true;
        }
stepped:
        /* above a signal handler's trampoline (whose row reads the interrupted rip, rsp and rbp
         * from the ucontext) is the interrupted instruction itself, not a return address */
        w->exact_pc = (row->reg_rules & UNWIND_ROW_SIGNAL_FRAME) != 0;
        w->sp = cfa;
        w->bp = bp;
        if (bp_read) {
                w->bp_from_regs = 0;
                w->bp_addr = bp_addr;
        }
        w->pc = ra;
        return -1;
}

/* The row for pc, or NULL; *stop: the enum unwind_stop when there is none, -1 when pc is to be
 * stepped by frame pointer. *cacheable: false when pc's mapping is not in the target's list. */
static __always_inline const struct unwind_row *unwind_row_of(struct unwind_walk *w, __u64 pc, bool *cacheable,
                                                              int *stop)
{
        const struct unwind_mapping *m;
        struct unwind_place place = {};
        void *rows;
        __u64 rel;

        if (pc >= w->last_start && pc < w->last_end) {
                place = w->last_place;
        } else {
                m = unwind_find_mapping(w, pc);
                if (m) {
                        place.bias = m->bias;
                        place.table = m->table;
                        place.n_rows = m->n_rows;
                        w->last_start = m->start;
                        w->last_end = m->end;
                        w->last_place = place;
                } else {
                        int r;

                        *cacheable = false;     /* not in the list: the list will change */
                        w->uncacheable = 1;
                        r = unwind_place_by_vma(pc, &place);
                        if (r == -EBUSY || r == -ENOENT) {
                                /* its table may be loaded, or is to be: stepping it by frame
                                 * pointer could read data as frames, or cut the stack */
                                *stop = UNWIND_STOP_NO_TABLE;
                                return NULL;
                        }
                        if (r < 0)
                                place.n_rows = 0;
                }
        }
        if (place.n_rows == 0 && place.table == UNWIND_TABLE_PENDING) {
                /* listed before its table is in */
                *stop = UNWIND_STOP_NO_TABLE;
                return NULL;
        }
        *stop = -1;
        if (place.n_rows == 0)
                return NULL;                    /* no CFI known here: JIT code, a vDSO, an FP object */
        *stop = UNWIND_STOP_NO_TABLE;
        rows = bpf_map_lookup_elem(&unwind_tables, &place.table);
        if (!rows)
                return NULL;
        *stop = UNWIND_STOP_NO_CFI;
        rel = pc - place.bias;
        if (rel > 0xffffffffull)
                return NULL;
        return unwind_find_row(rows, place.n_rows, (__u32)rel);
}

/* Step from w's frame to its caller's: -1 on success, else the enum unwind_stop that ends it. */
static __always_inline int unwind_step(struct unwind_walk *w)
{
        __u64 pc = w->pc - (w->exact_pc ? 0 : 1);
        struct row_cache_entry *c = NULL;
        const struct unwind_row *found;
        struct unwind_row row = {};
        bool cacheable = true;
        __u32 kind;
        int stop;

        if (w->cache)
                c = &w->cache->entries[memleak_mix64(pc) & (UNWIND_ROW_CACHE_SIZE - 1)];
        if (c && c->kind != ROW_CACHE_EMPTY && c->pc == pc && c->tgid == w->tgid && c->generation == w->generation) {
                kind = c->kind;
                row = c->row;
        } else {
                found = unwind_row_of(w, pc, &cacheable, &stop);
                if (!found && stop >= 0 && stop != UNWIND_STOP_NO_CFI)
                        return stop;
                kind = found ? ROW_CACHE_ROW : stop == UNWIND_STOP_NO_CFI ? ROW_CACHE_NO_CFI
                                                                          : ROW_CACHE_FRAME_POINTER;
                if (found)
                        row = *found;
                if (c && cacheable)
                        *c = (struct row_cache_entry) { .pc = pc, .tgid = w->tgid, .generation = w->generation,
                                                        .row = row, .kind = kind };
        }
        if (kind == ROW_CACHE_FRAME_POINTER)
                return unwind_step_fp(w);
        if (kind == ROW_CACHE_NO_CFI)
                return unwind_step_no_cfi(w);
        stop = unwind_step_row(w, &row);
        return stop == UNWIND_STOP_NO_CFI ? unwind_step_no_cfi(w) : stop;
}

/* index is the frame's depth (bpf_loop counts from 0 and the walk stops at its first break):
 * a value the verifier does not track per iteration, where a depth carried in w would make it
 * check the body once for each depth. */
static long unwind_frame(__u32 index, struct unwind_walk *w)
{
        struct stack_trace *t;
        __u64 depth = index;
        int stop;

        /* one register for the bound checks and the store, not a second zero-extension of index */
        asm volatile("" : "+r"(depth));

        t = w->trace;
        if (!t)
                return 1;
        if (depth >= w->max_depth || depth >= MEMLEAK_MAX_STACK_DEPTH) {
                w->stop = UNWIND_STOP_DEPTH;
                return 1;
        }
        t->ips[depth] = w->pc;
        w->depth = depth + 1;
        stop = unwind_step(w);
        if (stop >= 0) {
                w->stop = stop;
                return 1;
        }
        if (w->pc == 0) {
                w->stop = UNWIND_STOP_END;
                return 1;
        }
        return 0;
}

static __always_inline void count_unwind_stop(__u32 stop)
{
        switch (stop) {
        case UNWIND_STOP_DEPTH: count(COUNTER_UNWIND_STOP_DEPTH); break;
        case UNWIND_STOP_NO_CFI: count(COUNTER_UNWIND_STOP_NO_CFI); break;
        case UNWIND_STOP_UNCOMPUTABLE: count(COUNTER_UNWIND_STOP_UNCOMPUTABLE); break;
        case UNWIND_STOP_UNREADABLE: count(COUNTER_UNWIND_STOP_UNREADABLE); break;
        case UNWIND_STOP_NO_TABLE: count(COUNTER_UNWIND_STOP_NO_TABLE); break;
        }
}

#define WALK_MEMO_FOUND 0x100u

/* What a walk's memo is looked up by. */
struct walk_memo_key {
        __u64 pc, sp, bp;
        __u32 tgid;
        __u32 generation;
};

/* The memo of the thread's that says a walk from k's registers takes the same stack as it did,
 * among the ways of their set but skip (which the caller looked at): its index | WALK_MEMO_FOUND
 * (the memo is marked as taken now); else the index of the memo of the set that the walk
 * replaces: an empty or stale one, else the one taken longest ago. A global function: the
 * verifier checks its loops once, not once per path of the walk. */
__noinline __u32 walk_memo_find(struct user_stack_scratch *s, const struct walk_memo_key *k, __u32 skip)
{
        __u32 first, victim, victim_age = 0;

        if (!s || !k)
                return 0;
        first = walk_memo_set_first(k->pc, k->sp);
        victim = first;
        for (__u32 way = 0; way < WALK_MEMO_WAYS; way++) {
                __u32 i = (first + way) & (WALK_MEMOS - 1), age;
                struct walk_memo *m = &s->memo[i];

                if (i != skip &&
                    walk_memo_matches(m, &s->chunk, k->tgid, k->generation, k->pc, k->sp, k->bp)) {
                        m->used = ++s->memo_clock;
                        s->memo_last[walk_memo_set_of(first)] = way;
                        return i | WALK_MEMO_FOUND;
                }
                /* one that can no longer match (kept under another list generation, before a
                 * stack purge) is as good as empty */
                age = walk_memo_current(m, k->tgid, k->generation) ? s->memo_clock - m->used : ~0u;
                if (age > victim_age) {
                        victim = i;
                        victim_age = age;
                }
        }
        return victim;
}

/* How far below the start of the process's stack (mm->start_stack, where argc lies) the
 * outermost frame's stack pointer may be: _dl_start_user aligns it to 16 bytes. */
#define STACK_START_SLACK 16
/* How far below it lie the frames of musl's start code (_start_c, then __libc_start_main, which
 * jumps to libc_start_main_stage2, which calls main): a few dozen bytes; nothing but a C
 * library's start code runs this close to where the stack began. */
#define STACK_START_CODE_BYTES 256

/* Whether w's stack pointer is at most slack bytes below where the calling process's first stack
 * began. */
static __always_inline bool walk_at_stack_start(const struct unwind_walk *w, __u64 slack)
{
        __u64 start = BPF_CORE_READ(bpf_get_current_task_btf(), mm, start_stack);

        return w->sp <= start && start - w->sp <= slack;
}

/* Walk the user stack of a uprobe's registers into s->trace by the target's unwind tables: 0,
 * then the memo s->memo_pending names holds the walk's key, for walk_memo_keep() once its stack
 * has an id; 1 when a memo of an earlier walk of the thread says this one takes the same stack,
 * *memo_id; or -ENOENT when the target has no tables (the caller takes the frame-pointer stack
 * instead). */
static __always_inline long unwind_user_stack(struct pt_regs *ctx, __u32 tgid, __u32 slot,
                                              struct user_stack_scratch *s, __s64 *memo_id)
{
        struct stack_trace *t = &s->trace;
        struct unwind_walk w = {
                .pc = PT_REGS_IP(ctx), .sp = PT_REGS_SP(ctx), .bp = PT_REGS_FP(ctx), .tgid = tgid,
                .max_depth = stack_capture_bytes() / sizeof(__u64), .trace = t, .scratch = s,
                .bp_from_regs = 1,
        };
        __u32 purges = stack_purges, first, found;
        const struct unwind_target *target;
        struct walk_memo *m;
        __u64 list;

        target = bpf_map_lookup_elem(&unwind_targets, &slot);
        if (!target || target->tgid != tgid)
                return -ENOENT;
        w.generation = target->generation;
        /* the current list, as one word: its length and which half of the slot it is in */
        list = *(volatile const __u64 *)&target->n;
        w.list_n = (__u32)list;
        w.list_base = (slot * 2 + ((__u32)(list >> 32) & 1)) * UNWIND_MAPPINGS_MAX;
        count(COUNTER_UNWIND_WALKS);
        /* the set's memo taken or made last first, inline: a loop allocating from one stack again
         * and again compares one memo's words; then the others */
        first = walk_memo_set_first(w.pc, w.sp);
        found = (first + s->memo_last[walk_memo_set_of(first)]) & (WALK_MEMOS - 1);
        m = &s->memo[found];
        if (walk_memo_matches(m, &s->chunk, tgid, w.generation, w.pc, w.sp, w.bp)) {
                m->used = ++s->memo_clock;
                found |= WALK_MEMO_FOUND;
        } else {
                struct walk_memo_key k = {
                        .pc = w.pc, .sp = w.sp, .bp = w.bp, .tgid = tgid, .generation = w.generation,
                };

                found = walk_memo_find(s, &k, found);
                m = &s->memo[found & (WALK_MEMOS - 1)];
        }
        if (found & WALK_MEMO_FOUND) {
                *memo_id = m->stack_id;
                count(COUNTER_UNWIND_REPEATS);
                count_unwind_stop(m->stop);
                return 1;
        }
        w.cache = &s->rows;
        walk_reads_start(&s->reads);
        bpf_loop(MEMLEAK_MAX_STACK_DEPTH + 1, unwind_frame, &w, 0);
        /* A frame without CFI is the outermost when its stack pointer is where the process's
         * stack began and rbp is 0, which the psABI says marks the deepest frame: ld.so's
         * _dl_start_user, which runs the constructors of the objects a program links, has no CFI
         * but zeroes rbp first. Elsewhere the walk was cut there (rbp 0 alone may be any
         * function's use of the register), except a few dozen bytes from the stack's start, where
         * only start code runs: musl's, which has no CFI and keeps argc in rbp when it calls
         * main. (Here, not in unwind_frame(): the verifier checks it once, not once per frame
         * state.) */
        if (w.stop == UNWIND_STOP_NO_CFI &&
            ((walk_at_stack_start(&w, STACK_START_SLACK) && walk_bp(&w) == 0) ||
             walk_at_stack_start(&w, STACK_START_CODE_BYTES)))
                w.stop = UNWIND_STOP_END;
        t->depth = w.depth;
        t->stop = w.stop;
        count_unwind_stop(w.stop);
        /* the key of the memo this walk may become (pending until its stack has an id); not a
         * walk that found a mapping missing from the list, which the daemon is about to change,
         * nor one that a read it could not make stopped */
        s->memo_pending = found & (WALK_MEMOS - 1);
        m = &s->memo[s->memo_pending];
        s->memo_last[walk_memo_set_of(s->memo_pending)] = s->memo_pending % WALK_MEMO_WAYS;
        m->valid = 0;
        if (!w.uncacheable && w.stop != UNWIND_STOP_UNREADABLE) {
                m->pc = PT_REGS_IP(ctx);
                m->sp = PT_REGS_SP(ctx);
                m->bp = PT_REGS_FP(ctx);
                m->tgid = tgid;
                m->generation = w.generation;
                m->uses_bp = w.used_regs_bp;
                m->stop = w.stop;
                m->stack_purges = purges;
                m->used = ++s->memo_clock;
                m->pending = 1;
        } else {
                m->pending = 0;
        }
        return 0;
}
