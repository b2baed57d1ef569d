/* SPDX-License-Identifier: GPL-2.0-only */
/* The conservative mark on a made-up address space: roots, blocks and the pointers between them;
 * and which memory of a made-up process is a root, traced from its start or attached while it ran. */
#include <errno.h>
#include <stdbool.h>
#include <sys/types.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "proc-maps.h"
#include "reach-scan.h"
#include "reachability.h"
#include "test-util.h"

#define BLOCK_BYTES 32
#define GLOBAL_ADDR 0x5000
#define STACK_ADDR 0x7ff000

/* Eight blocks of 32 bytes at 0x10000, 0x10100, ... and their contents. */
struct space {
        uint8_t contents[8][BLOCK_BYTES];
        bool unreadable[8];
        struct reach_block blocks[8];
        uint8_t global[64];             /* a root: a writable segment at GLOBAL_ADDR */
        uint8_t stack[64];              /* a root: a thread's stack at STACK_ADDR */
        uint64_t registers[2];
        enum reachability out[8];
        struct reach_stats stats;
        int reads_left;                 /* < 0: no limit */
};

static uint64_t block_addr(int i)
{
        return 0x10000 + 0x100 * (uint64_t)i;
}

static void space_init(struct space *s)
{
        memset(s, 0, sizeof(*s));
        s->reads_left = -1;
        for (int i = 0; i < 8; i++)
                s->blocks[i] = (struct reach_block) { .addr = block_addr(i), .size = BLOCK_BYTES };
}

static void put(uint8_t *where, size_t offset, uint64_t value)
{
        memcpy(where + offset, &value, sizeof(value));
}

/* reach_read_fn over the made-up address space: a read stops where its region ends. */
static ssize_t read_space(void *userdata, uint64_t addr, void *buf, size_t len)
{
        struct space *s = userdata;
        const uint8_t *from = NULL;
        uint64_t start = 0, size = 0;

        if (s->reads_left > 0)
                s->reads_left--;
        if (addr >= GLOBAL_ADDR && addr < GLOBAL_ADDR + sizeof(s->global))
                from = s->global, start = GLOBAL_ADDR, size = sizeof(s->global);
        else if (addr >= STACK_ADDR && addr < STACK_ADDR + sizeof(s->stack))
                from = s->stack, start = STACK_ADDR, size = sizeof(s->stack);
        else
                for (int i = 0; i < 8; i++)
                        if (!s->unreadable[i] && addr >= block_addr(i) && addr < block_addr(i) + BLOCK_BYTES)
                                from = s->contents[i], start = block_addr(i), size = BLOCK_BYTES;
        if (!from)
                return -EFAULT;
        len = MIN(len, (size_t)(start + size - addr));
        memcpy(buf, from + (addr - start), len);
        return (ssize_t)len;
}

static bool out_of_reads(void *userdata)
{
        return ((struct space *)userdata)->reads_left == 0;
}

static int classify_with(struct space *s, const struct reach_root *roots, size_t n_roots)
{
        struct reach_input in = {
                .blocks = s->blocks, .n_blocks = 8, .roots = roots, .n_roots = n_roots,
                .root_words = s->registers, .n_root_words = ELEMENTSOF(s->registers),
                .read = read_space, .expired = out_of_reads, .userdata = s,
        };

        return reachability_classify(&in, s->out, &s->stats);
}

static void classify(struct space *s)
{
        struct reach_root roots[] = {
                { .addr = GLOBAL_ADDR, .size = sizeof(s->global) },
                { .addr = STACK_ADDR, .size = sizeof(s->stack) },
        };

        ASSERT_EQ(classify_with(s, roots, ELEMENTSOF(roots)), 0);
}

/* The five cases, as its test program makes them. */
static void globals_stacks_and_lost_blocks_are_told_apart(void)
{
        struct space s;

        space_init(&s);
        put(s.global, 8, block_addr(1));                /* (b) a global points to block 1 */
        put(s.contents[2], 0, block_addr(3));           /* (c) 3 is pointed to only by 2, which is lost */
        put(s.contents[4], 0, 0xdeadbeef);              /* (d) 4: its pointer was overwritten */
        put(s.stack, 16, block_addr(5) + 12);           /* (e) a thread's stack points inside block 5 */
        classify(&s);
        ASSERT_EQ(s.out[1], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[2], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.out[3], REACHABILITY_INDIRECTLY_LOST);
        ASSERT_EQ(s.out[4], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.out[5], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[0], REACHABILITY_DEFINITELY_LOST);
}

static void what_a_reachable_block_points_to_is_reachable(void)
{
        struct space s;

        space_init(&s);
        put(s.global, 0, block_addr(0));
        put(s.contents[0], 8, block_addr(6));
        put(s.contents[6], 24, block_addr(7) + BLOCK_BYTES - 1);   /* its last byte */
        classify(&s);
        ASSERT_EQ(s.out[0], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[6], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[7], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[1], REACHABILITY_DEFINITELY_LOST);
}

static void a_lost_cycle_has_one_definitely_lost_leader(void)
{
        struct space s;

        space_init(&s);
        put(s.contents[3], 0, block_addr(5));
        put(s.contents[5], 0, block_addr(3));
        /* a later block pointing into an earlier clique joins it: 6 -> 2 -> (nothing) */
        put(s.contents[6], 0, block_addr(2));
        classify(&s);
        ASSERT_EQ(s.out[3], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.out[5], REACHABILITY_INDIRECTLY_LOST);
        ASSERT_EQ(s.out[2], REACHABILITY_INDIRECTLY_LOST);
        ASSERT_EQ(s.out[6], REACHABILITY_DEFINITELY_LOST);
}

static void only_aligned_words_and_addresses_inside_count(void)
{
        struct space s;

        space_init(&s);
        put(s.global, 3, block_addr(1));                /* unaligned: not a pointer */
        put(s.global, 16, block_addr(2) + BLOCK_BYTES);  /* one past the end: not inside */
        put(s.global, 24, block_addr(2) - 1);           /* one before */
        classify(&s);
        ASSERT_EQ(s.out[1], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.out[2], REACHABILITY_DEFINITELY_LOST);
}

