/* SPDX-License-Identifier: GPL-2.0-only */
/* The daemon's core: owns the event loop, the BPF object, the targets, the socket, the worker
 * thread and the lifecycle. manager.c makes and runs it; manager-targets.c keeps the targets;
 * manager-requests.c answers clients; manager-report.c hands reports to the worker;
 * manager-find.c finds targets. Each calls only the parts below it (docs/architecture.md, "The
 * manager's parts"): the event loop's callbacks in manager.c call down, none calls back up. */
#pragma once

#include <stdint.h>
#include <cjson/cJSON.h>
#include <systemd/sd-event.h>
#include "config-source.h"
#include "config.h"
#include "leak-verdict.h"
#include "macro.h"
#include "pending-ops.h"
#include "metrics-text.h"
#include "pins.h"
#include "reclaim.h"
#include "slot-set.h"
#include "target.h"

struct server;
struct server_request;
struct worker;
struct fork_watch;
struct stack_totals;
struct memleak_request;
struct manager_watches;

struct manager {
        sd_event *event;
        struct memleakd_config config;
        struct config_source config_source;     /* what SIGHUP reads again */
        char *restart_pending;                  /* keys the last reload changed that need a
                                                 * restart, joined by ", " (NULL: none) */
        struct target_env env;
        struct slot_set target_slots;   /* env.target_slots */
        struct table_store *table_store;        /* unwind tables on disk (env.unwind's), or NULL */
        struct worker *worker;          /* reports, rescans: long work off the event loop */
        struct target **targets;
        size_t n_targets;
        uint64_t next_target_id;
        struct pending_ops pending;     /* attaches and follows not done yet (pending-ops.h) */
        uint64_t follow_warned_usec;    /* the last "not following" warning (one a second at most) */
        uint64_t follow_warnings_held;  /* since then */
        struct server *server;
        struct fork_watch *forks;
        struct manager_watches *watches;        /* units and cgroups watched (manager-watch.c) */
        struct declared_target *declared;       /* the config's [target] sections as watched
                                                 * (manager-declared.c) */
        size_t n_declared;
        struct bpf_link *exec_forget;   /* while some process is traced (bpf_loader_attach_exec_forget()) */
        sd_event_source *snapshot_timer;
        sd_event_source *children_timer;        /* clears the probes forked children inherited */
        sd_event_source *exec_timer;            /* follows the maps of targets that just exec'd */
        sd_event_source *follow_timer;          /* tries the queued follows again */
        sd_event_source *fill_timer;            /* how full each target's share of the allocation
                                                 * table is (manager-sample.c) */
        struct stack_totals *totals;    /* the snapshot tick's reader, its buffers kept */
        struct {
                uint64_t last_usec, max_usec;   /* the snapshot tick's time on the event loop */
                size_t last_rows;               /* per-stack rows it read */
        } snapshot_cost;
        struct {
                struct worker *worker;          /* its passes, off the event loop */
                bool pending;
                unsigned ticks;                 /* snapshot ticks since the last pass began */
                unsigned every_ticks;           /* between passes: doubled after one that gave
                                                 * nothing back, up to MANAGER_RECLAIM_MAX_TICKS */
                uint64_t passes;
                struct reclaim_counts totals;
        } reclaim;
        uint64_t exited_dropped;        /* exited targets' reports dropped to stay within bounds */
        uint64_t started_usec;          /* CLOCK_REALTIME */
        /* what a restart keeps (manager-adopt.c) */
        struct pins *pins;              /* NULL: nothing pinned */
        enum pins_found pins_found;
        char *links_pin_dir;            /* env.links_pin_dir */
        char *state_written;            /* the state file's text as last written */
        uint64_t state_write_failures;
        bool ring_write_warned;
        unsigned adopted, adopt_reaped, adopt_failed;   /* at this start */
        struct {
                bool pending;                   /* a write of metrics_textfile under way */
                uint64_t written_usec;          /* CLOCK_MONOTONIC: the last one began */
                int last_error;                 /* its failure (logged once), 0 */
        } metrics;
        struct {
                bool pending;                   /* an export to export_dir under way */
                uint64_t started_usec;          /* CLOCK_MONOTONIC: the last one began */
                int last_error;                 /* its failure (logged once), 0 */
        } export;
};

