/* SPDX-License-Identifier: GPL-2.0-only */
/* The daemon's core: event loop, BPF state, targets, snapshot timer, socket, lifecycle. */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include "bpf-loader.h"
#include "handlers.h"
#include "log.h"
#include "macro.h"
#include "util.h"
#include "manager.h"
#include "module-map.h"
#include "fork-watch.h"
#include "map-budget.h"
#include "mounts.h"
#include "server.h"
#include "snapshot.h"
#include "stack-collect.h"
#include "symbolize.h"
#include "watchdog.h"

/* How long after a target forks its child's inherited probes are cleared: forks close together
 * (a server starting its workers) share the sweep. */
#define CHILDREN_SWEEP_DELAY_USEC (20ULL * 1000)

/* Follow forks while some process is traced. */
static void update_fork_watch(struct manager *m)
{
        bool processes = false;
        int r;

        for (size_t i = 0; i < m->n_targets && !processes; i++)
                processes = !m->targets[i]->exited && !m->targets[i]->kernel;
        r = fork_watch_set_active(m->forks, processes);
        if (r < 0)
                log_warning_errno(r, "Cannot watch traced processes fork, ignoring: their children keep "
                                  "paying for the probes they inherit: %m");
}

static void notify_status(struct manager *m)
{
        update_fork_watch(m);
        sd_notifyf(false, "STATUS=Tracing %u process%s", manager_live_targets(m),
                   manager_live_targets(m) == 1 ? "" : "es");
}

unsigned manager_live_targets(const struct manager *m)
{
        unsigned n = 0;

        for (size_t i = 0; i < m->n_targets; i++)
                n += !m->targets[i]->exited;
        return n;
}

struct target *manager_find_target(struct manager *m, pid_t pid)
{
        for (size_t i = 0; i < m->n_targets; i++)
                if (m->targets[i]->pid == pid)
                        return m->targets[i];
        return NULL;
}

void manager_remove_target(struct manager *m, struct target *t)
{
        for (size_t i = 0; i < m->n_targets; i++) {
                if (m->targets[i] != t)
                        continue;
                memmove(&m->targets[i], &m->targets[i + 1], (m->n_targets - i - 1) * sizeof(*m->targets));
                m->n_targets--;
                break;
        }
        target_free(t);
        notify_status(m);
}

static void prune_exited(struct manager *m);

static void target_exited(struct manager *m, struct target *t)
{
        log_info("Target pid %d (%s) exited; keeping its last report", (int)t->pid, t->comm);
        /* Its last mappings are kept in t->modules, with those it made since the last refresh
         * (BPF recorded them): the exited target's stacks still resolve. */
        target_refresh_modules(&m->env, t, true);
        target_stop(&m->env, t, true, true);
        snapshot_ring_drop_rows(t->ring);       /* its trend needs the sums only */
        t->exited = true;
        t->exited_usec = now_realtime_usec();
        prune_exited(m);
        notify_status(m);
}

static int on_target_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct target *t = userdata;

        target_exited(t->owner, t);
        return 0;
}

void manager_reap_exited_targets(struct manager *m)
{
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];
                struct pollfd p = { .fd = t->pidfd, .events = POLLIN };

                if (!t->exited && t->pidfd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)))
                        target_exited(m, t);
        }
}

uint64_t manager_exited_bytes(const struct manager *m)
{
        uint64_t bytes = 0;

        for (size_t i = 0; i < m->n_targets; i++)
                if (m->targets[i]->exited)
                        bytes += target_memory_bytes(m->targets[i]);
        return bytes;
}

/* Keep at most max_targets records of exited targets, holding at most exited_max_mb: the oldest
 * go first. */
static void prune_exited(struct manager *m)
{
        uint64_t max_bytes = (uint64_t)m->config.exited_max_mb << 20;
        size_t exited = 0;

        for (size_t i = 0; i < m->n_targets; i++)
                exited += m->targets[i]->exited;
        /* The newest stays whatever it takes: memleakctl run asks for its report right after. */
        while (exited > m->config.max_targets || (exited > 1 && manager_exited_bytes(m) > max_bytes)) {
                struct target *oldest = NULL;

                for (size_t i = 0; i < m->n_targets; i++)
                        if (m->targets[i]->exited && (!oldest || m->targets[i]->exited_usec < oldest->exited_usec))
                                oldest = m->targets[i];
                log_info("Dropping the report of pid %d (%s), which exited: the exited targets' reports hold "
                         "more than exited_max_mb (or max_targets of them)", (int)oldest->pid, oldest->comm);
                m->exited_dropped++;
                manager_remove_target(m, oldest);
                exited--;
        }
}

