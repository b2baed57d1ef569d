/* SPDX-License-Identifier: GPL-2.0-only */
/* A target as every reply shows it (attach, detach, status, report, history): who it is, how it
 * is traced, the processes it forked. Each reply adds its own fields after these (pure). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>
#include "auto-sample.h"

struct target_json {
        pid_t pid;
        const char *comm;                       /* NULL: null */
        bool exited;
        bool has_outstanding;                   /* report: its outstanding heap and mappings */
        uint64_t outstanding_bytes;
        uint64_t outstanding_allocs;
        uint64_t outstanding_mmap_bytes;        /* --mmap: anonymous mappings, apart from the heap */
        uint64_t outstanding_mmaps;
        bool has_attach;                        /* status, attach, detach: how it was attached */
        bool mmap;
        uint64_t attached_s;
        const char *allocator;                  /* NULL: null */
        const char *allocator_reason;           /* NULL: null */
        uint32_t snapshots;
        uint64_t sample_bytes;                  /* 0: exact */
        const struct auto_sample_history *auto_sample;  /* NULL: null */
        uint64_t children_forked;
        bool follow_forks;
        uint64_t children_followed;
        uint64_t children_missed;               /* follow_forks: not followed, for any reason */
        uint64_t children_missed_exited;        /* of those, gone before they could be attached */
        pid_t forked_from;                      /* 0: null */
        const char *watch_name;                 /* the unit or cgroup it was found in; NULL: null */
        bool watch_is_unit;
};

/* {"pid", "comm", ["outstanding_*",] "exited", ["mmap",] "snapshots", "sample_bytes",
 * "auto_sample", ["attached_s", "allocator", "allocator_reason",] "children_forked",
 * "follow_forks", "children_followed", "children_missed", "children_missed_exited", "forked_from", "unit",
 * "cgroup"} (REPLY_TARGET); NULL without memory. */
cJSON *target_json_new(const struct target_json *t);