/* manager-metrics.c: the Prometheus metrics, asked for or written to metrics_textfile */
struct metrics_daemon manager_metrics_daemon(const struct manager *m);
/* At a snapshot tick: the textfile written when its interval has gone by. */
void manager_metrics_tick(struct manager *m);
/* A write of it done: r (-errno) logged when it failed anew. */
void manager_metrics_written(struct manager *m, int r);

/* manager-export.c: each live target's pprof profile in export_dir, every export_interval_ms */
void manager_export_tick(struct manager *m);
/* An export done: r the files written, or -errno (logged when it failed anew). */
void manager_export_written(struct manager *m, int r);

/* manager-state.c: what a restart adopts, kept up to date */
/* Whether t is left recording when the daemon goes (and listed in the state file). */
bool manager_state_keeps(const struct manager *m, const struct target *t);
/* Write the state file if what it would say changed. */
void manager_state_save(struct manager *m);
/* The exec tracepoint's link was attached (pinned) or is about to go (unpinned). */
void manager_state_exec_forget(struct manager *m, bool attached);
/* At each tick: each kept target's snapshot ring written (its history continues after a
 * restart), those of targets no longer kept removed. */
void manager_state_save_rings(struct manager *m);
/* The ring file's name of that process. -ENOMEM. */
int manager_state_ring_name(pid_t pid, uint64_t start_time, char **ret);
/* /proc/PID/stat's start time: 0, -ESRCH (no such process) or -errno. */
int manager_state_start_time(pid_t pid, uint64_t *ret);

/* manager-adopt.c: the pins and the state file; the targets an earlier daemon left, taken back */
/* Open the pin directory (its pins of another layout removed). */
int manager_adopt_pins_open(struct manager *m, const struct bpf_sizes *sizes);
/* The pinned maps would not load with this object: removed, for a clean load. */
void manager_adopt_layout_changed(struct manager *m);
/* The object is loaded with its maps pinned: its layout recorded. */
int manager_adopt_loaded(struct manager *m);
/* Take back the targets the state file lists whose processes live on, reap the others, and forget
 * what BPF has of any other process. */
int manager_adopt(struct manager *m);
/* An adopted target t recorded still by the earlier daemon's probes moved to its own, once its
 * unwind tables are in (target_take_over()); logged. */
void manager_adopt_take_over(struct manager *m, struct target *t);
void manager_adopt_done(struct manager *m);
/* memleakd --forget: every pin and the state file removed. */
int manager_adopt_forget(const struct memleakd_config *c);

/* manager-exited.c: the exited targets' reports a restart keeps */
/* t just exited: its report written to the state directory (logged if it cannot be). */
void manager_exited_save(struct manager *m, struct target *t);
/* t's record goes (pruned, detached): its file removed. */
void manager_exited_forget(struct manager *m, struct target *t);
/* At start: the exited targets whose reports are in the state directory made again, in *ret
 * (malloc'd; NULL when none), oldest first; returns how many. A file that cannot be read back is
 * logged and set aside. */
size_t manager_exited_load(struct manager *m, struct target ***ret);
/* memleakd --forget: every such file removed. */
void manager_exited_forget_all(const char *state_directory);

/* Allocate only: takes config and source (both moved). */
int manager_new(struct memleakd_config *config, struct config_source *source, struct manager **ret);
/* Wire everything: mounts, limits, BPF, the symbolizer, the worker, the socket, timers, signals. */
int manager_start(struct manager *m);
/* READY=1 (restoring the unit's watchdog period: watchdog_usec, 0 for none), then the loop. */
int manager_run(struct manager *m, uint64_t watchdog_usec);
struct manager *manager_free(struct manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct manager *, manager_free)

/* manager-access.c: who may do what (root and admin_group: all; any other user: what ptrace
 * would let it do, to the processes it could trace) */
struct server_request;
bool manager_peer_admin(const struct manager *m, const struct server_request *sreq);
/* 0 when sreq's sender may trace pid, else -EPERM (or -ESRCH: no such process) and *error. */
int manager_peer_may_trace(const struct manager *m, const struct server_request *sreq, pid_t pid, char **error);
/* Whether t, after an exec, runs as its asker could not trace it (and no admin asked). */
bool manager_target_beyond_asker(const struct target *t);
/* Whether sreq's sender may see t (a live one as it is now; an exited one as it was). */
bool manager_peer_sees(const struct manager *m, const struct server_request *sreq, const struct target *t);
/* What decides, for one request, which targets its sender sees: read once (its groups, Yama's
 * scope), for a request that weighs every target. */
