/* SPDX-License-Identifier: GPL-2.0 */
/* A thread's memos of its last unwind-table walks: a loop allocating from one call site returns
 * from malloc with the same pc and stack pointer again and again, above the same frames. A walk
 * is a function of the registers it starts from (pc, sp, and rbp where a rule used it), of the
 * target's tables and mapping list (their generation), and of the words of stack it read: when
 * all of these are as they were, it would take the same stack again. So a memo keeps the words
 * a walk read (at most WALK_MEMO_WORDS) and its stack's id, in one of the WALK_MEMO_WAYS memos
 * of the set its pc and sp choose; the next walk from the same registers reads that span again
 * (in one read when it fits a chunk of 4 KiB, else a chunk at a time), compares the words, and on
 * a match takes the id without stepping a frame or interning the stack. A set, not one slot: a
 * program whose allocations all go through one wrapper (redis's zmalloc, xmalloc, g_malloc)
 * returns from malloc at the same pc, and at the same sp for every caller at the same depth, so
 * the memos of its hot paths share a key; and a few hot keys hashed to one slot each would, from
 * run to run as ASLR moves the stack, land on a shared slot and evict each other on every call.
 * A set's least recently taken memo is the one replaced. A saved rbp the walk restored counts
 * only if a later rule read it (unwind.h, walk_bp). Any word that differs (another caller at the
 * same depth, a frame that returned and was called again from elsewhere) makes it walk as
 * before. Included once, by unwind.h, after struct stack_chunk and before struct
 * user_stack_scratch. */
#pragma once

#define WALK_MEMO_WORDS 60              /* 30 frames of two words (rbp and return address) */
#define WALK_MEMO_WAYS 4                /* memos one walk's registers may be kept in: a set */
#define WALK_MEMO_SETS 8                /* sets per thread, by their registers: a power of two */
#define WALK_MEMOS (WALK_MEMO_SETS * WALK_MEMO_WAYS)
#define WALK_MEMO_SPAN_WORDS_MAX 65536  /* a word's index in a memo's span fits its __u16 */

/* The words of stack the walk in progress read, in order. */
struct walk_reads {
        __u32 n;                        /* may pass WALK_MEMO_WORDS: then the walk is not kept */
        __u32 pad;
        __u64 lo, hi;                   /* the lowest and highest address among them */
        __u64 addr[WALK_MEMO_WORDS];
        __u64 val[WALK_MEMO_WORDS];
};

/* What a walk of the thread started from and read, and the stack it took. */
struct walk_memo {
        __u64 pc, sp, bp;
        __u32 tgid;
        __u32 generation;               /* the target's list generation the walk ran under */
        __u32 valid;
        __u32 uses_bp;                  /* a rule read rbp as the registers had it: bp is part of the key */
        __u32 stop;                     /* why the walk ended (enum unwind_stop) */
        __u32 stack_purges;             /* stack_purges before the walk began */
        __u32 pending;                  /* the key is the walk just taken's, not kept yet */
        __u32 used;                     /* the thread's memo clock when it was last made or taken */
        __s64 stack_id;
        __u64 lo;                       /* the user address of the first word of the span */
        __u32 span_words;               /* words from lo to the last one read (< WALK_MEMO_SPAN_WORDS_MAX) */
        __u32 n;                        /* words in off[] and val[] */
        __u16 off[WALK_MEMO_WORDS];     /* each word's index in the span */
        __u64 val[WALK_MEMO_WORDS];
};

/* Raised by the daemon each time it deletes stacks from the stack table (a target detached):
 * a memo kept before then may name a stack that is gone. */
__u32 stack_purges = 0;

/* The index of the first memo of the set a walk from pc and sp looks in and may replace one of: a
 * thread allocating from a few call sites in turn (a server's request path) keeps one for each. */
static __always_inline __u32 walk_memo_set_first(__u64 pc, __u64 sp)
{
        return ((__u32)memleak_mix64(pc ^ (sp << 16)) & (WALK_MEMO_SETS - 1)) * WALK_MEMO_WAYS;
}

/* The set of the memo at index. */
static __always_inline __u32 walk_memo_set_of(__u32 index)
{
        return (index / WALK_MEMO_WAYS) & (WALK_MEMO_SETS - 1);
}

/* Whether m holds a walk that may still be taken: kept, for this target, under its current list
 * generation, since the last stack purge. */
static __always_inline bool walk_memo_current(const struct walk_memo *m, __u32 tgid, __u32 generation)
{
        return m->valid && m->tgid == tgid && m->generation == generation && m->stack_purges == stack_purges;
}

static __always_inline void walk_reads_start(struct walk_reads *r)
{
        r->n = 0;
        r->lo = ~0ull;
        r->hi = 0;
}

