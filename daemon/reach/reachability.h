/* SPDX-License-Identifier: GPL-2.0-only */
/* Which outstanding blocks nothing points to (pure): the conservative mark LeakSanitizer and
 * valgrind's memcheck do, on memory read from a stopped process through a callback. Every aligned
 * 8-byte word of the roots (writable segments, thread stacks, registers) that holds an address
 * inside a block (its start or any byte of it) reaches that block, and every block reached is
 * scanned in turn. What is not reached is lost: "indirectly" when another lost block points to
 * it, "definitely" otherwise; a cycle of lost blocks has one definitely lost block (the first in
 * address order, as memcheck's clique leader) and the rest indirectly lost.
 *
 * One word is not a reference: the address glibc's malloc keeps the next chunk's header at, the
 * last bytes of a block whose size fills its chunk (main_arena's top and bins point there, at free
 * memory, not into the block). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum reachability {
        REACHABILITY_STILL_REACHABLE = 0,
        REACHABILITY_DEFINITELY_LOST,
        REACHABILITY_INDIRECTLY_LOST,
        REACHABILITY_UNDECIDED,                 /* a scan cut short did not reach it (yet) */
        _REACHABILITY_MAX,
};

const char *reachability_to_string(enum reachability r);

/* An outstanding block. */
struct reach_block {
        uint64_t addr;
        uint64_t size;
};

/* A root: memory that is live by definition. */
struct reach_root {
        uint64_t addr;
        uint64_t size;
};

/* Reads up to len bytes at addr of the process into buf: how many it read from addr on (short,
 * or 0, where the memory stops being readable), or -errno. */
typedef ssize_t (*reach_read_fn)(void *userdata, uint64_t addr, void *buf, size_t len);
/* Reads n spans of the process, one after the other, into buf: how many bytes it read from the
 * first on (short where a span could not be read whole: it and the spans after it count as not
 * read), or -errno.
 * One call for many small blocks (read in a few large reads where they lie close together). */
struct reach_span {
        uint64_t addr;
        uint64_t len;
};
typedef ssize_t (*reach_read_many_fn)(void *userdata, const struct reach_span *spans, size_t n, void *buf);
#define REACH_READ_MANY_MAX 1024
/* Whether the scan ran out of time (checked between reads). */
typedef bool (*reach_expired_fn)(void *userdata);

struct reach_input {
        const struct reach_block *blocks;       /* sorted by addr, not overlapping */
        size_t n_blocks;
        const struct reach_root *roots;
        size_t n_roots;
        const uint64_t *root_words;             /* values that are roots themselves: registers */
        size_t n_root_words;
        reach_read_fn read;
        reach_read_many_fn read_many;           /* NULL: read() each block */
        reach_expired_fn expired;               /* NULL: no limit */
        void *userdata;
};

struct reach_stats {
        uint64_t bytes_scanned;                 /* roots and blocks read */
        uint64_t bytes_unreadable;              /* roots and blocks that could not be read */
        uint64_t blocks_unreadable;             /* blocks not (wholly) read: they reach nothing */
        uint64_t words_filtered;                /* words no block can hold, ruled out at once */
        uint64_t words_looked_up;               /* words searched for among the blocks */
        uint64_t words_settled;                 /* words into memory whose blocks were all reached
                                                 * already: nothing new to find, not searched */
};

/* The glibc chunk-header address in a block of size bytes at addr that is not a reference. */
uint64_t reachability_chunk_header_slot(uint64_t addr, uint64_t size);

/* ret[i] is blocks[i]'s class. Returns 0, -ENOMEM, -E2BIG for 2^32 blocks or more, or -ETIME
 * when in->expired said so: ret is then a partial verdict, each block reached from the roots so
 * far still reachable (that holds whatever the rest of the scan finds), every other one
 * undecided. stats may be NULL.
 *
 * Before any search among the blocks a word is ruled out when it lies below the first block or
 * past the end of the last, or on a page (of a coarse grid over that span) that holds no block.
 * A word that passes is searched for only among the blocks that start in its cell of an index
 * over the span (about two cells a block, 16 bytes at the finest), and the one before; words are
 * looked up 16 at a time, their cache misses overlapped.
 *
 * The blocks reached are read in sweeps in address order (with the roots, in the first), those
 * close together in one read_many call: a block reached during a sweep above the last one it took
 * is scanned in that sweep, one below it in the next. */
int reachability_classify(const struct reach_input *in, enum reachability *ret, struct reach_stats *stats);

/* The same mark in steps, for a process that runs on between them (reach-concurrent): roots
 * added as they come (reachability_marker_add: what they reach, and what that reaches, is still
 * reachable, and stays so), the blocks not reached classified at the end. The blocks and reading
 * functions of in are kept (they must outlive the marker); its roots and root words are not used.
 * -ENOMEM, -E2BIG as reachability_classify. */
struct reach_marker;
int reachability_marker_new(const struct reach_input *in, struct reach_marker **ret);
void reachability_marker_free(struct reach_marker *m);
/* Scan n_roots ranges and n_words words as roots, and follow what they reach, after what earlier
 * calls cut short left. -ETIME when in->expired said so: the work left is kept (the blocks reached
 * and not scanned yet, those half scanned from their start; the roots not read whole, copied), and
 * the next call goes on with it first, so a mark cut and resumed at any point reaches what one
 * uncut does. -ENOMEM. */
int reachability_marker_add(struct reach_marker *m, const struct reach_root *roots, size_t n_roots,
                            const uint64_t *words, size_t n_words);
/* The same, but roots not read when the time runs out are dropped, not kept: memory read again
 * at each call (a stopped process's stacks, from their stack pointers then), whose old contents
 * would be stale later. What they reached before the cut stays reached, and is followed. */
int reachability_marker_add_transient(struct reach_marker *m, const struct reach_root *roots, size_t n_roots,
                                      const uint64_t *words, size_t n_words);
/* Whether the last call ran to its end, nothing left to scan. */
bool reachability_marker_done(const struct reach_marker *m);
/* Whether blocks[i] was reached so far. */
bool reachability_marker_reached(const struct reach_marker *m, size_t i);
void reachability_marker_stats(const struct reach_marker *m, struct reach_stats *ret);
/* The classes, as reachability_classify's (the blocks not reached are lost; a marker whose last
 * call was cut short leaves them undecided: -ETIME). The last call on m but
 * reachability_marker_free(). */
int reachability_marker_classify(struct reach_marker *m, enum reachability *ret, struct reach_stats *stats);