int manager_add_target(struct manager *m, struct target *t)
{
        struct target *old = manager_find_target(m, t->pid);
        struct target **n;
        sd_event_source *s = NULL;
        int r;

        if (old && !old->exited)
                return -EEXIST;
        if (old)
                manager_remove_target(m, old);
        n = realloc(m->targets, (m->n_targets + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        m->targets = n;
        /* A process's exit is noticed through its pidfd; the kernel target has none. */
        if (t->pidfd >= 0) {
                r = sd_event_add_io(m->event, &s, t->pidfd, EPOLLIN, on_target_exit, t);
                if (r < 0)
                        return r;
        }
        t->exit_source = s;
        t->owner = m;
        m->targets[m->n_targets++] = t;
        prune_exited(m);
        notify_status(m);
        return 0;
}

static void take_snapshots(struct manager *m)
{
        _cleanup_(stack_rows_done) struct stack_rows rows = {};
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0;
        uint64_t now = now_realtime_usec();
        int r;

        pids = calloc(MAX(m->n_targets, (size_t)1), sizeof(pid_t));
        if (!pids)
                return;
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];

                if (t->exited)
                        continue;
                pids[n++] = t->pid;
                /* Learn libraries loaded since the last tick, while the target is still there ... */
                target_refresh_modules(&m->env, t, false);
                /* ... and probe the allocator entry points of those (dlopen). */
                r = target_rescan(&m->env, t);
                if (r < 0 && r != -ENOENT && r != -ESRCH)
                        log_warning_errno(r, "Cannot look at the new mappings of pid %d: %m", (int)t->pid);
        }
        if (n == 0)
                return;
        r = stack_collect_totals(m->env.skel, &m->env.limits, pids, n, &rows);
        if (r < 0) {
                log_warning_errno(r, "Failed to read the per-stack totals, skipping this snapshot: %m");
                return;
        }
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];
                struct snapshot_row *srows;
                size_t k = 0;

                if (t->exited)
                        continue;
                srows = calloc(MAX(rows.n, (size_t)1), sizeof(*srows));
                if (!srows)
                        return;
                for (size_t j = 0; j < rows.n; j++)
                        /* growth of the heap: mappings (--mmap) have rows of their own */
                        if (rows.rows[j].pid == t->pid && rows.rows[j].space != ALLOC_SPACE_MMAP)
                                srows[k++] = (struct snapshot_row) {
                                        .stack_id = rows.rows[j].stack_id,
                                        .bytes = rows.rows[j].bytes,
                                        .allocs = rows.rows[j].allocs,
                                };
                snapshot_ring_push(t->ring, now, srows, k);
        }
}

static int on_children_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;

        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];
                int r;

                if (!t->children_pending)
                        continue;
                t->children_pending = false;
                r = target_clear_inherited_probes(t);
                if (r < 0)
                        log_warning_errno(r, "Cannot clear the probes pid %d's children inherited: %m", (int)t->pid);
        }
        return 0;
}

/* A target forked: its child inherited the breakpoints of its probes. They go shortly (forks
 * close together share the one sweep), unless the child execs first, which drops them anyway. */
static void on_target_fork(void *userdata, pid_t parent, pid_t child)
{
        struct manager *m = userdata;
        struct target *t = manager_find_target(m, parent);
        int r;

        if (!t || t->exited)
                return;
        log_debug("Traced pid %d forked pid %d: clearing the probes it inherited", (int)parent, (int)child);
        t->children_pending = true;
        r = sd_event_source_set_time_relative(m->children_timer, CHILDREN_SWEEP_DELAY_USEC);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->children_timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule clearing the probes of pid %d's children: %m", (int)parent);
}

static int on_snapshot_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;

        take_snapshots(m);
        sd_event_source_set_time_relative(s, m->config.snapshot_interval_ms * 1000);
        sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return 0;
}

static struct symbolizer_limits symbolizer_limits_of(const struct memleakd_config *c)
{
        struct rlimit rl;
        unsigned max_open = c->symbols_max_open_files;

        /* Leave half the fds for clients, probes and the rest, whatever the configuration says. */
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
                max_open = MIN(max_open, (unsigned)MAX(rl.rlim_cur / 2, (rlim_t)16));
        return (struct symbolizer_limits) {
                .max_open_files = max_open,
                .max_bytes = (uint64_t)c->symbols_max_mb << 20,
                .max_section_bytes = (uint64_t)c->symbols_max_section_mb << 20,
        };
}

