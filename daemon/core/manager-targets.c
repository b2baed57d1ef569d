/* SPDX-License-Identifier: GPL-2.0-only */
/* The manager's targets: added, each change of phase made (manager_target_phase()), noticed when
 * they exit, kept within bounds once exited, looked at on each snapshot tick (mappings, libraries
 * loaded since, totals), their execs and new code followed. */
#include <assert.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include "bpf-loader.h"
#include "fork-watch.h"
#include "exit-hold.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "proc-creds.h"
#include "mapping-log.h"
#include "perf-map.h"
#include "probes.h"
#include "snapshot.h"
#include "stack-collect.h"
#include "stack-totals.h"
#include "target-files.h"
#include "target-unwind.h"
#include "util.h"
#include "worker.h"

void manager_targets_changed(struct manager *m)
{
        bool processes = false;
        unsigned live = manager_live_targets(m);
        int r;

        assert(m);
        /* Follow forks while some process is traced, and only then. */
        for (size_t i = 0; i < m->n_targets && !processes; i++)
                processes = !target_phase_exited(m->targets[i]->phase) && !m->targets[i]->kernel;
        r = fork_watch_set_active(m->forks, processes);
        if (r < 0)
                log_warning_errno(r, "Cannot watch traced processes fork, ignoring: their children keep "
                                  "paying for the probes they inherit: %m");
        if (!processes) {
                if (m->exec_forget)
                        manager_state_exec_forget(m, false);
                m->exec_forget = (bpf_link__destroy(m->exec_forget), NULL);
        } else if (!m->exec_forget && !(m->exec_forget = bpf_loader_attach_exec_forget(m->env.skel)))
                log_warning_errno(-errno, "Cannot watch traced processes exec, ignoring: a process that execs "
                                  "another program keeps its old image's blocks outstanding: %m");
        else
                manager_state_exec_forget(m, true);
        manager_state_save(m);
        (void)sd_notifyf(false, "STATUS=Tracing %u process%s", live, live == 1 ? "" : "es");
}

bool manager_target_phase(struct target *t, enum target_phase to)
{
        assert(t);
        if (target_phase_change(&t->phase, to) >= 0)
                return true;
        log_error("BUG: pid %d (%s), target %" PRIu64 ", cannot go from phase %s to %s; left %s. Please report "
                  "this with the journal around it", (int)t->pid, t->comm, t->id,
                  target_phase_to_string(t->phase) ?: "?", target_phase_to_string(to) ?: "?",
                  target_phase_to_string(t->phase) ?: "?");
        return false;
}

void manager_remove_target(struct manager *m, struct target *t)
{
        struct exit_hold *family;
        bool live;

        assert(m);
        assert(t);
        live = !target_phase_exited(t->phase);
        manager_exited_forget(m, t);    /* its report, kept for a restart, goes too */
        (void)manager_target_phase(t, TARGET_PHASE_DROPPED);
        /* a followed child detached (or dropped) while its family's tracer still traces it: no
         * answer would come for its new code, it is not held there any longer */
        family = t->exit_hold ? NULL : manager_family_hold(m, t);
        if (family)
                exit_hold_release_code(family, t->pid);
        for (size_t i = 0; i < m->n_targets; i++) {
                if (m->targets[i] != t)
                        continue;
                memmove(&m->targets[i], &m->targets[i + 1], (m->n_targets - i - 1) * sizeof(*m->targets));
                m->n_targets--;
                break;
        }
        /* those followed from it stay in the family of its parent (a report of the first pid with
         * its children still takes them in); their forked_from stays the pid that forked them */
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *child = m->targets[i];

                if (child->parent_id != t->id)
                        continue;
                child->parent_id = t->parent_id;
                child->parent_link = t->parent_id ? t->parent_link : (struct target_parent_link) {};
                /* and so does its kept report (the state file is written at the change) */
                if (child->exited_saved)
                        manager_exited_save(m, child);
        }
        if (live)
                (void)target_stop(&m->env, t, false);
        t->exit_hold = exit_hold_free(t->exit_hold);
        target_free(t);
        manager_targets_changed(m);
}

