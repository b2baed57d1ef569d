/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's forks: each counted; followed (attach with "follow_forks"): attached as a target of
 * its own, with its parent's options, remembering whose child it is (a report or history of the
 * parent's pid with "children" takes the whole family in); else the probes it inherited cleared. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "detacher.h"
#include "exit-hold.h"
#include "fork-watch.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "proc-children.h"
#include "process-snapshot.h"
#include "protocol.h"
#include "target-files.h"
#include "util.h"

/* The paths of the objects a target attached with --obj was told to probe. */
static int named_objects(const struct target *t, char ***ret)
{
        char **v;

        *ret = NULL;
        if (!t->objects_named || t->n_objects == 0)
                return 0;
        v = calloc(t->n_objects, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_objects; i++)
                v[i] = t->objects[i].path;      /* borrowed */
        *ret = v;
        return (int)t->n_objects;
}

/* One warning a second at most: a process that forks without end past max_targets would flood
 * the journal. */
#define NOT_FOLLOWED_WARNING_USEC (1000ULL * 1000)

/* A child not followed, for any reason: counted in its parent (children_missed), and logged. */
static void not_followed(struct manager *m, struct target *parent, pid_t child, const char *why)
{
        uint64_t now = now_monotonic_usec();

        parent->children_missed++;
        if (m->follow_warned_usec && now - m->follow_warned_usec < NOT_FOLLOWED_WARNING_USEC) {
                m->follow_warnings_held++;
                return;
        }
        log_warning("Not following pid %d, forked by traced pid %d (%s): %s (and %" PRIu64 " more children "
                    "not followed since the last such warning)", (int)child, (int)parent->pid, parent->comm, why,
                    m->follow_warnings_held);
        m->follow_warned_usec = now;
        m->follow_warnings_held = 0;
}

/* A child that execs right after its fork (a shell's command, a posix_spawn) may be caught in its
 * exec, its maps empty, or before its loader mapped its libraries: no allocator to be found yet.
 * Tried again this often. */
#define FOLLOW_RETRY_USEC (5ULL * 1000)
#define FOLLOW_TRIES_MAX 40U

static void arm_timer(struct manager *m)
{
        uint64_t next = pending_ops_next_due(&m->pending);

        if (!next)
                return;
        if (sd_event_source_set_time(m->follow_timer, next) < 0 ||
            sd_event_source_set_enabled(m->follow_timer, SD_EVENT_ONESHOT) < 0)
                log_warning("Cannot schedule following forked children again: they wait for the detacher");
}

/* A child gone before it could be attached (or held): counted (children_missed_exited), no failure
 * worth a warning; most of a shell's commands are. */
static void went_unfollowed(struct target *parent)
{
        parent->children_missed++;
        parent->children_missed_exited++;
}

static void defer(struct manager *m, struct target *parent, pid_t child, unsigned tries, uint64_t not_before_usec)
{
        if (pending_ops_add(&m->pending, &(struct pending_op) {
                        .kind = PENDING_FOLLOW, .state = PENDING_QUEUED, .pid = child, .parent_id = parent->id,
                        .tries = tries, .not_before_usec = not_before_usec }) < 0)
                not_followed(m, parent, child, "out of memory");
}

bool manager_pid_gone(pid_t pid)
{
        _cleanup_close_ int fd = (int)syscall(SYS_pidfd_open, pid, 0);

        if (fd < 0)
                return errno == ESRCH;
        return poll(&(struct pollfd) { .fd = fd, .events = POLLIN }, 1, 0) > 0;
}

/* Answer for a child held at its birth, if it is: it goes on, traced (and scanned at its exit when
 * scan; held at its execs and new code until their tables are in when hold_code) or let go. */
static void release(const struct manager *m, const struct target *parent, pid_t child, bool followed, bool scan,
                    bool hold_code)
{
        struct exit_hold *h = manager_family_hold(m, parent);

        if (h)
                exit_hold_answer_child(h, child, followed, scan, hold_code);
}

