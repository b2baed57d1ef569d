/* SPDX-License-Identifier: GPL-2.0-only */
/* Which outstanding blocks nothing points to: the conservative mark (pure). */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "reachability.h"
#include "reply-fields.h"
#include "string-table.h"

static const char *const reachability_table[_REACHABILITY_MAX] = {
        [REACHABILITY_STILL_REACHABLE] = RF_STILL_REACHABLE,
        [REACHABILITY_DEFINITELY_LOST] = RF_DEFINITELY_LOST,
        [REACHABILITY_INDIRECTLY_LOST] = RF_INDIRECTLY_LOST,
        [REACHABILITY_UNDECIDED] = RF_UNDECIDED,
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(reachability, enum reachability);

#define READ_CHUNK_BYTES (1024 * 1024)
/* How often a scan of what was read checks the time: a stop's budget is passed by at most the
 * scan of this much (about 0.1-0.5 ms), not of a whole read. */
#define SCAN_CHECK_BYTES (64 * 1024)
#define PAGE_BYTES 4096ULL
/* Blocks up to this size are read many at once (read_many); bigger ones in chunks of their own. */
#define BATCH_BLOCK_MAX_BYTES (64 * 1024)
/* The filter's grid: a bit per page of the blocks' span, coarser when that takes more bits. */
#define FILTER_MAX_BITS (32ULL * 1024 * 1024)
#define FILTER_MIN_SHIFT 12
/* The index's cells: 16 bytes at the finest (no two blocks start closer: malloc's alignment),
 * coarser while there would be more than this many a block (and 65,536 cells, whatever the
 * count). A cell of a page held some 50 blocks of redis's heap: a search among them cost a few
 * cache misses a word, a cell the size of a block one. */
#define INDEX_MIN_SHIFT 4
#define INDEX_CELLS_PER_BLOCK 2ULL
#define INDEX_MIN_CELLS 65536ULL
/* The unreached counts' cells: the filter's, coarser past this many (16 MiB of counts). */
#define UNREACHED_MAX_CELLS (4ULL * 1024 * 1024)

enum mark {
        MARK_UNREACHED = 0,
        MARK_REACHED,                   /* from the roots */
        MARK_LEADER,                    /* lost; a walk through lost blocks started here */
        MARK_INDIRECT,                  /* lost, pointed to by a lost block */
};

struct marker {
        const struct reach_input *in;
        uint8_t *marks;                 /* enum mark: a byte each, for the cache's sake */
        size_t *stack;                  /* blocks reached, to scan in the next sweep */
        size_t depth;
        uint8_t *buf;                   /* READ_CHUNK_BYTES */
        struct reach_stats stats;
        bool expired;
        /* the filter: [lo, lo + span) holds every block; grid bit (v - lo) >> shift set where some
         * block lies */
        uint64_t lo, span;
        unsigned shift;
        uint64_t *grid;
        /* the index: cell c = (v - lo) >> index_shift; the blocks starting in it are
         * [index[c], index[c + 1]), so a look-up searches those and the one before */
        unsigned index_shift;
        uint32_t *index;
        struct reach_span *spans;       /* REACH_READ_MANY_MAX */
        size_t *batch;                  /* a step's blocks, or roots where batch_root */
        bool *batch_root;
        /* a sweep's blocks still to scan: a bit per block (level), a bit per word of it that is not
         * zero (level_any), how many; a block reached above the finger (the last one taken to
         * scan: below finger_next) is scanned in the same sweep, one below it in the next (the
         * stack) */
        uint64_t *level;
        uint64_t *level_any;
        size_t level_count;
        size_t finger_next;
        bool sweeping;
        /* per cell of unreached_shift over [lo, lo + span): how many blocks still unreached
         * overlap it. A word into a cell with none cannot reach anything new: no look-up (the
         * words of pages read again point mostly at blocks reached already) */
        unsigned unreached_shift;
        uint32_t *unreached;
};

uint64_t reachability_chunk_header_slot(uint64_t addr, uint64_t size)
{
        /* glibc: a chunk is the request plus its 8-byte size field, rounded up to 16, at least 32
         * bytes; the next chunk's header starts 16 bytes before the next block */
        uint64_t chunk = MAX((size + 8 + 15) & ~15ULL, 32ULL);

        return addr + chunk - 16;
}

/* The block holding address v (start or inside), or n. v is within [lo, lo + span) (may_hold()):
 * only the blocks that start in v's cell, and the last one before it, can hold it. */
static size_t block_in(const struct marker *m, uint64_t v, size_t lo, size_t hi)
{
        const struct reach_block *blocks = m->in->blocks;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (v < blocks[mid].addr)
                        hi = mid;
                else if (v - blocks[mid].addr < blocks[mid].size)
                        return v == reachability_chunk_header_slot(blocks[mid].addr, blocks[mid].size) ?
                                m->in->n_blocks : mid;
                else
                        lo = mid + 1;
        }
        return m->in->n_blocks;
}

