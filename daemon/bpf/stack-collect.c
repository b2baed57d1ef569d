/* SPDX-License-Identifier: GPL-2.0-only */
/* Gather per-stack outstanding totals from the BPF maps, or from an exited target's frozen copy. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "alloc-table.h"
#include "bpf-loader.h"
#include "combined-table.h"
#include "macro.h"
#include "util.h"
#include "map-dump.h"
#include "reclaim.h"
#include "stack-frames.h"
#include "stack-totals.h"
#include "stack-collect.h"

/* Totals as read, not yet sorted or merged. */
struct totals_list {
        struct stack_total *rows;
        size_t n, cap;
};

static int totals_append(struct totals_list *l, const struct stack_total *row)
{
        if (l->n == l->cap) {
                size_t ncap = l->cap ? l->cap * 2 : 64;
                struct stack_total *n = realloc(l->rows, ncap * sizeof(*n));

                if (!n)
                        return -ENOMEM;
                l->rows = n;
                l->cap = ncap;
        }
        l->rows[l->n++] = *row;
        return 0;
}

/* totals[n] as rows, their frames not filled in yet. */
static int rows_from_totals(const struct stack_total *totals, size_t n, struct stack_rows *ret)
{
        struct stack_rows rows = { .rows = calloc(MAX(n, (size_t)1), sizeof(struct stack_row)) };

        if (!rows.rows)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                rows.rows[i] = (struct stack_row) {
                        .pid = totals[i].pid, .space = totals[i].space, .stack_id = totals[i].stack_id,
                        .bytes = totals[i].bytes, .allocs = totals[i].allocs,
                };
        rows.n = n;
        *ret = rows;
        return 0;
}

/* The rows of pids[] from the per-stack totals: read as the snapshot tick reads them, already
 * merged and sorted by stack_totals_read(). */
static int collect_combined(struct memleak_bpf *skel, struct stack_totals *reader, const pid_t *pids, size_t n_pids,
                            struct stack_rows *ret)
{
        struct stack_totals *t = reader;
        const struct stack_total *totals;
        size_t n;
        int r;

        if (!t && (r = stack_totals_new(&t)) < 0)
                return r;
        r = stack_totals_read(t, bpf_loader_combined_fd(skel), pids, n_pids, &totals, &n);
        if (r >= 0)
                r = rows_from_totals(totals, n, ret);
        if (t != reader)
                stack_totals_free(t);
        return r;
}

/* A row space for an outstanding allocation: mappings apart, the rest (heap, the kernel's slab
 * objects, pages, percpu) together, as the per-stack totals map keeps them. */
static uint32_t row_space(const struct alloc_key *k)
{
        return k->space == ALLOC_SPACE_MMAP ? ALLOC_SPACE_MMAP : 0;
}

/* The outstanding blocks (struct alloc_key and struct alloc_info) of the allocations map, and
 * when table_fd >= 0, of alloc_table after them. */
static int dump_outstanding(int table_fd, int fd, uint32_t max, struct map_dump *ret)
{
        int r;

        r = map_dump_hash(fd, sizeof(struct alloc_key), sizeof(struct alloc_info), max, ret);
        if (r >= 0 && table_fd >= 0 && (r = alloc_table_append(table_fd, ret)) < 0)
                map_dump_done(ret);
        return r;
}

static int append_outstanding(int table_fd, int fd, uint32_t max, const pid_t *pids, size_t n_pids,
                              uint64_t min_age_ns, struct totals_list *totals)
{
        _cleanup_(map_dump_done) struct map_dump d = {};
        uint64_t now = (now_monotonic_usec() * 1000);
        int r;

        r = dump_outstanding(table_fd, fd, max, &d);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d.n; i++) {
                const struct alloc_key *k = (const struct alloc_key *)d.keys + i;
                const struct alloc_info *v = (const struct alloc_info *)d.values + i;

                if (!stack_totals_pid_wanted(pids, n_pids, k->tgid))
                        continue;
                if (v->timestamp_ns > now || now - v->timestamp_ns < min_age_ns)
                        continue;
                /* a sampled block counts for what it stands for, as in the per-stack totals */
                r = totals_append(totals, &(struct stack_total) {
                        .pid = (pid_t)k->tgid, .space = row_space(k), .stack_id = v->stack_id, .bytes = v->weight,
                        .allocs = MEMLEAK_WEIGHT_ALLOCS(v->weight, v->size),
                });
                if (r < 0)
                        return r;
        }
        return 0;
}