int manager_attach_follower(struct manager *m, pid_t pid, const struct follower_options *o, struct target **ret,
                            char **error)
{
        struct target_config filter = o->filter;
        struct target *t = NULL;
        int r;

        assert(m);
        assert(o);
        assert(ret);
        manager_sample_first_limit(m, &filter);
        r = target_attach(&m->env, &(struct target_attach_params) {
                .pid = pid, .objs = o->objs, .n_objs = o->n_objs, .filter = filter,
                .ring_depth = m->config.ring_depth, .track_mmap = o->track_mmap, .unwind = o->unwind,
                .record_at_once = true,
        }, &t, error);
        if (r < 0)
                return r;
        (void)manager_target_phase(t, r > 0 ? TARGET_PHASE_AWAITING_TABLES : TARGET_PHASE_RECORDING);
        t->follow_forks = true;
        t->asker_uid = o->asker_uid;
        t->asker_gid = o->asker_gid;
        t->asked_by_user = o->asked_by_user;
        r = manager_add_target(m, t);
        if (r < 0) {
                (void)target_stop(&m->env, t, false);
                target_free(t);
                free(*error);
                *error = NULL;
                return error_set(error, r, "cannot watch its exit");
        }
        *ret = t;
        return 0;
}

static void follow(struct manager *m, struct target *parent, pid_t child, unsigned tries)
{
        _cleanup_free_ char *error = NULL;
        _cleanup_free_ char **objs = NULL;
        struct target *t = manager_find_target(m, child);
        struct follower_options o;
        int n_objs, r;

        if (t && !target_phase_exited(t->phase)) {
                parent->children_followed++;    /* attached already (by a request of its own) */
                release(m, parent, child, true, false, false);
                return;
        }
        if (manager_live_targets(m) >= m->config.max_targets) {
                not_followed(m, parent, child, "max_targets processes are traced already");
                release(m, parent, child, false, false, false);
                return;
        }
        /* the probes of an earlier process of that pid are still going: it waits (what it
         * allocates meanwhile is not seen); not for others' purges, as an attach request does */
        if (detacher_pid_busy(m->env.detacher, child)) {
                defer(m, parent, child, tries, 0);
                return;
        }
        n_objs = named_objects(parent, &objs);
        if (n_objs < 0) {
                not_followed(m, parent, child, "out of memory");
                release(m, parent, child, false, false, false);
                return;
        }
        /* with the parent's settings as asked: a child starts exact (or at the asked mean) even
         * when memleakd samples the parent because it filled its share of the table */
        o = (struct follower_options) {
                .filter = parent->filter, .objs = objs, .n_objs = (size_t)n_objs, .track_mmap = parent->track_mmap,
                .unwind = parent->unwind.mode, .asker_uid = parent->asker_uid, .asker_gid = parent->asker_gid,
                .asked_by_user = parent->asked_by_user,
        };
        if (parent->auto_sample.n_changes > 0)
                o.filter.sample_bytes = parent->auto_sample.sample_bytes_asked;
        r = manager_attach_follower(m, child, &o, &t, &error);
        /* -ENOENT: no allocator mapped yet; -ESRCH: no file mapped at all, as for a moment in its
         * exec (or its exit) */
        if ((r == -ENOENT || r == -ESRCH) && tries + 1 < FOLLOW_TRIES_MAX && !manager_pid_gone(child)) {
                defer(m, parent, child, tries + 1, now_monotonic_usec() + FOLLOW_RETRY_USEC);
                return;
        }
        if (r < 0) {
                if (manager_pid_gone(child))
                        went_unfollowed(parent);
                else
                        not_followed(m, parent, child, error ?: strerror(-r));
                release(m, parent, child, false, false, false);
                return;
        }
        t->parent_id = parent->id;
        t->parent_pid = parent->pid;
        /* who its parent is beyond this daemon's ids: what a restart links it to it again by */
        if (parent->proc_start_time == 0)
                (void)manager_state_start_time(parent->pid, &parent->proc_start_time);
        if (parent->proc_start_time)
                t->parent_link = (struct target_parent_link) { parent->pid, parent->proc_start_time };
        (void)target_inherit_watch(t, parent);     /* without memory: not reported under it */
        parent->children_followed++;
        /* recorded from here on: it runs; scanned at its exit when every block of it is recorded;
         * walked by tables, held at its execs and new code until they are in, as its program is */
        release(m, parent, child, true, t->filter.sample_bytes <= 1, t->unwind.cache != NULL);
        log_info("Following pid %d (%s), forked by traced pid %d (%s): %s allocator, %zu object(s)", (int)t->pid,
                 t->comm, (int)parent->pid, parent->comm, t->allocator, t->n_objects);
        /* it may have forked before it was followed (or before its parent was attached) */
        manager_follow_existing_children(m, t);
}

void manager_follow_child(struct manager *m, struct target *parent, pid_t child)
{
        assert(m);
        assert(parent);
        follow(m, parent, child, 0);
        arm_timer(m);
}