uint64_t manager_exited_bytes(const struct manager *m)
{
        uint64_t bytes = 0;

        assert(m);
        for (size_t i = 0; i < m->n_targets; i++)
                if (target_phase_exited(m->targets[i]->phase))
                        bytes += target_memory_bytes(m->targets[i]);
        return bytes;
}

/* Whether an exited target left nothing outstanding: its report has nothing to show. */
static bool left_nothing(const struct target *t)
{
        if (!t->frozen)
                return false;
        for (size_t i = 0; i < t->frozen->rows.n; i++)
                if (t->frozen->rows.rows[i].allocs > 0)
                        return false;
        return true;
}

/* The exited target whose record goes first: the oldest of those that left nothing outstanding
 * (a script's commands, followed), else the oldest; never the newest. */
static struct target *first_to_drop(struct manager *m)
{
        struct target *oldest = NULL, *oldest_empty = NULL, *newest = NULL;

        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];

                if (!target_phase_exited(t->phase))
                        continue;
                if (!newest || t->exited_usec >= newest->exited_usec)
                        newest = t;
        }
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];

                if (!target_phase_exited(t->phase) || t == newest)
                        continue;
                if (!oldest || t->exited_usec < oldest->exited_usec)
                        oldest = t;
                if (left_nothing(t) && (!oldest_empty || t->exited_usec < oldest_empty->exited_usec))
                        oldest_empty = t;
        }
        return oldest_empty ?: oldest;
}

/* Keep at most max_targets records of exited targets, holding at most exited_max_mb: those that
 * left nothing outstanding go first, then the oldest; the newest stays whatever it takes
 * (memleakctl run asks for its report right after). */
static void prune_exited(struct manager *m)
{
        uint64_t max_bytes = (uint64_t)m->config.exited_max_mb << 20;
        size_t exited = 0;

        for (size_t i = 0; i < m->n_targets; i++)
                exited += target_phase_exited(m->targets[i]->phase);
        while (exited > m->config.max_targets || (exited > 1 && manager_exited_bytes(m) > max_bytes)) {
                struct target *oldest = first_to_drop(m);

                if (!oldest)
                        break;
                log_info("Dropping the report of pid %d (%s), which exited: the exited targets' reports hold "
                         "more than exited_max_mb (or max_targets of them)", (int)oldest->pid, oldest->comm);
                m->exited_dropped++;
                manager_remove_target(m, oldest);
                exited--;
        }
}

static void target_exited(struct manager *m, struct target *t)
{
        uint64_t counters[_COUNTER_MAX];
        int r;

        if (!manager_target_phase(t, TARGET_PHASE_EXITING))
                return;
        target_refresh_comm(t);         /* it may have exec'd since the last tick */
        log_info("Target pid %d (%s) exited; keeping its last report", (int)t->pid, t->comm);
        if (t->exit_hold) {
                struct exit_maps maps;

                /* held at its exit (memleakctl run): what it mapped then, libraries it loaded or
                 * a program it exec'd since the last refresh included */
                if (exit_hold_take_maps(t->exit_hold, &maps) > 0) {
                        target_files_adopt_exit_maps(t, &maps.map, maps.fds);
                        perf_map_unref(t->perf_map);
                        t->perf_map = TAKE_PTR(maps.perf_map);
                }
                exit_hold_maps_done(&maps);
        }
        /* Its last mappings are kept in t->modules, with those it made since the last refresh
         * (BPF recorded them): the exited target's stacks still resolve. */
        (void)target_files_refresh(&m->env, t, true);
        manager_jit_names_at_exit(m, t);
        /* its own row of counters: all of them (max_targets rows) took a fork storm's every exit
         * milliseconds to read */
        if (target_counters_read(&m->env, t, counters) >= 0 && counters[COUNTER_LOST_FILE_MAPPINGS] > 0)
                log_warning("%" PRIu64 " file mappings did not fit in the BPF map that records them; frames of "
                            "pid %d (%s) in those files may stay unresolved", counters[COUNTER_LOST_FILE_MAPPINGS],
                            (int)t->pid, t->comm);
        r = target_stop(&m->env, t, true);
        if (r < 0)
                log_warning_errno(r, "Cannot keep the last report of pid %d: %m", (int)t->pid);
        t->exited_usec = now_realtime_usec();
        manager_verdicts_at_exit(m, t); /* then its ring's rows go: its trend needs the sums only */
        (void)manager_target_phase(t, TARGET_PHASE_EXITED);
        manager_exited_save(m, t);      /* a restart keeps it */
        prune_exited(m);
        manager_targets_changed(m);
}