static void unreadable_blocks_are_classified_and_reach_nothing(void)
{
        struct reach_input empty = { .read = read_space };
        struct space s;

        space_init(&s);
        put(s.global, 0, block_addr(0));
        put(s.contents[0], 0, block_addr(1));
        s.unreadable[0] = true;
        classify(&s);
        ASSERT_EQ(s.out[0], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[1], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.stats.blocks_unreadable, 1u);
        ASSERT_EQ(s.stats.bytes_unreadable, (uint64_t)BLOCK_BYTES);
        ASSERT_EQ(reachability_classify(&empty, NULL, NULL), 0);
        ASSERT_STREQ(reachability_to_string(REACHABILITY_INDIRECTLY_LOST), "indirectly_lost");
}

/* A root that runs into unreadable memory is scanned up to there, and on from the next page. */
static void a_root_is_read_up_to_where_it_stops_being_readable(void)
{
        struct reach_root roots[] = { { .addr = GLOBAL_ADDR, .size = 2 * 4096 } };
        struct space s;

        space_init(&s);
        put(s.global, 56, block_addr(3));
        classify_with(&s, roots, ELEMENTSOF(roots));
        ASSERT_EQ(s.out[3], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.stats.bytes_unreadable, 2 * 4096 - sizeof(s.global));
}

