/* SPDX-License-Identifier: GPL-2.0-only */
/* Whole services (attach "unit" or "cgroup"): each process in the cgroup (and the cgroups below
 * it) attached as a target of its own with the watch's options, following its forks; those that
 * enter later found by BPF (a fork into it by a process not traced, an exec in it), those moved
 * in and never exec'ing by a rescan of cgroup.procs on each snapshot tick; the directory found
 * again when it is made anew (a unit's restart: inotify on its parent, and each tick). The
 * processes that went before they could be attached are counted (missed), never dropped
 * silently. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cgroup-events.h"
#include "cgroup-path.h"
#include "detacher.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "proc-match.h"
#include "state-file.h"
#include "protocol.h"
#include "reply-fields.h"
#include "util.h"

/* Watches at most (each holds its cgroups in BPF's watched_cgroups, MEMLEAK_CGROUP_WATCHES_MAX
 * in all). */
#define WATCHES_MAX 32u

/* A process caught in its exec (no allocator mapped yet) is tried again this often, this many
 * times, as a followed child is (manager-follow.c). */
#define WATCH_RETRY_USEC (5ULL * 1000)
#define WATCH_TRIES_MAX 40U
/* The latest processes counted missed, not counted twice (a child's fork and its exec are two
 * events). */
#define WATCH_MISSED_RECENT 16U

enum watch_kind {
        WATCH_UNIT,
        WATCH_CGROUP,
        WATCH_EXE,                      /* a program by its file (memleakd.conf's [target] exe=) */
        WATCH_COMM,                     /* a program by its name ([target] comm=) */
};

struct watch {
        uint32_t id;
        char *name;                     /* the unit, or the cgroup as asked; the program's path or name */
        enum watch_kind kind;
        char *path;                     /* its directory now; NULL while there is none */
        dev_t exe_dev;                  /* WATCH_EXE: its file as BPF watches it (0, 0: none) */
        ino_t exe_ino;
        bool comm_watched;              /* WATCH_COMM: its name in BPF's map */
        bool declared;                  /* made for memleakd.conf's [target] (not kept in the
                                         * state directory: the config makes it again) */
        uint64_t *cgroup_ids;           /* its cgroup and those below it, in BPF's map */
        size_t n_cgroup_ids;
        int inotify_wd;                 /* on the parent directory (IN_CREATE); -1 */
        /* its options (attach's) */
        struct follower_options options;
        char *objs[MEMLEAK_MAX_OBJS];
        /* what it found */
        uint64_t attached;              /* processes attached over its life */
        uint64_t missed;                /* gone before they could be attached */
        uint64_t failed;                /* could not be attached (logged why) */
        uint64_t lost_before;           /* BPF events lost for cgroups no longer watched */
        pid_t *refused;                 /* pids that could not be attached: not tried each tick */
        size_t n_refused;
        bool map_warned;                /* said once that BPF's map of cgroups is full */
        pid_t missed_recent[WATCH_MISSED_RECENT];
        unsigned missed_next;
};

struct watch_retry {
        pid_t pid;
        uint32_t watch_id;
        unsigned tries;
        uint64_t due_usec;
};

struct manager_watches {
        char *root;                     /* the cgroup2 mount; NULL: none found */
        struct cgroup_events *events;
        int inotify_fd;
        sd_event_source *inotify_source;
        sd_event_source *retry_timer;
        struct watch **watches;
        size_t n;
        uint32_t next_id;
        struct watch_retry *retries;
        size_t n_retries;
};

static struct watch *watch_free(struct watch *w)
{
        if (!w)
                return NULL;
        free(w->name);
        free(w->path);
        free(w->cgroup_ids);
        free(w->refused);
        for (size_t i = 0; i < MEMLEAK_MAX_OBJS; i++)
                free(w->objs[i]);
        free(w);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct watch *, watch_free)

static cJSON *watch_json(const struct manager *m, const struct watch *w);

static struct watch *find_watch_by_id(const struct manager *m, uint32_t id)
{
        for (size_t i = 0; m->watches && id && i < m->watches->n; i++)
                if (m->watches->watches[i]->id == id)
                        return m->watches->watches[i];
        return NULL;
}

static const char *kind_name(enum watch_kind kind)
{
        static const char *const names[] = {
                [WATCH_UNIT] = "unit", [WATCH_CGROUP] = "cgroup", [WATCH_EXE] = "program", [WATCH_COMM] = "program",
        };

        return names[kind];
}

static bool is_program(const struct watch *w)
{
        return w->kind == WATCH_EXE || w->kind == WATCH_COMM;
}