/* The blocks a look-up of v searches: [*lo, *hi). */
static inline void block_range(const struct marker *m, uint64_t v, size_t *lo, size_t *hi)
{
        uint64_t cell = (v - m->lo) >> m->index_shift;

        *lo = m->index[cell];
        *hi = m->index[cell + 1];
        if (*lo > 0)
                (*lo)--;
}

static size_t block_at(const struct marker *m, uint64_t v)
{
        size_t lo, hi;

        block_range(m, v, &lo, &hi);
        return block_in(m, v, lo, hi);
}

/* A word that points into a block in state from: that block goes to state to, and on the stack
 * to be scanned (at most once per block: it left state from). */
static inline bool may_hold(const struct marker *m, uint64_t v)
{
        uint64_t off = v - m->lo;

        if (off >= m->span)
                return false;
        off >>= m->shift;
        return (m->grid[off / 64] >> (off % 64)) & 1;
}

/* The cells of the unreached counts block b overlaps: [*first, *last]. */
static void block_cells(const struct marker *m, size_t b, uint64_t *first, uint64_t *last)
{
        const struct reach_block *blk = &m->in->blocks[b];

        *first = (blk->addr - m->lo) >> m->unreached_shift;
        *last = (blk->addr + MAX(blk->size, (uint64_t)1) - 1 - m->lo) >> m->unreached_shift;
}

static void set_mark(struct marker *m, size_t b, enum mark to)
{
        if (m->marks[b] == MARK_UNREACHED && to != MARK_UNREACHED) {
                uint64_t first, last;

                block_cells(m, b, &first, &last);
                for (uint64_t c = first; c <= last; c++)
                        m->unreached[c]--;
        }
        m->marks[b] = to;
}

/* Whether no unreached block overlaps v's cell (v within the span). */
static inline bool none_unreached_at(const struct marker *m, uint64_t v)
{
        return m->unreached[(v - m->lo) >> m->unreached_shift] == 0;
}

static void level_set(struct marker *m, size_t b)
{
        uint64_t bit = 1ULL << (b % 64);

        if (m->level[b / 64] & bit)
                return;
        m->level[b / 64] |= bit;
        m->level_any[b / 4096] |= 1ULL << (b / 64 % 64);
        m->level_count++;
}

static void level_clear(struct marker *m, size_t b)
{
        m->level[b / 64] &= ~(1ULL << (b % 64));
        if (m->level[b / 64] == 0)
                m->level_any[b / 4096] &= ~(1ULL << (b / 64 % 64));
        m->level_count--;
}