static int collect_allocs(struct memleak_bpf *skel, const struct map_limits *lim,
                          const pid_t *pids, size_t n_pids, uint64_t min_age_ns, struct stack_rows *ret)
{
        struct totals_list totals = {};
        struct stack_total *scratch = NULL;
        int r;

        r = append_outstanding(bpf_loader_alloc_table_fd(skel), bpf_loader_allocs_fd(skel), lim->max_allocs, pids,
                               n_pids, min_age_ns, &totals);
        if (r >= 0)
                r = append_outstanding(-1, bpf_loader_mmaps_fd(skel), lim->max_mmaps, pids, n_pids, min_age_ns,
                                       &totals);
        if (r >= 0 && !(scratch = malloc(MAX(totals.n, (size_t)1) * sizeof(*scratch))))
                r = -ENOMEM;
        if (r >= 0) {
                /* the two buffers swap: the result is in totals.rows, and both are freed below */
                totals.n = stack_totals_sort_merge(&totals.rows, &scratch, totals.n);
                r = rows_from_totals(totals.rows, totals.n, ret);
        }
        free(totals.rows);
        free(scratch);
        return r;
}

static int block_by_addr(const void *a, const void *b)
{
        const struct outstanding_block *x = a, *y = b;

        return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int stack_collect_blocks(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid,
                         struct outstanding_block **ret, size_t *ret_n)
{
        _cleanup_(map_dump_done) struct map_dump d = {};
        _cleanup_free_ struct outstanding_block *blocks = NULL;
        size_t n = 0;
        int r;

        assert(ret);
        assert(ret_n);
        r = dump_outstanding(bpf_loader_alloc_table_fd(skel), bpf_loader_allocs_fd(skel), lim->max_allocs, &d);
        if (r < 0)
                return r;
        blocks = calloc(MAX(d.n, (size_t)1), sizeof(*blocks));
        if (!blocks)
                return -ENOMEM;
        for (size_t i = 0; i < d.n; i++) {
                const struct alloc_key *k = (const struct alloc_key *)d.keys + i;
                const struct alloc_info *v = (const struct alloc_info *)d.values + i;

                if ((pid_t)k->tgid != pid || k->space != ALLOC_SPACE_USER)
                        continue;
                blocks[n++] = (struct outstanding_block) { .addr = k->addr, .size = v->size,
                                                           .stack_id = v->stack_id,
                                                           .timestamp_ns = v->timestamp_ns };
        }
        if (n > 0)
                qsort(blocks, n, sizeof(*blocks), block_by_addr);
        *ret = TAKE_PTR(blocks);
        *ret_n = n;
        return 0;
}

static int collect_live(struct memleak_bpf *skel, const struct map_limits *lim, struct stack_totals *reader,
                        const pid_t *pids, size_t n_pids, uint64_t min_age_ns, bool from_allocs,
                        struct stack_rows *ret)
{
        struct stack_rows rows = {};
        int r;

        if (min_age_ns == 0 && !from_allocs)
                r = collect_combined(skel, reader, pids, n_pids, &rows);
        else
                r = collect_allocs(skel, lim, pids, n_pids, min_age_ns, &rows);
        if (r < 0)
                return r;
        r = stack_frames_fill(&rows, skel);
        if (r < 0) {
                stack_rows_done(&rows);
                return r;
        }
        *ret = rows;
        return 0;
}

int stack_collect_live(struct memleak_bpf *skel, const struct map_limits *lim, const pid_t *pids,
                       size_t n_pids, uint64_t min_age_ns, bool from_allocs, struct stack_rows *ret)
{
        assert(skel);
        assert(lim);
        assert(ret);
        return collect_live(skel, lim, NULL, pids, n_pids, min_age_ns, from_allocs, ret);
}

void stack_collect_free_frozen(struct frozen_target *f)
{
        if (!f)
                return;
        stack_rows_done(&f->rows);
        free(f);
}

int stack_collect_freeze(struct memleak_bpf *skel, const struct map_limits *lim, struct stack_totals *totals,
                         pid_t pid, bool from_allocs, struct frozen_target **ret)
{
        struct frozen_target *f;
        int r;

        assert(skel);
        assert(lim);
        assert(ret);
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        /* The per-stack totals with their frames: what every later report of it needs. */
        r = collect_live(skel, lim, totals, &pid, 1, 0, from_allocs, &f->rows);
        if (r < 0) {
                free(f);
                return r;
        }
        f->bytes = sizeof(*f) + f->rows.n * sizeof(*f->rows.rows);
        for (size_t i = 0; i < f->rows.n; i++)
                f->bytes += f->rows.rows[i].n_ips * sizeof(uint64_t);
        *ret = f;
        return 0;
}

int stack_collect_frozen(const struct frozen_target *f, struct stack_rows *ret)
{
        struct stack_rows rows = {};
        int r;

        assert(f);
        assert(ret);
        rows.rows = calloc(MAX(f->rows.n, (size_t)1), sizeof(*rows.rows));
        if (!rows.rows)
                return -ENOMEM;
        for (size_t i = 0; i < f->rows.n; i++) {
                rows.rows[i] = f->rows.rows[i];
                rows.rows[i].ips = NULL;
                rows.n++;
                if (!f->rows.rows[i].ips)
                        continue;
                r = stack_frames_copy(f->rows.rows[i].ips, f->rows.rows[i].n_ips, &rows.rows[i].ips, &rows.rows[i].n_ips);
                if (r < 0) {
                        stack_rows_done(&rows);
                        return r;
                }
        }
        *ret = rows;
        return 0;
}

static bool alloc_of(const void *key, const void *value, void *pid)
{
        return (pid_t)((const struct alloc_key *)key)->tgid == *(pid_t *)pid;
}

/* combined_table_for_each(): the stack ids of pid's rows. */
struct pid_stacks {
        pid_t pid;
        int64_t *ids;
        size_t n, room;
};

static int add_pid_stack(const struct combined_key *k, int64_t bytes, int64_t allocs, void *userdata)
{
        struct pid_stacks *p = userdata;

        if ((pid_t)k->tgid == p->pid && k->stack_id >= 0 && p->n < p->room)
                p->ids[p->n++] = k->stack_id;
        return 0;
}

/* Free pid's rows of the combined table, then delete from the stack table the stacks they named
 * that no other row does (reclaim.h), so that stacks of targets that are gone do not fill the
 * table for those that come later. Returns how many stacks went. */
static int purge_rows_and_stacks(struct memleak_bpf *skel, const struct mapped_array *combined, pid_t pid)
{
        _cleanup_free_ int64_t *ids = malloc(MAX(combined->n, 1u) * sizeof(*ids));
        struct pid_stacks p = { .pid = pid, .ids = ids, .room = combined->n };
        int purged;

        if (!ids)
                return -ENOMEM;
        (void)combined_table_for_each(combined, add_pid_stack, &p);
        (void)mapped_array_free_slots(combined, pid);
        purged = reclaim_unnamed_stacks(bpf_loader_stacks_fd(skel), combined, ids, p.n);
        if (purged > 0)
                bpf_loader_stacks_purged(skel, (uint64_t)purged);
        return purged;
}

int stack_collect_purge(struct memleak_bpf *skel, const struct map_limits *lim, pid_t pid)
{
        _cleanup_(mapped_array_close) struct mapped_array combined = {};
        int purged, r;

        assert(skel);
        assert(lim);
        r = mapped_array_open(bpf_loader_combined_fd(skel), sizeof(struct combined_row), &combined);
        purged = r < 0 ? r : purge_rows_and_stacks(skel, &combined, pid);
        (void)alloc_table_purge(bpf_loader_alloc_table_fd(skel), pid);
        r = map_dump_purge(bpf_loader_allocs_fd(skel), sizeof(struct alloc_key), sizeof(struct alloc_info),
                           lim->max_allocs, alloc_of, &pid);
        if (r > 0 && pid != MEMLEAK_KERNEL_TGID)
                bpf_loader_overflow_removed(skel, (uint64_t)r);
        (void)map_dump_purge(bpf_loader_mmaps_fd(skel), sizeof(struct alloc_key), sizeof(struct alloc_info),
                             lim->max_mmaps, alloc_of, &pid);
        return purged;
}

int stack_collect_times_open(struct memleak_bpf *skel, struct alloc_table_view *ret)
{
        assert(skel);
        return alloc_table_view_open(bpf_loader_alloc_table_fd(skel), bpf_loader_allocs_fd(skel), ret);
}

int stack_collect_block_times(struct memleak_bpf *skel, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *ret)
{
        assert(skel);
        return alloc_table_times(bpf_loader_alloc_table_fd(skel), bpf_loader_allocs_fd(skel), pid, addrs, n, ret);
}