static struct watch *find_watch(const struct manager *m, enum watch_kind kind, const char *name)
{
        for (size_t i = 0; m->watches && name && i < m->watches->n; i++) {
                struct watch *w = m->watches->watches[i];

                if (w->kind == kind && strcmp(w->name, name) == 0)
                        return w;
        }
        return NULL;
}

static struct watch *find_watch_of(const struct manager *m, const struct memleak_request *req)
{
        return req->unit ? find_watch(m, WATCH_UNIT, req->unit) : find_watch(m, WATCH_CGROUP, req->cgroup);
}

static void set_watch(struct target *t, const struct watch *w)
{
        char *name;

        t->watch_id = w->id;
        if (is_program(w))
                return;         /* reported under its pid alone: no unit or cgroup of its own */
        name = strdup(w->name);
        if (!name)
                return;         /* without memory: its pid still reported, not under the watch */
        free(t->watch_name);
        t->watch_name = name;
        t->watch_is_unit = w->kind == WATCH_UNIT;
}

static bool refused(const struct watch *w, pid_t pid)
{
        for (size_t i = 0; i < w->n_refused; i++)
                if (w->refused[i] == pid)
                        return true;
        return false;
}

static void note_refused(struct watch *w, pid_t pid)
{
        pid_t *grown = realloc(w->refused, (w->n_refused + 1) * sizeof(*grown));

        if (!grown)
                return;         /* tried again at the next tick */
        w->refused = grown;
        w->refused[w->n_refused++] = pid;
}

static void forget_refused(struct watch *w, pid_t pid)
{
        size_t k = 0;

        for (size_t i = 0; i < w->n_refused; i++)
                if (w->refused[i] != pid)
                        w->refused[k++] = w->refused[i];
        w->n_refused = k;
}

static void count_missed(struct watch *w, pid_t pid)
{
        for (size_t i = 0; i < WATCH_MISSED_RECENT; i++)
                if (w->missed_recent[i] == pid)
                        return;
        w->missed_recent[w->missed_next++ % WATCH_MISSED_RECENT] = pid;
        w->missed++;
        log_debug("Pid %d of %s %s went before it could be attached", (int)pid, kind_name(w->kind),
                  w->name);
}

static bool retrying(const struct manager_watches *ws, pid_t pid)
{
        for (size_t i = 0; i < ws->n_retries; i++)
                if (ws->retries[i].pid == pid)
                        return true;
        return false;
}

static void arm_retry(struct manager_watches *ws)
{
        uint64_t next = 0;

        for (size_t i = 0; i < ws->n_retries; i++)
                if (!next || ws->retries[i].due_usec < next)
                        next = ws->retries[i].due_usec;
        if (!next || !ws->retry_timer)
                return;
        if (sd_event_source_set_time(ws->retry_timer, next) < 0 ||
            sd_event_source_set_enabled(ws->retry_timer, SD_EVENT_ONESHOT) < 0)
                log_warning("Cannot schedule attaching a watched cgroup's new processes again: the next snapshot "
                            "tick finds them");
}

static void queue_retry(struct manager_watches *ws, struct watch *w, pid_t pid, unsigned tries, uint64_t due_usec)
{
        struct watch_retry *grown = realloc(ws->retries, (ws->n_retries + 1) * sizeof(*grown));

        if (!grown)
                return;         /* the next snapshot tick finds it */
        ws->retries = grown;
        ws->retries[ws->n_retries++] = (struct watch_retry) {
                .pid = pid, .watch_id = w->id, .tries = tries, .due_usec = due_usec };
}

/* Whether pid waits to be followed from a target's fork already (that follow takes it). */
static bool followed_soon(const struct manager *m, pid_t pid)
{
        for (size_t i = 0; i < m->pending.n; i++)
                if (m->pending.ops[i].kind == PENDING_FOLLOW && m->pending.ops[i].state == PENDING_QUEUED &&
                    m->pending.ops[i].pid == pid)
                        return true;
        return false;
}