/* The first block at or above from still to scan in this sweep, or n_blocks. */
static size_t level_next(const struct marker *m, size_t from)
{
        size_t n = m->in->n_blocks, last = (n + 63) / 64 / 64, w = from / 64, a;
        uint64_t bits;

        if (m->level_count == 0 || from >= n)
                return n;
        bits = m->level[w] & (~0ULL << (from % 64));
        if (bits)
                return w * 64 + (size_t)__builtin_ctzll(bits);
        w++;
        a = w / 64;
        if (a > last)
                return n;
        bits = m->level_any[a] & (~0ULL << (w % 64));
        while (!bits) {
                if (++a > last)
                        return n;
                bits = m->level_any[a];
        }
        w = a * 64 + (size_t)__builtin_ctzll(bits);
        return w * 64 + (size_t)__builtin_ctzll(m->level[w]);
}

/* Block b, just reached: to scan in this sweep (above the finger), or the next. */
static inline void to_scan(struct marker *m, size_t b)
{
        if (m->sweeping && b >= m->finger_next)
                level_set(m, b);
        else
                m->stack[m->depth++] = b;
}

/* A word that passed the filter (may_hold()). */
static inline void reach_candidate(struct marker *m, uint64_t v, enum mark from, enum mark to)
{
        size_t b;

        if (from == MARK_UNREACHED && none_unreached_at(m, v)) {
                m->stats.words_settled++;
                return;
        }
        m->stats.words_looked_up++;
        b = block_at(m, v);
        if (b == m->in->n_blocks || m->marks[b] != from)
                return;
        set_mark(m, b, to);
        to_scan(m, b);
}

static void reach_word(struct marker *m, uint64_t v, enum mark from, enum mark to)
{
        if (!may_hold(m, v)) {
                m->stats.words_filtered++;
                return;
        }
        reach_candidate(m, v, from, to);
}

/* Words that passed the filter and are to be looked up, cand[0 .. n) (n <= LOOKUP_BATCH), in three
 * passes, each fetching what the next reads for all of them at once (their index cells, then their
 * blocks and marks), so that their cache misses overlap: the index, the blocks and the marks of
 * millions of blocks are tens of MiB, and a word's look-up waited for three misses in a row. */
#define LOOKUP_BATCH 16

static void look_up_batch(struct marker *m, const uint64_t *cand, size_t n, enum mark from, enum mark to)
{
        size_t lo[LOOKUP_BATCH], hi[LOOKUP_BATCH];

        for (size_t i = 0; i < n; i++) {
                block_range(m, cand[i], &lo[i], &hi[i]);
                __builtin_prefetch(&m->in->blocks[lo[i]]);
                __builtin_prefetch(&m->marks[lo[i]]);
        }
        for (size_t i = 0; i < n; i++) {
                size_t b = block_in(m, cand[i], lo[i], hi[i]);

                m->stats.words_looked_up++;
                if (b == m->in->n_blocks || m->marks[b] != from)
                        continue;
                set_mark(m, b, to);
                to_scan(m, b);
        }
}

/* The words of buf; the time checked every SCAN_CHECK_BYTES, the scan cut there when it ran out
 * (m->expired: what was being scanned is scanned again whole at the next call). */
static void scan_words(struct marker *m, const uint8_t *buf, size_t len, enum mark from, enum mark to,
                       enum mark from2)
{
        uint64_t cand[LOOKUP_BATCH];
        size_t n = 0;

        if (from2 != from)
                goto one_by_one;
        /* from the roots: the words that pass the filter looked up LOOKUP_BATCH at a time */
        for (size_t off = 0; off + 8 <= len; off += 8) {
                uint64_t v;

                if (off % SCAN_CHECK_BYTES == 0 && off > 0) {
                        look_up_batch(m, cand, n, from, to);
                        n = 0;
                        if (m->in->expired && m->in->expired(m->in->userdata)) {
                                m->expired = true;
                                return;
                        }
                }
                memcpy(&v, buf + off, sizeof(v));
                if (!may_hold(m, v)) {
                        m->stats.words_filtered++;
                        continue;
                }
                if (from == MARK_UNREACHED && none_unreached_at(m, v)) {
                        m->stats.words_settled++;
                        continue;
                }
                __builtin_prefetch(&m->index[(v - m->lo) >> m->index_shift]);
                cand[n++] = v;
                if (n == LOOKUP_BATCH) {
                        look_up_batch(m, cand, n, from, to);
                        n = 0;
                }
        }
        look_up_batch(m, cand, n, from, to);
        return;

one_by_one:
        for (size_t off = 0; off + 8 <= len; off += 8) {
                uint64_t v;

                if (off % SCAN_CHECK_BYTES == 0 && off > 0 && m->in->expired && m->in->expired(m->in->userdata)) {
                        m->expired = true;
                        return;
                }
                memcpy(&v, buf + off, sizeof(v));
                if (!may_hold(m, v)) {
                        m->stats.words_filtered++;
                        continue;
                }
                reach_candidate(m, v, from, to);
                if (from2 != from)
                        reach_candidate(m, v, from2, to);
        }
}

