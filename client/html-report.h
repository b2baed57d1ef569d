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

/* The page for report (a report reply's object) and history (a history reply's, or NULL). Names a
 * traced process chose are data on the page, never markup. 0, -EBADMSG when report is not an
 * object, -ENOMEM, -EIO when the stream failed. */
int html_report_write(FILE *f, const cJSON *report, const cJSON *history);