/* Attach pid, found in w's cgroup, with w's options. */
static void watch_attach(struct manager *m, struct watch *w, pid_t pid, unsigned tries)
{
        struct manager_watches *ws = m->watches;
        _cleanup_free_ char *error = NULL;
        struct target *t = manager_find_target(m, pid);
        int r;

        if (t && !target_phase_exited(t->phase)) {
                /* traced already (followed from its parent, asked for itself, or adopted after a
                 * restart, which keeps no watch): one of w's from now on, if of none */
                if (!t->watch_id)
                        set_watch(t, w);
                return;
        }
        if (pid == getpid() || refused(w, pid))
                return;
        if (tries == 0 && (retrying(ws, pid) || followed_soon(m, pid)))
                return;
        if (manager_live_targets(m) >= m->config.max_targets) {
                w->failed++;
                note_refused(w, pid);
                log_warning("Not attaching pid %d of %s %s: max_targets processes are traced already", (int)pid,
                            kind_name(w->kind), w->name);
                return;
        }
        if (detacher_pid_busy(m->env.detacher, pid)) {
                queue_retry(ws, w, pid, tries, now_monotonic_usec() + WATCH_RETRY_USEC);
                return;
        }
        r = manager_attach_follower(m, pid, &w->options, &t, &error);
        if ((r == -ENOENT || r == -ESRCH) && tries + 1 < WATCH_TRIES_MAX && !manager_pid_gone(pid)) {
                queue_retry(ws, w, pid, tries + 1, now_monotonic_usec() + WATCH_RETRY_USEC);
                return;
        }
        if (r < 0) {
                if (manager_pid_gone(pid)) {
                        count_missed(w, pid);
                        return;
                }
                w->failed++;
                note_refused(w, pid);
                log_warning("Cannot attach to pid %d of %s %s, ignoring it: %s", (int)pid,
                            kind_name(w->kind), w->name, error ?: strerror(-r));
                return;
        }
        set_watch(t, w);
        w->attached++;
        log_info("Attached to pid %d (%s) of %s %s: %s allocator, %zu object(s)", (int)t->pid, t->comm,
                 kind_name(w->kind), w->name, t->allocator, t->n_objects);
        manager_follow_existing_children(m, t);
}

static int on_retry_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        struct manager_watches *ws = m->watches;
        _cleanup_free_ struct watch_retry *due = NULL;
        uint64_t now = now_monotonic_usec();
        size_t n_due = 0, k = 0;

        /* taken out first: attaching may queue them again */
        due = malloc(MAX(ws->n_retries, (size_t)1) * sizeof(*due));
        if (!due)
                return 0;
        for (size_t i = 0; i < ws->n_retries; i++)
                if (ws->retries[i].due_usec <= now)
                        due[n_due++] = ws->retries[i];
                else
                        ws->retries[k++] = ws->retries[i];
        ws->n_retries = k;
        for (size_t i = 0; i < n_due; i++) {
                struct watch *w = find_watch_by_id(m, due[i].watch_id);

                if (w)
                        watch_attach(m, w, due[i].pid, due[i].tries);
        }
        arm_retry(ws);
        return 0;
}

static void on_cgroup_event(void *userdata, const struct cgroup_event *e)
{
        struct manager *m = userdata;
        struct watch *w = find_watch_by_id(m, e->watch_id);

        if (!w)
                return;
        /* a new process, or one that exec'd another program: tried anew even if its pid was
         * refused before */
        forget_refused(w, (pid_t)e->tgid);
        watch_attach(m, w, (pid_t)e->tgid, 0);
        arm_retry(m->watches);
}

/* Forget w's cgroups in BPF, keeping what was lost for them. */
static void unwatch_cgroups(struct manager *m, struct watch *w)
{
        for (size_t i = 0; i < w->n_cgroup_ids; i++) {
                uint64_t lost = 0;

                if (cgroup_events_lost(m->watches->events, w->cgroup_ids[i], &lost) >= 0)
                        w->lost_before += lost;
                (void)cgroup_events_unwatch(m->watches->events, w->cgroup_ids[i]);
        }
        w->n_cgroup_ids = 0;
}

/* Stop watching w's parent directory, unless another watch's is the same (inotify gives one
 * descriptor per directory). */
static void unwatch_parent(struct manager_watches *ws, struct watch *w)
{
        bool shared = false;

        if (w->inotify_wd < 0)
                return;
        for (size_t i = 0; i < ws->n && !shared; i++)
                shared = ws->watches[i] != w && ws->watches[i]->inotify_wd == w->inotify_wd;
        if (!shared)
                (void)inotify_rm_watch(ws->inotify_fd, w->inotify_wd);
        w->inotify_wd = -1;
}

static void watch_inotify(struct manager *m, struct watch *w)
{
        _cleanup_free_ char *parent = NULL;
        int wd;

        if (m->watches->inotify_fd < 0 || !w->path || w->inotify_wd >= 0)
                return;
        parent = strdup(w->path);
        if (!parent)
                return;
        wd = inotify_add_watch(m->watches->inotify_fd, dirname(parent), IN_CREATE | IN_DELETE | IN_ONLYDIR);
        if (wd >= 0)
                w->inotify_wd = wd;
}

/* Find w's directory (again: a unit restarted has a new one, or none while it is stopped), put
 * its cgroups' ids in BPF's map (those gone taken out), attach the processes in them. Returns
 * 0, or a negative errno when the directory is not there (-ENOENT) or cannot be watched. */
