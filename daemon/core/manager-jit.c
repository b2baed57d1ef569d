/* SPDX-License-Identifier: GPL-2.0-only */
/* An exited target's JIT code named: its perf map, which a JIT runtime leaves behind, read on the
 * worker from where it was while the target ran (jit-names.h). */
#include <assert.h>
#include <stdlib.h>
#include "jit-names.h"
#include "log.h"
#include "manager.h"
#include "perf-map.h"
#include "worker.h"

struct jit_names_job {
        struct manager *m;
        uint64_t target_id;
        struct jit_names_source source;
        struct perf_map *map;
};

static void run(void *data)
{
        struct jit_names_job *j = data;

        (void)jit_names_load_from(&j->source, &j->map);
        jit_names_source_done(&j->source);      /* nothing of the process is held after this */
}

static void done(void *data, bool cancelled)
{
        struct jit_names_job *j = data;
        struct target *t = cancelled ? NULL : manager_find_target_by_id(j->m, j->target_id);

        if (t && !t->perf_map && j->map) {
                t->perf_map = j->map;
                j->map = NULL;
                log_debug("Pid %d's JIT code is named from the perf map it left", (int)t->pid);
                /* its kept report names them too (it was written at its exit, before they came) */
                if (t->exited_saved)
                        manager_exited_save(j->m, t);
        }
        perf_map_unref(j->map);
        jit_names_source_done(&j->source);
        free(j);
}

void manager_jit_names_at_exit(struct manager *m, struct target *t)
{
        struct jit_names_job *j;

        assert(m);
        assert(t);
        if (t->perf_map || t->modules.n_anon_code == 0 || t->jit_source.root_fd < 0) {
                jit_names_source_done(&t->jit_source);
                return;
        }
        j = calloc(1, sizeof(*j));
        if (!j) {
                jit_names_source_done(&t->jit_source);
                return;
        }
        *j = (struct jit_names_job) { .m = m, .target_id = t->id, .source = t->jit_source };
        t->jit_source = (struct jit_names_source) { .root_fd = -EBADF };
        if (worker_submit(m->worker, j, run, done) < 0) {
                jit_names_source_done(&j->source);
                free(j);
        }
}