/* A register holding a block's address keeps it (and what it points to) reachable. */
static void registers_are_roots(void)
{
        struct space s;

        space_init(&s);
        s.registers[1] = block_addr(4) + 8;
        put(s.contents[4], 0, block_addr(5));
        classify(&s);
        ASSERT_EQ(s.out[4], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[5], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(s.out[6], REACHABILITY_DEFINITELY_LOST);
}

/* glibc's main_arena points at the next chunk's header, the last 16 bytes of a full chunk: that
 * word does not keep the block before it. */
static void a_pointer_to_the_next_chunk_header_is_not_a_reference(void)
{
        struct space s;

        space_init(&s);
        s.blocks[2].size = 24;                          /* chunk of 32: next header at +16 */
        s.blocks[3].size = 24;
        ASSERT_EQ(reachability_chunk_header_slot(block_addr(2), 24), block_addr(2) + 16);
        ASSERT_EQ(reachability_chunk_header_slot(block_addr(2), 8), block_addr(2) + 16);
        ASSERT_EQ(reachability_chunk_header_slot(block_addr(2), 100), block_addr(2) + 96);
        put(s.global, 0, block_addr(2) + 16);
        put(s.global, 8, block_addr(3) + 8);
        classify(&s);
        ASSERT_EQ(s.out[2], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.out[3], REACHABILITY_STILL_REACHABLE);
}

/* Out of time: the scan stops and says so. */
static void a_scan_that_runs_out_of_time_stops(void)
{
        struct space s;
        struct reach_root roots[] = {
                { .addr = GLOBAL_ADDR, .size = sizeof(s.global) },
                { .addr = STACK_ADDR, .size = sizeof(s.stack) },
        };

        space_init(&s);
        s.reads_left = 1;
        ASSERT_EQ(classify_with(&s, roots, ELEMENTSOF(roots)), -ETIME);
}

/* Cut short: the blocks reached so far are still reachable, the others undecided (a partial
 * verdict: a block not reached yet may be reached from what is left to read). */
static void a_scan_cut_short_is_a_partial_verdict(void)
{
        struct space s;
        struct reach_root roots[] = {
                { .addr = GLOBAL_ADDR, .size = sizeof(s.global) },
                { .addr = STACK_ADDR, .size = sizeof(s.stack) },
        };

        space_init(&s);
        s.registers[0] = block_addr(6);                 /* reached before any read */
        put(s.contents[6], 0, block_addr(7));           /* reached only by reading 6 */
        put(s.global, 0, block_addr(1));
        s.reads_left = 0;
        ASSERT_EQ(classify_with(&s, roots, ELEMENTSOF(roots)), -ETIME);
        ASSERT_EQ(s.out[6], REACHABILITY_STILL_REACHABLE);
        for (int i = 0; i < 8; i++)
                if (i != 6)
                        ASSERT_EQ(s.out[i], REACHABILITY_UNDECIDED);
        ASSERT_STREQ(reachability_to_string(REACHABILITY_UNDECIDED), "undecided");
}

/* reach_read_many_fn over the made-up space: the spans one after the other, up to the first that
 * cannot be read whole. */
static ssize_t read_space_many(void *userdata, const struct reach_span *spans, size_t n, void *buf)
{
        ssize_t total = 0;

        for (size_t i = 0; i < n; i++) {
                ssize_t r = read_space(userdata, spans[i].addr, (uint8_t *)buf + total, spans[i].len);

                if (r != (ssize_t)spans[i].len)
                        return total;
                total += r;
        }
        return total;
}

/* Many blocks and small roots read in one call give the same classes as one read each, a block
 * that cannot be read among them included; words that cannot point into a block are ruled out
 * before any search. */
static void batched_reads_give_the_same_classes(void)
{
        struct space one, many;
        struct reach_root roots[] = {
                { .addr = GLOBAL_ADDR, .size = 16 }, { .addr = GLOBAL_ADDR + 16, .size = 16 },
                { .addr = GLOBAL_ADDR + 32, .size = 32 },
                { .addr = STACK_ADDR, .size = sizeof(one.stack) },
        };

        space_init(&one);
        put(one.global, 40, block_addr(0));             /* 0 -> 1 -> 2, 3 ... 7 */
        for (int i = 0; i < 7; i++)
                put(one.contents[i], 8, block_addr(i + 1));
        put(one.contents[0], 16, block_addr(4));
        put(one.global, 0, 0x42);                       /* small numbers, far addresses: filtered */
        put(one.global, 8, 0x7fffffff0000);
        put(one.stack, 0, 0x1000);
        one.unreadable[5] = true;                       /* 6, 7 reached only through 5: lost */
        many = one;
        ASSERT_EQ(classify_with(&one, roots, ELEMENTSOF(roots)), 0);
        ASSERT_EQ(reachability_classify(&(struct reach_input) {
                        .blocks = many.blocks, .n_blocks = 8, .roots = roots, .n_roots = ELEMENTSOF(roots),
                        .root_words = many.registers, .n_root_words = ELEMENTSOF(many.registers),
                        .read = read_space, .read_many = read_space_many, .userdata = &many,
                }, many.out, &many.stats), 0);
        for (int i = 0; i < 8; i++)
                ASSERT_EQ(many.out[i], one.out[i]);
        for (int i = 0; i <= 5; i++)
                ASSERT_EQ(many.out[i], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(many.out[6], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(many.out[7], REACHABILITY_INDIRECTLY_LOST);
        ASSERT_EQ(many.stats.bytes_scanned, one.stats.bytes_scanned);
        ASSERT_EQ(many.stats.blocks_unreadable, 1u);
        ASSERT_TRUE(many.stats.words_filtered >= 3);
        ASSERT_EQ(many.stats.words_filtered, one.stats.words_filtered);
}

/* A made-up process for the choice of roots: the heap with two blocks; a pool the program mapped,
 * merged with the mapping of a big block of glibc's right after it; the same with a small block
 * in it too; an anonymous mapping with no block; read-only data; a file shared with others. */
#define MAPS_TEXT \
        "10000-20000 rw-p 00000000 00:00 0 [heap]\n" \
        "30000-50000 rw-p 00000000 00:00 0\n" \
        "60000-80000 rw-p 00000000 00:00 0\n" \
        "90000-91000 rw-p 00000000 00:00 0\n" \
        "a0000-a1000 r--p 00000000 08:01 12 /usr/lib/libfoo.so\n" \
        "b0000-b1000 rw-s 00000000 08:01 13 /srv/shared.db\n"

static const struct reach_block roots_blocks[] = {
        { .addr = 0x10100, .size = 32 }, { .addr = 0x10200, .size = 64 },       /* [heap] */
        { .addr = 0x40010, .size = 0x8000 },                                     /* its own chunk */
        { .addr = 0x60100, .size = 48 }, { .addr = 0x70010, .size = 0x8000 },   /* mixed */
};
/* glibc's mmapped chunks: 16 bytes before each such block, whole pages */
static const struct reach_block roots_chunks[] = {
        { .addr = 0x40000, .size = 0x9000 }, { .addr = 0x70000, .size = 0x9000 },
};

static size_t select_roots(bool traced_from_start, struct reach_root **ret)
{
        struct proc_maps maps = {};
        size_t n = 0;

        ASSERT_EQ(proc_maps_parse_string(MAPS_TEXT, &maps), 0);
        ASSERT_EQ(reach_scan_roots_select(&maps, NULL, 0, roots_blocks, ELEMENTSOF(roots_blocks), roots_chunks,
                                          ELEMENTSOF(roots_chunks), traced_from_start, ret, &n), 0);
        proc_maps_done(&maps);
        return n;
}

static void assert_root(const struct reach_root *r, uint64_t addr, uint64_t size)
{
        ASSERT_EQ(r->addr, addr);
        ASSERT_EQ(r->size, size);
}

/* Traced from its start, every block is known: the heap is the allocator's; a mapping whose every
 * block has a chunk of its own is the program's around them; a mapping with another block is the
 * allocator's; a mapping with no block is the program's; read-only and shared files are not. */
static void a_traced_process_roots_are_its_memory_outside_the_allocators(void)
{
        struct reach_root *roots = NULL;
        size_t n = select_roots(true, &roots);

        ASSERT_EQ(n, (size_t)3);
        assert_root(&roots[0], 0x30000, 0x10000);       /* the pool below the chunk */
        assert_root(&roots[1], 0x49000, 0x7000);        /* past the chunk's end */
        assert_root(&roots[2], 0x90000, 0x1000);
        free(roots);
}

/* Attached while it ran, blocks memleakd never saw lie between the known ones: all of that is
 * read, in every mapping that holds known blocks, the heap included. */
static void an_attached_process_roots_include_the_memory_between_its_blocks(void)
{
        struct reach_root *roots = NULL;
        size_t n = select_roots(false, &roots);

        ASSERT_EQ(n, (size_t)9);
        assert_root(&roots[0], 0x10000, 0x100);
        assert_root(&roots[1], 0x10120, 0xe0);
        assert_root(&roots[2], 0x10240, 0x20000 - 0x10240);
        assert_root(&roots[3], 0x30000, 0x10010);
        assert_root(&roots[4], 0x48010, 0x50000 - 0x48010);
        assert_root(&roots[5], 0x60000, 0x100);
        assert_root(&roots[6], 0x60130, 0x70010 - 0x60130);
        assert_root(&roots[7], 0x78010, 0x80000 - 0x78010);
        assert_root(&roots[8], 0x90000, 0x1000);
        free(roots);
}

/* A large heap: blocks of 16 bytes to 40 KiB (many across the index's cells), in runs with gaps
 * from none to 64 KiB between them (and to 64 GiB in a sparse one), words pointing inside random
 * blocks or nowhere. The mark must reach exactly the blocks a plain search over every block says
 * it reaches. */
#define BIG_BLOCKS 20000
#define BIG_WORDS 4                     /* words written per block (the rest is zero) */

struct big_heap {
        struct reach_block blocks[BIG_BLOCKS];
        uint8_t *contents[BIG_BLOCKS];
        uint64_t roots[64];
};

static uint64_t big_random(uint64_t *state)
{
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        return *state;
}

/* The block holding addr (not its next chunk's header slot), by a search over them all (but those
 * that are roots' memory, is_root[i], when is_root is not NULL). */
static long big_find(const struct big_heap *h, const bool *is_root, uint64_t addr)
{
        for (long i = 0; i < BIG_BLOCKS; i++)
                if ((!is_root || !is_root[i]) && addr >= h->blocks[i].addr && addr - h->blocks[i].addr < h->blocks[i].size)
                        return addr == reachability_chunk_header_slot(h->blocks[i].addr, h->blocks[i].size) ?
                                -1 : i;
        return -1;
}

static ssize_t read_big(void *userdata, uint64_t addr, void *buf, size_t len)
{
        const struct big_heap *h = userdata;
        size_t lo = 0, hi = BIG_BLOCKS;

        while (lo < hi) {               /* the block starting at or before addr */
                size_t mid = lo + (hi - lo) / 2;

                if (h->blocks[mid].addr <= addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (lo == 0 || addr - h->blocks[lo - 1].addr >= h->blocks[lo - 1].size)
                return -EFAULT;
        lo--;
        len = MIN(len, (size_t)(h->blocks[lo].addr + h->blocks[lo].size - addr));
        memcpy(buf, h->contents[lo] + (addr - h->blocks[lo].addr), len);
        return (ssize_t)len;
}

static uint64_t big_pointer(const struct big_heap *h, uint64_t *state)
{
        const struct reach_block *b = &h->blocks[big_random(state) % BIG_BLOCKS];

        switch (big_random(state) % 4) {
        case 0:
                return b->addr;                                         /* its start */
        case 1:
                return b->addr + big_random(state) % b->size;           /* inside */
        case 2:
                return b->addr + b->size + big_random(state) % 64;      /* just past it */
        default:
                return big_random(state);                               /* anything */
        }
}

static ssize_t read_big_many(void *userdata, const struct reach_span *spans, size_t n, void *buf)
{
        ssize_t total = 0;

        for (size_t i = 0; i < n; i++) {
                ssize_t r = read_big(userdata, spans[i].addr, (uint8_t *)buf + total, spans[i].len);

                if (r != (ssize_t)spans[i].len)
                        return total;
                total += r;
        }
        return total;
}

/* many: blocks read in batches (read_many), and one in 13 of the heap's ranges is not a block but
 * a root's memory, between the blocks (as a process attached while it ran has them). */
static void mark_like_a_full_search(bool sparse, bool many)
{
        struct big_heap *h = calloc(1, sizeof(*h));
        enum reachability *out = calloc(BIG_BLOCKS, sizeof(*out));
        bool *reached = calloc(BIG_BLOCKS, sizeof(*reached)), *is_root = calloc(BIG_BLOCKS, sizeof(*is_root));
        long *todo = calloc(BIG_BLOCKS + 1, sizeof(*todo));
        struct reach_block *blocks = calloc(BIG_BLOCKS, sizeof(*blocks));
        struct reach_root *ranges = calloc(BIG_BLOCKS, sizeof(*ranges));
        size_t *which = calloc(BIG_BLOCKS, sizeof(*which));
        uint64_t state = 0x9e3779b97f4a7c15ULL, addr = 0x555500000000ULL;
        size_t depth = 0, n_reached = 0, n_marked = 0, n_blocks = 0, n_ranges = 0;
        struct reach_stats stats;

        ASSERT_TRUE(h && out && reached && is_root && todo && blocks && ranges && which);
        for (size_t i = 0; i < BIG_BLOCKS; i++) {
                uint64_t size = 16 + big_random(&state) % (big_random(&state) % 8 == 0 ? 40960 : 256);

                switch (big_random(&state) % 16) {
                case 0:
                        if (sparse)
                                addr += (big_random(&state) % 64) << 30;        /* another mapping, up to 64 GiB on */
                        break;
                case 1: case 2: case 3:
                        addr += (big_random(&state) % 65536) & ~15ULL;       /* blocks stay 16-aligned */
                        break;
                default:
                        break;                                          /* right after the last */
                }
                h->blocks[i] = (struct reach_block) { .addr = addr, .size = size };
                addr += (size + 15) & ~15ULL;
                h->contents[i] = calloc(1, size);
                ASSERT_TRUE(h->contents[i]);
        }
        for (size_t i = 0; i < BIG_BLOCKS; i++)
                for (int w = 0; w < BIG_WORDS; w++) {
                        uint64_t slot = big_random(&state) % (h->blocks[i].size / 8);
                        uint64_t v = big_pointer(h, &state);

                        memcpy(h->contents[i] + slot * 8, &v, sizeof(v));
                }
        for (size_t i = 0; i < ELEMENTSOF(h->roots); i++)
                h->roots[i] = big_pointer(h, &state);
        for (size_t i = 0; i < BIG_BLOCKS; i++) {
                is_root[i] = many && i % 13 == 5;
                if (is_root[i])
                        ranges[n_ranges++] = (struct reach_root) { .addr = h->blocks[i].addr,
                                                                   .size = h->blocks[i].size };
                else {
                        which[n_blocks] = i;
                        blocks[n_blocks++] = h->blocks[i];
                }
        }

        struct reach_input in = {
                .blocks = blocks, .n_blocks = n_blocks, .roots = ranges, .n_roots = n_ranges,
                .root_words = h->roots, .n_root_words = ELEMENTSOF(h->roots), .read = read_big,
                .read_many = many ? read_big_many : NULL, .userdata = h,
        };
        ASSERT_EQ(reachability_classify(&in, out, &stats), 0);
        /* words into memory whose blocks were all reached already are not searched for */
        ASSERT_TRUE(stats.words_settled > 0 && stats.words_looked_up > 0);

        /* the truth: every aligned word of a reached block or of a root's memory, looked for
         * among all blocks */
        for (size_t i = 0; i < ELEMENTSOF(h->roots); i++) {
                long b = big_find(h, is_root, h->roots[i]);

                if (b >= 0 && !reached[b]) {
                        reached[b] = true;
                        todo[depth++] = b;
                }
        }
        for (size_t i = 0; i < BIG_BLOCKS; i++)
                if (is_root[i])
                        todo[depth++] = (long)i;
        while (depth > 0) {
                long i = todo[--depth];

                for (uint64_t off = 0; off + 8 <= h->blocks[i].size; off += 8) {
                        uint64_t v;
                        long b;

                        memcpy(&v, h->contents[i] + off, sizeof(v));
                        if (v == 0)
                                continue;
                        b = big_find(h, is_root, v);
                        if (b >= 0 && !reached[b]) {
                                reached[b] = true;
                                todo[depth++] = b;
                        }
                }
        }
        for (size_t j = 0; j < n_blocks; j++) {
                size_t i = which[j];

                n_reached += reached[i];
                n_marked += out[j] == REACHABILITY_STILL_REACHABLE;
                if (reached[i] != (out[j] == REACHABILITY_STILL_REACHABLE))
                        fprintf(stderr, "block %zu at 0x%llx (+%llu): reached %d, marked %d\n", i,
                                (unsigned long long)h->blocks[i].addr, (unsigned long long)h->blocks[i].size,
                                reached[i], out[j]);
                ASSERT_EQ(reached[i], out[j] == REACHABILITY_STILL_REACHABLE);
        }
        /* the case means something: some reached, some not, and a span far wider than the blocks */
        ASSERT_TRUE(n_reached > n_blocks / 10 && n_reached < n_blocks - n_blocks / 10);
        if (sparse)
                ASSERT_TRUE(h->blocks[BIG_BLOCKS - 1].addr - h->blocks[0].addr > (1ULL << 40));
        ASSERT_EQ(n_marked, n_reached);
        for (size_t i = 0; i < BIG_BLOCKS; i++)
                free(h->contents[i]);
        free(h);
        free(out);
        free(reached);
        free(is_root);
        free(todo);
        free(blocks);
        free(ranges);
        free(which);
}

/* Blocks across many mappings far apart: the index's cells are coarse. */
static void a_sparse_heap_is_marked_as_a_full_search_marks_it(void)
{
        mark_like_a_full_search(true, false);
}

/* Blocks packed in one mapping: cells of 16 bytes, blocks of up to ten pages across them. */
static void a_dense_heap_is_marked_as_a_full_search_marks_it(void)
{
        mark_like_a_full_search(false, false);
}

/* The same read in batches, with roots' memory between the blocks: the sweeps in address order
 * (blocks reached above the finger scanned in the same sweep, the roots read with the blocks)
 * reach what the plain search reaches. */
static void a_heap_swept_in_batches_with_roots_between_is_marked_as_a_full_search_marks_it(void)
{
        mark_like_a_full_search(false, true);
        mark_like_a_full_search(true, true);
}

/* Blocks of 1 KiB side by side, all reached at once: read a chunk (1 MiB) at a time, in one call
 * each, whichever item comes next (a block that would pass the chunk, a big one). */
#define SIDE_BLOCKS 3000

struct counted_heap {
        struct big_heap h;
        unsigned reads, many_reads;
};

static ssize_t read_counted(void *userdata, uint64_t addr, void *buf, size_t len)
{
        ((struct counted_heap *)userdata)->reads++;
        return read_big(userdata, addr, buf, len);
}

static ssize_t read_counted_many(void *userdata, const struct reach_span *spans, size_t n, void *buf)
{
        ((struct counted_heap *)userdata)->many_reads++;
        return read_big_many(userdata, spans, n, buf);
}

static void blocks_side_by_side_are_read_a_chunk_at_a_time(void)
{
        struct counted_heap *c = calloc(1, sizeof(*c));
        uint64_t *words = calloc(SIDE_BLOCKS, sizeof(*words)), addr = 0x7f0000000000ULL;
        enum reachability *out = calloc(SIDE_BLOCKS, sizeof(*out));

        ASSERT_TRUE(c && words && out);
        for (size_t i = 0; i < SIDE_BLOCKS; i++) {
                c->h.blocks[i] = (struct reach_block) { .addr = addr, .size = 1024 };
                c->h.contents[i] = calloc(1, 1024);
                ASSERT_TRUE(c->h.contents[i]);
                words[i] = addr;
                addr += 1024;
        }
        for (size_t i = SIDE_BLOCKS; i < BIG_BLOCKS; i++)
                c->h.blocks[i] = (struct reach_block) { .addr = UINT64_MAX - BIG_BLOCKS + i, .size = 0 };
        ASSERT_EQ(reachability_classify(&(struct reach_input) {
                        .blocks = c->h.blocks, .n_blocks = SIDE_BLOCKS, .root_words = words,
                        .n_root_words = SIDE_BLOCKS, .read = read_counted, .read_many = read_counted_many,
                        .userdata = c,
                }, out, NULL), 0);
        for (size_t i = 0; i < SIDE_BLOCKS; i++)
                ASSERT_EQ(out[i], REACHABILITY_STILL_REACHABLE);
        ASSERT_EQ(c->reads, 0u);
        ASSERT_TRUE(c->many_reads <= (SIDE_BLOCKS * 1024 + (1 << 20) - 1) / (1 << 20) + 1);
        for (size_t i = 0; i < SIDE_BLOCKS; i++)
                free(c->h.contents[i]);
        free(c);
        free(words);
        free(out);
}

/* Chains of 8 blocks of 64 bytes (a hash table's buckets, 16,384 of them) whose blocks lie in
 * random order in one region, the heads reached from the roots. Read level by level, each level
 * (an eighth of the region, its blocks a few hundred bytes apart) is read with what lies between
 * its blocks: the region 8 times over. In sweeps with a finger, a block reached above the last
 * one taken is scanned in the same sweep: fewer sweeps, the region read 5.4 times. */
#define CHAIN_LENGTH 8
#define CHAINS 16384

struct chain_heap {
        uint8_t *memory;
        uint64_t start, end;
        uint64_t covered;               /* bytes from each read's first span to its last's end */
};

static ssize_t read_chains(void *userdata, uint64_t addr, void *buf, size_t len)
{
        struct chain_heap *c = userdata;

        if (addr < c->start || addr >= c->end)
                return -EFAULT;
        len = MIN(len, (size_t)(c->end - addr));
        memcpy(buf, c->memory + (addr - c->start), len);
        c->covered += len;
        return (ssize_t)len;
}

/* As reach-scan.c reads them: spans (in address order) apart by at most a page in one read, what
 * lies between them read too. */
static ssize_t read_chains_many(void *userdata, const struct reach_span *spans, size_t n, void *buf)
{
        struct chain_heap *c = userdata;
        uint64_t covered = c->covered, from = 0, to = 0;
        ssize_t total = 0;

        for (size_t i = 0; i < n; i++) {
                ssize_t r = read_chains(userdata, spans[i].addr, (uint8_t *)buf + total, spans[i].len);

                if (r != (ssize_t)spans[i].len)
                        break;
                total += r;
                if (i == 0 || spans[i].addr > to + 4096 || spans[i].addr < from) {
                        covered += to - from;
                        from = spans[i].addr;
                }
                to = MAX(to, spans[i].addr + spans[i].len);
        }
        c->covered = covered + (to - from);
        return total;
}

static void chains_in_random_order_are_read_in_fewer_sweeps_than_levels(void)
{
        size_t n = CHAINS * CHAIN_LENGTH, *order = calloc(n, sizeof(*order));
        struct reach_block *blocks = calloc(n, sizeof(*blocks));
        uint64_t *heads = calloc(CHAINS, sizeof(*heads)), state = 0x853c49e6748fea9bULL;
        enum reachability *out = calloc(n, sizeof(*out));
        struct chain_heap c = { .memory = calloc(n, 64), .start = 0x7f0000000000ULL };

        ASSERT_TRUE(order && blocks && heads && out && c.memory);
        c.end = c.start + n * 64;
        for (size_t i = 0; i < n; i++) {
                blocks[i] = (struct reach_block) { .addr = c.start + i * 64, .size = 64 };
                order[i] = i;
        }
        for (size_t i = n - 1; i > 0; i--) {             /* the blocks of the chains, shuffled */
                size_t j = big_random(&state) % (i + 1), t = order[i];

                order[i] = order[j];
                order[j] = t;
        }
        for (size_t k = 0; k < CHAINS; k++) {
                heads[k] = blocks[order[k * CHAIN_LENGTH]].addr;
                for (size_t l = 0; l + 1 < CHAIN_LENGTH; l++)
                        memcpy(c.memory + order[k * CHAIN_LENGTH + l] * 64 + 16,
                               &blocks[order[k * CHAIN_LENGTH + l + 1]].addr, sizeof(uint64_t));
        }
        ASSERT_EQ(reachability_classify(&(struct reach_input) {
                        .blocks = blocks, .n_blocks = n, .root_words = heads, .n_root_words = CHAINS,
                        .read = read_chains, .read_many = read_chains_many, .userdata = &c,
                }, out, NULL), 0);
        for (size_t i = 0; i < n; i++)
                ASSERT_EQ(out[i], REACHABILITY_STILL_REACHABLE);
        fprintf(stderr, "read %.1f times the region\n", (double)c.covered / (double)(c.end - c.start));
        ASSERT_TRUE(c.covered < 6 * (c.end - c.start));
        free(order);
        free(blocks);
        free(heads);
        free(out);
        free(c.memory);
}

/* The mark in steps (a process that runs on between them): a pointer moved, after its old place was
 * read, to a place read already is seen when that place is read again; what was reached stays so;
 * the classes at the end are those a mark of the final memory in one go gives. */
static void a_mark_in_steps_follows_pointers_moved_between_them(void)
{
        struct space s, once;
        struct reach_marker *m = NULL;
        struct reach_input in;
        struct reach_root global = { .addr = GLOBAL_ADDR, .size = sizeof(s.global) };
        struct reach_root stack = { .addr = STACK_ADDR, .size = sizeof(s.stack) };
        struct reach_root block2 = { .addr = block_addr(2), .size = BLOCK_BYTES };

        space_init(&s);
        put(s.global, 0, block_addr(0));                /* 0 -> 1 */
        put(s.contents[0], 0, block_addr(1));
        put(s.stack, 0, block_addr(2));                 /* 2 -> 3 on the stack, for now */
        put(s.contents[2], 8, block_addr(3));
        put(s.contents[4], 0, block_addr(5));           /* 4 -> 5: lost throughout */
        in = (struct reach_input) { .blocks = s.blocks, .n_blocks = 8, .read = read_space, .userdata = &s };
        ASSERT_EQ(reachability_marker_new(&in, &m), 0);
        ASSERT_EQ(reachability_marker_add(m, &global, 1, NULL, 0), 0);
        ASSERT_TRUE(reachability_marker_reached(m, 0));
        ASSERT_TRUE(reachability_marker_reached(m, 1));
        ASSERT_TRUE(!reachability_marker_reached(m, 2));
        /* it runs: 2 moves from the stack into block 1 (read already), the stack forgets it */
        put(s.contents[1], 16, block_addr(2));
        put(s.stack, 0, 0);
        ASSERT_EQ(reachability_marker_add(m, &stack, 1, NULL, 0), 0);
        ASSERT_TRUE(!reachability_marker_reached(m, 2));
        /* block 1's page, written, read again: 2 and what it points to */
        ASSERT_EQ(reachability_marker_add(m, &(struct reach_root) { .addr = block_addr(1), .size = BLOCK_BYTES },
                                          1, NULL, 0), 0);
        ASSERT_TRUE(reachability_marker_reached(m, 2));
        ASSERT_TRUE(reachability_marker_reached(m, 3));
        /* a register at the final stop: block 6; a root read twice changes nothing */
        ASSERT_EQ(reachability_marker_add(m, &block2, 1, (const uint64_t[]) { block_addr(6) + 3 }, 1), 0);
        ASSERT_TRUE(reachability_marker_reached(m, 6));
        ASSERT_EQ(reachability_marker_classify(m, s.out, &s.stats), 0);
        reachability_marker_free(m);
        /* the same as one mark of the memory as it ends */
        once = s;
        once.registers[0] = block_addr(6);
        classify(&once);
        for (int i = 0; i < 8; i++)
                ASSERT_EQ(s.out[i], once.out[i]);
        ASSERT_EQ(s.out[4], REACHABILITY_DEFINITELY_LOST);
        ASSERT_EQ(s.out[5], REACHABILITY_INDIRECTLY_LOST);
        ASSERT_EQ(s.out[7], REACHABILITY_DEFINITELY_LOST);
        reachability_marker_free(NULL);
}

/* A marker cut short keeps its work: classified then, its classes are partial (what it reached
 * still reachable); a later call goes on first with what was left (the blocks reached and not
 * scanned, the roots not read), but for transient roots (read again at each call), dropped. */
static void a_mark_in_steps_cut_short_goes_on_at_the_next_call(void)
{
        struct space s;
        struct reach_marker *m = NULL;
        struct reach_root global = { .addr = GLOBAL_ADDR, .size = sizeof(s.global) };
        struct reach_root stack = { .addr = STACK_ADDR, .size = sizeof(s.stack) };
        struct reach_input in;

        for (int classify_cut = 0; classify_cut < 2; classify_cut++) {
                space_init(&s);
                put(s.global, 0, block_addr(1));
                put(s.global, 8, block_addr(5));
                put(s.contents[2], 0, block_addr(3));
                put(s.stack, 0, block_addr(4));
                in = (struct reach_input) { .blocks = s.blocks, .n_blocks = 8, .read = read_space,
                                            .expired = out_of_reads, .userdata = &s };
                ASSERT_EQ(reachability_marker_new(&in, &m), 0);
                ASSERT_EQ(reachability_marker_add(m, &global, 1, NULL, 0), 0);
                ASSERT_TRUE(reachability_marker_reached(m, 1) && reachability_marker_reached(m, 5));
                ASSERT_TRUE(reachability_marker_done(m));
                s.reads_left = 0;
                ASSERT_EQ(reachability_marker_add(m, &global, 1, (const uint64_t[]) { block_addr(2) }, 1), -ETIME);
                ASSERT_TRUE(reachability_marker_reached(m, 2));
                ASSERT_TRUE(!reachability_marker_reached(m, 3));
                ASSERT_TRUE(!reachability_marker_done(m));
                ASSERT_EQ(reachability_marker_add_transient(m, &stack, 1, NULL, 0), -ETIME);
                if (classify_cut) {
                        ASSERT_EQ(reachability_marker_classify(m, s.out, NULL), -ETIME);
                        ASSERT_EQ(s.out[2], REACHABILITY_STILL_REACHABLE);
                        ASSERT_EQ(s.out[3], REACHABILITY_UNDECIDED);
                        ASSERT_EQ(s.out[4], REACHABILITY_UNDECIDED);
                        reachability_marker_free(m);
                        continue;
                }
                s.reads_left = -1;
                ASSERT_EQ(reachability_marker_add(m, NULL, 0, NULL, 0), 0);
                ASSERT_TRUE(reachability_marker_done(m));
                ASSERT_TRUE(reachability_marker_reached(m, 3));
                ASSERT_TRUE(!reachability_marker_reached(m, 4));
                ASSERT_EQ(reachability_marker_classify(m, s.out, NULL), 0);
                for (int i = 0; i < 8; i++)
                        ASSERT_EQ(s.out[i], i == 1 || i == 2 || i == 3 || i == 5 ? REACHABILITY_STILL_REACHABLE :
                                  REACHABILITY_DEFINITELY_LOST);
                reachability_marker_free(m);
        }
}

/* A random heap marked from roots (ranges and words) by a marker cut after each possible number of
 * checks of its time, then resumed, or cut again and again every few checks: the same classes as
 * one mark uncut, blocks read in batches or one by one. */
#define CUT_BLOCKS 300
#define CUT_ROOTS 6

struct cut_heap {
        struct big_heap *h;
        long checks;
        long cut_at;                    /* the check that says the time is out; < 0: none */
        long every;                     /* > 0: every so many checks */
        long add_checks;                /* made by the calls that add */
};

static ssize_t read_cut(void *userdata, uint64_t addr, void *buf, size_t len)
{
        return read_big(((struct cut_heap *)userdata)->h, addr, buf, len);
}

static ssize_t read_cut_many(void *userdata, const struct reach_span *spans, size_t n, void *buf)
{
        ssize_t total = 0;

        for (size_t i = 0; i < n; i++) {
                ssize_t r = read_cut(userdata, spans[i].addr, (uint8_t *)buf + total, spans[i].len);

                if (r != (ssize_t)spans[i].len)
                        return total;
                total += r;
        }
        return total;
}

static bool cut_expired(void *userdata)
{
        struct cut_heap *c = userdata;

        c->checks++;
        if (c->every > 0)
                return c->checks % c->every == 0;
        return c->checks == c->cut_at;
}

static int mark_cut(struct cut_heap *c, bool many, const struct reach_root *roots, const uint64_t *words,
                    enum reachability *out, int *calls)
{
        struct reach_marker *m = NULL;
        struct reach_input in = {
                .blocks = c->h->blocks, .n_blocks = CUT_BLOCKS, .read = read_cut,
                .read_many = many ? read_cut_many : NULL, .expired = cut_expired, .userdata = c,
        };
        int r;

        c->checks = 0;
        ASSERT_EQ(reachability_marker_new(&in, &m), 0);
        r = reachability_marker_add(m, roots, CUT_ROOTS, words, 8);
        for (*calls = 1; r == -ETIME && *calls < 100000; (*calls)++) {
                if (c->every == 0)
                        c->cut_at = -1;
                r = reachability_marker_add(m, NULL, 0, NULL, 0);
        }
        ASSERT_EQ(r, 0);
        ASSERT_TRUE(reachability_marker_done(m));
        /* the walks through lost blocks are not cut here */
        c->add_checks = c->checks;
        c->every = 0;
        c->cut_at = -1;
        r = reachability_marker_classify(m, out, NULL);
        reachability_marker_free(m);
        return r;
}

static void a_mark_cut_anywhere_and_resumed_gives_the_classes_of_one_uncut(void)
{
        struct big_heap *h = calloc(1, sizeof(*h));
        struct cut_heap c = { .h = h, .cut_at = -1 };
        enum reachability want[CUT_BLOCKS], got[CUT_BLOCKS];
        struct reach_root roots[CUT_ROOTS];
        uint64_t state = 0x2545f4914f6cdd1dULL, addr = 0x7f0000000000ULL, words[8];
        size_t n_lost = 0;
        int calls;

        ASSERT_TRUE(h);
        /* CUT_BLOCKS blocks, then the roots' memory: blocks the mark does not know of */
        for (size_t i = 0; i < CUT_BLOCKS + CUT_ROOTS; i++) {
                uint64_t size = 16 + big_random(&state) % 200;

                addr += big_random(&state) % 4 == 0 ? 4096 : 0;
                h->blocks[i] = (struct reach_block) { .addr = addr, .size = size };
                addr += (size + 15) & ~15ULL;
                h->contents[i] = calloc(1, size);
                ASSERT_TRUE(h->contents[i]);
        }
        for (size_t i = CUT_BLOCKS + CUT_ROOTS; i < BIG_BLOCKS; i++)
                h->blocks[i] = (struct reach_block) { .addr = UINT64_MAX - BIG_BLOCKS + i, .size = 0 };
        for (size_t i = 0; i < CUT_BLOCKS + CUT_ROOTS; i++) {
                /* about two pointers a block: long chains, some blocks never reached */
                for (int w = 0; w < 3; w++) {
                        const struct reach_block *to = &h->blocks[big_random(&state) % CUT_BLOCKS];
                        uint64_t slot = big_random(&state) % (h->blocks[i].size / 8);
                        uint64_t v = big_random(&state) % 3 == 0 ? 0 : to->addr + big_random(&state) % to->size;

                        memcpy(h->contents[i] + slot * 8, &v, sizeof(v));
                }
        }
        for (size_t i = 0; i < CUT_ROOTS; i++)
                roots[i] = (struct reach_root) { .addr = h->blocks[CUT_BLOCKS + i].addr,
                                                 .size = h->blocks[CUT_BLOCKS + i].size };
        for (size_t i = 0; i < ELEMENTSOF(words); i++)
                words[i] = i % 2 ? h->blocks[big_random(&state) % CUT_BLOCKS].addr : big_random(&state);

        for (int many = 0; many < 2; many++) {
                long total;

                c.every = 0;
                c.cut_at = -1;
                ASSERT_EQ(mark_cut(&c, many, roots, words, want, &calls), 0);
                ASSERT_EQ(calls, 1);
                total = c.add_checks;
                n_lost = 0;
                for (size_t i = 0; i < CUT_BLOCKS; i++)
                        n_lost += want[i] != REACHABILITY_STILL_REACHABLE;
                /* the case means something: many reads, some blocks lost, most reached */
                ASSERT_TRUE(total > (many ? 3 : 100));
                ASSERT_TRUE(n_lost > 5 && n_lost < CUT_BLOCKS / 2);
                for (long cut = 1; cut <= total; cut++) {
                        c.every = 0;
                        c.cut_at = cut;
                        ASSERT_EQ(mark_cut(&c, many, roots, words, got, &calls), 0);
                        ASSERT_EQ(calls, 2);
                        ASSERT_EQ(memcmp(got, want, sizeof(want)), 0);
                }
                for (long every = 2; every <= 7; every++) {
                        c.every = every;
                        c.cut_at = -1;
                        ASSERT_EQ(mark_cut(&c, many, roots, words, got, &calls), 0);
                        ASSERT_TRUE(calls > 1);
                        ASSERT_EQ(memcmp(got, want, sizeof(want)), 0);
                }
        }
        for (size_t i = 0; i < CUT_BLOCKS + CUT_ROOTS; i++)
                free(h->contents[i]);
        free(h);
}

/* Written pages read again: less the blocks kept out (not reached), each of them noted. */
static void written_pages_are_roots_less_the_blocks_kept_out(void)
{
        const struct reach_block blocks[] = {
                { 0x1000, 0x100 }, { 0x1ff0, 0x20 }, { 0x2100, 0x10 }, { 0x2200, 0x2000 }, { 0x5000, 0x10 },
        };
        const struct reach_span pages[] = { { 0x2000, 0x1000 }, { 0x4000, 0x1000 } };
        const bool keep_out[] = { true, true, false, true, true };
        bool touched[5] = {};
        struct reach_root *roots = NULL;
        size_t n = 0;

        ASSERT_EQ(reach_scan_written_roots(pages, 2, blocks, 5, keep_out, touched, &roots, &n), 0);
        /* page 0x2000: block 1 overlaps its start (kept out to 0x2010), block 2 is read (reached),
         * block 3 from 0x2200 on is kept out; page 0x4000: block 3's tail covers it to 0x4200 */
        ASSERT_EQ(n, 2u);
        ASSERT_EQ(roots[0].addr, 0x2010u);
        ASSERT_EQ(roots[0].size, 0x1f0u);
        ASSERT_EQ(roots[1].addr, 0x4200u);
        ASSERT_EQ(roots[1].size, 0xe00u);
        /* block 0 lies on no page, block 4 past the last: neither noted */
        ASSERT_TRUE(!touched[0] && touched[1] && !touched[2] && touched[3] && !touched[4]);
        free(roots);
        ASSERT_EQ(reach_scan_written_roots(pages, 0, blocks, 5, keep_out, NULL, &roots, &n), 0);
        ASSERT_EQ(n, 0u);
        free(roots);
}

int main(void)
{
        static const struct unit_test tests[] = {
                TEST(globals_stacks_and_lost_blocks_are_told_apart),
                TEST(what_a_reachable_block_points_to_is_reachable),
                TEST(a_lost_cycle_has_one_definitely_lost_leader),
                TEST(only_aligned_words_and_addresses_inside_count),
                TEST(unreadable_blocks_are_classified_and_reach_nothing),
                TEST(a_root_is_read_up_to_where_it_stops_being_readable),
                TEST(registers_are_roots),
                TEST(a_pointer_to_the_next_chunk_header_is_not_a_reference),
                TEST(a_scan_that_runs_out_of_time_stops),
                TEST(a_scan_cut_short_is_a_partial_verdict),
                TEST(batched_reads_give_the_same_classes),
                TEST(a_traced_process_roots_are_its_memory_outside_the_allocators),
                TEST(an_attached_process_roots_include_the_memory_between_its_blocks),
                TEST(a_sparse_heap_is_marked_as_a_full_search_marks_it),
                TEST(a_dense_heap_is_marked_as_a_full_search_marks_it),
                TEST(a_heap_swept_in_batches_with_roots_between_is_marked_as_a_full_search_marks_it),
                TEST(blocks_side_by_side_are_read_a_chunk_at_a_time),
                TEST(chains_in_random_order_are_read_in_fewer_sweeps_than_levels),
                TEST(a_mark_in_steps_follows_pointers_moved_between_them),
                TEST(a_mark_in_steps_cut_short_goes_on_at_the_next_call),
                TEST(a_mark_cut_anywhere_and_resumed_gives_the_classes_of_one_uncut),
                TEST(written_pages_are_roots_less_the_blocks_kept_out),
        };
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
