/* SPDX-License-Identifier: GPL-2.0-only */
/* The Prometheus metrics (report/metrics-text): `memleakctl metrics` asks for them (a report
 * job, manager-report.c), and with metrics_textfile they are written there, atomically, every
 * metrics_interval_ms at a snapshot tick, for node_exporter's textfile collector. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "manager.h"
#include "manager-report.h"
#include "map-memory.h"
#include "metrics-text.h"
#include "protocol.h"
#include "util.h"

/* memleakd's own resident memory (/proc/self/statm); 0 when it cannot be read. */
static uint64_t own_rss(void)
{
        unsigned long long size, resident;
        FILE *f = fopen("/proc/self/statm", "re");
        int n;

        if (!f)
                return 0;
        n = fscanf(f, "%llu %llu", &size, &resident);
        fclose(f);
        return n == 2 ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

struct metrics_daemon manager_metrics_daemon(const struct manager *m)
{
        struct metrics_daemon d = {
                .version = MEMLEAKD_VERSION,
                .rss_bytes = own_rss(),
                .snapshot_tick_s = (double)m->snapshot_cost.last_usec / 1e6,
        };

        d.has_map_bytes = map_memory_now(m->env.skel, &d.map_bytes) >= 0;
        return d;
}

void manager_metrics_written(struct manager *m, int r)
{
        assert(m);
        m->metrics.pending = false;
        if (r < 0 && r != -ECANCELED && r != m->metrics.last_error)
                log_warning_errno(r, "Cannot write the metrics to %s (metrics_textfile), trying again at each "
                                  "interval: %m", m->config.metrics_textfile);
        else if (r >= 0 && m->metrics.last_error < 0)
                log_info("The metrics are written to %s again", m->config.metrics_textfile);
        if (r != -ECANCELED)
                m->metrics.last_error = r < 0 ? r : 0;
}

void manager_metrics_tick(struct manager *m)
{
        _cleanup_free_ char *error = NULL;
        uint64_t now = now_monotonic_usec();
        int r;

        assert(m);
        if (!m->config.metrics_textfile || m->metrics.pending ||
            (m->metrics.written_usec && now - m->metrics.written_usec < m->config.metrics_interval_ms * 1000))
                return;
        m->metrics.written_usec = now;
        r = manager_report_start(m, NULL, &(struct memleak_request) { .cmd = MEMLEAK_CMD_METRICS }, &error);
        if (r < 0)
                manager_metrics_written(m, r);
        else
                m->metrics.pending = true;
}
