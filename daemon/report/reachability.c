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

enum mark {
        MARK_UNREACHED = 0,
        MARK_REACHED,                   /* from the roots */
        MARK_LEADER,                    /* lost; a walk through lost blocks started here */
        MARK_INDIRECT,                  /* lost, pointed to by a lost block */
};

struct marker {
        const struct reach_block *blocks;
        size_t n;
        enum mark *marks;
        size_t *stack;                  /* blocks still to scan */
        size_t depth;
};

/* The block holding address v (start or inside), or n. */
static size_t block_at(const struct marker *m, uint64_t v)
{
        size_t lo = 0, hi = m->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (v < m->blocks[mid].addr)
                        hi = mid;
                else if (v - m->blocks[mid].addr < m->blocks[mid].size)
                        return mid;
                else
                        lo = mid + 1;
        }
        return m->n;
}

/* Each aligned word of [addr, addr + size) that points into a block in state from: that block
 * goes to state to, and on the stack to be scanned. */
static void scan(struct marker *m, uint64_t addr, const uint8_t *bytes, size_t size, enum mark from, enum mark to)
{
        size_t skip = (size_t)((8 - (addr & 7)) & 7);

        if (!bytes || size < skip)
                return;
        for (size_t off = skip; off + 8 <= size; off += 8) {
                uint64_t v;
                size_t b;

                memcpy(&v, bytes + off, sizeof(v));
                b = block_at(m, v);
                if (b == m->n || m->marks[b] != from)
                        continue;
                m->marks[b] = to;
                m->stack[m->depth++] = b;       /* at most once per block: it left state from */
        }
}

/* Scan what is on the stack, and what that reaches, moving blocks from state from to to. */
static void flood(struct marker *m, enum mark from, enum mark to)
{
        while (m->depth > 0) {
                const struct reach_block *b = &m->blocks[m->stack[--m->depth]];

                scan(m, b->addr, b->bytes, b->size, from, to);
        }
}

/* Lost blocks reachable from block i (a clique's leader) become indirect; so do leaders of
 * earlier cliques it reaches (their cliques join this one). */
static void walk_lost(struct marker *m, size_t i)
{
        const struct reach_block *b = &m->blocks[i];

        scan(m, b->addr, b->bytes, b->size, MARK_UNREACHED, MARK_INDIRECT);
        scan(m, b->addr, b->bytes, b->size, MARK_LEADER, MARK_INDIRECT);
        while (m->depth > 0) {
                const struct reach_block *c = &m->blocks[m->stack[--m->depth]];

                scan(m, c->addr, c->bytes, c->size, MARK_UNREACHED, MARK_INDIRECT);
                scan(m, c->addr, c->bytes, c->size, MARK_LEADER, MARK_INDIRECT);
        }
        /* a cycle back to the leader itself made it indirect: it stays the clique's leader */
        m->marks[i] = MARK_LEADER;
}

int reachability_classify(const struct reach_block *blocks, size_t n_blocks, const struct reach_root *roots,
                          size_t n_roots, enum reachability *ret)
{
        _cleanup_free_ enum mark *marks = calloc(MAX(n_blocks, (size_t)1), sizeof(*marks));
        _cleanup_free_ size_t *stack = calloc(MAX(n_blocks, (size_t)1), sizeof(*stack));
        struct marker m = { .blocks = blocks, .n = n_blocks, .marks = marks, .stack = stack };

        assert(blocks || n_blocks == 0);
        assert(roots || n_roots == 0);
        assert(ret || n_blocks == 0);
        if (!marks || !stack)
                return -ENOMEM;
        for (size_t i = 0; i < n_roots; i++) {
                scan(&m, roots[i].addr, roots[i].bytes, roots[i].size, MARK_UNREACHED, MARK_REACHED);
                flood(&m, MARK_UNREACHED, MARK_REACHED);
        }
        for (size_t i = 0; i < n_blocks; i++)
                if (marks[i] == MARK_UNREACHED) {
                        marks[i] = MARK_LEADER;
                        walk_lost(&m, i);
                }
        for (size_t i = 0; i < n_blocks; i++)
                ret[i] = marks[i] == MARK_REACHED ? REACHABILITY_STILL_REACHABLE :
                         marks[i] == MARK_LEADER ? REACHABILITY_DEFINITELY_LOST : REACHABILITY_INDIRECTLY_LOST;
        return 0;
}
