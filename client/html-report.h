/* SPDX-License-Identifier: MIT */
/* memleakd's report as one self-contained HTML page (client/html-report.html): the report and the
 * snapshot history as data, drawn by the page itself — the growth of each process and of its
 * largest stacks over time, the stacks still growing or lost called out, a flame graph of the
 * outstanding bytes that zooms on a click, what grew between two snapshots of the ring, and a
 * table of every stack to sort, search and open onto its frames. No server, no network (pure:
 * cJSON in, text out). */
#pragma once

#include <stdio.h>
#include <cjson/cJSON.h>

/* The most snapshots of a target the page carries: a deeper ring is thinned to as many, evenly
 * spread, the oldest and the newest kept. */
#define HTML_HISTORY_POINTS_MAX 500

/* The page for report (a report reply's object) and history (a history reply's, or NULL). Names a
 * traced process chose are data on the page, never markup. 0, -EBADMSG when report is not an
 * object (or a deep history's snapshot has no time), -ENOMEM, -EIO when the stream failed. */
int html_report_write(FILE *f, const cJSON *report, const cJSON *history);
