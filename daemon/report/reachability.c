/* SPDX-License-Identifier: GPL-2.0-only */
/* Which outstanding blocks nothing points to: the conservative mark (pure). */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "reachability.h"
#include "string-table.h"

static const char *const reachability_table[_REACHABILITY_MAX] = {
        [REACHABILITY_STILL_REACHABLE] = "still_reachable",
        [REACHABILITY_DEFINITELY_LOST] = "definitely_lost",
        [REACHABILITY_INDIRECTLY_LOST] = "indirectly_lost",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(reachability, enum reachability);

#define READ_CHUNK_BYTES (64 * 1024)
#define PAGE_BYTES 4096ULL

enum mark {
        MARK_UNREACHED = 0,
        MARK_REACHED,                   /* from the roots */
        MARK_LEADER,                    /* lost; a walk through lost blocks started here */
        MARK_INDIRECT,                  /* lost, pointed to by a lost block */
};

struct marker {
        const struct reach_input *in;
        enum mark *marks;
        size_t *stack;                  /* blocks still to scan */
        size_t depth;
        uint8_t *buf;                   /* READ_CHUNK_BYTES */
        struct reach_stats stats;
        bool expired;
};

uint64_t reachability_chunk_header_slot(uint64_t addr, uint64_t size)
{
        /* glibc: a chunk is the request plus its 8-byte size field, rounded up to 16, at least 32
         * bytes; the next chunk's header starts 16 bytes before the next block */
        uint64_t chunk = MAX((size + 8 + 15) & ~15ULL, 32ULL);

        return addr + chunk - 16;
}

/* The block holding address v (start or inside), or n. */
static size_t block_at(const struct marker *m, uint64_t v)
{
        const struct reach_block *blocks = m->in->blocks;
        size_t lo = 0, hi = m->in->n_blocks;

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

/* A word that points into a block in state from: that block goes to state to, and on the stack
 * to be scanned (at most once per block: it left state from). */
static void reach_word(struct marker *m, uint64_t v, enum mark from, enum mark to)
{
        size_t b;

        if (m->in->n_blocks == 0 || v < m->in->blocks[0].addr)
                return;
        b = block_at(m, v);
        if (b == m->in->n_blocks || m->marks[b] != from)
                return;
        m->marks[b] = to;
        m->stack[m->depth++] = b;
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
                for (size_t off = 0; off + 8 <= (size_t)n; off += 8) {
                        uint64_t v;

                        memcpy(&v, m->buf + off, sizeof(v));
                        reach_word(m, v, from, to);
                        if (from2 != from)
                                reach_word(m, v, from2, to);
                }
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

/* Scan what is on the stack, and what that reaches, moving blocks from state from to to. */
static void flood(struct marker *m, enum mark from, enum mark to, enum mark from2)
{
        while (m->depth > 0 && !m->expired)
                scan_block(m, m->stack[--m->depth], from, to, from2);
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

int reachability_classify(const struct reach_input *in, enum reachability *ret, struct reach_stats *stats)
{
        size_t n = in->n_blocks;
        _cleanup_free_ enum mark *marks = calloc(MAX(n, (size_t)1), sizeof(*marks));
        _cleanup_free_ size_t *stack = calloc(n + 1, sizeof(*stack));   /* a leader goes on twice */
        _cleanup_free_ uint8_t *buf = malloc(READ_CHUNK_BYTES);
        struct marker m = { .in = in, .marks = marks, .stack = stack, .buf = buf };

        assert(in);
        assert(in->blocks || n == 0);
        assert(in->roots || in->n_roots == 0);
        assert(in->root_words || in->n_root_words == 0);
        assert(in->read);
        assert(ret || n == 0);
        if (!marks || !stack || !buf)
                return -ENOMEM;
        for (size_t i = 0; i < in->n_root_words; i++)
                reach_word(&m, in->root_words[i], MARK_UNREACHED, MARK_REACHED);
        flood(&m, MARK_UNREACHED, MARK_REACHED, MARK_UNREACHED);
        for (size_t i = 0; i < in->n_roots && !m.expired; i++) {
                (void)scan_range(&m, in->roots[i].addr, in->roots[i].size, MARK_UNREACHED, MARK_REACHED,
                                 MARK_UNREACHED);
                flood(&m, MARK_UNREACHED, MARK_REACHED, MARK_UNREACHED);
        }
        for (size_t i = 0; i < n && !m.expired; i++)
                if (marks[i] == MARK_UNREACHED) {
                        marks[i] = MARK_LEADER;
                        walk_lost(&m, i);
                }
        if (stats)
                *stats = m.stats;
        if (m.expired)
                return -ETIME;
        for (size_t i = 0; i < n; i++)
                ret[i] = marks[i] == MARK_REACHED ? REACHABILITY_STILL_REACHABLE :
                         marks[i] == MARK_LEADER ? REACHABILITY_DEFINITELY_LOST : REACHABILITY_INDIRECTLY_LOST;
        return 0;
}
