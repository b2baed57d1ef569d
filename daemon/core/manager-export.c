/* SPDX-License-Identifier: GPL-2.0-only */
/* export_dir: every export_interval_ms, at a snapshot tick, a report of every stack of every
 * target (a report job, manager-report.c) whose worker writes each live target's gzip'd pprof
 * profile there, a pid's oldest past export_keep removed (report/export-files), for an agent to
 * ship to Pyroscope or Parca. */
#include <assert.h>
#include <errno.h>
#include "log.h"
#include "manager.h"
#include "manager-report.h"
#include "protocol.h"
#include "util.h"

void manager_export_written(struct manager *m, int r)
{
        assert(m);
        m->export.pending = false;
        if (r < 0 && r != -ECANCELED && r != m->export.last_error)
                log_warning_errno(r, "Cannot write the profiles to %s (export_dir), trying again at each "
                                  "interval: %m", m->config.export_dir);
        else if (r >= 0 && m->export.last_error < 0)
                log_info("The profiles are written to %s again", m->config.export_dir);
        if (r != -ECANCELED)
                m->export.last_error = r < 0 ? r : 0;
}

void manager_export_tick(struct manager *m)
{
        _cleanup_free_ char *error = NULL;
        uint64_t now = now_monotonic_usec();
        int r;

        assert(m);
        if (!m->config.export_dir || m->export.pending ||
            (m->export.started_usec && now - m->export.started_usec < m->config.export_interval_ms * 1000))
                return;
        m->export.started_usec = now;
        r = manager_report_start(m, NULL, &(struct memleak_request) { .cmd = MEMLEAK_CMD_REPORT, .top = MEMLEAK_MAX_TOP },
                                 &error);
        if (r < 0)
                manager_export_written(m, r);
        else
                m->export.pending = true;
}
