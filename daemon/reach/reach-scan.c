/* SPDX-License-Identifier: GPL-2.0-only */
/* A reachability scan of a stopped, copied or running process, summed per stack. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include "macro.h"
#include "reach-scan.h"
#include "seccomp-check.h"
#include "string-table.h"
#include "proc-status.h"
#include "util.h"
#include "write-tracker.h"

static const char *const reach_scan_method_table[_REACH_METHOD_MAX] = {
        [REACH_METHOD_EXIT] = "exit",
        [REACH_METHOD_SNAPSHOT] = "snapshot",
        [REACH_METHOD_STOPPED] = "stopped",
        [REACH_METHOD_CONCURRENT] = "concurrent",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(reach_scan_method, enum reach_method);

void reach_scan_result_free(struct reach_result *r)
{
        if (!r)
                return;
        free(r->message);
        free(r->partial);
        free(r->no_snapshot);
        free(r->no_concurrent);
        free(r->stacks);
        free(r);
}

int reach_scan_result_copy(const struct reach_result *r, struct reach_result **ret)
{
        _cleanup_free_ struct reach_result *c = malloc(sizeof(*c));

        assert(r);
        assert(ret);
        if (!c)
                return -ENOMEM;
        *c = *r;
        c->message = NULL;
        c->partial = NULL;
        c->no_snapshot = NULL;
        c->no_concurrent = NULL;
        c->stacks = NULL;
        if ((r->message && !(c->message = strdup(r->message))) ||
            (r->partial && !(c->partial = strdup(r->partial))) ||
            (r->no_snapshot && !(c->no_snapshot = strdup(r->no_snapshot))) ||
            (r->no_concurrent && !(c->no_concurrent = strdup(r->no_concurrent)))) {
                free(c->message);
                free(c->partial);
                free(c->no_snapshot);
                free(c->no_concurrent);
                return -ENOMEM;
        }
        if (r->n_stacks > 0) {
                c->stacks = calloc(r->n_stacks, sizeof(*c->stacks));
                if (!c->stacks) {
                        free(c->message);
                        free(c->partial);
                        free(c->no_snapshot);
                        free(c->no_concurrent);
                        return -ENOMEM;
                }
                memcpy(c->stacks, r->stacks, r->n_stacks * sizeof(*c->stacks));
        }
        *ret = TAKE_PTR(c);
        return 0;
}

const struct reach_stack *reach_scan_result_find(const struct reach_result *r, int64_t stack_id)
{
        size_t lo = 0, hi = r ? r->n_stacks : 0;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (r->stacks[mid].stack_id == stack_id)
                        return &r->stacks[mid];
                if (r->stacks[mid].stack_id < stack_id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

/* The index of the first of the sorted ranges (blocks, or chunks) that starts at addr or above;
 * n when none does. */
static size_t first_range_from(const struct reach_block *ranges, size_t n, uint64_t addr)
{
        size_t lo = 0, hi = n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (ranges[mid].addr < addr)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

/* [*first, *last): the indexes of the sorted ranges that start in e. */
static void ranges_in(const struct reach_block *ranges, size_t n, const struct map_entry *e, size_t *first,
                      size_t *last)
{
        *first = first_range_from(ranges, n, e->start);
        *last = first_range_from(ranges, n, e->end);
}

/* Memory a pointer to the heap may live in: writable, not a device's, not a file shared with
 * other processes (reading it may block on the file, and what it holds is theirs too). */
static bool may_hold_roots(const struct map_entry *e)
{
        if (e->perms[0] != 'r' || e->perms[1] != 'w')
                return false;
        if (e->path && strncmp(e->path, "/dev/", 5) == 0 && strcmp(e->path, "/dev/zero") != 0)
                return false;
        if (e->perms[3] == 's' && e->path && strcmp(e->path, "/dev/zero") != 0 && strncmp(e->path, "/SYSV", 5) != 0)
                return false;
        return true;
}

/* What of e lies outside ranges[first .. last) (sorted, starting in e), as roots added to
 * roots[*n]. */
static void add_roots_outside(const struct map_entry *e, const struct reach_block *ranges, size_t first, size_t last,
                              struct reach_root *roots, size_t *n)
{
        uint64_t from = e->start;

        for (size_t i = first; i < last; i++) {
                if (ranges[i].addr > from)
                        roots[(*n)++] = (struct reach_root) { .addr = from, .size = ranges[i].addr - from };
                from = MAX(from, MIN(ranges[i].addr + ranges[i].size, e->end));
        }
        if (from < e->end)
                roots[(*n)++] = (struct reach_root) { .addr = from, .size = e->end - from };
}

/* The roots of e, a mapping that may hold them, whose tracked blocks are blocks[first .. last),
 * added to roots[*n]:
 * - none there: all of it;
 * - attached while it ran: blocks memleakd never saw allocated lie anywhere the tracked ones do,
 *   so what lies between those is a root (free memory too: its stale pointers may keep a lost
 *   block reachable);
 * - traced from its start: the mapping is the allocator's (its free chunks hold stale pointers:
 *   no roots), unless each of its blocks has a mapping of its own (one of chunks), which the kernel
 *   merged with its neighbours (glibc's big blocks next to Python's pymalloc arenas, say): then
 *   what lies outside those chunks is the program's memory, and a root. */
static void add_roots_of(const struct map_entry *e, const struct reach_block *blocks, size_t first, size_t last,
                         const struct reach_block *chunks, size_t n_chunks, bool traced_from_start,
                         struct reach_root *roots, size_t *n)
{
        size_t chunk_first, chunk_last;

        if (first == last) {
                roots[(*n)++] = (struct reach_root) { .addr = e->start, .size = e->end - e->start };
                return;
        }
        if (!traced_from_start) {
                add_roots_outside(e, blocks, first, last, roots, n);
                return;
        }
        if (e->path && strcmp(e->path, "[heap]") == 0)
                return;
        ranges_in(chunks, n_chunks, e, &chunk_first, &chunk_last);
        if (chunk_last - chunk_first == last - first)
                add_roots_outside(e, chunks, chunk_first, chunk_last, roots, n);
}

static const struct map_entry *mapping_of(const struct proc_maps *maps, uint64_t addr)
{
        for (size_t i = 0; i < maps->n; i++)
                if (addr >= maps->entries[i].start && addr < maps->entries[i].end)
                        return &maps->entries[i];
        return NULL;
}

int reach_scan_roots_select(const struct proc_maps *maps, const struct thread_state *threads, size_t n_threads,
                            const struct reach_block *blocks, size_t n_blocks, const struct reach_block *chunks,
                            size_t n_chunks, bool traced_from_start, struct reach_root **ret, size_t *ret_n)
{
        _cleanup_free_ struct reach_root *roots = calloc(maps->n * 2 + n_threads + n_chunks + n_blocks + 1,
                                                         sizeof(*roots));
        _cleanup_free_ bool *is_stack = calloc(maps->n + 1, sizeof(*is_stack));
        size_t n = 0;

        assert(maps);
        assert(ret);
        assert(ret_n);
        if (!roots || !is_stack)
                return -ENOMEM;
        for (size_t i = 0; i < n_threads; i++) {
                const struct map_entry *e;
                uint64_t from;

                if (!threads[i].has_regs)
                        continue;
                e = mapping_of(maps, threads[i].sp);
                if (!e || e->perms[0] != 'r')
                        continue;
                from = MAX(e->start, threads[i].sp - MIN(threads[i].sp, (uint64_t)REACH_STACK_RED_ZONE));
                is_stack[e - maps->entries] = true;
                roots[n++] = (struct reach_root) { .addr = from, .size = e->end - from };
        }
        for (size_t i = 0; i < maps->n; i++) {
                const struct map_entry *e = &maps->entries[i];
                size_t first, last;

                if (is_stack[i] || !may_hold_roots(e))
                        continue;
                ranges_in(blocks, n_blocks, e, &first, &last);
                add_roots_of(e, blocks, first, last, chunks, n_chunks, traced_from_start, roots, &n);
        }
        *ret = TAKE_PTR(roots);
        *ret_n = n;
        return 0;
}

/* The process's memory is read through /proc/PID/mem: process_vm_readv pins the pages it reads,
 * and pinning a page a snapshot's copy shares with the process (copy on write) copies it first
 * (the kernel's unshare for a pinned anonymous page): the whole heap duplicated, at a tenth of the
 * speed. A read of /proc/PID/mem takes a page without pinning it. */
struct reader {
        int mem_fd;
        uint64_t deadline_usec;
        uint8_t *scratch;               /* READ_SCRATCH_BYTES */
        size_t order[REACH_READ_MANY_MAX];
};

/* Spans apart by at most this are read in one go, what lies between them read and dropped. */
#define READ_GAP_BYTES 4096
#define READ_SCRATCH_BYTES (1024 * 1024)

static ssize_t read_process(void *userdata, uint64_t addr, void *buf, size_t len)
{
        const struct reader *r = userdata;
        ssize_t n;

        if (addr > INT64_MAX || len > (size_t)INT64_MAX - addr)
                return -EFAULT;
        do
                n = pread(r->mem_fd, buf, len, (off_t)addr);
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : n;
}

static int by_span_addr(const void *a, const void *b, void *userdata)
{
        const struct reach_span *spans = userdata;
        uint64_t x = spans[*(const size_t *)a].addr, y = spans[*(const size_t *)b].addr;

        return x < y ? -1 : x > y;
}

/* The spans in address order, those close together read in one pread into scratch and copied to
 * their place in buf: how many bytes of buf, from the first span on, were read whole. */
static ssize_t read_process_many(void *userdata, const struct reach_span *spans, size_t n, void *buf)
{
        struct reader *r = userdata;
        _cleanup_free_ uint64_t *offset = calloc(n + 1, sizeof(*offset));
        _cleanup_free_ bool *ok = calloc(n + 1, sizeof(*ok));
        uint64_t done = 0;

        assert(n <= REACH_READ_MANY_MAX);
        if (!offset || !ok)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                offset[i + 1] = offset[i] + spans[i].len;
                r->order[i] = i;
        }
        /* the marker asks in address order: sorted already, mostly */
        for (size_t i = 1; i < n; i++)
                if (spans[i].addr < spans[i - 1].addr) {
                        qsort_r(r->order, n, sizeof(r->order[0]), by_span_addr, (void *)spans);
                        break;
                }
        for (size_t i = 0; i < n; ) {
                const struct reach_span *first = &spans[r->order[i]];
                uint64_t from = first->addr, to = first->addr + first->len;
                size_t j = i + 1;
                ssize_t got;

                while (j < n) {
                        const struct reach_span *next = &spans[r->order[j]];
                        uint64_t end = MAX(to, next->addr + next->len);

                        if (next->addr > to + READ_GAP_BYTES || end - from > READ_SCRATCH_BYTES)
                                break;
                        to = end;
                        j++;
                }
                if (to - from > READ_SCRATCH_BYTES) {
                        /* one span alone bigger than scratch (the caller keeps them smaller) */
                        got = read_process(r, from, (uint8_t *)buf + offset[r->order[i]], to - from);
                        ok[r->order[i]] = got == (ssize_t)(to - from);
                        i = j;
                        continue;
                }
                got = read_process(r, from, r->scratch, to - from);
                for (size_t k = i; k < j; k++) {
                        const struct reach_span *sp = &spans[r->order[k]];

                        if (got >= 0 && sp->addr + sp->len - from <= (uint64_t)got) {
                                memcpy((uint8_t *)buf + offset[r->order[k]], r->scratch + (sp->addr - from), sp->len);
                                ok[r->order[k]] = true;
                        }
                }
                i = j;
        }
        while (done < n && ok[done])
                done++;
        return (ssize_t)offset[done];
}

