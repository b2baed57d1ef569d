/* SPDX-License-Identifier: GPL-2.0-only */
/* The manager's life: made (manager_new only allocates), wired (manager_start: mounts, limits,
 * BPF, the symbolizer, the worker, the socket, timers, signals), run, reloaded, stopped. */
#include <assert.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include "capabilities.h"
#include "detacher.h"
#include "fork-watch.h"
#include "leak-verdict.h"
#include "listen-socket.h"
#include "log.h"
#include "macro.h"
#include "manager-bpf.h"
#include "manager-requests.h"
#include "manager.h"
#include "mapping-log.h"
#include "object-cache.h"
#include "module-map.h"
#include "mounts.h"
#include "server.h"
#include "stack-totals.h"
#include "symbolizer.h"
#include "table-store.h"
#include "unwind-cache.h"
#include "util.h"
#include "watchdog.h"
#include "worker.h"

int manager_new(struct memleakd_config *config, struct config_source *source, struct manager **ret)
{
        _cleanup_(manager_freep) struct manager *m = calloc(1, sizeof(*m));

        assert(config);
        assert(source);
        assert(ret);
        if (!m)
                return -ENOMEM;
        if (stack_totals_new(&m->totals) < 0)
                return -ENOMEM;
        m->config_source = TAKE_STRUCT(*source);
        m->config = *config;
        *config = (struct memleakd_config) {};
        *ret = TAKE_PTR(m);
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
        return module_map_open_file(src->pid, src->path, dev, ino, src->start, src->end);
}

static void note_symbolizer(void *userdata, const char *message)
{
        log_warning("%s", message);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        struct manager *m = userdata;
        _cleanup_(config_done) struct memleakd_config fresh = {};
        _cleanup_free_ char *error = NULL, *files = NULL, *restart = NULL;
        struct symbolizer_limits limits;
        int r;

        r = config_init_defaults(&fresh);
        if (r >= 0)
                r = config_source_load(&m->config_source, &fresh, &files, &error);
        if (r < 0) {
                log_error("Not reloading: %s", error ? error : strerror(-r));
                return 0;
        }
        r = config_reload(&m->config, &fresh, &restart);
        if (r < 0) {
                log_error_errno(r, "Reloaded only in part: out of memory");
                return 0;
        }
        limits = symbolizer_limits_of(&m->config);
        symbolizer_set_limits(m->env.syms, &limits);
        manager_declared_sync(m);
        free(m->restart_pending);
        m->restart_pending = restart ? strdup(restart) : NULL;
        if (restart)
                log_warning("Reloaded %s; these keys changed but take effect only when memleakd restarts, and keep "
                            "their values until then: %s",
                            *files ? files : "the built-in defaults (no configuration file)", restart);
        else
                log_info("Reloaded %s", *files ? files : "the built-in defaults (no configuration file)");
        return 0;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        struct manager *m = userdata;

        log_info("Received %s, shutting down", strsignal(si->ssi_signo));
        (void)sd_notify(false, "STOPPING=1\nSTATUS=Shutting down");
        return sd_event_exit(m->event, 0);
}

static int on_snapshot_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        uint64_t start = now_monotonic_usec();
        size_t rows = manager_take_snapshots(m);

        manager_watches_tick(m);
        manager_declared_sync(m);
        manager_state_save(m);  /* a target that began recording since */
        manager_state_save_rings(m);
        manager_metrics_tick(m);
        manager_export_tick(m);

        m->snapshot_cost.last_usec = now_monotonic_usec() - start;
        m->snapshot_cost.last_rows = rows;
        m->snapshot_cost.max_usec = MAX(m->snapshot_cost.max_usec, m->snapshot_cost.last_usec);
        (void)sd_event_source_set_time_relative(s, m->config.snapshot_interval_ms * 1000);
        (void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return 0;
}

static int on_exec_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        if (!manager_follow_new_programs(userdata))
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        (void)sd_event_source_set_time_relative(s, EXEC_FOLLOW_INTERVAL_USEC);
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_children_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        manager_clear_children(userdata);
        return 0;
}