/* The symbolizer closed a file to stay within its limits: open it again from its process. */
static int reopen_module(void *userdata, uint64_t dev, uint64_t ino, const struct symbol_source *src)
{
        return module_open_in_target(src->pid, src->path, dev, ino, src->start, src->end);
}

static void note_symbolizer(void *userdata, const char *message)
{
        log_warning("%s", message);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        struct manager *m = userdata;
        struct memleakd_config fresh;
        struct symbolizer_limits limits;
        _cleanup_free_ char *error = NULL;
        int r;

        if (!m->config_path) {
                log_info("SIGHUP: no configuration file in use, nothing to reload");
                return 0;
        }
        r = config_init_defaults(&fresh);
        if (r < 0)
                return 0;
        r = config_parse_file(m->config_path, &fresh, &error);
        if (r < 0) {
                log_error("Not reloading: %s", error ? error : strerror(-r));
                config_done(&fresh);
                return 0;
        }
        /* What can change at run time; map sizes and the socket need a restart. */
        m->config.snapshot_interval_ms = fresh.snapshot_interval_ms;
        m->config.min_size = fresh.min_size;
        m->config.max_size = fresh.max_size;
        m->config.ring_depth = fresh.ring_depth;
        m->config.max_targets = fresh.max_targets;
        m->config.symbols_max_open_files = fresh.symbols_max_open_files;
        m->config.symbols_max_mb = fresh.symbols_max_mb;
        m->config.symbols_max_section_mb = fresh.symbols_max_section_mb;
        m->config.exited_max_mb = fresh.exited_max_mb;
        limits = symbolizer_limits_of(&m->config);
        symbolizer_set_limits(m->env.syms, &limits);
        config_done(&fresh);
        log_info("Reloaded %s (map sizes and the socket change only on restart)", m->config_path);
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        struct manager *m = userdata;

        log_info("Received %s, shutting down", strsignal(si->ssi_signo));
        sd_notify(false, "STOPPING=1\nSTATUS=Shutting down");
        return sd_event_exit(m->event, 0);
}

/* Refuse map sizes this machine cannot hold, before the kernel tries (the OOM killer would
 * answer, not an error). */
static int check_map_budget(const struct bpf_sizes *sizes)
{
        struct memory_limits limits;
        uint64_t need = map_budget_estimate(sizes), allowed;
        int r;

        r = map_budget_read_limits("/proc/meminfo", &limits);
        if (r < 0)
                return log_warning_errno(r, "Cannot read /proc/meminfo, not checking the map sizes: %m"), 0;
        allowed = map_budget_allowed(&limits);
        if (need <= allowed) {
                log_debug("The BPF maps take %" PRIu64 " MiB (%" PRIu64 " MiB allowed)", need >> 20, allowed >> 20);
                return 0;
        }
        return log_error_errno(ENOMEM, "The BPF maps would take %" PRIu64 " MiB of kernel memory at these sizes "
                               "(max_allocs=%u, max_stacks=%u, max_stack_depth=%u, max_combined=%u, "
                               "max_inflight=%u, max_mmaps=%u), more than this machine can hold: %" PRIu64
                               " MiB (what is available, at most half the memory, 3/4 of the service's "
                               "MemoryMax=). Lower them in the configuration.",
                               need >> 20, sizes->max_allocs, sizes->max_stacks, sizes->max_stack_depth,
                               sizes->max_combined, sizes->max_inflight, sizes->max_mmaps, allowed >> 20);
}

/* memleakd holds an fd per open file it symbolizes, per client, per probe link: take the hard
 * limit (LimitNOFILE=), which select() never sees here (sd-event uses epoll). */
static void raise_nofile(void)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_debug_errno(errno, "Cannot raise RLIMIT_NOFILE, ignoring: %m");
}

static void raise_memlock(void)
{
        struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

        /* Kernels since 5.11 charge BPF memory to the cgroup: a refusal here is not fatal. */
        if (setrlimit(RLIMIT_MEMLOCK, &rl) < 0)
                log_debug_errno(errno, "Cannot raise RLIMIT_MEMLOCK, ignoring: %m");
}