/* A refused pid no longer among pids (what w finds now) may come back as another process. */
static void prune_refused(struct watch *w, const pid_t *pids, size_t n_pids)
{
        size_t k = 0;

        for (size_t i = 0; i < w->n_refused; i++) {
                bool there = false;

                for (size_t j = 0; j < n_pids && !there; j++)
                        there = pids[j] == w->refused[i];
                if (there)
                        w->refused[k++] = w->refused[i];
        }
        w->n_refused = k;
}

/* The processes w finds now (pids) attached, those not traced yet; the refused ones no longer
 * among them forgotten. */
static void attach_found(struct manager *m, struct watch *w, const pid_t *pids, size_t n_pids)
{
        prune_refused(w, pids, n_pids);
        for (size_t i = 0; i < n_pids; i++) {
                const struct target *t = manager_find_target(m, pids[i]);

                /* listed until its parent reaps it: a process that exited (traced, or counted
                 * missed when it entered) is not tried, nor counted, at each tick */
                if ((!t || target_phase_exited(t->phase)) && manager_pid_gone(pids[i]))
                        continue;
                watch_attach(m, w, pids[i], 0);
        }
        arm_retry(m->watches);
}

/* Forget w's program in BPF, keeping what was lost for it. */
static void unwatch_program(struct manager *m, struct watch *w)
{
        struct cgroup_events *e = m->watches->events;
        uint64_t lost = 0;

        if (w->kind == WATCH_COMM && w->comm_watched) {
                if (cgroup_events_program_lost(e, w->name, 0, 0, &lost) >= 0)
                        w->lost_before += lost;
                (void)cgroup_events_unwatch_comm(e, w->name);
                w->comm_watched = false;
        } else if (w->kind == WATCH_EXE && (w->exe_dev || w->exe_ino)) {
                if (cgroup_events_program_lost(e, NULL, w->exe_dev, w->exe_ino, &lost) >= 0)
                        w->lost_before += lost;
                (void)cgroup_events_unwatch_exe(e, w->exe_dev, w->exe_ino);
                w->exe_dev = 0;
                w->exe_ino = 0;
        }
}

/* A program's watch: its file found again (an upgrade replaces it: its new inode watched), the
 * processes that run it now attached. 0, or a negative errno (-ENOENT: no such file now). */
static int program_refresh(struct manager *m, struct watch *w)
{
        struct cgroup_events *e = m->watches->events;
        _cleanup_free_ pid_t *pids = NULL;
        size_t n_pids = 0;
        struct stat st;
        int r;

        if (w->kind == WATCH_EXE) {
                if (stat(w->name, &st) < 0) {
                        unwatch_program(m, w);
                        return -errno;
                }
                if (st.st_dev != w->exe_dev || st.st_ino != w->exe_ino) {
                        unwatch_program(m, w);
                        r = cgroup_events_watch_exe(e, st.st_dev, st.st_ino, w->id);
                        if (r < 0)
                                return r;
                        w->exe_dev = st.st_dev;
                        w->exe_ino = st.st_ino;
                }
        } else if (!w->comm_watched) {
                r = cgroup_events_watch_comm(e, w->name, w->id);
                if (r < 0)
                        return r;
                w->comm_watched = true;
        }
        r = proc_match_list(w->kind == WATCH_COMM ? w->name : NULL, w->exe_dev, w->exe_ino, &pids, &n_pids);
        if (r < 0)
                return r;
        attach_found(m, w, pids, n_pids);
        return 0;
}