static int reader_open(pid_t tid, uint64_t deadline_usec, struct reader *ret)
{
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
        ret->deadline_usec = deadline_usec;
        ret->scratch = malloc(READ_SCRATCH_BYTES);
        if (!ret->scratch)
                return -ENOMEM;
        ret->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (ret->mem_fd < 0) {
                free(ret->scratch);
                ret->scratch = NULL;
                return errno == ENOENT ? -ESRCH : -errno;
        }
        return 0;
}

static void reader_close(struct reader *r)
{
        if (r->mem_fd >= 0)
                close(r->mem_fd);
        free(r->scratch);
        *r = (struct reader) { .mem_fd = -1 };
}

/* glibc serves a block of its mmap threshold (128 KiB and up) from a mapping of its own: the
 * chunk starts 16 bytes before the block, on a page, its size word (8 bytes before the block) a
 * whole number of pages marked IS_MMAPPED. Such blocks' chunks, sorted, in *ret: another
 * allocator's blocks are not laid out so. -ENOMEM only. */
#define GLIBC_CHUNK_HEADER_BYTES 16
#define GLIBC_CHUNK_IS_MMAPPED 0x2ull
#define GLIBC_CHUNK_FLAGS 0x7ull

static int find_mmapped_chunks(const struct reach_block *blocks, size_t n, struct reader *rd,
                               struct reach_block **ret, size_t *ret_n)
{
        _cleanup_free_ struct reach_block *chunks = calloc(MAX(n, (size_t)1), sizeof(*chunks));
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
        size_t k = 0;

        if (!chunks)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                uint64_t start = blocks[i].addr - GLIBC_CHUNK_HEADER_BYTES, word, size;

                if (blocks[i].addr % page != GLIBC_CHUNK_HEADER_BYTES ||
                    read_process(rd, blocks[i].addr - sizeof(word), &word, sizeof(word)) != sizeof(word))
                        continue;
                size = word & ~GLIBC_CHUNK_FLAGS;
                if (!(word & GLIBC_CHUNK_IS_MMAPPED) || size % page != 0 ||
                    size < blocks[i].size + GLIBC_CHUNK_HEADER_BYTES)
                        continue;
                chunks[k++] = (struct reach_block) { .addr = start, .size = size };
        }
        *ret = TAKE_PTR(chunks);
        *ret_n = k;
        return 0;
}

