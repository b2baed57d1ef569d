/* SPDX-License-Identifier: GPL-2.0-only */
/* The metrics in Prometheus' text exposition format (node_exporter's textfile collector reads
 * it; memleakctl metrics prints it): per live target, from the report's targets and what its
 * stacks say (report_summarize()), and the daemon's own. Pure: cJSON and numbers in, text out. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "report.h"

struct metrics_daemon {
        const char *version;
        uint64_t rss_bytes;             /* 0: unknown */
        bool has_map_bytes;
        uint64_t map_bytes;             /* the kernel memory its BPF maps hold */
        double snapshot_tick_s;         /* the last snapshot tick's cost */
        uint64_t generated_at;          /* seconds since the epoch */
};

/* targets: a report's "targets" array; sums[i] what its stacks say of targets[i]. *ret
 * (malloc'd, NUL-terminated). -ENOMEM. */
int metrics_text_build(const cJSON *targets, const struct report_summary *sums, const struct metrics_daemon *d,
                       char **ret);
