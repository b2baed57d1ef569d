/* SPDX-License-Identifier: GPL-2.0-only */
/* Build the report object from per-stack rows: sort, fold past --top, name every frame (pure). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "stack-rows.h"

struct auto_sample_history;

struct report_target {
        pid_t pid;                      /* its rows' pid: the key rows are matched by */
        pid_t shown_pid;                /* the pid shown (0: pid): set for an exited target whose
                                         * pid a later one took, its rows then keyed by a pid below 0 */
        const char *comm;
        bool exited;
        bool kernel;                    /* the kernel target: its stacks are the kernel's */
        /* growth over the snapshot ring: valid when has_trend */
        bool has_trend;
        uint64_t trend_window_s;
        int64_t trend_bytes;
        /* a live target's trend ends at this report's own read (its bytes, generated_at): from
         * the oldest snapshot's bytes and time, then; trend_window_s and trend_bytes unused */
        bool trend_to_now;
        uint64_t trend_oldest_bytes;
        uint64_t trend_oldest_usec;     /* CLOCK_REALTIME */
        uint32_t snapshots;             /* what its stacks' verdicts rest on */
        uint64_t rss_bytes;             /* its resident memory when the report was asked; 0: unknown */
        uint64_t sample_bytes;          /* its heap blocks are sampled every ~N bytes; 0: exact */
        const struct auto_sample_history *auto_sample;  /* memleakd sampled it (its share of the
                                                         * allocation table filled); NULL */
        uint64_t children_forked;       /* processes it forked while traced, which are not */
        uint64_t children_followed;     /* of those, attached too (follow_forks) */
        uint64_t children_missed;         /* of those, not followed (follow_forks) */
        uint64_t children_missed_exited;  /* of the missed, gone before they could be */
        pid_t forked_from;              /* the traced process it was followed from; 0 */
        bool follow_forks;              /* the processes it forks are traced too */
        const char *watch_name;         /* the unit or cgroup it was found in; NULL */
        bool watch_is_unit;
        const struct reach_result *reach;       /* its reachability scan (reach-scan.h); NULL: none */
        const char *reach_unavailable;  /* why a scan asked for is not there; NULL */
        /* its own counters' fields ("counters", "lost", "verdicts_qualified", "blind_since",
         * "lost_in_window"), added to its object as they are; NULL: none */
        const cJSON *counted;
        bool verdicts_qualified;        /* it lost allocations within the window its verdicts look
                                         * at: each of its stacks' verdict says so */
};

/* Most frames one address may resolve to (the function and the calls inlined into it). */
#define REPORT_FRAMES_PER_ADDRESS_MAX 17U

/* What a frame resolves to; NULL/0 members are unknown and rendered as null. */
struct frame_symbol {
        const char *symbol;
        bool has_offset;
        uint64_t offset;
        bool inlined;                   /* a call inlined into the next frame's function */
        const char *module;
        bool has_module_offset;
        uint64_t module_offset;         /* file offset inside module */
        const char *build_id;           /* module's GNU build ID, lowercase hex */
        const char *file;
        int line;
};

/* Resolves addr into at most max frames (innermost first) in ret[], zero-initialized by the
 * caller; returns how many it filled (0: nothing known, the address alone is shown). */
typedef size_t (*report_resolve_fn)(void *userdata, pid_t pid, uint64_t addr, struct frame_symbol *ret,
                                    size_t max);

struct leak_assessment;
struct reach_result;

/* The verdict on row's stack from its history (leak-verdict.h), its current bytes the newest
 * point; false when it has none (an exited target, mappings, the kernel's). */
typedef bool (*report_assess_fn)(void *userdata, const struct stack_row *row, struct leak_assessment *ret);

struct report_params {
        uint64_t top;
        uint64_t min_age_s;
        uint64_t generated_at;          /* seconds since the epoch */
        uint64_t generated_at_usec;     /* the same in µs, for report_summarize()'s growth (0: from
                                         * generated_at) */
        uint32_t max_stack_depth;       /* a stack this deep was cut there: "truncated" */
        const cJSON *lost;              /* copied into the report */
        report_resolve_fn resolve;
        report_assess_fn assess;        /* NULL: no verdicts */
        int only_verdict;               /* 1 + the enum leak_verdict of the only stacks to list
                                         * (the others go to "other"; "growing" lists those with
                                         * lost blocks too); 0: every stack */
        bool locations;                 /* each distinct frame once in the report's "locations",
                                         * each stack's "locations" its indices; each stack then
                                         * a raw JSON text (cJSON_Raw) in valid UTF-8 */
        void *userdata;
};

/* rows are sorted in place. Returns NULL on allocation failure. */
cJSON *report_build(struct stack_rows *rows, const struct report_target *targets, size_t n_targets,
                    const struct report_params *p);

/* What a report's stacks say of each target, without the stacks (the metrics): its heap stacks
 * with blocks outstanding, those growing (p->assess), those a reachability scan found lost
 * blocks in, and those blocks' bytes; a live one's growth from its oldest snapshot to now. */
struct report_summary {
        uint64_t stacks;
        uint64_t growing;
        uint64_t lost_stacks;
        uint64_t lost_bytes;
        bool has_growth;                /* a live target's heap bytes' growth over its ring, to now */
        double growth_bytes_per_s;
};
/* ret[i] for targets[i] (rows as report_build() takes them; not reordered). */
void report_summarize(const struct stack_rows *rows, const struct report_target *targets, size_t n_targets,
                      const struct report_params *p, struct report_summary *ret);
/* The report's "targets" array alone. NULL without memory. */
cJSON *report_targets_json(const struct stack_rows *rows, const struct report_target *targets, size_t n_targets,
                           const struct report_params *p);

/* "user stack unreadable (EFAULT)" and friends, for a negative stack id of a process's stack
 * (kernel: of the kernel target's, "kernel stack unreadable (EFAULT)"). */
const char *report_stack_error(int64_t stack_id, bool kernel);