static __always_inline void walk_reads_note(struct walk_reads *r, __u64 addr, __u64 val)
{
        __u32 i = r->n;

        if (i < WALK_MEMO_WORDS) {
                r->addr[i] = addr;
                r->val[i] = val;
        }
        if (addr < r->lo)
                r->lo = addr;
        if (addr > r->hi)
                r->hi = addr;
        if (i <= WALK_MEMO_WORDS)
                r->n = i + 1;
}

/* Read the piece of m's span from addr to its end, at most a chunk, into c: false when it cannot
 * be read. */
static __always_inline bool walk_memo_read_piece(const struct walk_memo *m, __u64 addr, struct stack_chunk *c)
{
        __u64 end = m->lo + (__u64)m->span_words * sizeof(__u64), bytes;

        c->words = 0;
        if (addr < m->lo || addr >= end)
                return false;
        bytes = end - addr;
        if (bytes > STACK_CHUNK_WORDS * sizeof(__u64))
                bytes = STACK_CHUNK_WORDS * sizeof(__u64);
        bytes &= 2 * STACK_CHUNK_WORDS * sizeof(__u64) - 1;    /* a no-op the verifier can follow */
        if (bytes < sizeof(__u64) || bpf_probe_read_user(c->w, bytes, (const void *)addr))
                return false;
        c->start = addr;
        c->words = bytes / sizeof(__u64);
        return true;
}

/* Words below the one a piece is read for that it takes too: the words of a frame are read
 * near each other, not always upwards (a return address, then the rbp saved below it). */
#define WALK_MEMO_PIECE_SLACK_BYTES 64

/* Whether the words of m's span, a span longer than a chunk, are as they were (1, else 0): read
 * a chunk at a time from where a word lies outside what c holds. A global function: the
 * verifier checks its loop once, not in every program that compares a memo. */
__noinline int walk_memo_matches_far(const struct walk_memo *m, struct stack_chunk *c)
{
        if (!m || !c)
                return 0;
        for (__u32 i = 0; i < WALK_MEMO_WORDS; i++) {
                __u64 addr, index;

                if (i >= m->n)
                        break;
                addr = m->lo + (__u64)m->off[i] * sizeof(__u64);
                if (addr < c->start || (addr - c->start) / sizeof(__u64) >= c->words) {
                        __u64 from = addr - m->lo > WALK_MEMO_PIECE_SLACK_BYTES ?
                                             addr - WALK_MEMO_PIECE_SLACK_BYTES : m->lo;

                        if (!walk_memo_read_piece(m, from, c))
                                return 0;
                }
                index = (addr - c->start) / sizeof(__u64);
                if (c->w[index & (STACK_CHUNK_WORDS - 1)] != m->val[i])
                        return 0;
        }
        return 1;
}

/* Whether a walk from these registers would take m's stack: its key matches, and the words it
 * read, read again into c, are the same. A span within a chunk is read in one read, and not at
 * all where c holds it already (another memo of the set, same key, read it for this walk). */
static __always_inline bool walk_memo_matches(const struct walk_memo *m, struct stack_chunk *c, __u32 tgid,
                                              __u32 generation, __u64 pc, __u64 sp, __u64 bp)
{
        if (!walk_memo_current(m, tgid, generation) || m->pc != pc || m->sp != sp ||
            (m->uses_bp && m->bp != bp))
                return false;
        if (m->n == 0)
                return true;            /* it read no stack */
        if (m->span_words > STACK_CHUNK_WORDS)
                return walk_memo_matches_far(m, c);
        if (c->words == 0 || c->start != m->lo || c->words < m->span_words) {
                if (!walk_memo_read_piece(m, m->lo, c))
                        return false;
        }
        for (__u32 i = 0; i < WALK_MEMO_WORDS; i++) {
                if (i >= m->n)
                        break;
                if (c->w[m->off[i] & (STACK_CHUNK_WORDS - 1)] != m->val[i])
                        return false;
        }
        return true;
}

/* Keep the walk just taken (its key and stop already in m, stack_purges as it was before the
 * walk began, r what it read) as the memo of stack id: unless it read more words than a memo
 * holds, or words further apart than its offsets reach. */
static __always_inline void walk_memo_keep(struct walk_memo *m, const struct walk_reads *r, __s64 id)
{
        __u64 lo = r->lo, hi = r->hi;
        __u32 n = r->n;

        if (!m->pending)
                return;
        m->pending = 0;
        if (n > WALK_MEMO_WORDS)
                return;
        if (n > 0 && (hi - lo) / sizeof(__u64) >= WALK_MEMO_SPAN_WORDS_MAX)
                return;
        for (__u32 i = 0; i < WALK_MEMO_WORDS; i++) {
                if (i >= n)
                        break;
                if ((r->addr[i] - lo) & 7)
                        return;         /* not word-aligned with the rest: not kept */
                m->off[i] = (r->addr[i] - lo) / sizeof(__u64);
                m->val[i] = r->val[i];
        }
        m->lo = lo;
        m->span_words = n > 0 ? (hi - lo) / sizeof(__u64) + 1 : 0;
        m->n = n;
        m->stack_id = id;
        m->valid = 1;
}
