/* SPDX-License-Identifier: MIT */
/* Turn memleakd's replies into text or JSON on a stream (pure: cJSON in, text out). */
#pragma once

#include <stdio.h>
#include <cjson/cJSON.h>

/* "Attached to pid 1234 (leaky): glibc allocator, 10 probes in /usr/lib/.../libc.so.6". */
int render_attach(FILE *f, const cJSON *target);

/* "Detached from pid 1234 (leaky)". */
int render_detach(FILE *f, const cJSON *reply);
/* An attach or detach of a unit or cgroup: {"watch": {...}, "targets": [...]}. */
int render_watch_attach(FILE *f, const cJSON *reply);
int render_watch_detach(FILE *f, const cJSON *reply);

/* The status reply: daemon, targets, counters, lost events. */
int render_status(FILE *f, const cJSON *status);

/* The report object, laid out like BCC's memleak. Times are local (TZ). */
int render_report(FILE *f, const cJSON *report);
/* The same, with each resolved frame's raw address after it (unresolved ones show it anyway). */
int render_report_with_addresses(FILE *f, const cJSON *report);

/* memleakctl leaks: {"suspects": [...], "targets": [...]}, each suspect as a report's stack. */
int render_leaks(FILE *f, const cJSON *leaks);

/* memleakctl history: {"targets": [{"pid", "totals": [...], "stacks": [...]}]}. */
int render_history(FILE *f, const cJSON *history);

/* How memleakctl top orders the stacks. */
enum render_top_sort {
        RENDER_TOP_BY_GROWTH,
        RENDER_TOP_BY_BYTES,
        RENDER_TOP_BY_COUNT,
};

/* One frame of memleakctl top from a report: each target's outstanding bytes, RSS and trend,
 * then at most rows stacks sorted as asked, one line each with its verdict (the expanded-th,
 * counting from 1, with all its frames; 0: none). Control characters are spelled out. */
int render_top(FILE *f, const cJSON *report, enum render_top_sort sort, unsigned rows, unsigned expanded);

/* Any object, pretty-printed, one trailing newline. */
int render_json(FILE *f, const cJSON *obj);

/* {"error":{"code":"ESRCH","message":"..."}} on one line: JSON mode's error form. */
int render_error_json(FILE *f, int error, const char *message);

/* All render_* return 0, -EBADMSG when the object lacks what the renderer needs, -ENOMEM, or
 * -EIO when the stream failed. */

/* render(f, obj) on a copy of obj whose strings have what a terminal acts on spelled out (a comm
 * or path with escape sequences in it, chosen by the traced process, is printed, not obeyed). */
int render_text_safely(FILE *f, const cJSON *obj, int (*render)(FILE *f, const cJSON *obj));
