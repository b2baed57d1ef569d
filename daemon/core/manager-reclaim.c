/* SPDX-License-Identifier: GPL-2.0-only */
/* Reclaim passes (daemon/bpf/reclaim.h) on their own worker thread, started by the snapshot tick
 * when the per-stack totals' table or the stack table is past half full (every tick past three
 * quarters: reclaim_plan_pass). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "bpf-loader.h"
#include "log.h"
#include "manager.h"
#include "mapped-array.h"
#include "reclaim.h"
#include "worker.h"

/* What one pass may delete from the stack table at least (more when the table is past three
 * quarters full: reclaim_plan_pass), and how long it waits before it puts back the
 * stacks a row names by then (a probe takes microseconds from its stack's id to its row). */
#define RECLAIM_STACKS_PER_PASS 16384u
#define RECLAIM_RECHECK_MS 50u

struct reclaim_job {
        struct memleak_bpf *skel;       /* its fds and its .bss: usable from any thread */
        bool stacks;                    /* rows always; stacks too */
        size_t stacks_max;              /* at most this many of them */
        struct reclaim_counts counts;
        int error;
        struct manager *m;              /* for done(), on the event loop only */
};

static void stacks_purged(void *userdata)
{
        struct reclaim_job *j = userdata;

        bpf_loader_stacks_purged(j->skel, j->counts.stacks_deleted);
}

static void run(void *userdata)
{
        struct reclaim_job *j = userdata;
        struct mapped_array combined = {};

        j->error = mapped_array_open(bpf_loader_combined_fd(j->skel), sizeof(struct combined_row), &combined);
        if (j->error < 0)
                return;
        /* rows first: the rows it frees no longer name their stacks */
        reclaim_rows(&combined, &j->counts);
        if (j->stacks) {
                j->error = reclaim_stacks(bpf_loader_stacks_fd(j->skel), &combined, j->stacks_max,
                                          RECLAIM_RECHECK_MS, stacks_purged, j, &j->counts);
                bpf_loader_stacks_restored(j->skel, j->counts.stacks_restored);
        }
        mapped_array_close(&combined);
}

static void done(void *userdata, bool cancelled)
{
        struct reclaim_job *j = userdata;
        struct manager *m = j->m;
        const struct reclaim_counts *c = &j->counts;

        m->reclaim.pending = false;
        if (!cancelled) {
                m->reclaim.every_ticks = reclaim_next_wait(m->reclaim.every_ticks, c, MANAGER_RECLAIM_EVERY_TICKS,
                                                           MANAGER_RECLAIM_MAX_TICKS);
                m->reclaim.passes++;
                m->reclaim.totals.rows_retired += c->rows_retired;
                m->reclaim.totals.rows_freed += c->rows_freed;
                m->reclaim.totals.rows_revived += c->rows_revived;
                m->reclaim.totals.stacks_deleted += c->stacks_deleted;
                m->reclaim.totals.stacks_restored += c->stacks_restored;
                if (j->error < 0)
                        log_warning_errno(j->error, "A pass giving back unused per-stack rows and stacks failed: %m");
        }
        free(j);
}

void manager_reclaim_tick(struct manager *m, size_t rows_held)
{
        struct reclaim_plan plan;
        struct reclaim_fill fill;
        struct reclaim_job *j;

        assert(m);
        if (!m->reclaim.worker || m->reclaim.pending)
                return;
        fill = (struct reclaim_fill) {
                .rows_held = rows_held,
                .rows_max = m->config.max_combined,
                .stacks_held = bpf_loader_stacks_held(m->env.skel),
                .stacks_max = m->config.max_stacks,
                .ticks = ++m->reclaim.ticks,
                .wait = MAX(m->reclaim.every_ticks, MANAGER_RECLAIM_EVERY_TICKS),
                .least = MANAGER_RECLAIM_EVERY_TICKS,
        };
        if (!reclaim_plan_pass(&fill, RECLAIM_STACKS_PER_PASS, &plan))
                return;
        j = calloc(1, sizeof(*j));
        if (!j)
                return;
        *j = (struct reclaim_job) { .skel = m->env.skel, .stacks = plan.stacks, .stacks_max = plan.stacks_max, .m = m };
        if (worker_submit(m->reclaim.worker, j, run, done) < 0) {
                free(j);
                return;
        }
        m->reclaim.pending = true;
        m->reclaim.ticks = 0;
}

int manager_reclaim_start(struct manager *m)
{
        assert(m);
        return worker_new(m->event, &m->reclaim.worker);
}

void manager_reclaim_stop(struct manager *m)
{
        assert(m);
        m->reclaim.worker = worker_free(m->reclaim.worker);
}