static int on_target_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct target *t = userdata;

        target_exited(t->owner, t);
        return 0;
}

void manager_reap_exited_targets(struct manager *m)
{
        assert(m);
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];
                struct pollfd p = { .fd = t->pidfd, .events = POLLIN };

                if (!target_phase_exited(t->phase) && t->pidfd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)))
                        target_exited(m, t);
        }
}

int manager_add_target(struct manager *m, struct target *t)
{
        struct target *old = manager_find_target(m, t->pid);
        struct target **n;
        int r;

        assert(m);
        assert(t);
        /* an exited one of that pid (a pid reused) stays, with its last report, until pruned */
        if (old && !target_phase_exited(old->phase))
                return -EEXIST;
        n = realloc(m->targets, (m->n_targets + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        m->targets = n;
        /* A process's exit is noticed through its pidfd; the kernel target has none. */
        if (t->pidfd >= 0) {
                r = sd_event_add_io(m->event, &t->exit_source, t->pidfd, EPOLLIN, on_target_exit, t);
                if (r < 0)
                        return r;
                (void)sd_event_source_set_description(t->exit_source, "target-exit");
        }
        t->owner = m;
        t->id = ++m->next_target_id;
        /* who else may see it once it exited (manager-access.c) */
        t->creds_read = !t->kernel && proc_creds_read(t->pid, &t->creds) >= 0;
        m->targets[m->n_targets++] = t;
        prune_exited(m);
        manager_targets_changed(m);
        manager_follow_new_programs_start(m);   /* if it is about to exec, or did as it was attached */
        return 0;
}

void manager_add_exited_target(struct manager *m, struct target *t)
{
        struct target **n;

        assert(m);
        assert(t);
        n = realloc(m->targets, (m->n_targets + 1) * sizeof(*n));
        if (!n) {
                log_error_errno(ENOMEM, "Cannot keep the report of pid %d, which exited: %m", (int)t->pid);
                t->exited_saved = false;        /* its file stays, for the next start */
                target_free(t);
                return;
        }
        m->targets = n;
        t->owner = m;
        t->id = ++m->next_target_id;
        m->targets[m->n_targets++] = t;
        prune_exited(m);
}

void manager_free_targets(struct manager *m)
{
        bool kept = false;

        assert(m);
        /* Those kept go on recording through their pinned links, for the next daemon to adopt. */
        manager_state_save(m);
        for (size_t i = 0; i < m->n_targets; i++) {
                if (manager_state_keeps(m, m->targets[i])) {
                        target_abandon(m->targets[i]);
                        kept = true;
                } else if (!target_phase_exited(m->targets[i]->phase))
                        (void)target_stop(&m->env, m->targets[i], false);
                (void)manager_target_phase(m->targets[i], TARGET_PHASE_DROPPED);
        }
        if (!kept && m->exec_forget)
                manager_state_exec_forget(m, false);
        for (size_t i = 0; i < m->n_targets; i++) {
                m->targets[i]->exit_hold = exit_hold_free(m->targets[i]->exit_hold);
                target_free(m->targets[i]);
        }
        free(m->targets);
        m->targets = NULL;
        m->n_targets = 0;
}

/* A rescan for one target: what it needs, and what makes sure its target is the same. */
struct rescan_job {
        struct manager *manager;
        uint64_t target_id;
        uint32_t probe_epoch;
        struct probes_rescan *rescan;
};

static void rescan_done(void *job, bool cancelled)
{
        struct rescan_job *j = job;
        struct target *t = cancelled ? NULL : manager_find_target(j->manager, probes_rescan_pid(j->rescan));
        struct rescanned_object *objects = NULL;
        size_t n = 0;
        int r;

        if (t && t->id == j->target_id && t->probe_epoch == j->probe_epoch && !target_phase_exited(t->phase) && t->rescanning) {
                t->rescanning = false;
                r = probes_rescan_finish(&j->manager->env, t, j->rescan, &objects, &n);
                if (r < 0 && r != -ENOENT && r != -ESRCH)
                        log_warning_errno(r, "Cannot look at the new mappings of pid %d: %m", (int)t->pid);
                for (size_t i = 0; i < n; i++)
                        if (objects[i].error)
                                log_warning("pid %d mapped %s after the attach; cannot probe it: %s", (int)t->pid,
                                            objects[i].path, objects[i].error);
                        else if (objects[i].forwarded > 0)
                                log_info("pid %d mapped %s after the attach: probed %zu allocator entry points in it"
                                         " (%u operators left to the malloc or free they call)",
                                         (int)t->pid, objects[i].path, objects[i].probes, objects[i].forwarded);
                        else
                                log_info("pid %d mapped %s after the attach: probed %zu allocator entry points in it",
                                         (int)t->pid, objects[i].path, objects[i].probes);
                probes_rescanned_free(objects, n);
        }
        probes_rescan_free(j->rescan);
        free(j);
}

static void rescan_run(void *job)
{
        probes_rescan_run(((struct rescan_job *)job)->rescan);
}

/* Look for files t mapped since the last tick (dlopen), on the worker: one rescan at a time. */
static void start_rescan(struct manager *m, struct target *t)
{
        struct rescan_job *j;
        struct probes_rescan *rescan = NULL;

        if (t->rescanning || probes_rescan_new(&m->env, t, &rescan) < 0 || !rescan)
                return;
        j = malloc(sizeof(*j));
        if (j)
                *j = (struct rescan_job) { .manager = m, .target_id = t->id, .probe_epoch = t->probe_epoch,
                                           .rescan = rescan };
        if (!j || worker_submit(m->worker, j, rescan_run, rescan_done) < 0) {
                free(j);
                probes_rescan_free(rescan);
                return;
        }
        t->rescanning = true;
}

/* Learn the files t mapped since its maps were last read, while it is still there (a library it
 * loaded, a program it exec'd), and probe the allocator entry points of those. */
static void learn_new_files(struct manager *m, struct target *t)
{
        (void)target_files_refresh(&m->env, t, false);  /* loads the unwind tables they need */
        target_refresh_comm(t);         /* an exec renames it */
        start_rescan(m, t);
}

/* The snapshot rows of pid from the totals (sorted by pid): the heap's only (mappings, with
 * --mmap, have rows of their own). NULL without memory. */
static struct snapshot_row *snapshot_rows_of(const struct stack_total *totals, size_t n, pid_t pid,
                                             size_t *ret_n)
{
        struct snapshot_row *rows;
        size_t lo = 0, hi = n, k = 0;

        while (lo < hi) {               /* the first row of pid */
                size_t mid = lo + (hi - lo) / 2;

                if (totals[mid].pid < pid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (hi = lo; hi < n && totals[hi].pid == pid; hi++)
                k += totals[hi].space != ALLOC_SPACE_MMAP;
        rows = snapshot_rows_new(k);
        if (!rows)
                return NULL;
        k = 0;
        for (size_t j = lo; j < hi; j++)
                if (totals[j].space != ALLOC_SPACE_MMAP)
                        rows[k++] = (struct snapshot_row) {
                                .stack_id = totals[j].stack_id,
                                .bytes = totals[j].bytes,
                                .allocs = totals[j].allocs,
                        };
        *ret_n = k;
        return rows;
}

size_t manager_take_snapshots(struct manager *m)
{
        _cleanup_free_ pid_t *pids = calloc(MAX(m->n_targets, (size_t)1), sizeof(pid_t));
        const struct stack_total *totals;
        uint64_t now = now_realtime_usec();
        size_t n = 0, n_totals;
        int r;

        assert(m);
        if (!pids)
                return 0;
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];

                if (target_phase_exited(t->phase))
                        continue;
                pids[n++] = t->pid;
                learn_new_files(m, t);
        }
        if (n == 0) {
                /* nothing traced: the daemon goes back to about its size at start */
                if (stack_totals_release(m->totals))
                        (void)malloc_trim(0);
                return 0;
        }
        r = stack_totals_read(m->totals, bpf_loader_combined_fd(m->env.skel), pids, n, &totals, &n_totals);
        if (r < 0) {
                log_warning_errno(r, "Failed to read the per-stack totals, skipping this snapshot: %m");
                return 0;
        }
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];
                uint64_t counters[_COUNTER_MAX];
                struct snapshot_row *srows;
                size_t n_srows;

                if (target_phase_exited(t->phase))
                        continue;
                srows = snapshot_rows_of(totals, n_totals, t->pid, &n_srows);
                if (!srows)
                        return n_totals;
                (void)snapshot_ring_push(t->ring, now, srows, n_srows);
                if (target_counters_read(&m->env, t, counters) >= 0)
                        snapshot_ring_set_counters(t->ring, counters);
        }
        manager_reclaim_tick(m, stack_totals_rows_held(m->totals));
        return n_totals;
}