static uint64_t thread_cpu_usec(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
                return 0;
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static bool past_deadline(void *userdata)
{
        return now_monotonic_usec() >= ((const struct reader *)userdata)->deadline_usec;
}

static int fail(struct reach_result *ret, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct reach_result *ret, int error, const char *fmt, ...)
{
        va_list ap;

        ret->error = error;
        va_start(ap, fmt);
        if (vasprintf(&ret->message, fmt, ap) < 0)
                ret->message = NULL;
        va_end(ap);
        return 0;
}

static int by_stack_then_addr(const void *a, const void *b)
{
        const struct outstanding_block *x = *(const struct outstanding_block *const *)a;
        const struct outstanding_block *y = *(const struct outstanding_block *const *)b;

        if (x->stack_id != y->stack_id)
                return x->stack_id < y->stack_id ? -1 : 1;
        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* What the mark found, per stack. */
static int tally(const struct outstanding_block *blocks, const enum reachability *classes, size_t n,
                 struct reach_result *ret)
{
        _cleanup_free_ const struct outstanding_block **order = calloc(MAX(n, (size_t)1), sizeof(*order));
        struct reach_stack *shrunk;

        if (!order)
                return -ENOMEM;
        ret->stacks = calloc(MAX(n, (size_t)1), sizeof(*ret->stacks));
        if (!ret->stacks)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                order[i] = &blocks[i];
        qsort(order, n, sizeof(*order), by_stack_then_addr);
        for (size_t i = 0; i < n; i++) {
                const struct outstanding_block *b = order[i];
                enum reachability c = classes[b - blocks];
                struct reach_stack *s;

                if (ret->n_stacks == 0 || ret->stacks[ret->n_stacks - 1].stack_id != b->stack_id)
                        ret->stacks[ret->n_stacks++] = (struct reach_stack) { .stack_id = b->stack_id };
                s = &ret->stacks[ret->n_stacks - 1];
                s->by_class[c].bytes += b->size;
                s->by_class[c].allocs++;
                ret->totals[c].bytes += b->size;
                ret->totals[c].allocs++;
        }
        /* kept as long as its target: one entry per stack, not per block */
        shrunk = realloc(ret->stacks, MAX(ret->n_stacks, (size_t)1) * sizeof(*ret->stacks));
        if (shrunk)
                ret->stacks = shrunk;
        return 0;
}

/* A scan's blocks: pid's outstanding blocks, apart, sorted by address; their classes once marked. */
struct scan_blocks {
        struct outstanding_block *found;
        struct reach_block *blocks;
        enum reachability *classes;
        size_t n;
};

static void scan_blocks_done(struct scan_blocks *b)
{
        free(b->found);
        free(b->blocks);
        free(b->classes);
        *b = (struct scan_blocks) {};
}

/* Read pid's blocks from the BPF maps into *ret; taken_at_ns: a snapshot's time (CLOCK_MONOTONIC),
 * the blocks allocated after it left out; 0 for none. -ENOMEM; other failures in res->error. */
static int collect(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid, uint64_t taken_at_ns,
                   struct scan_blocks *ret, struct reach_result *res)
{
        struct outstanding_block *found = NULL;
        size_t n_found = 0, n = 0;
        int r;

        r = stack_collect_blocks(skel, lim, pid, &found, &n_found);
        if (r < 0)
                return r == -ENOMEM ? r : fail(res, r, "cannot read its allocations from the BPF map: %s",
                                                strerror(-r));
        ret->found = found;
        /* records that overlap an earlier one (a free memleakd missed, then the address reused
         * inside it) are left out: the mark needs blocks apart */
        ret->blocks = calloc(MAX(n_found, (size_t)1), sizeof(*ret->blocks));
        ret->classes = calloc(MAX(n_found, (size_t)1), sizeof(*ret->classes));
        if (!ret->blocks || !ret->classes)
                return -ENOMEM;
        res->blocks_bytes = 0;
        for (size_t i = 0; i < n_found; i++) {
                if (taken_at_ns && found[i].timestamp_ns > taken_at_ns) {
                        res->blocks_after++;
                        continue;
                }
                if (n > 0 && found[i].addr - ret->blocks[n - 1].addr < ret->blocks[n - 1].size) {
                        res->blocks_overlapping++;
                        continue;
                }
                found[n] = found[i];
                ret->blocks[n++] = (struct reach_block) { .addr = found[i].addr, .size = found[i].size };
                res->blocks_bytes += found[i].size;
        }
        ret->n = n;
        return 0;
}

/* Mark b's blocks in pid's memory, read through reader, whose threads[] were stopped at
 * paused_from_usec: up to max_pause_ms after it; stopped says the process waits meanwhile (the
 * limit is its pause). -ENOMEM; other failures in ret->error. */
static int mark(pid_t reader, const struct thread_state *threads, size_t n_threads, uint64_t paused_from_usec,
                uint64_t max_pause_ms, bool stopped, bool traced_from_start, struct scan_blocks *b,
                struct reach_result *ret)
{
        _cleanup_free_ struct reach_root *roots = NULL;
        _cleanup_free_ struct reach_block *chunks = NULL;
        _cleanup_(proc_maps_done) struct proc_maps maps = {};
        _cleanup_free_ uint64_t *words = calloc(MAX(n_threads, (size_t)1) * THREAD_REGS_WORDS, sizeof(*words));
        _cleanup_(reader_close) struct reader rd = { .mem_fd = -1 };
        size_t n_roots = 0, n_words = 0, n_chunks = 0;
        uint64_t started, cpu_started;
        char path[64];
        int r;

        if (!words)
                return -ENOMEM;
        r = reader_open(reader, paused_from_usec + max_pause_ms * 1000, &rd);
        if (r < 0)
                return r == -ENOMEM ? r : fail(ret, r, "cannot open the memory of pid %d: %s", (int)reader,
                                                strerror(-r));
        snprintf(path, sizeof(path), "/proc/%d/task/%d/maps", (int)reader, (int)reader);
        r = proc_maps_parse_file(path, &maps);
        if (r < 0)
                return r == -ENOMEM ? r : fail(ret, r, "cannot read %s: %s", path, strerror(-r));
        r = find_mmapped_chunks(b->blocks, b->n, &rd, &chunks, &n_chunks);
        if (r < 0)
                return r;
        ret->traced_from_start = traced_from_start;
        r = reach_scan_roots_select(&maps, threads, n_threads, b->blocks, b->n, chunks, n_chunks, traced_from_start,
                                    &roots, &n_roots);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_roots; i++)
                ret->roots_bytes += roots[i].size;
        for (size_t i = 0; i < n_threads; i++)
                if (threads[i].has_regs) {
                        memcpy(words + n_words, threads[i].regs, sizeof(threads[i].regs));
                        n_words += THREAD_REGS_WORDS;
                        ret->threads++;
                }
        started = now_monotonic_usec();
        cpu_started = thread_cpu_usec();
        r = reachability_classify(&(struct reach_input) {
                        .blocks = b->blocks, .n_blocks = b->n, .roots = roots, .n_roots = n_roots,
                        .root_words = words, .n_root_words = n_words,
                        .read = read_process, .read_many = read_process_many, .expired = past_deadline,
                        .userdata = &rd,
                }, b->classes, &ret->stats);
        ret->mark_usec = now_monotonic_usec() - started;
        ret->mark_cpu_usec = thread_cpu_usec() - cpu_started;
        if (r < 0 && r != -ETIME)
                return r;
        if (r == -ETIME &&
            asprintf(&ret->partial, "the scan stopped at its limit of %" PRIu64 " ms%s, %.1f of up to %.1f MiB "
                     "read: the blocks it reached are still reachable, the others undecided", max_pause_ms,
                     stopped ? " with the process stopped (reachability_max_pause_ms in memleakd.conf)" : "",
                     (double)ret->stats.bytes_scanned / (1 << 20),
                     (double)(ret->roots_bytes + ret->blocks_bytes) / (1 << 20)) < 0) {
                ret->partial = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* Collect, mark and tally, all in one go: a process held (at its exit) or a snapshot's copy. */
static int scan_stopped(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid, pid_t reader,
                        const struct thread_state *threads, size_t n_threads, uint64_t paused_from_usec,
                        uint64_t max_pause_ms, bool stopped, bool traced_from_start, uint64_t taken_at_ns,
                        struct reach_result *ret)
{
        _cleanup_(scan_blocks_done) struct scan_blocks b = {};
        uint64_t started = now_monotonic_usec();
        int r;

        assert(ret);
        ret->scanned_at_usec = now_realtime_usec();
        r = collect(skel, lim, pid, taken_at_ns, &b, ret);
        if (r < 0 || ret->error)
                return r;
        r = mark(reader, threads, n_threads, paused_from_usec, max_pause_ms, stopped, traced_from_start, &b, ret);
        ret->scan_usec = now_monotonic_usec() - started;
        if (r < 0 || ret->error)
                return r;
        return tally(b.found, b.classes, b.n, ret);
}

int reach_scan(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid, pid_t reader,
               const struct thread_state *threads, size_t n_threads, uint64_t paused_from_usec,
               uint64_t max_pause_ms, bool traced_from_start, struct reach_result *ret)
{
        int r = scan_stopped(skel, lim, pid, reader, threads, n_threads, paused_from_usec, max_pause_ms, true,
                             traced_from_start, 0, ret);

        /* A scan's arrays (tens of bytes per outstanding block) are freed now: give the pages back,
         * or each arena that served a scan keeps its high-water mark for good. */
        (void)malloc_trim(0);
        return r;
}

/* The copy snap made, scanned against the registers of the freeze. */
static int scan_snapshot(struct memleak_bpf *skel, const struct map_limits *lim, const struct process_snapshot *snap,
                         bool traced_from_start, struct reach_result *ret)
{
        int r;

        ret->method = REACH_METHOD_SNAPSHOT;
        ret->paused_usec += snap->paused_usec;
        ret->longest_pause_usec = MAX(ret->longest_pause_usec, snap->paused_usec);
        r = scan_stopped(skel, lim, snap->pid, snap->copy, snap->threads, snap->n, now_monotonic_usec(),
                         REACH_SNAPSHOT_MAX_SCAN_MS, false, traced_from_start, snap->taken_at_ns, ret);
        (void)malloc_trim(0);
        return r;
}

/* Leave out of b the blocks that are no longer outstanding (the same address and time of
 * allocation) in now[] (sorted by address): those freed since b was read. */
static void drop_freed(struct scan_blocks *b, const struct outstanding_block *now, size_t n_now,
                       struct reach_result *ret)
{
        size_t k = 0, j = 0;

        for (size_t i = 0; i < b->n; i++) {
                while (j < n_now && now[j].addr < b->found[i].addr)
                        j++;
                if (j < n_now && now[j].addr == b->found[i].addr && now[j].timestamp_ns == b->found[i].timestamp_ns) {
                        b->found[k] = b->found[i];
                        b->classes[k++] = b->classes[i];
                } else
                        ret->blocks_freed++;
        }
        b->n = k;
}

/* No snapshot: every thread stopped along the mark, within max_pause_ms. The blocks are read
 * from BPF before the stop (a million take about 100 ms: not a pause of the process), and read
 * again after it lets the process go: those freed meanwhile are left out, or a block freed
 * between the two would pass for lost. */
static int scan_stopping(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid, uint64_t max_pause_ms,
                         bool traced_from_start, struct reach_result *ret)
{
        _cleanup_(scan_blocks_done) struct scan_blocks b = {};
        _cleanup_free_ struct outstanding_block *now = NULL;
        _cleanup_free_ char *error = NULL;
        struct process_stop stop = {};
        uint64_t started = now_monotonic_usec(), paused;
        size_t n_now = 0;
        int r;

        ret->method = REACH_METHOD_STOPPED;
        ret->scanned_at_usec = now_realtime_usec();
        r = collect(skel, lim, pid, 0, &b, ret);
        if (r < 0 || ret->error)
                return r;
        r = process_stop(pid, max_pause_ms, &stop, &error);
        if (r < 0) {
                if (r == -ENOMEM)
                        return r;
                return fail(ret, r, "cannot stop pid %d: %s", (int)pid, error ? error : strerror(-r));
        }
        r = mark(stop.threads[0].tid, stop.threads, stop.n, stop.stopped_usec, max_pause_ms, true, traced_from_start,
                 &b, ret);
        paused = process_stop_release(&stop);
        ret->paused_usec += paused;
        ret->longest_pause_usec = MAX(ret->longest_pause_usec, paused);
        ret->scan_usec = now_monotonic_usec() - started;
        (void)malloc_trim(0);
        if (r < 0 || ret->error)
                return r;
        r = stack_collect_blocks(skel, lim, pid, &now, &n_now);
        if (r < 0)
                return r == -ENOMEM ? r : fail(ret, r, "cannot read its allocations from the BPF map again: %s",
                                                strerror(-r));
        drop_freed(&b, now, n_now, ret);
        return tally(b.found, b.classes, b.n, ret);
}

/* The concurrent scan (REACH_METHOD_CONCURRENT): Boehm's "mostly parallel" mark, with the kernel's
 * write-protect as its dirty bits.
 *
 * 1. A short stop: the process made to create a userfaultfd, which we take or, where we may not
 *    (pidfd_getfd refused: a container's seccomp), leave in it, its thread making the calls in
 *    stops (write-tracker.h, uffd-handle.h); every private writable mapping registered; the threads
 *    let go, and those mappings watched (write-protected) from then on.
 * 2. Its blocks read from BPF (after the protection: a block allocated later is written later),
 *    the roots chosen and marked from, reading its memory while it runs.
 * 3. Rounds while it runs: the pages written since the last (write-protected again in the same
 *    walk) read again as roots, and what they reach marked; a mapping made since is watched (in
 *    a short stop where the process holds the userfaultfd) and read whole. While a round finds more written than the last stop could read again in a quarter
 *    of the pause limit, at the rate the mark read so far (settled_bytes()), another (at most
 *    CONCURRENT_MAX_ROUNDS): what the process writes between the last round and the last stop is
 *    what that stop reads.
 * 4. A last short stop: the pages written since the last round, the mappings that cannot be
 *    watched (shared ones: another process's writes leave no trace in ours) read whole, the
 *    threads' registers and stacks (from their stack pointers on, as a stopped scan reads them:
 *    never read again while it runs, what lies below a stack pointer being dead); the mark goes
 *    on to its end; the threads let go. The unreached blocks are
 *    classified after (nothing can write into a block nothing points to), once the userfaultfd
 *    is closed (held in the process: unregistered a piece at a time in short stops, as that
 *    clears every page's protection, then closed there).
 * 5. Unless the mark would pass the stop's budget (CONCURRENT_STOP_SHARE_PERCENT of the pause
 *    limit; the whole limit for the last of CONCURRENT_MAX_LAST_STOPS): then the stop is cut, the
 *    threads let go, the work left goes on while they run, and steps 3 and 4 are made again. So
 *    too when a thread does not stop within the pause limit (nothing read); when that is the last
 *    stop, nothing it would have read was, and the blocks not reached are undecided.
 *
 * Why every block reachable at the last stop (at T, the stop that ran to its end) is marked. Each
 * page read is read after the protection, and a write after any read of it clears its protection,
 * so it is in a later set of written pages, read again after that set was taken; the last one is
 * taken with every thread stopped. So the last read of each page read is what it holds at T. A
 * chain to a block at T starts at a register or a stack (read at T), or at a root mapping (read
 * whole at the start, or made since and read whole when found, or unwatchable and read whole at
 * T) and runs through blocks, each marked block read after it was marked and again with every
 * page of it written since: every link is seen as it is at T, so the chain is followed to its end.
 *
 * Why a stop cut short (at S, before T) changes none of that. What it took falls in two kinds:
 * - the written pages (and the blocks found changed): taken, and protected again, in the stop.
 *   Those it did not read are kept by the marker (its pending roots), and read after the process
 *   is let go: still after their protection, so a write after the read is in a later set, as for
 *   any round. The blocks it reached and had not scanned are kept too (the marker's stack) and
 *   scanned while it runs, each read after it was marked, as any block is.
 * - the registers, the stacks (from the stack pointers at S) and the mappings not watched: not
 *   protected, they may change after S unseen. They are not kept (reachability_marker_add_
 *   transient(): what was not read is dropped), and every stop reads them again whole, as they
 *   are then: at T, the last stop reads them all.
 * What S read and the process changed since can only have marked more: a block reached from a
 * register or a stack at S stays reached. So do blocks reachable at any moment of the scan that
 * were dropped before T (any concurrent mark keeps such "floating garbage"): a lost block may pass
 * for reachable, a reachable block never for lost. The blocks left out of written pages at S are
 * looked up again in each later stop (find_changed()), as in each round. And when the last stop is
 * cut too, the verdict is partial: the blocks reached are reachable, the others undecided.
 *
 * What a written page holds besides marked blocks: memory between blocks (a block allocated during
 * the scan is not in our copy of the table, and its pointers must count: they are roots), and
 * blocks not reached (yet). Those are left out, or a lost block written to (its neighbour's page)
 * would make what it points to reachable; but only when they are still the same allocation at T
 * (the same address and time of allocation in the BPF table, looked up in the final stop for each
 * block ever left out so): one freed meanwhile may hold a new block's pointers, and is then read
 * as roots. A block freed during the scan is left out of the verdict afterwards (drop_freed()). */
#define CONCURRENT_MAX_ROUNDS 8
/* Last stops made before a verdict is given partial; those before the last read for this share of
 * the pause limit at most, then let the process go for another round. */
#define CONCURRENT_MAX_LAST_STOPS 4
#define CONCURRENT_STOP_SHARE_PERCENT 75
#define CONCURRENT_SETTLED_MIN_BYTES (1ULL << 20)

/* What the last stop may read again within a quarter of max_pause_ms, at the rate the mark read
 * so far (bytes over the wall time since mark_started), at least CONCURRENT_SETTLED_MIN_BYTES. */
static uint64_t settled_bytes(const struct reach_marker *m, uint64_t mark_started, uint64_t max_pause_ms)
{
        struct reach_stats st;
        uint64_t elapsed = MAX(now_monotonic_usec() - mark_started, (uint64_t)1);

        reachability_marker_stats(m, &st);
        return MAX((uint64_t)((double)st.bytes_scanned / (double)elapsed * (double)max_pause_ms * 1000 / 4),
                   CONCURRENT_SETTLED_MIN_BYTES);
}

int reach_scan_written_roots(const struct reach_span *pages, size_t n_pages, const struct reach_block *blocks,
                             size_t n_blocks, const bool *keep_out, bool *touched, struct reach_root **ret,
                             size_t *ret_n)
{
        _cleanup_free_ struct reach_root *roots = NULL;
        size_t n = 0, allocated = 0;

        assert(pages || n_pages == 0);
        assert(blocks || n_blocks == 0);
        assert(ret && ret_n);
        for (size_t p = 0; p < n_pages; p++) {
                uint64_t from = pages[p].addr, end = pages[p].addr + pages[p].len;
                size_t i = first_range_from(blocks, n_blocks, from);

                if (i > 0 && blocks[i - 1].addr + blocks[i - 1].size > from)
                        i--;
                for (;; i++) {
                        bool last = i >= n_blocks || blocks[i].addr >= end;
                        uint64_t to = last ? end : MAX(from, blocks[i].addr);

                        if (!last && !keep_out[i])
                                continue;
                        if (n + 1 >= allocated) {
                                size_t a = MAX(allocated * 2, (size_t)64);
                                struct reach_root *g = realloc(roots, a * sizeof(*g));

                                if (!g)
                                        return -ENOMEM;
                                roots = g;
                                allocated = a;
                        }
                        if (to > from)
                                roots[n++] = (struct reach_root) { .addr = from, .size = to - from };
                        if (last)
                                break;
                        if (touched)
                                touched[i] = true;
                        from = MAX(from, MIN(blocks[i].addr + blocks[i].size, end));
                }
        }
        *ret = TAKE_PTR(roots);
        *ret_n = n;
        return 0;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct reach_marker *, reachability_marker_free)

struct concurrent {
        pid_t pid;
        struct write_tracker w;
        struct reach_span *pages;       /* written, to read again */
        size_t n_pages, allocated;
        struct reach_span *stop_pages;  /* read in a stop only, and again at each: the stacks, the
                                         * mappings not watched */
        size_t n_stop_pages, stop_allocated;
        bool *touched;                  /* blocks once left out of written pages (not reached) */
        bool *changed;                  /* found no longer the same allocation: never left out again */
        bool *keep_out;
        struct alloc_table_view times;  /* the BPF maps, for those look-ups */
        uint64_t *sps;                  /* the threads' stack pointers at the first stop */
        size_t n_sps;
        bool not_stopped;               /* the last stop made could not stop every thread in time */
        struct reach_span *to_watch;    /* mappings found since the first stop, to register */
        size_t n_to_watch, to_watch_allocated;
        uint64_t max_pause_ms;
        struct reach_result *result;    /* where the pauses are counted */
};

/* Pauses (paused_usec in all, the longest longest_usec) added to ret's. */
static void add_pauses(struct reach_result *ret, uint64_t paused_usec, uint64_t longest_usec)
{
        ret->paused_usec += paused_usec;
        ret->longest_pause_usec = MAX(ret->longest_pause_usec, longest_usec);
}

/* Its userfaultfd closed (held in the process: in short stops of its own, counted). */
static void concurrent_close(struct concurrent *c)
{
        uint64_t longest = 0, paused = write_tracker_close(&c->w, NULL, &longest);

        if (c->result)
                add_pauses(c->result, paused, longest);
}

static void concurrent_done(struct concurrent *c)
{
        concurrent_close(c);
        free(c->to_watch);
        free(c->pages);
        free(c->stop_pages);
        free(c->touched);
        free(c->changed);
        free(c->keep_out);
        alloc_table_view_close(&c->times);
        free(c->sps);
}

static bool watchable(const struct map_entry *e)
{
        return may_hold_roots(e) && e->perms[3] == 'p';
}

static int add_span(struct reach_span **spans, size_t *n, size_t *allocated, uint64_t addr, uint64_t len)
{
        if (*n == *allocated) {
                size_t a = MAX(*allocated * 2, (size_t)256);
                struct reach_span *g = realloc(*spans, a * sizeof(*g));

                if (!g)
                        return -ENOMEM;
                *spans = g;
                *allocated = a;
        }
        (*spans)[(*n)++] = (struct reach_span) { .addr = addr, .len = len };
        return 0;
}

/* A span to read again: while it runs, at the next round (c->pages, kept by the mark if a stop
 * cuts it: its pages are protected again, so a write after that read is seen later); in a stop
 * (final), stop_pages: read in each stop, whole, from the threads' stack pointers then. */
static int add_page_span(struct concurrent *c, bool final, uint64_t addr, uint64_t len)
{
        if (final)
                return add_span(&c->stop_pages, &c->n_stop_pages, &c->stop_allocated, addr, len);
        return add_span(&c->pages, &c->n_pages, &c->allocated, addr, len);
}

/* The mappings found since the first stop (c->to_watch) registered, and protected: before they
 * are read whole. Where the userfaultfd is held in the process, in a short stop (one a round that
 * found any); one that cannot be registered (or stopped for) is read whole again at the next
 * round. -ENOMEM; -EBADF where the process closed the userfaultfd it holds (its registrations
 * gone with it: every mapping would look new at each round). */
static int watch_new(struct concurrent *c)
{
        _cleanup_free_ char *error = NULL;
        struct process_stop stop = {};
        bool held = write_tracker_held(&c->w);
        int r = 0;

        if (c->n_to_watch == 0)
                return 0;
        if (held)
                r = process_stop(c->pid, c->max_pause_ms, &stop, &error);
        for (size_t i = 0; r == 0 && i < c->n_to_watch; i++) {
                int k = write_tracker_register(&c->w, held ? &stop : NULL, c->to_watch[i].addr,
                                               c->to_watch[i].addr + c->to_watch[i].len);

                if (k == -ENOMEM || k == -EBADF)
                        r = k;
        }
        if (held) {
                uint64_t paused = process_stop_release(&stop);

                add_pauses(c->result, paused, paused);
        }
        c->n_to_watch = 0;
        if (r == -ENOMEM || r == -EBADF)
                return r;
        return write_tracker_protect(&c->w) == -ENOMEM ? -ENOMEM : 0;
}

/* Into c->pages, what to read again: the pages written since the last call; the mappings not
 * watched read whole (while it runs, watched from now on; in a stop, final, into c->stop_pages).
 * A thread's stack is not: it is read in each final stop from its stack pointer on (threads[],
 * stopped; into c->stop_pages), as a stopped scan reads it, and not while it runs (the stacks the threads had at the first stop, sps[]): what lies
 * below a stack pointer is dead, and would keep blocks it once pointed to reachable. *ret_bytes:
 * how much. -ENOMEM, or /proc's error. */
static int gather_written(struct concurrent *c, bool final, const struct thread_state *threads, size_t n_threads,
                          uint64_t *ret_bytes)
{
        _cleanup_(proc_maps_done) struct proc_maps maps = {};
        char path[64];
        int r;

        c->n_pages = 0;
        c->n_stop_pages = 0;
        *ret_bytes = 0;
        snprintf(path, sizeof(path), "/proc/%d/maps", (int)c->pid);
        r = proc_maps_parse_file(path, &maps);
        if (r < 0)
                return r;
        for (size_t i = 0; i < maps.n; i++) {
                const struct map_entry *e = &maps.entries[i];
                size_t before = c->n_pages;

                bool stack = false;

                if (!may_hold_roots(e))
                        continue;
                for (size_t t = 0; final && t < n_threads; t++)
                        if (threads[t].has_regs && threads[t].sp >= e->start && threads[t].sp < e->end) {
                                uint64_t from = MAX(e->start, threads[t].sp - MIN(threads[t].sp,
                                                                                 (uint64_t)REACH_STACK_RED_ZONE));

                                r = add_page_span(c, true, from, e->end - from);
                                if (r < 0)
                                        return r;
                                *ret_bytes += e->end - from;
                                stack = true;
                        }
                for (size_t t = 0; !final && t < c->n_sps; t++)
                        stack = stack || (c->sps[t] >= e->start && c->sps[t] < e->end);
                if (stack)
                        continue;
                if (watchable(e)) {
                        int64_t bytes = write_tracker_written(&c->w, e->start, e->end, &c->pages, &c->n_pages,
                                                              &c->allocated);

                        if (bytes == -ENOMEM)
                                return -ENOMEM;
                        if (bytes >= 0) {
                                *ret_bytes += (uint64_t)bytes;
                                continue;
                        }
                        /* mapped since (or again): watched from now on, read whole now */
                        c->n_pages = before;
                        if (!final && add_span(&c->to_watch, &c->n_to_watch, &c->to_watch_allocated, e->start,
                                               e->end - e->start) < 0)
                                return -ENOMEM;
                }
                r = add_page_span(c, final, e->start, e->end - e->start);
                if (r < 0)
                        return r;
                *ret_bytes += e->end - e->start;
        }
        return final ? 0 : watch_new(c);
}

/* The blocks left out of written pages (touched) and still not reached that are no longer the
 * same allocation (the same address and time of allocation in BPF's maps; a failed look-up: all
 * of them): marked changed for good (a freed block may hold a new block's pointers: read whole
 * now, and with the pages written from now on), their ranges appended to *roots. -ENOMEM. */
static int find_changed(struct concurrent *c, const struct scan_blocks *b, struct reach_root **roots, size_t *n_roots)
{
        _cleanup_free_ uint64_t *addrs = NULL, *times = NULL;
        _cleanup_free_ size_t *which = NULL;
        size_t n = 0, k = 0;
        struct reach_root *g;

        for (size_t i = 0; i < b->n; i++)
                n += c->touched[i] && c->keep_out[i];
        if (n == 0)
                return 0;
        addrs = calloc(n, sizeof(*addrs));
        times = calloc(n, sizeof(*times));
        which = calloc(n, sizeof(*which));
        if (!addrs || !times || !which)
                return -ENOMEM;
        for (size_t i = 0; i < b->n; i++)
                if (c->touched[i] && c->keep_out[i]) {
                        which[k] = i;
                        addrs[k++] = b->found[i].addr;
                }
        if (alloc_table_view_times(&c->times, c->pid, addrs, n, times) < 0)
                memset(times, 0, n * sizeof(*times));
        k = 0;
        for (size_t j = 0; j < n; j++)
                if (times[j] != b->found[which[j]].timestamp_ns)
                        which[k++] = which[j];
        if (k == 0)
                return 0;
        g = realloc(*roots, (*n_roots + k) * sizeof(*g));
        if (!g)
                return -ENOMEM;
        *roots = g;
        for (size_t j = 0; j < k; j++) {
                c->changed[which[j]] = true;
                c->keep_out[which[j]] = false;
                (*roots)[(*n_roots)++] = (struct reach_root) { .addr = b->blocks[which[j]].addr,
                                                               .size = b->blocks[which[j]].size };
        }
        return 0;
}

/* Read again, as roots, c's written pages less the blocks not reached (and not changed), and the
 * blocks found changed; in a stop (final), its stop_pages too. -ENOMEM, -ETIME (cut: the written
 * pages' and changed blocks' roots not read are kept by the marker for its next call, while it
 * runs: their pages are protected, a write after the read is seen later; the stop's own are read
 * again in the next stop). */
static int mark_written(struct concurrent *c, const struct scan_blocks *b, struct reach_marker *m,
                        const uint64_t *words, size_t n_words, bool final)
{
        _cleanup_free_ struct reach_root *roots = NULL, *stop_roots = NULL;
        size_t n_roots = 0, n_stop_roots = 0;
        int r, r2;

        for (size_t i = 0; i < b->n; i++)
                c->keep_out[i] = !c->changed[i] && !reachability_marker_reached(m, i);
        r = reach_scan_written_roots(c->pages, c->n_pages, b->blocks, b->n, c->keep_out, c->touched, &roots,
                                     &n_roots);
        if (r < 0)
                return r;
        if (final) {
                r = reach_scan_written_roots(c->stop_pages, c->n_stop_pages, b->blocks, b->n, c->keep_out,
                                             c->touched, &stop_roots, &n_stop_roots);
                if (r < 0)
                        return r;
        }
        r = find_changed(c, b, &roots, &n_roots);
        if (r < 0)
                return r;
        if (!final)
                return reachability_marker_add(m, roots, n_roots, words, n_words);
        r = reachability_marker_add_transient(m, stop_roots, n_stop_roots, words, n_words);
        if (r == -ENOMEM)
                return r;
        /* cut already, it keeps them all */
        r2 = reachability_marker_add(m, roots, n_roots, NULL, 0);
        return r2 < 0 ? r2 : r;
}

/* A last stop: the registers, the stacks and the pages written since the last round read, and
 * the mark followed to its end, within the budget (last: the whole pause limit; else a share of
 * it, leaving room for another try); the threads let go. 0; -ETIME (cut: what is left is kept, see
 * mark_written(); or a thread did not stop within the pause limit, c->not_stopped: nothing read,
 * those stopped let go); -ENOMEM; other failures in ret->error, or -errno of the reading. */
static int last_stop(struct concurrent *c, const struct scan_blocks *b,
                     struct reach_marker *m, struct reader *rd, uint64_t max_pause_ms, bool last,
                     struct reach_result *ret)
{
        _cleanup_free_ uint64_t *words = NULL;
        _cleanup_free_ char *error = NULL;
        struct process_stop stop = {};
        uint64_t bytes = 0, paused;
        size_t n_words = 0;
        int r;

        paused = now_monotonic_usec();
        r = process_stop(c->pid, max_pause_ms, &stop, &error);
        c->not_stopped = r == -ETIME;
        if (r == -ETIME) {
                /* a thread a loaded machine did not run in time, say: those stopped were let go;
                 * at most this long */
                paused = now_monotonic_usec() - paused;
                ret->paused_usec += paused;
                ret->longest_pause_usec = MAX(ret->longest_pause_usec, paused);
                ret->last_stops++;
                return r;
        }
        if (r < 0)
                return r == -ENOMEM ? r : fail(ret, r, "cannot stop pid %d for the scan's last pass: %s",
                                                (int)c->pid, error ? error : strerror(-r));
        rd->deadline_usec = stop.stopped_usec + (last ? max_pause_ms * 1000 :
                                                 max_pause_ms * 1000 * CONCURRENT_STOP_SHARE_PERCENT / 100);
        ret->threads = 0;
        words = calloc(MAX(stop.n, (size_t)1) * THREAD_REGS_WORDS, sizeof(*words));
        if (!words)
                r = -ENOMEM;
        for (size_t i = 0; words && i < stop.n; i++)
                if (stop.threads[i].has_regs) {
                        memcpy(words + n_words, stop.threads[i].regs, sizeof(stop.threads[i].regs));
                        n_words += THREAD_REGS_WORDS;
                        ret->threads++;
                }
        if (r == 0)
                r = gather_written(c, true, stop.threads, stop.n, &bytes);
        if (r == 0) {
                ret->rounds++;
                ret->written_bytes += bytes;
                r = mark_written(c, b, m, words, n_words, true);
        }
        paused = process_stop_release(&stop);
        ret->paused_usec += paused;
        ret->longest_pause_usec = MAX(ret->longest_pause_usec, paused);
        ret->last_stops++;
        return r;
}

/* Why a concurrent scan's verdict is partial, into ret->partial: cut at its last stops (the last
 * one perhaps unable to stop every thread: not_stopped), or (none made) while it ran. -ENOMEM. */
static int partial_reason(struct reach_result *ret, uint64_t max_pause_ms, bool not_stopped)
{
        double read_mib = (double)ret->stats.bytes_scanned / (1 << 20);
        const char *why = not_stopped ? ", the last unable to stop every thread within it" : "";
        int r;

        if (ret->last_stops == 0)
                r = asprintf(&ret->partial, "the scan stopped at its limit of %" PRIu64 " s while the process ran, "
                             "%.1f MiB read: the blocks it reached are still reachable, the others undecided",
                             (uint64_t)REACH_SNAPSHOT_MAX_SCAN_MS / 1000, read_mib);
        else if (ret->last_stops == 1)
                r = asprintf(&ret->partial, "the scan stopped at its limit: 1 last stop with the process stopped, "
                             "not ended within %" PRIu64 " ms (reachability_concurrent_max_stop_ms in memleakd.conf)%s, "
                             "%.1f MiB read: the blocks it reached are still reachable, the others undecided",
                             max_pause_ms, why, read_mib);
        else
                r = asprintf(&ret->partial, "the scan stopped at its limit: %" PRIu32 " last stops with the "
                             "process stopped, none ended within its budget (%" PRIu64 " ms for the last: "
                             "reachability_concurrent_max_stop_ms in memleakd.conf; %d%% of it for those before, each "
                             "followed by the process let go for another round%s), %.1f MiB read: the blocks it "
                             "reached are still reachable, the others undecided", ret->last_stops, max_pause_ms,
                             CONCURRENT_STOP_SHARE_PERCENT, why, read_mib);
        if (r < 0) {
                ret->partial = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* In the first stop, every private writable mapping of c->pid registered (its pages protected
 * once the threads go): 0, or -errno and *why where the process cannot be watched (-EEXIST: it
 * uses userfaultfd itself). A mapping that cannot be registered (-EINVAL, -EIO) is read whole at
 * the final stop. */
static int watch_all(struct concurrent *c, struct process_stop *stop, char **why)
{
        _cleanup_(proc_maps_done) struct proc_maps maps = {};
        bool held = write_tracker_held(&c->w);
        char path[64];
        int r;

        snprintf(path, sizeof(path), "/proc/%d/maps", (int)c->pid);
        r = proc_maps_parse_file(path, &maps);
        if (r < 0) {
                (void)asprintf(why, "cannot read %s: %s", path, strerror(-r));
                return r;
        }
        for (size_t i = 0; i < maps.n; i++) {
                const struct map_entry *e = &maps.entries[i];

                if (!watchable(e))
                        continue;
                r = write_tracker_register(&c->w, stop, e->start, e->end);
                if (r == 0 || r == -EINVAL || r == -EIO)
                        continue;
                if (r == -ENOMEM)
                        return r;
                if (r == -EBUSY || r == -EPERM || r == -ENOSYS || held) {
                        (void)asprintf(why, r == -EBUSY ? "pid %d uses userfaultfd itself (on its mapping at "
                                       "0x%" PRIx64 ")" : "pid %d's mapping at 0x%" PRIx64 " cannot be "
                                       "write-protected: %s", (int)c->pid, e->start, strerror(-r));
                        /* not "another tracer" (-EBUSY of a stop): a snapshot may still be taken */
                        return r == -EBUSY ? -EEXIST : r;
                }
        }
        return 0;
}

/* The concurrent scan of pid into ret: 0 (ret->error set where it failed after it began), or, where
 * the process cannot be watched, -errno (-EEXIST: it uses userfaultfd itself; -ESRCH, -EBUSY,
 * -ETIME: it cannot be stopped) and *why (nothing of it left in the process, ret as it
 * was but for paused_usec); -ENOMEM. */
static int scan_concurrent(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid, uint64_t max_pause_ms,
                           bool traced_from_start, struct reach_result *ret, char **why)
{
        _cleanup_(scan_blocks_done) struct scan_blocks b = {};
        _cleanup_(concurrent_done) struct concurrent c = { .pid = pid, .w = WRITE_TRACKER_NULL,
                                                           .times = { .allocs_fd = -1 },
                                                           .max_pause_ms = max_pause_ms, .result = ret };
        _cleanup_(reader_close) struct reader rd = { .mem_fd = -1 };
        _cleanup_(reachability_marker_freep) struct reach_marker *m = NULL;
        _cleanup_(proc_maps_done) struct proc_maps maps = {};
        _cleanup_free_ struct reach_root *roots = NULL;
        _cleanup_free_ struct reach_block *chunks = NULL;
        _cleanup_free_ struct outstanding_block *now = NULL;
        _cleanup_free_ struct thread_state *first = NULL;
        struct process_stop stop = {};
        size_t n_roots = 0, n_chunks = 0, n_now = 0, n_first = 0;
        uint64_t started = now_monotonic_usec(), mark_started, cpu_started, bytes = 0;
        char path[64];
        int r;

        /* what a filter of everyone's here lets through is known before the stop, for either way
         * the userfaultfd is held (seccomp-check.h) */
        r = seccomp_check_call(pid, false, SECCOMP_CALL_USERFAULTFD, why);
        if (r == 0)
                r = seccomp_check_call(pid, false, SECCOMP_CALL_USERFAULTFD_HELD, why);
        if (r < 0)
                return r;
        r = process_stop(pid, max_pause_ms, &stop, why);
        if (r < 0)
                return r;
        r = write_tracker_open(&stop, max_pause_ms, &c.w, why);
        if (r == 0)
                r = watch_all(&c, &stop, why);
        /* the first stop's stacks: roots from their stack pointers on (as they were then) */
        first = calloc(MAX(stop.n, (size_t)1), sizeof(*first));
        c.sps = calloc(MAX(stop.n, (size_t)1), sizeof(*c.sps));
        if (first && c.sps) {
                memcpy(first, stop.threads, stop.n * sizeof(*first));
                n_first = stop.n;
                for (size_t i = 0; i < stop.n; i++)
                        if (stop.threads[i].has_regs)
                                c.sps[c.n_sps++] = stop.threads[i].sp;
        } else if (r == 0)
                r = -ENOMEM;
        if (r < 0)
                (void)write_tracker_close(&c.w, &stop, NULL);   /* nothing left in the process */
        ret->paused_usec += process_stop_release(&stop);
        ret->longest_pause_usec = ret->paused_usec;
        if (r < 0)
                return r;
        /* watched from now on; a mapping that cannot be is read whole at the final stop */
        r = write_tracker_protect(&c.w);
        if (r == -ENOMEM)
                return r;
        snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
        r = proc_maps_parse_file(path, &maps);
        if (r < 0) {
                (void)asprintf(why, "cannot read %s: %s", path, strerror(-r));
                return r;
        }
        ret->method = REACH_METHOD_CONCURRENT;
        ret->scanned_at_usec = now_realtime_usec();
        ret->traced_from_start = traced_from_start;
        /* its blocks now, after the protection: one allocated later is written later */
        r = collect(skel, lim, pid, 0, &b, ret);
        if (r < 0 || ret->error)
                return r;
        r = reader_open(pid, started + REACH_SNAPSHOT_MAX_SCAN_MS * 1000, &rd);
        if (r < 0)
                return r == -ENOMEM ? r : fail(ret, r, "cannot open the memory of pid %d: %s", (int)pid,
                                                strerror(-r));
        r = find_mmapped_chunks(b.blocks, b.n, &rd, &chunks, &n_chunks);
        if (r < 0)
                return r;
        r = reach_scan_roots_select(&maps, first, n_first, b.blocks, b.n, chunks, n_chunks, traced_from_start,
                                    &roots, &n_roots);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_roots; i++)
                ret->roots_bytes += roots[i].size;
        c.touched = calloc(MAX(b.n, (size_t)1), sizeof(*c.touched));
        c.keep_out = calloc(MAX(b.n, (size_t)1), sizeof(*c.keep_out));
        c.changed = calloc(MAX(b.n, (size_t)1), sizeof(*c.changed));
        if (!c.touched || !c.keep_out || !c.changed)
                return -ENOMEM;
        r = stack_collect_times_open(skel, &c.times);
        if (r < 0)
                return fail(ret, r, "cannot map BPF's allocation table: %s", strerror(-r));
        r = reachability_marker_new(&(struct reach_input) {
                        .blocks = b.blocks, .n_blocks = b.n, .read = read_process, .read_many = read_process_many,
                        .expired = past_deadline, .userdata = &rd,
                }, &m);
        if (r < 0)
                return r;
        mark_started = now_monotonic_usec();
        cpu_started = thread_cpu_usec();
        r = reachability_marker_add(m, roots, n_roots, NULL, 0);
        for (unsigned stops = 0;; stops++) {
                bool last = stops + 1 >= CONCURRENT_MAX_LAST_STOPS;

                for (unsigned round = 0; r == 0 && round < CONCURRENT_MAX_ROUNDS; round++) {
                        r = gather_written(&c, false, NULL, 0, &bytes);
                        if (r < 0)
                                break;
                        ret->rounds++;
                        ret->written_bytes += bytes;
                        r = mark_written(&c, &b, m, NULL, 0, false);
                        if (bytes <= settled_bytes(m, mark_started, max_pause_ms))
                                break;
                }
                if (r < 0 && r != -ETIME) {
                        if (r == -ENOMEM)
                                return r;
                        if (r == -ENOENT || r == -ESRCH)
                                return fail(ret, r, "pid %d exited during the scan", (int)pid);
                        if (r == -EBADF)
                                return fail(ret, r, "pid %d closed the userfaultfd the scan had it make (held "
                                            "there: memleakd may not take it)", (int)pid);
                        return fail(ret, r, "the scan of pid %d failed while it ran: %s", (int)pid, strerror(-r));
                }
                if (r == -ETIME)
                        break;          /* while it ran: its own bound (REACH_SNAPSHOT_MAX_SCAN_MS) */
                r = last_stop(&c, &b, m, &rd, max_pause_ms, last, ret);
                if (r == 0 || r == -ENOMEM || ret->error || (r == -ETIME && last))
                        break;
                if (r != -ETIME)
                        return fail(ret, r, "the scan's last pass over pid %d failed: %s", (int)pid, strerror(-r));
                /* it would pass the pause limit: let go, the mark goes on while it runs, and another
                 * round reads the pages written meanwhile, before it stops again */
                rd.deadline_usec = now_monotonic_usec() + REACH_SNAPSHOT_MAX_SCAN_MS * 1000;
                r = reachability_marker_add(m, NULL, 0, NULL, 0);
        }
        if (r == -ENOMEM)
                return r;
        if (ret->error)
                return 0;
        /* the rest while it runs: nothing writes into a block nothing points to (a userfaultfd
         * held in the process closed in short stops of its own) */
        concurrent_close(&c);
        rd.deadline_usec = now_monotonic_usec() + REACH_SNAPSHOT_MAX_SCAN_MS * 1000;
        r = reachability_marker_classify(m, b.classes, &ret->stats);
        ret->mark_usec = now_monotonic_usec() - mark_started;
        ret->mark_cpu_usec = thread_cpu_usec() - cpu_started;
        if (r < 0 && r != -ETIME)
                return r;
        if (c.not_stopped) {
                /* the last stop read nothing (its registers, stacks, last written pages): what was
                 * not reached is undecided, not lost */
                for (size_t i = 0; i < b.n; i++)
                        if (b.classes[i] != REACHABILITY_STILL_REACHABLE)
                                b.classes[i] = REACHABILITY_UNDECIDED;
                r = -ETIME;
        }
        if (r == -ETIME && partial_reason(ret, max_pause_ms, c.not_stopped) < 0)
                return -ENOMEM;
        ret->scan_usec = now_monotonic_usec() - started;
        (void)malloc_trim(0);
        r = stack_collect_blocks(skel, lim, pid, &now, &n_now);
        if (r < 0)
                return r == -ENOMEM ? r : fail(ret, r, "cannot read its allocations from the BPF map again: %s",
                                                strerror(-r));
        drop_freed(&b, now, n_now, ret);
        return tally(b.found, b.classes, b.n, ret);
}

static int scan_live(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid, uint64_t max_pause_ms,
                     uint64_t concurrent_stop_ms, bool snapshot_only, bool traced_from_start,
                     struct reach_result **ret)
{
        _cleanup_free_ struct reach_result *result = calloc(1, sizeof(*result));
        _cleanup_free_ char *error = NULL, *why = NULL;
        struct process_snapshot snap = {};
        int r = -EOPNOTSUPP;

        assert(ret);
        if (!result)
                return -ENOMEM;
        result->scanned_at_usec = now_realtime_usec();
        if (concurrent_stop_ms > 0) {
                r = scan_concurrent(skel, lim, pid, concurrent_stop_ms, traced_from_start, result, &why);
                if (r == -ENOMEM) {
                        reach_scan_result_free(TAKE_PTR(result));
                        return r;
                }
        }
        if (r == 0) {
                *ret = TAKE_PTR(result);
                return 0;
        }
        /* not concurrently: why, and the pause its attempt made */
        if (asprintf(&result->no_concurrent, "%s", concurrent_stop_ms == 0 ? "turned off (reachability_concurrent in "
                     "memleakd.conf)" : why ? why : strerror(-r)) < 0) {
                result->no_concurrent = NULL;
                return -ENOMEM;
        }
        if (r == -ESRCH || r == -EBUSY || r == -ETIME) {
                /* what a snapshot would meet as well */
                (void)fail(result, r, "cannot stop pid %d: %s", (int)pid, why ? why : strerror(-r));
                *ret = TAKE_PTR(result);
                return 0;
        }
        r = process_snapshot_take(pid, max_pause_ms, &snap, &error);
        if (r == 0) {
                r = scan_snapshot(skel, lim, &snap, traced_from_start, result);
                /* the second freeze, that reaps the copy, is a pause too */
                uint64_t paused = process_snapshot_done(&snap);

                result->paused_usec += paused;
                result->longest_pause_usec = MAX(result->longest_pause_usec, paused);
                result->copy_reaped = snap.copy_reaped;
        } else if (r == -ENOMEM)
                ;
        else if (r == -ESRCH || r == -EBUSY || r == -ETIME)
                /* what a stopped scan would meet as well */
                r = fail(result, r, "cannot stop pid %d: %s", (int)pid, error ? error : strerror(-r));
        else if (snapshot_only)
                /* not stopped for a whole scan unasked (memleakctl leaks): a verdict from growth */
                r = fail(result, r, "no snapshot of pid %d could be taken (%s), and it is not stopped for a "
                         "whole scan unless asked (--reachability)", (int)pid, error ? error : strerror(-r));
        else {
                if (asprintf(&result->no_snapshot, "%s", error ? error : strerror(-r)) < 0) {
                        result->no_snapshot = NULL;
                        r = -ENOMEM;
                } else
                        r = scan_stopping(skel, lim, pid, max_pause_ms, traced_from_start, result);
        }
        if (r < 0) {
                reach_scan_result_free(TAKE_PTR(result));
                return r;
        }
        *ret = TAKE_PTR(result);
        return 0;
}

struct live_scan {
        struct memleak_bpf *skel;
        const struct map_limits *lim;
        pid_t pid;
        uint64_t max_pause_ms;
        uint64_t concurrent_stop_ms;
        bool snapshot_only, traced_from_start;
        struct reach_result *result;
        int r;
};

static void *live_scan_run(void *userdata)
{
        struct live_scan *s = userdata;

        s->r = scan_live(s->skel, s->lim, s->pid, s->max_pause_ms, s->concurrent_stop_ms, s->snapshot_only,
                         s->traced_from_start, &s->result);
        return NULL;
}

/* Each live scan runs on a thread of its own, the tracer of every stop it makes, that ends with it.
 * A thread asked to stop that had not stopped when the stop was given up (one in uninterruptible
 * sleep, or one a loaded machine had not run yet) cannot be let go then (ptrace lets go of a
 * stopped tracee only): it stays a tracee, to stop on its way back to user space, and would stay
 * stopped for good (and once killed, unreaped: its parent waiting for it too). Its tracer's exit
 * lets go of it, stopped or not (the kernel's exit_ptrace()). */
int reach_scan_live(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid, uint64_t max_pause_ms,
                    uint64_t concurrent_stop_ms, bool snapshot_only, bool traced_from_start,
                    struct reach_result **ret)
{
        struct live_scan s = {
                .skel = skel, .lim = lim, .pid = pid, .max_pause_ms = max_pause_ms, .concurrent_stop_ms = concurrent_stop_ms,
                .snapshot_only = snapshot_only, .traced_from_start = traced_from_start,
        };
        pthread_t thread;
        int r;

        assert(ret);
        r = pthread_create(&thread, NULL, live_scan_run, &s);
        if (r != 0)
                return -ENOMEM;         /* EAGAIN: no room for a thread */
        (void)pthread_join(thread, NULL);
        if (s.r < 0)
                return s.r;
        *ret = s.result;
        return 0;
}