/* Each aligned word of [addr, addr + size), read in chunks: returns false when some of it could
 * not be read. */
static bool scan_range(struct marker *m, uint64_t addr, uint64_t size, enum mark from, enum mark to,
                       enum mark from2)
{
        uint64_t end = addr + size, at = (addr + 7) & ~7ULL;
        bool whole = true;

        if (end < addr)
                end = UINT64_MAX & ~7ULL;
        while (at + 8 <= end) {
                size_t want = (size_t)MIN(end - at, (uint64_t)READ_CHUNK_BYTES) & ~(size_t)7;
                ssize_t n;

                if (m->in->expired && m->in->expired(m->in->userdata)) {
                        m->expired = true;
                        return whole;
                }
                n = m->in->read(m->in->userdata, at, m->buf, want);
                if (n < 0)
                        n = 0;
                scan_words(m, m->buf, (size_t)n, from, to, from2);
                if (m->expired)
                        return whole;
                m->stats.bytes_scanned += (uint64_t)n & ~7ULL;
                if ((size_t)n < want) {
                        /* unreadable from at + n: skip to the next page */
                        uint64_t next = ((at + (uint64_t)n) | (PAGE_BYTES - 1)) + 1;

                        whole = false;
                        next = MIN(next, end);
                        m->stats.bytes_unreadable += next - (at + ((uint64_t)n & ~7ULL));
                        at = (next + 7) & ~7ULL;
                        continue;
                }
                at += (uint64_t)n;
        }
        return whole;
}

static void scan_block(struct marker *m, size_t i, enum mark from, enum mark to, enum mark from2)
{
        const struct reach_block *b = &m->in->blocks[i];

        if (!scan_range(m, b->addr, b->size, from, to, from2))
                m->stats.blocks_unreadable++;
}

/* The aligned words of block i: [*addr, *addr + *len). */
static void block_words(const struct reach_block *b, uint64_t *addr, uint64_t *len)
{
        uint64_t at = (b->addr + 7) & ~7ULL, end = b->addr + b->size;

        *addr = at;
        *len = end > at ? (end - at) & ~7ULL : 0;
}

/* Read m->spans[0..k) in one call and scan the words of each read whole, in order: *done, how
 * many were. -ETIME when the scan's time ran out first (nothing read). */
static int scan_spans(struct marker *m, size_t k, enum mark from, enum mark to, enum mark from2, size_t *done)
{
        ssize_t n;

        *done = 0;
        if (m->in->expired && m->in->expired(m->in->userdata)) {
                m->expired = true;
                return -ETIME;
        }
        n = m->in->read_many(m->in->userdata, m->spans, k, m->buf);
        if (n < 0)
                n = 0;
        for (size_t j = 0, off = 0, check = SCAN_CHECK_BYTES; j < k; off += m->spans[j++].len) {
                if (off + m->spans[j].len > (uint64_t)n)
                        break;
                if (off >= check) {
                        check = off + SCAN_CHECK_BYTES;
                        if (m->in->expired && m->in->expired(m->in->userdata)) {
                                m->expired = true;
                                break;
                        }
                }
                scan_words(m, m->buf + off, m->spans[j].len, from, to, from2);
                if (m->expired)
                        break;
                m->stats.bytes_scanned += m->spans[j].len;
                (*done)++;
        }
        return 0;
}