static bool maps_followed(const struct target *t)
{
        return !target_phase_exited(t->phase) && now_monotonic_usec() < t->maps_followed_until_usec;
}

bool manager_follow_new_programs(struct manager *m)
{
        bool any = false;

        assert(m);
        for (size_t i = 0; i < m->n_targets; i++) {
                if (!maps_followed(m->targets[i]))
                        continue;
                learn_new_files(m, m->targets[i]);
                any = true;
        }
        return any;
}

void manager_follow_new_programs_start(struct manager *m)
{
        int enabled = SD_EVENT_OFF;
        bool any = false;

        assert(m);
        for (size_t i = 0; i < m->n_targets && !any; i++)
                any = maps_followed(m->targets[i]);
        /* none to follow; or armed already: not put off (execs coming faster than it fires would
         * starve it) */
        if (!any || (sd_event_source_get_enabled(m->exec_timer, &enabled) >= 0 && enabled != SD_EVENT_OFF))
                return;
        if (sd_event_source_set_time_relative(m->exec_timer, EXEC_FOLLOW_INTERVAL_USEC) < 0 ||
            sd_event_source_set_enabled(m->exec_timer, SD_EVENT_ONESHOT) < 0)
                log_warning("Cannot follow the maps of a program about to start: its first stacks may be "
                            "walked by frame pointers only");
}