void manager_follow_existing_children(struct manager *m, struct target *t)
{
        _cleanup_free_ pid_t *children = NULL;
        size_t n = 0;
        int r;

        assert(m);
        assert(t);
        if (!t->follow_forks || target_phase_exited(t->phase) || t->kernel || t->exec || manager_family_hold(m, t))
                return;
        fork_watch_drain(m->forks);     /* the fork events in the ring first: each child once */
        r = proc_children(t->pid, &children, &n);
        if (r < 0) {
                if (r != -ENOENT)
                        log_warning_errno(r, "Cannot list the children of pid %d (%s), not following them: %m",
                                          (int)t->pid, t->comm);
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const struct target *c = manager_find_target(m, children[i]);

                if (target_note_child(t, children[i]) || (c && !target_phase_exited(c->phase)))
                        continue;       /* counted at its fork already, or attached itself */
                t->children_forked++;
                follow(m, t, children[i], 0);
        }
        arm_timer(m);
}

void manager_follow_pending(struct manager *m)
{
        _cleanup_free_ struct pending_op *due = NULL;
        uint64_t now = now_monotonic_usec();
        size_t n_due = 0;

        assert(m);
        /* taken out first: following one may queue it again */
        due = malloc(MAX(m->pending.n, (size_t)1) * sizeof(*due));
        if (!due)
                return;
        for (size_t i = 0; i < m->pending.n; i++) {
                struct pending_op *op = &m->pending.ops[i];

                if (op->kind != PENDING_FOLLOW || op->state != PENDING_QUEUED || op->not_before_usec > now)
                        continue;
                due[n_due++] = *op;
                op->state = PENDING_DONE;
        }
        pending_ops_prune(&m->pending);
        for (size_t i = 0; i < n_due; i++) {
                struct target *parent = manager_find_target_by_id(m, due[i].parent_id);

                /* a parent gone meanwhile (dropped, detached) takes its followers with it */
                if (parent)
                        follow(m, parent, due[i].pid, due[i].tries);
        }
        arm_timer(m);
}

void manager_follow_done(struct manager *m)
{
        assert(m);
        for (size_t i = 0; i < m->pending.n; i++)
                if (m->pending.ops[i].kind == PENDING_FOLLOW)
                        m->pending.ops[i].state = PENDING_DONE;
        pending_ops_prune(&m->pending);
}

/* How long after a target forks its child's inherited probes are cleared: forks close together
 * (a server starting its workers) share the sweep. */
#define CHILDREN_SWEEP_DELAY_USEC (20ULL * 1000)

/* The probes t's children inherited cleared soon (those of children not traced): forks close
 * together share the sweep. */
static void sweep_children(struct manager *m, struct target *t)
{
        int r;

        t->children_pending = true;
        r = sd_event_source_set_time_relative(m->children_timer, CHILDREN_SWEEP_DELAY_USEC);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->children_timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule clearing the probes of pid %d's children: %m", (int)t->pid);
}

void manager_target_forked(struct manager *m, pid_t parent, pid_t child, bool shares_memory)
{
        struct target *t = manager_find_target(m, parent);

        assert(m);
        if (!t || target_phase_exited(t->phase))
                return;
        /* the copy a reachability snapshot made: never runs, is killed after the scan */
        if (process_snapshot_owns(parent, child))
                return;
        /* not when it was found running as t was attached, its fork event coming later */
        if (!target_note_child(t, child)) {
                t->children_forked++;
                if (t->follow_forks)
                        manager_follow_child(m, t, child);
        }
        if (shares_memory)
                return;         /* no breakpoints of its own to clear */
        log_debug("Traced pid %d forked pid %d: clearing the probes it inherited unless it is traced", (int)parent,
                  (int)child);
        sweep_children(m, t);
}

void manager_follow_adopted(struct manager *m)
{
        assert(m);
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];
                uint64_t forked = t->children_forked;

                if (!t->adopted || target_phase_exited(t->phase))
                        continue;
                /* its children forked while no daemon ran: their probes inherited, and not
                 * followed yet (the fork tracepoint's link is not kept over a restart) */
                sweep_children(m, t);
                manager_follow_existing_children(m, t);
                if (t->children_forked > forked)
                        log_info("pid %d (%s) forked %" PRIu64 " children while memleakd was down: following them "
                                 "from now on (what they allocated before is not seen)", (int)t->pid, t->comm,
                                 t->children_forked - forked);
        }
}

void manager_clear_children(struct manager *m)
{
        assert(m);
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];
                int r;

                if (!t->children_pending)
                        continue;
                t->children_pending = false;
                r = target_clear_inherited_probes(&m->env, t);
                if (r < 0)
                        log_warning_errno(r, "Cannot clear the probes pid %d's children inherited: %m", (int)t->pid);
        }
}
