/* SPDX-License-Identifier: GPL-2.0-only */
/* An exited target's stacks' verdicts, kept at its exit: each heap stack's over its ring's rows,
 * made on the worker (65,536 stacks of a ring of 60 take a quarter of a second), the rows let go
 * once they are in. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "exit-verdicts.h"
#include "log.h"
#include "manager.h"
#include "snapshot.h"
#include "stack-collect.h"
#include "stack-verdict.h"
#include "worker.h"

struct verdicts_job {
        struct manager *m;
        uint64_t target_id;
        struct snapshot *history;       /* the ring's snapshots, their rows referenced */
        size_t n_history;
        struct stack_rows rows;         /* the frozen rows' stacks and sizes (no addresses) */
        uint64_t exit_usec;
        uint64_t sample_bytes;
        struct leak_verdict_thresholds thresholds;
        struct exit_verdicts *verdicts; /* made by it */
        int error;
};

static void job_free(struct verdicts_job *j)
{
        for (size_t i = 0; i < j->n_history; i++)
                snapshot_rows_unref(j->history[i].rows);
        free(j->history);
        free(j->rows.rows);
        exit_verdicts_free(j->verdicts);
        free(j);
}

static void run(void *data)
{
        struct verdicts_job *j = data;

        j->error = stack_verdict_keep(j->history, j->n_history, &j->rows, j->exit_usec, j->sample_bytes,
                                      &j->thresholds, &j->verdicts);
}

/* Its rows go: its trend needs the sums only, its verdicts are kept (or could not be). */
static void verdicts_settled(struct target *t)
{
        t->verdicts_keeping = false;
        snapshot_ring_drop_rows(t->ring);
}

static void done(void *data, bool cancelled)
{
        struct verdicts_job *j = data;
        struct target *t = cancelled ? NULL : manager_find_target_by_id(j->m, j->target_id);

        if (t && t->verdicts_keeping) {
                if (j->error < 0)
                        log_warning_errno(j->error, "Cannot keep the leak verdicts of pid %d (%s), which exited: "
                                          "its report has none: %m", (int)t->pid, t->comm);
                t->verdicts = j->verdicts;
                j->verdicts = NULL;
                verdicts_settled(t);
                /* its kept report has them too (it was written at its exit, before they came) */
                if (t->exited_saved && t->verdicts)
                        manager_exited_save(j->m, t);
        }
        job_free(j);
}

static int job_new(struct manager *m, const struct target *t, struct verdicts_job **ret)
{
        uint32_t n = snapshot_ring_count(t->ring);
        struct verdicts_job *j = calloc(1, sizeof(*j));

        if (!j)
                return -ENOMEM;
        *j = (struct verdicts_job) {
                .m = m, .target_id = t->id, .exit_usec = t->exited_usec,
                /* 1 records every allocation of a byte or more: exact (as a report takes it) */
                .sample_bytes = t->filter.sample_bytes > 1 ? t->filter.sample_bytes : 0,
                .thresholds = manager_verdict_thresholds(m),
        };
        j->history = calloc(n ?: 1, sizeof(*j->history));
        j->rows.rows = calloc(t->frozen->rows.n ?: 1, sizeof(*j->rows.rows));
        if (!j->history || !j->rows.rows) {
                job_free(j);
                return -ENOMEM;
        }
        for (uint32_t i = 0; i < n; i++) {
                j->history[i] = *snapshot_ring_get(t->ring, i);
                snapshot_rows_ref(j->history[i].rows);
                j->n_history++;
        }
        for (size_t i = 0; i < t->frozen->rows.n; i++) {
                const struct stack_row *r = &t->frozen->rows.rows[i];

                j->rows.rows[j->rows.n++] = (struct stack_row) {
                        .pid = r->pid, .space = r->space, .stack_id = r->stack_id, .bytes = r->bytes, .allocs = r->allocs,
                };
        }
        *ret = j;
        return 0;
}

void manager_verdicts_at_exit(struct manager *m, struct target *t)
{
        struct verdicts_job *j = NULL;
        int r;

        assert(m);
        assert(t);
        if (!t->frozen || t->kernel) {
                snapshot_ring_drop_rows(t->ring);
                return;
        }
        /* until they are in, its ring keeps its rows: a report asked meanwhile (memleakctl run's,
         * at once) makes the verdicts from them itself */
        r = job_new(m, t, &j);
        if (r >= 0) {
                t->verdicts_keeping = true;
                r = worker_submit(m->worker, j, run, done);
        }
        if (r < 0) {
                log_warning_errno(r, "Cannot keep the leak verdicts of pid %d (%s), which exited: its report has "
                                  "none: %m", (int)t->pid, t->comm);
                if (j)
                        job_free(j);
                verdicts_settled(t);
        }
}