struct peer_view {
        const struct ucred *peer;
        bool admin;
        int yama;
};
struct peer_view manager_peer_view(const struct manager *m, const struct server_request *sreq);
bool manager_peer_view_sees(const struct peer_view *v, const struct target *t);

/* manager-find.c: which target (the parts of the manager find theirs here, nowhere else) */
struct target *manager_find_target(struct manager *m, pid_t pid);
struct target *manager_find_kernel_target(struct manager *m);
/* The target of that id (unique in the daemon's life), live or exited; NULL. */
struct target *manager_find_target_by_id(const struct manager *m, uint64_t id);
unsigned manager_live_targets(const struct manager *m);
/* Whether t was followed from ancestor's forks (from its children's, and so on). */
bool manager_target_followed_from(const struct manager *m, const struct target *t, const struct target *ancestor);
/* Whether t is pid's target or was followed from it, at any depth. */
bool manager_target_in_family(const struct manager *m, const struct target *t, pid_t pid);
/* The exit hold of memleakctl run's program that t is (or was followed from, at any depth): its
 * tracer holds the family at birth and scans its followed children at their exit. NULL if none. */
struct exit_hold *manager_family_hold(const struct manager *m, const struct target *t);
/* At start, once the exited targets are read back and the live ones adopted: each one followed
 * from another is linked to it again (parent_id: the target of its parent_link's pid and start
 * time), so that a report of that target with its children takes it in. */
void manager_link_followed(struct manager *m);
/* Whether a report or history request names t: the kernel's, pid's (and the processes followed
 * from it, with "children"), or every target. */
bool manager_request_names_target(const struct manager *m, const struct memleak_request *req,
                                  const struct target *t);

/* manager-reclaim.c: rows of per-stack totals at zero and the stacks no row names given back
 * while targets stay attached (daemon/bpf/reclaim.h), in a pass at most every this many snapshot
 * ticks (twice as many after each pass that gave nothing back, up to the most), when the
 * per-stack totals' table or the stack table is past half full. */
#define MANAGER_RECLAIM_EVERY_TICKS 10u
#define MANAGER_RECLAIM_MAX_TICKS 640u
int manager_reclaim_start(struct manager *m);
/* Called by the snapshot tick: rows_held, the live and retiring rows it found in the table. */
void manager_reclaim_tick(struct manager *m, size_t rows_held);
/* Wait for a pass under way; no more. */
void manager_reclaim_stop(struct manager *m);

/* manager-targets.c */
/* The one way a target's phase changes (target-phase.h draws them): false, its phase unchanged
 * and the bug logged, for a change the machine does not allow. */
bool manager_target_phase(struct target *t, enum target_phase to);
/* Keep t (started): watch its exit, drop the oldest exited records past the bounds. Replaces an
 * exited record of the same pid; -EEXIST for a live one. */
int manager_add_target(struct manager *m, struct target *t);
/* Keep t, an exited target read back at start (manager-exited.c), after those there, within the
 * bounds on exited records. Frees it if it cannot. */
void manager_add_exited_target(struct manager *m, struct target *t);
/* Stop t if it still runs, and forget it. */
void manager_remove_target(struct manager *m, struct target *t);
/* The memory the records of exited targets hold. */
uint64_t manager_exited_bytes(const struct manager *m);
/* Mark the targets that exited and whose exit the event loop has not dispatched yet (a request
 * arriving right after a target's exit sees it exited, its report frozen). */
void manager_reap_exited_targets(struct manager *m);
/* The snapshot tick: each live target's mappings refreshed, rescans started, totals snapshot. */
/* Returns the per-stack rows read (0 without live targets). */
size_t manager_take_snapshots(struct manager *m);
/* A target exec'd: its maps followed closely for a while (its new program's tables loaded as the
 * loader maps them); from a thread other than its leader: its new image probed again. */