int manager_new(struct memleakd_config *config, const char *config_path, struct manager **ret)
{
        struct manager *m;
        _cleanup_free_ char *error = NULL;
        struct bpf_sizes sizes;
        sigset_t mask;
        int fd, r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return log_error_errno(ENOMEM, "Out of memory");
        m->config = *config;
        *config = (struct memleakd_config) {};
        if (config_path && !(m->config_path = strdup(config_path))) {
                r = -ENOMEM;
                goto fail;
        }
        m->started_usec = now_realtime_usec();

        r = sd_event_default(&m->event);
        if (r < 0) {
                log_error_errno(r, "Failed to create the event loop: %m");
                goto fail;
        }
        sd_event_now(m->event, CLOCK_MONOTONIC, &m->started_mono_usec);
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        if ((r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m)) < 0) {
                log_error_errno(r, "Failed to watch signals: %m");
                goto fail;
        }
        /* WATCHDOG=1 pings at half of WATCHDOG_USEC when systemd asks for them. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog, ignoring: %m");

        mounts_ensure();
        raise_memlock();
        raise_nofile();
        sizes = (struct bpf_sizes) {
                .max_targets = m->config.max_targets,
                .max_allocs = m->config.max_allocs,
                .max_stacks = m->config.max_stacks,
                .max_combined = m->config.max_combined,
                .max_inflight = m->config.max_inflight,
                .max_mmaps = m->config.max_mmaps,
                .max_stack_depth = m->config.max_stack_depth,
        };
        r = check_map_budget(&sizes);
        if (r < 0)
                goto fail;
        m->env.skel = bpf_loader_open_and_load(&sizes);
        if (!m->env.skel) {
                r = -errno;
                goto fail;
        }
        m->env.limits = (struct map_limits) {
                .max_allocs = m->config.max_allocs,
                .max_combined = m->config.max_combined,
                .max_inflight = m->config.max_inflight,
                .max_mmaps = m->config.max_mmaps,
        };
        r = symbolizer_new(&(struct symbolizer_settings) {
                .limits = symbolizer_limits_of(&m->config),
                .reopen = reopen_module,
                .note = note_symbolizer,
                .userdata = m,
        }, &m->env.syms);
        if (r < 0) {
                log_error_errno(r, "Failed to set up symbolization: %m");
                goto fail;
        }

        fd = server_open_listen_fd(m->config.socket_path, m->config.socket_mode, m->config.socket_group, &error);
        if (fd < 0) {
                r = log_error_errno(fd, "%s", error ? error : "Cannot open the listening socket");
                goto fail;
        }
        r = server_new(m->event, fd, handlers_dispatch, m, &m->server);
        if (r < 0) {
                close(fd);
                log_error_errno(r, "Failed to serve the socket: %m");
                goto fail;
        }
        /* Accuracy 1 ms: 0 would mean sd-event's default of 250 ms, and snapshots "every second"
         * would come every 1.25 s. */
        r = sd_event_add_time_relative(m->event, &m->snapshot_timer, CLOCK_MONOTONIC,
                                       m->config.snapshot_interval_ms * 1000, 1000, on_snapshot_timer, m);
        if (r < 0) {
                log_error_errno(r, "Failed to arm the snapshot timer: %m");
                goto fail;
        }
        r = sd_event_add_time_relative(m->event, &m->children_timer, CLOCK_MONOTONIC, CHILDREN_SWEEP_DELAY_USEC,
                                       1000, on_children_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->children_timer, SD_EVENT_OFF);
        if (r < 0) {
                log_error_errno(r, "Failed to arm the children timer: %m");
                goto fail;
        }
        r = fork_watch_new(m->event, m->env.skel, on_target_fork, m, &m->forks);
        if (r < 0)
                log_warning_errno(r, "Cannot watch traced processes fork, ignoring: their children will keep "
                                  "paying for the probes they inherit: %m");
        *ret = m;
        return 0;
fail:
        manager_free(m);
        return r;
}

struct manager *manager_free(struct manager *m)
{
        if (!m)
                return NULL;
        /* Each target's uprobes take the kernel a second or two to remove: do them all at once. */
        for (size_t i = 0; i < m->n_targets; i++)
                if (!m->targets[i]->exited)
                        target_stop(&m->env, m->targets[i], false, true);
        target_wait_background_detaches();
        for (size_t i = 0; i < m->n_targets; i++)
                target_free(m->targets[i]);
        free(m->targets);
        server_free(m->server);
        fork_watch_free(m->forks);
        sd_event_source_disable_unref(m->children_timer);
        sd_event_source_disable_unref(m->snapshot_timer);
        symbolizer_free(m->env.syms);
        bpf_loader_destroy(m->env.skel);
        sd_event_unref(m->event);
        config_done(&m->config);
        free(m->config_path);
        free(m);
        return NULL;
}

int manager_run(struct manager *m, uint64_t watchdog_usec)
{
        int r;

        log_info("memleakd %s ready on %s", MEMLEAKD_VERSION, m->config.socket_path);
        watchdog_notify_ready(watchdog_usec, "Tracing 0 processes");
        r = sd_event_loop(m->event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}