static int on_fill_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        manager_auto_sample(userdata);
        (void)sd_event_source_set_time_relative(s, MANAGER_FILL_CHECK_USEC);
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_follow_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        manager_follow_pending(userdata);
        return 0;
}

static void on_fork(void *userdata, const struct fork_event *e)
{
        if (e->child_tgid)
                manager_target_forked(userdata, (pid_t)e->parent_tgid, (pid_t)e->child_tgid, e->shares_memory != 0);
        else if (e->exec_kind == FORK_EVENT_CODE_MAPPED)
                manager_target_code_mapped(userdata, (pid_t)e->parent_tgid);
        else
                manager_target_execd(userdata, (pid_t)e->parent_tgid, e->exec_kind == FORK_EVENT_EXEC_THREAD, e->comm);
}

/* Targets waiting for their tables record, their lists are written again and holds at new code
 * answered; then the attaches waiting for them are answered, and the targets that could not start
 * recording go (their attach answered with why). */
static void on_tables_loaded(void *userdata)
{
        manager_unwind_tables_loaded(userdata);
        manager_requests_tables_loaded(userdata);
        manager_drop_failed_targets(userdata);
}

static void on_pid_idle(void *userdata, pid_t pid)
{
        manager_requests_pid_idle(userdata, pid);
        manager_follow_pending(userdata);
}