void manager_target_execd(struct manager *m, pid_t pid, bool from_thread, const char comm[MEMLEAK_COMM_LEN]);
/* A target mapped code of a file whose unwind table is not loaded (dlopen, its loader mapping a
 * new program's libraries): its maps read now, the file's table queued to be built. */
void manager_target_code_mapped(struct manager *m, pid_t pid);

/* manager-sample.c */
/* Called every MANAGER_FILL_CHECK_USEC (the fill timer: a target can fill its share well within
 * a snapshot interval): each live process target whose share of the allocation table nears full
 * (auto_sample_percent) is sampled from now on, or more sparsely. */
#define MANAGER_FILL_CHECK_USEC (100 * 1000ULL)
/* Set in filter (a new process target's settings) where BPF switches it to sampling itself should
 * its share of the allocation table fill before the first check (its heap not seen yet: at the
 * least mean, raised fourfold each time half the room left is used); none when auto sampling
 * is off. */
void manager_sample_first_limit(const struct manager *m, struct target_config *filter);
void manager_auto_sample(struct manager *m);
/* BPF's changes of the targets' means since the last check noted now, for an answer about them
 * (the check runs ten times a second: a burst raises the mean several times between two). */
void manager_auto_sample_sync(struct manager *m);

/* manager-report.c (manager-report.h: the report requests) */
/* The leak verdicts' thresholds, from the config. */
struct leak_verdict_thresholds manager_verdict_thresholds(const struct manager *m);

/* manager-verdicts.c */
/* t exited (its rows frozen, exited_usec set): each heap stack's verdict over its ring, made on
 * the worker into t->verdicts; its ring's rows are kept until then (t->verdicts_keeping), then
 * let go. */
void manager_verdicts_at_exit(struct manager *m, struct target *t);

/* manager-jit.c */
/* t exited: read the perf map it left, on the worker, if it ran JIT code (its source is let go
 * either way). */
void manager_jit_names_at_exit(struct manager *m, struct target *t);

/* manager-follow.c */
/* How a process attached on another's behalf (a followed child, a process of a watched cgroup)
 * is attached: its settings as asked, the files named (borrowed), who asked. */
struct follower_options {
        struct target_config filter;
        char **objs;
        size_t n_objs;
        bool track_mmap;
        enum memleak_unwind unwind;
        uid_t asker_uid;
        gid_t asker_gid;
        bool asked_by_user;
};
/* Attach pid so, following its forks, and keep it: 0 and *ret, or a negative errno and *error
 * (-ENOENT: no allocator mapped yet, -ESRCH: nothing mapped, as in an exec: worth another try). */
int manager_attach_follower(struct manager *m, pid_t pid, const struct follower_options *o, struct target **ret,
                            char **error);
/* Whether pid exited (a zombie too): a process gone before it could be attached. */
bool manager_pid_gone(pid_t pid);
/* parent (followed: "follow_forks") forked child: attach child with parent's options. */
void manager_follow_child(struct manager *m, struct target *parent, pid_t child);
/* t was attached with follow_forks: attach the children it has now too (a server's workers), and
 * theirs, as if it had just forked them; not for a family memleakctl run holds (it holds each
 * child from its birth). */
void manager_follow_existing_children(struct manager *m, struct target *t);
/* After the adoption, for each adopted target: the children it forked while no daemon ran
 * followed (when it follows forks), the probes they inherited cleared (when not traced). */
void manager_follow_adopted(struct manager *m);
/* Follow the children that waited, those whose time has come (the follow timer, re-armed for the
 * others) and the detacher lets in. */
void manager_follow_pending(struct manager *m);
/* Forget them (shutdown). */
void manager_follow_done(struct manager *m);

/* manager-watch.c: whole services (attach "unit" or "cgroup"): every process in a cgroup v2
 * directory and below it, now and later, attached as a target of its own with the watch's
 * options (following its forks), each remembering its watch. */
/* Find the cgroup2 mount, hear of the processes entering watched cgroups: 0 or a negative errno
 * (then no watch can be made). */
int manager_watches_start(struct manager *m);
void manager_watches_free(struct manager *m);
/* The snapshot tick: each watch's directory found again (a restarted unit's is new), the
 * processes in it that are no targets yet attached. */
void manager_watches_tick(struct manager *m);
/* Watch req's unit or cgroup (it must be there) and attach its processes: 0 and *ret_id, or a
 * negative errno and *error. */