/* One sweep in address order over the blocks to scan (those on the stack, and those reached
 * meanwhile above the finger) and roots[0 .. n_roots) (in their order, a block taken before a root
 * that starts above it): the small ones in a row read in one call (read_many), a big one alone.
 * Returns how many roots were scanned whole: all, or when the time ran out, those before the
 * step it cut (that step's blocks, perhaps half read, and the sweep's left are on the stack).
 *
 * The sweep reads the blocks reached so far in address order, so those close together are read
 * in one go, and a block reached meanwhile above the last one taken (the finger) is scanned in
 * the same sweep, one below it in the next (Printezis and Detlefs' finger); the roots in the same
 * reads, so the gaps between the blocks of a process attached while it ran (its roots) and the
 * blocks they reach are read once. Reached one by one, a heap's blocks were read a few at a time;
 * level by level, in each level's order, a level read several times its bytes (what lay between
 * its blocks, read with them), and the roots another time. */
static size_t sweep(struct marker *m, const struct reach_root *roots, size_t n_roots, enum mark from, enum mark to,
                    enum mark from2)
{
        const struct reach_block *blocks = m->in->blocks;
        size_t n = m->in->n_blocks, ri = 0;

        for (size_t i = 0; i < m->depth; i++)
                level_set(m, m->stack[i]);
        m->depth = 0;
        m->sweeping = true;
        m->finger_next = 0;
        while (!m->expired && (ri < n_roots || m->level_count > 0)) {
                size_t b = level_next(m, m->finger_next), ri_start = ri, k = 0, done = 0;
                uint64_t bytes = 0;
                bool alone = false;

                for (;;) {
                        bool root = b == n || (ri < n_roots && roots[ri].addr < blocks[b].addr);
                        struct reach_block item;
                        uint64_t addr, len;

                        if (root && ri == n_roots)
                                break;
                        item = root ? (struct reach_block) { .addr = roots[ri].addr, .size = roots[ri].size } :
                                blocks[b];
                        block_words(&item, &addr, &len);
                        if (root && len == 0) {
                                ri++;           /* no word: nothing to read */
                                continue;
                        }
                        alone = !m->in->read_many || item.size > BATCH_BLOCK_MAX_BYTES ||
                                bytes + len > READ_CHUNK_BYTES;
                        if (k > 0 && (alone || k == REACH_READ_MANY_MAX)) {
                                alone = false;  /* the next is, not this step's */
                                break;
                        }
                        if (root)
                                m->batch[k] = ri++;
                        else {
                                level_clear(m, b);
                                m->batch[k] = b;
                                m->finger_next = b + 1;
                                b = level_next(m, b + 1);
                        }
                        m->batch_root[k] = root;
                        m->spans[k++] = (struct reach_span) { .addr = addr, .len = len };
                        bytes += len;
                        if (alone)
                                break;
                }
                if (k == 0)
                        break;
                if (!alone && scan_spans(m, k, from, to, from2, &done) < 0)
                        done = k;               /* expired before the read: nothing read */
                /* those not read whole (or alone): one by one, skipping what cannot be read */
                for (size_t j = done; j < k && !m->expired; j++) {
                        if (!m->batch_root[j])
                                scan_block(m, m->batch[j], from, to, from2);
                        else
                                (void)scan_range(m, roots[m->batch[j]].addr, roots[m->batch[j]].size, from, to,
                                                 from2);
                }
                if (m->expired) {
                        /* cut: this step's blocks and the sweep's left stay to scan, with those
                         * reached meanwhile (each block is on the stack or in the sweep at most
                         * once: room enough); this step's roots are read again */
                        for (size_t j = 0; j < k; j++)
                                if (!m->batch_root[j])
                                        m->stack[m->depth++] = m->batch[j];
                        for (size_t x = level_next(m, 0); x < n; x = level_next(m, x + 1)) {
                                level_clear(m, x);
                                m->stack[m->depth++] = x;
                        }
                        ri = ri_start;
                }
        }
        m->sweeping = false;
        return ri;
}

