/* SPDX-License-Identifier: GPL-2.0-only */
/* export_dir: a report written as one gzip'd pprof profile per live target, for an agent to ship
 * to Pyroscope or Parca: memleakd-PID-COMM-TIME.pb.gz, each written whole (a temporary file
 * renamed), the oldest of a pid's removed past keep. */
#pragma once

#include <stdint.h>
#include <cjson/cJSON.h>

/* The file name of pid's profile made at usec (CLOCK_REALTIME): "memleakd-PID-COMM-" then the
 * UTC time to the millisecond (so that a pid's names sort by time); comm's bytes outside
 * [A-Za-z0-9._-] as '_'. size at least EXPORT_FILES_NAME_MAX. */
#define EXPORT_FILES_NAME_MAX 96
void export_files_name(char *buf, size_t size, int64_t pid, const char *comm, uint64_t usec);

/* Each live target of report (a report object: its stacks are its own) into dir, at usec; the
 * oldest files of each such pid past keep removed. How many were written, or the first -errno
 * (the others are tried all the same). */
int export_files_write(const char *dir, const cJSON *report, uint32_t keep, uint64_t usec);