/* A target whose recording waited for its tables (target_attach()) starts recording once they
 * are in; if it cannot, the attach is answered with why, and the target goes. */
static void register_deferred(struct manager *m, struct target *t)
{
        char *error = NULL;
        int r;

        if (t->phase != TARGET_PHASE_AWAITING_TABLES || target_unwind_pending(t))
                return;
        r = target_register(&m->env, t, &error);
        if (r >= 0) {
                (void)manager_target_phase(t, TARGET_PHASE_RECORDING);
                log_debug("Pid %d is recorded from now on: its unwind tables are in", (int)t->pid);
                manager_follow_new_programs_start(m);   /* if it exec'd meanwhile */
                return;
        }
        log_warning("Cannot start recording pid %d (%s): %s", (int)t->pid, t->comm, error ?: strerror(-r));
        t->register_errno = r;
        t->register_error = error;
        (void)manager_target_phase(t, TARGET_PHASE_FAILED);
}

/* A program its exit holder holds at each exec and new code (bpf/memleak.bpf.c, code_holds), and
 * a child of its family followed, goes on once the tables of what it maps are in. */
static void release_code_holds(struct manager *m, struct target *t)
{
        struct exit_hold *h;

        uint64_t held;

        if (t->code_held == 0 || target_unwind_pending(t) || !(h = manager_family_hold(m, t)))
                return;
        exit_hold_tables_ready(h, t->pid, t->code_held);
        held = now_monotonic_usec() - t->code_held_since_usec;
        t->code_hold_stats.holds += t->code_held;
        t->code_hold_stats.held_usec += held;
        t->code_hold_stats.longest_usec = MAX(t->code_hold_stats.longest_usec, held);
        if (held >= CODE_HOLD_MAX_USEC)
                t->code_hold_stats.past_limit += t->code_held;
        t->code_held = 0;
}