/* Scan what is on the stack, and what that reaches, moving blocks from state from to to: sweeps
 * until none is left. */
static void flood(struct marker *m, enum mark from, enum mark to, enum mark from2)
{
        while (m->depth > 0 && !m->expired)
                (void)sweep(m, NULL, 0, from, to, from2);
}

/* The index over the blocks (sorted, apart, n > 0): for each cell of the span, the first block
 * starting at or after the cell's start; one more entry, n, closes the last cell. -ENOMEM. */
static int index_build(struct marker *m)
{
        const struct reach_block *blocks = m->in->blocks;
        size_t n = m->in->n_blocks, i = 0;
        uint64_t max_cells = MAX((uint64_t)n * INDEX_CELLS_PER_BLOCK, INDEX_MIN_CELLS), cells;

        if (n >= UINT32_MAX)
                return -E2BIG;
        m->index_shift = INDEX_MIN_SHIFT;
        while ((m->span >> m->index_shift) + 1 > max_cells)
                m->index_shift++;
        cells = (m->span >> m->index_shift) + 1;
        m->index = malloc((cells + 1) * sizeof(*m->index));
        if (!m->index)
                return -ENOMEM;
        for (uint64_t c = 0; c < cells; c++) {
                uint64_t start = m->lo + (c << m->index_shift);

                while (i < n && blocks[i].addr < start)
                        i++;
                m->index[c] = (uint32_t)i;
        }
        m->index[cells] = (uint32_t)n;
        return 0;
}

/* The filter over the blocks (sorted, apart): -ENOMEM. */
static int filter_build(struct marker *m)
{
        const struct reach_block *blocks = m->in->blocks;
        size_t n = m->in->n_blocks;
        uint64_t hi = 0;

        m->shift = FILTER_MIN_SHIFT;
        if (n == 0) {
                m->lo = m->span = 0;
                m->grid = calloc(1, sizeof(*m->grid));
                m->unreached = calloc(1, sizeof(*m->unreached));
                return m->grid && m->unreached ? 0 : -ENOMEM;
        }
        m->lo = blocks[0].addr;
        for (size_t i = 0; i < n; i++)
                hi = MAX(hi, blocks[i].addr + blocks[i].size);
        m->span = hi - m->lo;
        while ((m->span >> m->shift) + 1 > FILTER_MAX_BITS)
                m->shift++;
        m->grid = calloc(((m->span >> m->shift) + 1 + 63) / 64, sizeof(*m->grid));
        if (!m->grid)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                uint64_t first = (blocks[i].addr - m->lo) >> m->shift;
                uint64_t last = (blocks[i].addr + MAX(blocks[i].size, (uint64_t)1) - 1 - m->lo) >> m->shift;

                for (uint64_t g = first; g <= last; g++)
                        m->grid[g / 64] |= 1ULL << (g % 64);
        }
        m->unreached_shift = m->shift;
        while ((m->span >> m->unreached_shift) + 1 > UNREACHED_MAX_CELLS)
                m->unreached_shift++;
        m->unreached = calloc((m->span >> m->unreached_shift) + 1, sizeof(*m->unreached));
        if (!m->unreached)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                uint64_t first, last;

                block_cells(m, i, &first, &last);
                for (uint64_t c = first; c <= last; c++)
                        m->unreached[c]++;
        }
        return index_build(m);
}

/* Lost blocks reachable from block i (a clique's leader) become indirect; so do leaders of
 * earlier cliques it reaches (their cliques join this one). */