static int watch_refresh(struct manager *m, struct watch *w)
{
        struct manager_watches *ws = m->watches;
        _cleanup_free_ uint64_t *ids = NULL;
        _cleanup_free_ pid_t *pids = NULL;
        _cleanup_free_ char *path = NULL;
        size_t n_ids = 0, n_pids = 0, k = 0;
        int r;

        if (is_program(w))
                return program_refresh(m, w);
        r = w->kind == WATCH_UNIT ? cgroup_path_find_unit(ws->root, w->name, &path)
                                  : cgroup_path_resolve(ws->root, w->name, &path);
        if (r >= 0)
                r = cgroup_path_tree(path, &ids, &n_ids);
        if (r < 0) {
                unwatch_cgroups(m, w);
                w->path = (free(w->path), NULL);
                return r;
        }
        /* the cgroups no longer there (or below it) out, the new ones in */
        for (size_t i = 0; i < w->n_cgroup_ids; i++) {
                bool kept = false;

                for (size_t j = 0; j < n_ids && !kept; j++)
                        kept = ids[j] == w->cgroup_ids[i];
                if (kept)
                        w->cgroup_ids[k++] = w->cgroup_ids[i];
                else {
                        uint64_t lost = 0;

                        if (cgroup_events_lost(ws->events, w->cgroup_ids[i], &lost) >= 0)
                                w->lost_before += lost;
                        (void)cgroup_events_unwatch(ws->events, w->cgroup_ids[i]);
                }
        }
        w->n_cgroup_ids = k;
        for (size_t j = 0; j < n_ids; j++) {
                bool known = false;

                for (size_t i = 0; i < w->n_cgroup_ids && !known; i++)
                        known = w->cgroup_ids[i] == ids[j];
                if (known)
                        continue;
                r = cgroup_events_watch(ws->events, ids[j], w->id);
                if (r < 0) {
                        if (!w->map_warned)
                                log_warning_errno(r, "Cannot watch a cgroup below %s for new processes (%u cgroups "
                                                  "are watched at most), the snapshot tick finds them: %m", path,
                                                  MEMLEAK_CGROUP_WATCHES_MAX);
                        w->map_warned = true;
                        continue;
                }
                w->cgroup_ids[w->n_cgroup_ids++] = ids[j];      /* room: below */
        }
        if (!w->path || strcmp(w->path, path) != 0) {
                if (w->inotify_wd >= 0)
                        unwatch_parent(ws, w);
                w->inotify_wd = -1;
                free(w->path);
                w->path = TAKE_PTR(path);
        }
        watch_inotify(m, w);
        r = cgroup_path_procs(w->path, &pids, &n_pids);
        if (r < 0)
                return r;
        attach_found(m, w, pids, n_pids);
        return 0;
}

static int reserve_ids(struct watch *w)
{
        /* a watch's cgroups are at most what BPF's map holds */
        w->cgroup_ids = calloc(MEMLEAK_CGROUP_WATCHES_MAX, sizeof(*w->cgroup_ids));
        return w->cgroup_ids ? 0 : -ENOMEM;
}

static int on_inotify(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct manager *m = userdata;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        ssize_t n;

        /* which directory it was matters little: every watch whose directory is missing or new
         * looks again (a restart takes a few of these) */
        n = read(fd, buf, sizeof(buf));
        if (n <= 0)
                return 0;
        for (size_t i = 0; i < m->watches->n; i++)
                (void)watch_refresh(m, m->watches->watches[i]);
        return 0;
}