/* t exec'd or mapped new code: held there when its family's tracer holds it (counted even when it
 * does not: an answer for a process not held is dropped). */
static void note_code_held(struct manager *m, struct target *t)
{
        if (!manager_family_hold(m, t))
                return;
        if (t->code_held++ == 0)
                t->code_held_since_usec = now_monotonic_usec();
}

void manager_unwind_tables_loaded(struct manager *m)
{
        assert(m);
        for (size_t i = 0; i < m->n_targets; i++) {
                register_deferred(m, m->targets[i]);
                (void)target_unwind_refresh(m->targets[i]);
                manager_adopt_take_over(m, m->targets[i]);
                release_code_holds(m, m->targets[i]);
        }
}

void manager_drop_failed_targets(struct manager *m)
{
        assert(m);
        for (size_t i = 0; i < m->n_targets;)
                if (m->targets[i]->phase == TARGET_PHASE_FAILED)
                        manager_remove_target(m, m->targets[i]);
                else
                        i++;
}

void manager_target_execd(struct manager *m, pid_t pid, bool from_thread, const char comm[MEMLEAK_COMM_LEN])
{
        struct target *t = manager_find_target(m, pid);
        struct proc_creds c;
        int r;

        assert(m);
        if (!t)
                return;
        /* its exit may have been heard first: the name is still the one it exec'd */
        target_name_after_exec(t, comm);
        if (target_phase_exited(t->phase))
                return;
        /* a set-user-ID program: no longer its user's to see */
        if (proc_creds_read(t->pid, &c) >= 0) {
                t->creds = c;
                t->creds_read = true;
        }
        if (manager_target_beyond_asker(t)) {
                log_info("pid %d exec'd %s, which uid %u, who asked for it, could not trace (set-user-ID, or "
                         "not dumpable): no longer traced", (int)t->pid, comm, (unsigned)t->asker_uid);
                manager_remove_target(m, t);
                return;
        }
        /* BPF emptied its mapping list: walks find frames by their vmas until it is written again,
         * now, from the new program's maps, and as its loader maps more */
        target_unwind_execd(t);
        note_code_held(m, t);
        learn_new_files(m, t);
        release_code_holds(m, t);
        target_follow_maps(t, TARGET_MAPS_FOLLOW_AFTER_EXEC_USEC);
        manager_follow_new_programs_start(m);
        if (!from_thread)
                return;
        /* its probes' links named its old leader (bpf/memleak.bpf.c, forget_exec_image) */
        r = target_reprobe(&m->env, t);
        if (r == -ENOTRECOVERABLE)
                log_warning("pid %d (%s) exec'd another program from one of its threads: its --obj probes "
                            "no longer apply; attach it again to trace it", (int)t->pid, t->comm);
        else
                log_info("pid %d exec'd another program from one of its threads: probing its new image "
                         "again", (int)t->pid);
}

void manager_target_code_mapped(struct manager *m, pid_t pid)
{
        struct target *t = manager_find_target(m, pid);

        assert(m);
        if (!t || target_phase_exited(t->phase))
                return;
        note_code_held(m, t);
        if (t->unwind.cache) {
                /* (not walked by tables: the snapshot tick learns its files) */
                log_debug("pid %d mapped code not examined yet: reading its maps", (int)pid);
                learn_new_files(m, t);
        }
        release_code_holds(m, t);
}