static void walk_lost(struct marker *m, size_t i)
{
        m->stack[m->depth++] = i;
        flood(m, MARK_UNREACHED, MARK_INDIRECT, MARK_LEADER);
        /* a cycle back to the leader itself made it indirect: it stays the clique's leader */
        m->marks[i] = MARK_LEADER;
}

struct reach_marker {
        struct reach_input in;
        struct marker m;
        bool finished;
        /* roots of calls cut short, not read yet (or not whole): read at the next call */
        struct reach_root *pending;
        size_t n_pending, allocated;
};

void reachability_marker_free(struct reach_marker *rm)
{
        if (!rm)
                return;
        free(rm->m.marks);
        free(rm->m.stack);
        free(rm->m.buf);
        free(rm->m.spans);
        free(rm->m.batch);
        free(rm->m.batch_root);
        free(rm->m.level);
        free(rm->m.level_any);
        free(rm->m.grid);
        free(rm->m.index);
        free(rm->m.unreached);
        free(rm->pending);
        free(rm);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct reach_marker *, reachability_marker_free)

int reachability_marker_new(const struct reach_input *in, struct reach_marker **ret)
{
        _cleanup_(reachability_marker_freep) struct reach_marker *rm = calloc(1, sizeof(*rm));
        size_t n;
        int r;

        assert(in);
        assert(in->blocks || in->n_blocks == 0);
        assert(in->read);
        assert(ret);
        if (!rm)
                return -ENOMEM;
        rm->in = *in;
        rm->in.roots = NULL;
        rm->in.n_roots = 0;
        rm->in.root_words = NULL;
        rm->in.n_root_words = 0;
        n = in->n_blocks;
        rm->m = (struct marker) {
                .in = &rm->in,
                .marks = calloc(MAX(n, (size_t)1), sizeof(*rm->m.marks)),
                .stack = calloc(n + 1, sizeof(*rm->m.stack)),   /* a leader goes on twice */
                .buf = malloc(READ_CHUNK_BYTES),
                .spans = calloc(REACH_READ_MANY_MAX, sizeof(*rm->m.spans)),
                .batch = calloc(REACH_READ_MANY_MAX, sizeof(*rm->m.batch)),
                .batch_root = calloc(REACH_READ_MANY_MAX, sizeof(*rm->m.batch_root)),
                .level = calloc((n + 63) / 64 + 1, sizeof(*rm->m.level)),
                .level_any = calloc((n + 63) / 64 / 64 + 1, sizeof(*rm->m.level_any)),
        };
        if (!rm->m.marks || !rm->m.stack || !rm->m.buf || !rm->m.spans || !rm->m.batch || !rm->m.batch_root ||
            !rm->m.level ||
            !rm->m.level_any)
                return -ENOMEM;
        r = filter_build(&rm->m);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(rm);
        return 0;
}

/* Scan roots[0 .. n) and what they reach: how many were scanned whole before the time ran out
 * (n: all; what they reached is kept on the stack when the flood was cut). */
static size_t scan_roots(struct reach_marker *rm, const struct reach_root *roots, size_t n)
{
        struct marker *m = &rm->m;
        size_t done = sweep(m, roots, n, MARK_UNREACHED, MARK_REACHED, MARK_UNREACHED);

        flood(m, MARK_UNREACHED, MARK_REACHED, MARK_UNREACHED);
        return done;
}

static int pending_append(struct reach_marker *rm, const struct reach_root *roots, size_t n)
{
        if (n == 0)
                return 0;
        if (rm->n_pending + n > rm->allocated) {
                size_t a = MAX(rm->allocated * 2, rm->n_pending + n);
                struct reach_root *g = realloc(rm->pending, a * sizeof(*g));

                if (!g)
                        return -ENOMEM;
                rm->pending = g;
                rm->allocated = a;
        }
        memcpy(rm->pending + rm->n_pending, roots, n * sizeof(*roots));
        rm->n_pending += n;
        return 0;
}

/* Go on with what the last call left (its flood, then its roots kept), then words and roots;
 * keep: roots not read when the time runs out are kept for the next call, else dropped. */
