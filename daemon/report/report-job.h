/* SPDX-License-Identifier: GPL-2.0-only */
/* A report built on the worker thread: the rows of the live targets read from the BPF maps and
 * those the exited ones kept, stacks cut where a frame-pointer chain broke, every frame named,
 * the reply encoded. The event loop only copies what it owns into the job. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "auto-sample.h"
#include "exit-verdicts.h"
#include "leak-verdict.h"
#include "reach-scan.h"
#include "metrics-text.h"
#include "module-map.h"
#include "snapshot.h"
#include "stack-collect.h"

struct memleak_bpf;
struct symbolizer;
struct kernel_symbols;
struct perf_map;

/* One target as the report sees it, owned by the job. */
struct report_job_target {
        pid_t pid;                      /* the key of its rows (report_target's) */
        pid_t shown_pid;                /* its pid */
        char comm[17];
        bool exited;
        bool has_trend;                 /* growth over its snapshot ring */
        uint64_t trend_window_s;
        int64_t trend_bytes;
        bool trend_to_now;              /* live: to this report's read (report.h) */
        uint64_t rss_bytes;             /* 0: unknown */
        uint64_t sample_bytes;          /* 0: every allocation recorded */
        struct auto_sample_history auto_sample; /* when memleakd turned it to sampling */
        uint64_t children_forked;       /* processes it forked while traced */
        uint64_t children_followed;     /* of those, attached too (follow_forks) */
        uint64_t children_missed;         /* of those, not followed (follow_forks) */
        uint64_t children_missed_exited;  /* of the missed, gone before they could be */
        pid_t forked_from;              /* the traced process it was followed from; 0 */
        bool follow_forks;              /* the processes it forks are traced too */
        char *watch_name;               /* the unit or cgroup it was found in (owned); NULL */
        bool watch_is_unit;
        uint64_t trend_oldest_bytes;
        uint64_t trend_oldest_usec;
        struct stack_rows frozen;       /* an exited target's rows */
        struct module_map modules;      /* what it maps: names its frames, tells code from data */
        char **kept_build_ids;          /* an exited target read back from its record: the
                                         * build ID (hex, owned) of each of modules' mappings' file
                                         * it kept; NULL entries: none kept; NULL: not one */
        const char **build_ids;         /* made by the job: modules' mappings' build IDs, each
                                         * looked up the first time a frame is in it (NULL: not
                                         * yet; "": none) */
        struct file_range *forwarders;  /* target's: operators whose frames top no stack shown */
        size_t n_forwarders;
        struct kernel_symbols *kernel;  /* the kernel target's symbols (a reference); NULL */
        struct snapshot *history;       /* its ring's snapshots, oldest first, their rows shared
                                         * with the ring (snapshot_rows_ref): the verdicts; an
                                         * exited one's without rows (their sums and counters) */
        size_t n_history;
        struct exit_verdicts *verdicts; /* an exited one's, kept at its exit (owned); NULL */
        bool verdicts_from_history;     /* an exited one whose verdicts are not kept yet: made from
                                         * history (with its rows) as they will be kept */
        uint64_t exited_usec;           /* an exited one's exit (CLOCK_REALTIME) */
        /* reachability (reach-scan.h): a scan to run first (report --reachability on a live
         * target), its result or the one taken at its exit; or why there is none */
        bool scan_live;
        bool traced_from_start;         /* attached before its exec (memleakctl run): every block known */
        struct reach_result *reach;
        char *reach_unavailable;
        /* the names of its JIT code: a live target's perf map read on the worker the first time a
         * frame needs it; an exited one's as taken at its exit (a reference), if it was held there */
        bool jit_looked;
        struct perf_map *perf_map;
        /* its own counters (target.h's struct target_counters): a live target's are its row of
         * the counters map, read by the job, less counters_base; an exited one's, as it left them */
        uint32_t counter_row;
        bool counters_final;
        uint64_t counters_base[_COUNTER_MAX];
        uint64_t counters[_COUNTER_MAX];
        bool has_counters;              /* set by the job: counters hold them */
        /* set by the job: its counters as the report's target fields say them, and whether it
         * lost allocations within its verdicts' window (loss-window.h) */
        cJSON *counted;
        bool verdicts_qualified;
};

/* The perf maps one report reads, at most (each is bounded, perf-map.h; a job may read one for
 * every target): past it, the JIT frames of the targets left go unnamed. */
#define REPORT_JOB_PERF_MAP_BUDGET (256ULL << 20)

struct report_job {
        /* read by the worker: the maps' fds and the symbolizer are safe to use from it */
        struct memleak_bpf *skel;
        struct map_limits limits;
        struct symbolizer *syms;
        struct report_job_target *targets;
        size_t n_targets;
        uint64_t id;                    /* the request's */
        uint64_t top;
        uint64_t min_age_s;
        uint32_t max_stack_depth;
        struct leak_verdict_thresholds thresholds;
        int only_verdict;               /* report.h's */
        bool locations;                 /* report.h's: a table of locations, each stack raw text */
        uint64_t max_pause_ms;          /* a live scan's bound */
        uint64_t concurrent_stop_ms;    /* a live scan tried concurrently first, each stop within
                                         * this; 0: not (reach_scan_live) */
        bool snapshot_only;             /* a live scan only from a snapshot (reach_scan_live) */
        /* the metrics instead of a report: {"metrics": text} (metrics-text.h), with the daemon's
         * own figures, and written to metrics_path (owned) when set */
        bool metrics;
        struct metrics_daemon metrics_daemon;
        char *metrics_path;
        int metrics_errno;              /* made by it: writing metrics_path failed (0: it did not) */
        /* the report written as pprof files, one per live target, into export_dir (owned;
         * export-files.h), export_keep a pid's files kept; no reply */
        char *export_dir;
        uint32_t export_keep;
        int export_result;              /* made by it: the files written, or the first -errno */
        /* made by it */
        uint64_t perf_map_bytes;        /* the perf maps it read (REPORT_JOB_PERF_MAP_BUDGET) */
        char *frame;                    /* the reply, encoded */
        size_t frame_len;
        /* the requester's */
        void *userdata;
};

/* A job for n_targets targets (zeroed, to be filled in). -ENOMEM. */
int report_job_new(size_t n_targets, struct report_job **ret);
struct report_job *report_job_free(struct report_job *j);

/* worker_run_fn: build the report, or an error reply, into j->frame (NULL only without memory). */
void report_job_run(void *job);
