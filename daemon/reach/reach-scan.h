/* SPDX-License-Identifier: GPL-2.0-only */
/* A reachability scan of a stopped process, of a snapshot's copy, or of a running process whose
 * writes meanwhile are read again (write-tracker.h): its roots (writable mappings that hold no
 * block, its threads' stacks from their stack pointers, their registers), its outstanding blocks
 * from the BPF maps, the mark (reachability.h), and what it found summed per stack. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "macro.h"
#include "proc-maps.h"
#include "reachability.h"
#include "stack-collect.h"
#include "process-stop.h"
#include "process-snapshot.h"

struct memleak_bpf;

/* Below a thread's stack pointer, the x86_64 ABI's red zone: a leaf function's live locals. */
#define REACH_STACK_RED_ZONE 128

struct reach_tally {
        uint64_t bytes;
        uint64_t allocs;
};

struct reach_stack {
        int64_t stack_id;
        struct reach_tally by_class[_REACHABILITY_MAX];
};

/* How the memory scanned was had. */
enum reach_method {
        REACH_METHOD_EXIT = 0,          /* held at its exit (memleakctl run) */
        REACH_METHOD_SNAPSHOT,          /* a copy-on-write copy, made in a short freeze */
        REACH_METHOD_STOPPED,           /* stopped all along the scan (no copy could be made) */
        REACH_METHOD_CONCURRENT,        /* read while it ran, the pages it wrote meanwhile read
                                         * again in a short final stop (write-tracker.h) */
        _REACH_METHOD_MAX,
};

const char *reach_scan_method_to_string(enum reach_method m);

/* A snapshot scan's own bound: the process runs on meanwhile; its copy is what waits. */
#define REACH_SNAPSHOT_MAX_SCAN_MS (10ULL * 60 * 1000)

struct reach_result {
        int error;                      /* 0; or -errno: no classes (message says why) */
        char *message;
        char *partial;                  /* classes given, but the scan was cut short: why */
        char *no_snapshot;              /* a live scan stopped the process: why no snapshot */
        char *no_concurrent;            /* a live scan not made concurrently: why */
        uint32_t rounds;                /* a concurrent scan's: its passes over written pages */
        uint64_t written_bytes;         /* a concurrent scan's: the pages written meanwhile, read again */
        enum reach_method method;
        bool copy_reaped;               /* a snapshot's copy: the process waited for it */
        bool at_exit;                   /* held at its exit (memleakctl run), not stopped live */
        bool traced_from_start;         /* every block it allocated is known (memleakctl run); else
                                         * what lies between them was read as roots too */
        uint64_t scanned_at_usec;       /* CLOCK_REALTIME */
        uint64_t paused_usec;           /* how long the process was stopped, in all */
        uint64_t longest_pause_usec;    /* of which its longest stop */
        uint32_t last_stops;            /* a concurrent scan's: its last stops (more than one when one
                                         * would have passed its budget: the process let go, another
                                         * round, a stop again) */
        uint64_t scan_usec;
        uint64_t mark_usec;             /* of which the mark: reading memory, following pointers */
        uint64_t mark_cpu_usec;         /* the CPU time the mark took (the rest: waiting for one) */
        uint32_t threads;               /* whose registers and stacks were roots */
        uint64_t roots_bytes;           /* the roots' extent */
        uint64_t blocks_overlapping;    /* records whose address fell inside another's (left out) */
        uint64_t blocks_after;          /* allocated after the snapshot was taken (left out) */
        uint64_t blocks_freed;          /* a stopped scan's: freed by the time it ended (left out) */
        uint64_t blocks_bytes;          /* the blocks' extent (those scanned for) */
        struct reach_stats stats;
        struct reach_tally totals[_REACHABILITY_MAX];
        struct reach_stack *stacks;     /* sorted by stack_id */
        size_t n_stacks;
};

void reach_scan_result_free(struct reach_result *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct reach_result *, reach_scan_result_free)
/* A deep copy: -ENOMEM. */
int reach_scan_result_copy(const struct reach_result *r, struct reach_result **ret);
const struct reach_stack *reach_scan_result_find(const struct reach_result *r, int64_t stack_id);

/* The roots of a process (pure): each thread's stack from its stack pointer (less the red zone) to
 * the end of its mapping; every other readable, writable mapping that is private or anonymous
 * and no device's, when it holds no block; when it holds blocks: for a process traced from its
 * start (traced_from_start), what lies outside chunks if each of its blocks is one (blocks with a
 * mapping of their own, which the kernel merged with it; not [heap]), else nothing of it; for a
 * process attached while it ran, what lies between its blocks (blocks allocated before the attach
 * are there). blocks and chunks sorted by address. -ENOMEM. */
int reach_scan_roots_select(const struct proc_maps *maps, const struct thread_state *threads, size_t n_threads,
                            const struct reach_block *blocks, size_t n_blocks, const struct reach_block *chunks,
                            size_t n_chunks, bool traced_from_start, struct reach_root **ret, size_t *ret_n);

/* Scan pid, whose threads[] the caller stopped (their registers read) at paused_from_usec
 * (CLOCK_MONOTONIC), reading its memory through thread reader (one that still has it: at exit, the
 * leader may not; for a snapshot, its copy), giving up max_pause_ms after paused_from_usec. Fills
 * ret (error and message set when it could not start, partial when it was cut short: the classes
 * then hold what it decided, the rest undecided); traced_from_start: memleakd saw every allocation
 * it made (memleakctl run), else it was attached while it ran. -ENOMEM only. */
int reach_scan(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid, pid_t reader,
               const struct thread_state *threads, size_t n_threads, uint64_t paused_from_usec,
               uint64_t max_pause_ms, bool traced_from_start, struct reach_result *ret);

/* Roots from written pages (pure; pages sorted and apart): each page less the blocks (sorted and
 * apart) with keep_out[i] set, and for those, touched[i] set (NULL: not kept). What a concurrent
 * scan reads again. -ENOMEM. */
int reach_scan_written_roots(const struct reach_span *pages, size_t n_pages, const struct reach_block *blocks,
                             size_t n_blocks, const bool *keep_out, bool *touched, struct reach_root **ret,
                             size_t *ret_n);

/* Scan the running process pid: concurrently (REACH_METHOD_CONCURRENT, each stop within
 * concurrent_stop_ms, unless it is 0 or the process cannot be watched: no_concurrent says why),
 * else a snapshot taken (process-snapshot.h), the process let go at once, the copy scanned at
 * leisure; where no snapshot can be taken, the process stopped all along, for at most
 * max_pause_ms (a partial verdict past it), unless snapshot_only (then no classes, and the message
 * says why there was no snapshot). *ret says what it found, or why it could not (its error and
 * message); -ENOMEM only. */
int reach_scan_live(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid, uint64_t max_pause_ms,
                    uint64_t concurrent_stop_ms, bool snapshot_only, bool traced_from_start,
                    struct reach_result **ret);