static int marker_add(struct reach_marker *rm, const struct reach_root *roots, size_t n_roots,
                      const uint64_t *words, size_t n_words, bool keep)
{
        struct marker *m;
        size_t done;
        int r;

        assert(rm);
        assert(roots || n_roots == 0);
        assert(words || n_words == 0);
        assert(!rm->finished);
        m = &rm->m;
        m->expired = false;
        for (size_t i = 0; i < n_words; i++)
                reach_word(m, words[i], MARK_UNREACHED, MARK_REACHED);
        flood(m, MARK_UNREACHED, MARK_REACHED, MARK_UNREACHED);
        if (keep) {
                r = pending_append(rm, roots, n_roots);
                if (r < 0)
                        return r;
                n_roots = 0;
        }
        if (!m->expired && rm->n_pending > 0) {
                done = scan_roots(rm, rm->pending, rm->n_pending);
                memmove(rm->pending, rm->pending + done, (rm->n_pending - done) * sizeof(*rm->pending));
                rm->n_pending -= done;
        }
        if (!m->expired)
                (void)scan_roots(rm, roots, n_roots);
        return m->expired ? -ETIME : 0;
}

int reachability_marker_add(struct reach_marker *rm, const struct reach_root *roots, size_t n_roots,
                            const uint64_t *words, size_t n_words)
{
        return marker_add(rm, roots, n_roots, words, n_words, true);
}

int reachability_marker_add_transient(struct reach_marker *rm, const struct reach_root *roots, size_t n_roots,
                                      const uint64_t *words, size_t n_words)
{
        return marker_add(rm, roots, n_roots, words, n_words, false);
}

bool reachability_marker_done(const struct reach_marker *rm)
{
        assert(rm);
        return !rm->m.expired && rm->m.depth == 0 && rm->n_pending == 0;
}

bool reachability_marker_reached(const struct reach_marker *rm, size_t i)
{
        assert(rm);
        assert(i < rm->in.n_blocks);
        return rm->m.marks[i] == MARK_REACHED;
}

void reachability_marker_stats(const struct reach_marker *rm, struct reach_stats *ret)
{
        assert(rm);
        assert(ret);
        *ret = rm->m.stats;
}

int reachability_marker_classify(struct reach_marker *rm, enum reachability *ret, struct reach_stats *stats)
{
        struct marker *m;
        size_t n;

        assert(rm);
        assert(!rm->finished);
        m = &rm->m;
        n = rm->in.n_blocks;
        assert(ret || n == 0);
        rm->finished = true;
        for (size_t i = 0; i < n && !m->expired; i++)
                if (m->marks[i] == MARK_UNREACHED) {
                        set_mark(m, i, MARK_LEADER);
                        walk_lost(m, i);
                }
        if (stats)
                *stats = m->stats;
        for (size_t i = 0; i < n; i++)
                ret[i] = m->marks[i] == MARK_REACHED ? REACHABILITY_STILL_REACHABLE :
                         m->expired ? REACHABILITY_UNDECIDED :
                         m->marks[i] == MARK_LEADER ? REACHABILITY_DEFINITELY_LOST : REACHABILITY_INDIRECTLY_LOST;
        return m->expired ? -ETIME : 0;
}

int reachability_classify(const struct reach_input *in, enum reachability *ret, struct reach_stats *stats)
{
        _cleanup_(reachability_marker_freep) struct reach_marker *rm = NULL;
        int r;

        assert(in);
        assert(in->roots || in->n_roots == 0);
        assert(in->root_words || in->n_root_words == 0);
        assert(ret || in->n_blocks == 0);
        r = reachability_marker_new(in, &rm);
        if (r < 0)
                return r;
        r = reachability_marker_add(rm, in->roots, in->n_roots, in->root_words, in->n_root_words);
        if (r < 0 && r != -ETIME)
                return r;
        return reachability_marker_classify(rm, ret, stats);
}