int manager_watches_start(struct manager *m)
{
        _cleanup_free_ struct manager_watches *ws = NULL;
        int r;

        assert(m);
        ws = calloc(1, sizeof(*ws));
        if (!ws)
                return -ENOMEM;
        ws->inotify_fd = -1;
        ws->next_id = 1;
        r = cgroup_path_mount(NULL, &ws->root);
        if (r < 0)
                log_info("No cgroup2 file system mounted: units and cgroups cannot be watched");
        r = cgroup_events_new(m->event, m->env.skel, on_cgroup_event, m, &ws->events);
        if (r < 0) {
                free(ws->root);
                return r;
        }
        ws->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (ws->inotify_fd >= 0 &&
            sd_event_add_io(m->event, &ws->inotify_source, ws->inotify_fd, EPOLLIN, on_inotify, m) < 0) {
                close(ws->inotify_fd);
                ws->inotify_fd = -1;
        }
        if (ws->inotify_fd < 0)
                log_warning("Cannot watch cgroup directories being made again: a restarted unit's processes are "
                            "found at the next snapshot tick");
        r = sd_event_add_time(m->event, &ws->retry_timer, CLOCK_MONOTONIC, 0, 1000, on_retry_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(ws->retry_timer, SD_EVENT_OFF);
        if (r < 0) {
                sd_event_source_disable_unref(ws->inotify_source);
                if (ws->inotify_fd >= 0)
                        close(ws->inotify_fd);
                cgroup_events_free(ws->events);
                free(ws->root);
                return r;
        }
        m->watches = TAKE_PTR(ws);
        return 0;
}

void manager_watches_free(struct manager *m)
{
        struct manager_watches *ws;

        assert(m);
        ws = m->watches;
        if (!ws)
                return;
        for (size_t i = 0; i < ws->n; i++)
                watch_free(ws->watches[i]);
        free(ws->watches);
        free(ws->retries);
        sd_event_source_disable_unref(ws->retry_timer);
        sd_event_source_disable_unref(ws->inotify_source);
        if (ws->inotify_fd >= 0)
                close(ws->inotify_fd);
        cgroup_events_free(ws->events);
        free(ws->root);
        free(ws);
        m->watches = NULL;
}

void manager_watches_tick(struct manager *m)
{
        assert(m);
        if (!m->watches)
                return;
        cgroup_events_drain(m->watches->events);
        for (size_t i = 0; i < m->watches->n; i++)
                (void)watch_refresh(m, m->watches->watches[i]);
}

static void watches_changed(struct manager *m)
{
        int r = cgroup_events_set_active(m->watches->events, m->watches->n > 0);

        if (r < 0)
                log_warning_errno(r, "Cannot hear of processes entering watched cgroups, ignoring: they are found "
                                  "at each snapshot tick, those gone by then missed and not counted: %m");
}

/* A new watch of kind for name with options, its processes attached now: 0 and *ret_id, or a
 * negative errno and *error. What it names must be there, unless may_be_absent (a watch made
 * again after a restart, whose unit stopped meanwhile: found by the ticks once it is there). */
static int watch_insert(struct manager *m, enum watch_kind kind, const char *name, bool may_be_absent,
                        const struct follower_options *options, uint32_t *ret_id, char **error)
{
        struct manager_watches *ws = m->watches;
        _cleanup_(watch_freep) struct watch *w = NULL;
        struct watch **grown;
        struct stat st;
        int r;

        if (find_watch(m, kind, name))
                return error_set(error, -EEXIST, "Already watching %s %s", kind_name(kind), name);
        if (ws->n >= WATCHES_MAX)
                return error_set(error, -ENOSPC, "Already watching %u units, cgroups and programs", WATCHES_MAX);
        w = calloc(1, sizeof(*w));
        if (!w)
                return error_set(error, -ENOMEM, "Out of memory");
        w->inotify_wd = -1;
        w->kind = kind;
        w->name = strdup(name);
        if (!w->name || reserve_ids(w) < 0)
                return error_set(error, -ENOMEM, "Out of memory");
        w->options = *options;
        for (size_t i = 0; i < options->n_objs && i < MEMLEAK_MAX_OBJS; i++)
                if (!(w->objs[i] = strdup(options->objs[i])))
                        return error_set(error, -ENOMEM, "Out of memory");
        w->options.objs = w->objs;
        /* what is watched must be there: a name mistyped is said at once */
        if (kind == WATCH_EXE) {
                if (stat(name, &st) < 0) {
                        r = -errno;
                        return error_set(error, r, "Cannot watch program %s: %s", name, strerror(-r));
                }
        } else if (kind != WATCH_COMM) {
                _cleanup_free_ char *path = NULL;

                r = kind == WATCH_UNIT ? cgroup_path_find_unit(ws->root, name, &path)
                                       : cgroup_path_resolve(ws->root, name, &path);
                if (r == -ENOENT && may_be_absent)
                        log_info("%s %s is not there now: its processes are attached once it is", kind_name(kind),
                                 name);
                else if (r == -ENOENT)
                        return error_set(error, r, kind == WATCH_UNIT ? "No cgroup of unit %s below %s (is it running?)"
                                                                      : "No cgroup %s below %s", name, ws->root);
                else if (r == -ENOTDIR)
                        return error_set(error, r, "%s is not a cgroup v2 directory (the cgroup2 mount is %s)",
                                         name, ws->root);
                else if (r < 0)
                        return error_set(error, r, "Cannot find %s %s: %s", kind_name(kind), name, strerror(-r));
        }
        grown = realloc(ws->watches, (ws->n + 1) * sizeof(*grown));
        if (!grown)
                return error_set(error, -ENOMEM, "Out of memory");
        ws->watches = grown;
        w->id = ws->next_id++;
        ws->watches[ws->n++] = w;
        *ret_id = w->id;
        watches_changed(m);
        r = watch_refresh(m, TAKE_PTR(w));
        if (r < 0 && !(r == -ENOENT && may_be_absent))
                log_warning_errno(r, "Cannot find the processes of %s %s yet: %m", kind_name(kind), name);
        return 0;
}

static int watch_add(struct manager *m, const struct memleak_request *req, bool may_be_absent,
                     const struct follower_options *options, uint32_t *ret_id, char **error)
{
        struct manager_watches *ws = m->watches;
        const char *kind = req->unit ? "unit" : "cgroup";

        assert(m);
        assert(req);
        assert(options);
        assert(req->unit || req->cgroup);
        if (!ws || !ws->root)
                return error_set(error, -EOPNOTSUPP, "No cgroup2 file system is mounted: cannot watch a %s", kind);
        if (req->unit && !cgroup_path_unit_name_valid(req->unit))
                return error_set(error, -EINVAL, "\"%s\" is not a unit's name (NAME.service, .scope or .slice)",
                                 req->unit);
        return watch_insert(m, req->unit ? WATCH_UNIT : WATCH_CGROUP, req->unit ?: req->cgroup, may_be_absent,
                            options, ret_id, error);
}

int manager_watch_add(struct manager *m, const struct memleak_request *req, const struct follower_options *options,
                      uint32_t *ret_id, char **error)
{
        return watch_add(m, req, false, options, ret_id, error);
}

int manager_watch_add_program(struct manager *m, bool by_comm, const char *name,
                              const struct follower_options *options, uint32_t *ret_id, char **error)
{
        assert(m);
        assert(name);
        assert(options);
        if (!m->watches)
                return error_set(error, -EOPNOTSUPP, "Cannot hear of processes starting: no program can be watched");
        return watch_insert(m, by_comm ? WATCH_COMM : WATCH_EXE, name, false, options, ret_id, error);
}

/* End w: nothing more watched for it in BPF or inotify, its retries dropped, freed. */
static void watch_drop(struct manager *m, struct watch *w)
{
        struct manager_watches *ws = m->watches;
        size_t k = 0;

        unwatch_cgroups(m, w);
        unwatch_program(m, w);
        unwatch_parent(ws, w);
        for (size_t i = 0; i < ws->n_retries; i++)
                if (ws->retries[i].watch_id != w->id)
                        ws->retries[k++] = ws->retries[i];
        ws->n_retries = k;
        k = 0;
        for (size_t i = 0; i < ws->n; i++)
                if (ws->watches[i] != w)
                        ws->watches[k++] = ws->watches[i];
        ws->n = k;
        watch_free(w);
        watches_changed(m);
}

int manager_watch_remove(struct manager *m, const struct memleak_request *req, struct watch_removed *ret,
                         char **error)
{
        struct watch *w;

        assert(m);
        assert(ret);
        w = find_watch_of(m, req);
        if (!w)
                return error_set(error, -ESRCH, "Not watching %s %s", req->unit ? "unit" : "cgroup",
                                 req->unit ?: req->cgroup);
        *ret = (struct watch_removed) { .id = w->id, .json = watch_json(m, w) };
        watch_drop(m, w);
        return 0;
}

void manager_watch_end(struct manager *m, uint32_t id)
{
        struct watch *w;

        assert(m);
        w = find_watch_by_id(m, id);
        if (!w)
                return;
        log_info("Stopped watching %s %s: its processes detached", kind_name(w->kind), w->name);
        watch_drop(m, w);
        for (size_t i = m->n_targets; i > 0; i--) {
                struct target *t = m->targets[i - 1];

                if (t->watch_id == id && !target_phase_exited(t->phase))
                        manager_remove_target(m, t);
        }
}

void manager_watch_forgo(struct manager *m, uint32_t id, pid_t pid)
{
        struct watch *w;

        assert(m);
        w = find_watch_by_id(m, id);
        if (w && !refused(w, pid))
                note_refused(w, pid);
}

void manager_watch_set_declared(struct manager *m, uint32_t id)
{
        struct watch *w;

        assert(m);
        w = find_watch_by_id(m, id);
        if (w)
                w->declared = true;
}

/* The watches attach requests made, as [target] sections (their options as resolved then). */
static int requested_watches(const struct manager *m, struct config_targets *ret)
{
        _cleanup_(config_targets_done) struct config_targets ts = {};

        for (size_t i = 0; m->watches && i < m->watches->n; i++) {
                const struct watch *w = m->watches->watches[i];
                struct config_target *t;
                int r;

                if (w->declared || is_program(w))
                        continue;
                r = config_targets_begin(&ts, "memleakctl attach");
                if (r < 0)
                        return r;
                t = &ts.v[ts.n - 1];
                t->match = w->kind == WATCH_UNIT ? CONFIG_TARGET_UNIT : CONFIG_TARGET_CGROUP;
                t->value = strdup(w->name);
                if (!t->value)
                        return -ENOMEM;
                t->min_size = w->options.filter.min_size;
                t->max_size = w->options.filter.max_size;
                t->sample_bytes = w->options.filter.sample_bytes;
                t->unwind = w->options.unwind;
                t->mmap = w->options.track_mmap;
                for (size_t k = 0; k < w->options.n_objs && k < MEMLEAK_MAX_OBJS; k++) {
                        t->objs[k] = strdup(w->options.objs[k]);
                        if (!t->objs[k])
                                return -ENOMEM;
                        t->n_objs++;
                }
        }
        *ret = ts;
        ts = (struct config_targets) {};
        return 0;
}

void manager_watches_save(struct manager *m)
{
        _cleanup_(config_targets_done) struct config_targets ts = {};
        _cleanup_free_ char *text = NULL;
        int r;

        assert(m);
        if (!m->config.state_directory)
                return;
        r = requested_watches(m, &ts);
        if (r >= 0) {
                text = config_targets_format(&ts);
                r = text ? state_file_write(m->config.state_directory, STATE_FILE_WATCHES_NAME, text) : -ENOMEM;
        }
        if (r < 0)
                log_warning_errno(r, "Cannot write the units and cgroups watched to %s/%s (a restart will not watch "
                                  "them again): %m", m->config.state_directory, STATE_FILE_WATCHES_NAME);
}

void manager_watches_restore(struct manager *m)
{
        _cleanup_(config_done) struct memleakd_config kept = {};
        _cleanup_free_ char *path = NULL, *error = NULL;
        int r;

        assert(m);
        if (!m->config.state_directory || asprintf(&path, "%s/%s", m->config.state_directory, STATE_FILE_WATCHES_NAME) < 0)
                return;
        r = config_init_defaults(&kept);
        if (r >= 0)
                r = config_parse_file(path, &kept, &error);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                log_warning("The units and cgroups watched before the restart cannot be read, not watched again: %s",
                            error ?: strerror(-r));
                return;
        }
        for (size_t i = 0; i < kept.targets.n; i++) {
                const struct config_target *t = &kept.targets.v[i];
                _cleanup_free_ char *why = NULL;
                struct follower_options o = {
                        .filter = { .min_size = t->min_size, .max_size = t->max_size, .sample_bytes = t->sample_bytes },
                        .objs = (char **)t->objs, .n_objs = t->n_objs, .track_mmap = t->mmap, .unwind = t->unwind,
                };
                struct memleak_request req = {
                        .unit = t->match == CONFIG_TARGET_UNIT ? t->value : NULL,
                        .cgroup = t->match == CONFIG_TARGET_CGROUP ? t->value : NULL,
                };
                uint32_t id;

                if (!req.unit && !req.cgroup)
                        continue;
                r = watch_add(m, &req, true, &o, &id, &why);
                if (r < 0)
                        log_warning("Not watching %s %s again after the restart (attach it again): %s",
                                    config_targets_match_name(t->match), t->value, why ?: strerror(-r));
                else
                        log_info("Watching %s %s again, as before the restart", config_targets_match_name(t->match),
                                 t->value);
        }
        manager_watches_save(m);
}