int manager_watch_add(struct manager *m, const struct memleak_request *req, const struct follower_options *options,
                      uint32_t *ret_id, char **error);
/* Watch a program memleakd.conf declares, by its name (by_comm) or its file's path: the
 * processes that run it now and each that execs it later attached with options, following their
 * forks: 0 and *ret_id, or a negative errno and *error (-ENOENT: no such file now). */
int manager_watch_add_program(struct manager *m, bool by_comm, const char *name,
                              const struct follower_options *options, uint32_t *ret_id, char **error);
/* manager-declared.c: the [target] sections of memleakd.conf, each a watch (of its unit, cgroup
 * or program) while it is declared: made at the start, on each tick for those whose unit,
 * cgroup or file is not there yet, and at a reload (the new ones made, the withdrawn ones ended
 * and their processes detached). One a detach request ended stays so until a reload. */
void manager_declared_sync(struct manager *m);
void manager_declared_free(struct manager *m);

/* End watch id (a declaration withdrawn), and detach its live targets. */
void manager_watch_end(struct manager *m, uint32_t id);
/* pid of watch id (0: none) detached by request: not attached again by its watch while it runs
 * the same program (an exec, or another process on its pid, is tried anew). */
void manager_watch_forgo(struct manager *m, uint32_t id, pid_t pid);
/* Watch id is one memleakd.conf declares (the config makes it again at a restart). */
void manager_watch_set_declared(struct manager *m, uint32_t id);
/* The watches attach requests made, written to the state directory (at each change), and made
 * again from it at the start (logged; one whose unit or cgroup is not there then, stopped while
 * memleakd was down, is watched for as when it restarts: its processes attached once it is). */
void manager_watches_save(struct manager *m);
void manager_watches_restore(struct manager *m);
/* Whether watch id is there. */
bool manager_watch_live(const struct manager *m, uint32_t id);
/* Stop watching req's unit or cgroup (its targets are the caller's to detach): 0, *ret (the
 * watch's id and its last status entry), or -ESRCH and *error. */
struct watch_removed {
        uint32_t id;
        cJSON *json;
};
int manager_watch_remove(struct manager *m, const struct memleak_request *req, struct watch_removed *ret,
                         char **error);
/* The id of req's watch ("unit" or "cgroup"); 0: none. */
uint32_t manager_watch_id(const struct manager *m, const struct memleak_request *req);
/* A watch as status shows it ({"unit" | "cgroup", "path", "cgroups", "processes", "attached",
 * "missed", "failed", "events_lost"}); NULL for no such watch or without memory. */
cJSON *manager_watch_to_json(const struct manager *m, uint32_t id);
/* Every watch, an array. */
cJSON *manager_watches_to_json(const struct manager *m);
/* A target forked: follow the child (follow_forks), or clear the probes it inherited, shortly
 * (none when it shares the parent's memory: a vfork child). */
void manager_target_forked(struct manager *m, pid_t parent, pid_t child, bool shares_memory);
/* Clear them now (the children timer). */
void manager_clear_children(struct manager *m);

/* An unwind table was built: targets waiting for their tables record (or fail: phase failed),
 * targets write their mapping lists again, holds at new code are answered. The attaches waiting
 * are answered next (manager_requests_tables_loaded()), then manager_drop_failed_targets(). */
void manager_unwind_tables_loaded(struct manager *m);
/* Forget the targets whose recording could not start (their attach answered). */
void manager_drop_failed_targets(struct manager *m);

/* A target that execs (or is about to: memleakctl run) maps its program and libraries right
 * after: its maps are followed every few milliseconds for a while (target_follow_maps()), so that
 * its stacks are walked by unwind tables from its first allocations, not from the next snapshot.
 * Returns whether any target is still followed. */
#define EXEC_FOLLOW_INTERVAL_USEC (10ULL * 1000)
bool manager_follow_new_programs(struct manager *m);

/* Arm that following, if a target is to be followed so and it is not armed already (after an
 * attach, a registration or an exec). */
void manager_follow_new_programs_start(struct manager *m);
/* The status text systemd shows, and the fork watch (linked while a process is traced). */
void manager_targets_changed(struct manager *m);
/* Stop every live target and free them all (shutdown). */
void manager_free_targets(struct manager *m);