static void on_server_event(void *userdata, enum server_event event, int error)
{
        switch (event) {
        case SERVER_EVENT_ACCEPT_PAUSED:
                log_warning_errno(error, "Cannot accept clients (%m): pausing for 250 ms");
                break;
        case SERVER_EVENT_ACCEPT_FAILED:
                log_warning_errno(error, "Failed to accept a client, ignoring: %m");
                break;
        case SERVER_EVENT_CLIENT_DROPPED:
                log_warning_errno(error, "Failed to watch a client, dropping it: %m");
                break;
        }
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

static int start_event_loop(struct manager *m)
{
        sigset_t mask;
        int r;

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to create the event loop: %m");
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        (void)sigprocmask(SIG_BLOCK, &mask, NULL);
        if ((r = sd_event_add_signal(m->event, NULL, SIGTERM, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGINT, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGHUP, on_sighup, m)) < 0)
                return log_error_errno(r, "Failed to watch signals: %m");
        /* WATCHDOG=1 pings at half of WATCHDOG_USEC when systemd asks for them. */
        r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                log_warning_errno(r, "Failed to enable the watchdog, ignoring: %m");
        return 0;
}

/* The BPF object and what works with it: the symbolizer, the worker, the detacher, the recorded
 * mappings. */

/* The unwind tables kept on disk across runs, under cache_directory; without them (0 MiB, or a
 * directory we cannot trust) every table is built at each run. */
static void open_table_store(struct manager *m)
{
        int r;

        if (m->config.unwind_cache_max_mb == 0) {
                log_info("unwind_cache_max_mb = 0: no unwind table is kept on disk");
                return;
        }
        r = table_store_open(m->config.cache_directory, (uint64_t)m->config.unwind_cache_max_mb << 20,
                             &m->table_store);
        if (r == -EPERM) {
                log_warning("Not keeping unwind tables in %s/%s: it is a symlink, not a directory, not "
                            "root's or writable by others; every table is built at each run",
                            m->config.cache_directory, TABLE_STORE_SUBDIR);
                return;
        }
        if (r < 0) {
                log_warning_errno(r, "Not keeping unwind tables in %s, ignoring: every table is built at "
                                  "each run: %m", m->config.cache_directory);
                return;
        }
        unwind_cache_set_store(m->env.unwind, m->table_store);
}

static int start_tracing(struct manager *m)
{
        struct symbolizer_limits limits = symbolizer_limits_of(&m->config);
        struct bpf_sizes sizes = manager_bpf_sizes(&m->config);
        int r;

        r = manager_adopt_pins_open(m, &sizes);
        if (r < 0)
                return r;
        r = manager_bpf_load(&sizes, m->pins, &m->env.skel);
        if (r < 0 && m->pins_found == PINS_FOUND_SAME) {
                manager_adopt_layout_changed(m);
                r = manager_bpf_load(&sizes, m->pins, &m->env.skel);
        }
        if (r < 0)
                return r;
        r = manager_adopt_loaded(m);
        if (r < 0)
                return r;
        r = bpf_loader_attach_iters(m->env.skel);
        if (r == -EOPNOTSUPP)
                log_info("This kernel does not load map-element iterators for us (or MEMLEAKD_MAP_ITER=0): "
                         "the stack table is read by batch look-ups");
        else if (r < 0)
                log_warning_errno(r, "Cannot attach the stack table's iterator, reading it by batch look-ups: %m");
        m->env.limits = (struct map_limits) {
                .max_allocs = m->config.max_allocs,
                .max_mmaps = m->config.max_mmaps,
        };
        r = symbolizer_new(&(struct symbolizer_settings) {
                .limits = limits, .reopen = reopen_module, .note = note_symbolizer, .userdata = m,
        }, &m->env.syms);
        if (r < 0)
                return log_error_errno(r, "Failed to set up symbolization: %m");
        r = slot_set_init(&m->target_slots, m->config.max_targets);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the targets' slots: %m");
        m->env.target_slots = &m->target_slots;
        m->env.totals = m->totals;
        r = unwind_cache_new(m->event, bpf_loader_unwind_tables_fd(m->env.skel),
                             bpf_loader_unwind_files_fd(m->env.skel), UNWIND_TABLES_MAX, on_tables_loaded, m,
                             &m->env.unwind);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the unwind tables: %m");
        open_table_store(m);
        r = object_cache_new(&m->env.objects);
        if (r >= 0)
                r = mapping_log_new(m->env.skel, &m->env.mappings);
        if (r >= 0)
                r = detacher_new(m->event, m->env.skel, &m->env.limits, m->env.mappings, on_pid_idle, m,
                                 &m->env.detacher);
        if (r >= 0)
                r = worker_new(m->event, &m->worker);
        if (r >= 0)
                r = manager_reclaim_start(m);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the background work: %m");
        r = fork_watch_new(m->event, m->env.skel, on_fork, m, &m->forks);
        if (r < 0)
                log_warning_errno(r, "Cannot watch traced processes fork, ignoring: their children will keep "
                                  "paying for the probes they inherit: %m");
        r = manager_watches_start(m);
        if (r < 0)
                log_warning_errno(r, "Cannot watch units and cgroups, ignoring: attach --unit and --cgroup will "
                                  "fail: %m");
        return 0;
}

/* The listening socket (systemd's, or one of its own given its group: CAP_CHOWN, needed for
 * that alone and dropped after it), its fd or -errno. */
static int open_socket(struct manager *m)
{
        _cleanup_free_ char *error = NULL;
        int fd;

        fd = listen_socket_open(m->config.socket_path, m->config.socket_mode, m->config.socket_group, &error);
        if (fd < 0)
                return log_error_errno(fd, "%s", error ? error : "Cannot open the listening socket");
        return fd;
}

/* fd: open_socket()'s, taken (closed on failure). */
static int start_serving(struct manager *m, int fd)
{
        int r;

        r = server_new(m->event, fd, manager_requests_dispatch, on_server_event, m, &m->server);
        if (r < 0) {
                close(fd);
                return log_error_errno(r, "Failed to serve the socket: %m");
        }
        return 0;
}

static int start_timers(struct manager *m)
{
        int r;

        /* Accuracy 1 ms: 0 would mean sd-event's default of 250 ms, and snapshots "every second"
         * would come every 1.25 s. */
        r = sd_event_add_time_relative(m->event, &m->snapshot_timer, CLOCK_MONOTONIC,
                                       m->config.snapshot_interval_ms * 1000, 1000, on_snapshot_timer, m);
        if (r >= 0)
                r = sd_event_source_set_description(m->snapshot_timer, "snapshot");
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &m->children_timer, CLOCK_MONOTONIC, 0, 1000,
                                               on_children_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->children_timer, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_source_set_description(m->children_timer, "forked-children");
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &m->exec_timer, CLOCK_MONOTONIC, 0, 1000, on_exec_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->exec_timer, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_source_set_description(m->exec_timer, "follow-exec");
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &m->follow_timer, CLOCK_MONOTONIC, 0, 1000,
                                               on_follow_timer, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->follow_timer, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_source_set_description(m->follow_timer, "follow-forks");
        if (r >= 0)
                r = sd_event_add_time_relative(m->event, &m->fill_timer, CLOCK_MONOTONIC, MANAGER_FILL_CHECK_USEC,
                                               1000, on_fill_timer, m);
        if (r >= 0)
                r = sd_event_source_set_description(m->fill_timer, "table-fill");
        return r < 0 ? log_error_errno(r, "Failed to arm the timers: %m") : 0;
}

int manager_start(struct manager *m)
{
        int fd, r;

        assert(m);
        m->started_usec = now_realtime_usec();
        r = start_event_loop(m);
        if (r < 0)
                return r;
        mounts_ensure();
        raise_memlock();
        raise_nofile();
        fd = open_socket(m);
        if (fd < 0)
                return fd;
        /* before any thread starts (the next step starts the first): they inherit what is left */
        r = capabilities_trim();
        if (r < 0)
                log_warning_errno(r, "Cannot drop the capabilities memleakd does not need, keeping them: %m");
        r = start_tracing(m);
        if (r < 0) {
                close(fd);
                return r;
        }
        r = manager_adopt(m);
        if (r < 0) {
                close(fd);
                return r;
        }
        manager_watches_restore(m);
        r = start_serving(m, fd);
        if (r < 0)
                return r;
        r = start_timers(m);
        if (r < 0)
                return r;
        manager_follow_adopted(m);
        /* the processes memleakd.conf declares: attached before the first request is answered */
        manager_declared_sync(m);
        return 0;
}

struct manager *manager_free(struct manager *m)
{
        if (!m)
                return NULL;
        /* Reports and rescans not started are cancelled (their clients told), a running one ends. */
        m->worker = worker_free(m->worker);
        manager_reclaim_stop(m);
        manager_requests_done(m);
        manager_follow_done(m);
        manager_declared_free(m);
        manager_watches_free(m);
        pending_ops_done(&m->pending);
        /* Each target's probes take the kernel a grace period to remove: all at once, then wait. */
        manager_free_targets(m);
        m->env.detacher = detacher_free(m->env.detacher);
        server_free(m->server);
        fork_watch_free(m->forks);
        bpf_link__destroy(m->exec_forget);     /* pinned while targets are kept */
        sd_event_source_disable_unref(m->children_timer);
        sd_event_source_disable_unref(m->exec_timer);
        sd_event_source_disable_unref(m->follow_timer);
        sd_event_source_disable_unref(m->fill_timer);
        sd_event_source_disable_unref(m->snapshot_timer);
        mapping_log_free(m->env.mappings);
        stack_totals_free(m->totals);
        m->env.unwind = unwind_cache_free(m->env.unwind);
        m->table_store = table_store_free(m->table_store);      /* after the cache, whose thread used it */
        m->env.objects = object_cache_free(m->env.objects);
        slot_set_done(&m->target_slots);
        symbolizer_free(m->env.syms);
        bpf_loader_destroy(m->env.skel);
        manager_adopt_done(m);
        sd_event_unref(m->event);
        config_done(&m->config);
        config_source_done(&m->config_source);
        free(m->restart_pending);
        free(m);
        return NULL;
}

int manager_run(struct manager *m, uint64_t watchdog_usec)
{
        int r;

        assert(m);
        log_info("memleakd %s ready on %s", MEMLEAKD_VERSION, m->config.socket_path);
        watchdog_notify_ready(watchdog_usec, "Tracing 0 processes");
        r = sd_event_loop(m->event);
        if (r < 0)
                return log_error_errno(r, "Event loop failed: %m");
        return 0;
}