bool manager_watch_live(const struct manager *m, uint32_t id)
{
        assert(m);
        return find_watch_by_id(m, id) != NULL;
}

uint32_t manager_watch_id(const struct manager *m, const struct memleak_request *req)
{
        const struct watch *w;

        assert(m);
        assert(req);
        w = find_watch_of(m, req);
        return w ? w->id : 0;
}

static cJSON *watch_json(const struct manager *m, const struct watch *w)
{
        static const char *const keys[] = {
                [WATCH_UNIT] = RF_UNIT, [WATCH_CGROUP] = RF_CGROUP, [WATCH_EXE] = RF_EXE, [WATCH_COMM] = RF_COMM,
        };
        cJSON *o = cJSON_CreateObject();
        uint64_t lost = w->lost_before, processes = 0, n = 0;

        if (!o)
                return NULL;
        for (size_t i = 0; i < w->n_cgroup_ids; i++)
                if (cgroup_events_lost(m->watches->events, w->cgroup_ids[i], &n) >= 0)
                        lost += n;
        if ((w->kind == WATCH_COMM && w->comm_watched &&
             cgroup_events_program_lost(m->watches->events, w->name, 0, 0, &n) >= 0) ||
            (w->kind == WATCH_EXE && (w->exe_dev || w->exe_ino) &&
             cgroup_events_program_lost(m->watches->events, NULL, w->exe_dev, w->exe_ino, &n) >= 0))
                lost += n;
        for (size_t i = 0; i < m->n_targets; i++)
                processes += m->targets[i]->watch_id == w->id && !target_phase_exited(m->targets[i]->phase);
        cJSON_AddStringToObject(o, keys[w->kind], w->name);
        if (w->path)
                cJSON_AddStringToObject(o, RF_PATH, w->path);
        else
                cJSON_AddNullToObject(o, RF_PATH);
        json_add_u64(o, RF_CGROUPS, w->n_cgroup_ids);
        json_add_u64(o, RF_PROCESSES, processes);
        json_add_u64(o, RF_ATTACHED, w->attached);
        json_add_u64(o, RF_MISSED, w->missed);
        json_add_u64(o, RF_FAILED, w->failed);
        json_add_u64(o, RF_EVENTS_LOST, lost);
        return o;
}

cJSON *manager_watch_to_json(const struct manager *m, uint32_t id)
{
        const struct watch *w;

        assert(m);
        w = find_watch_by_id(m, id);
        return w ? watch_json(m, w) : NULL;
}

cJSON *manager_watches_to_json(const struct manager *m)
{
        cJSON *arr = cJSON_CreateArray();

        assert(m);
        for (size_t i = 0; arr && m->watches && i < m->watches->n; i++)
                cJSON_AddItemToArray(arr, watch_json(m, m->watches->watches[i]));
        return arr;
}
