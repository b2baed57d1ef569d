/* SPDX-License-Identifier: GPL-2.0-only */
/* A process's perf map (/tmp/perf-PID.map, "START SIZE NAME" a line, in hex): the names a JIT
 * runtime gives the code it makes (node --perf-basic-prof, the JVM's perf-map-agent, python -X
 * perf, LuaJIT, .NET's DOTNET_PerfMapEnabled), which no file on disk holds. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "macro.h"

/* Lines read from one perf map at most (a runtime that writes one per function it compiles,
 * for days, may write millions): past it the rest is left unread, and perf_map_truncated()
 * says so. */
#define PERF_MAP_SYMBOLS_MAX 1000000U
/* Bytes of names kept at most, and of the file read at most; past them, the same. */
#define PERF_MAP_NAME_BYTES_MAX (64U << 20)
#define PERF_MAP_READ_BYTES_MAX (256ULL << 20)
/* A line longer than this (with its end of line) is skipped: no runtime names code so long. */
#define PERF_MAP_LINE_MAX 4096U

struct perf_map;

/* Parse a perf map from f: lines that are not "START SIZE NAME" (or past PERF_MAP_LINE_MAX)
 * are skipped. Into *ret (perf_map_free()), -ENOMEM, -errno reading. */
int perf_map_parse(FILE *f, struct perf_map **ret);

/* The perf map of the process whose root directory is root_fd (safe-open.h) and whose pid in its
 * own namespace is ns_pid: its /tmp/perf-NS_PID.map, opened inside that root as a regular file
 * only, not through a symlink, and, as perf has it, owned by owner (the process's user) or root.
 * -ENOENT when it writes none, -EPERM for another user's, -errno. */
int perf_map_load(int root_fd, pid_t ns_pid, uid_t owner, struct perf_map **ret);

/* A map is read-only once made, and shared by reference count (a target keeps the one taken at
 * its exit, report jobs on the worker read it): both may be called from any thread. */
struct perf_map *perf_map_ref(struct perf_map *m);
struct perf_map *perf_map_unref(struct perf_map *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct perf_map *, perf_map_unref)

/* The name of the code at addr, and addr's offset from its start in *ret_offset: where entries
 * overlap (code the runtime freed and reused), the one written last. NULL when none covers it.
 * The name lives as long as m. */
const char *perf_map_find(const struct perf_map *m, uint64_t addr, uint64_t *ret_offset);

/* One entry of a map: the code at [start, end) is named name. */
struct perf_map_entry {
        uint64_t start, end;
        const char *name;
};

/* The entries of m that name the code at addrs[0..n-1] (each as perf_map_find() finds it), each
 * once, in the order m's lines wrote them: *ret (malloc'd, NULL when none; the names live as long
 * as m) and *ret_n. What names those addresses and nothing else of a map (an exited target's
 * frames, kept across a restart). -ENOMEM. */
int perf_map_entries_at(const struct perf_map *m, const uint64_t *addrs, size_t n, struct perf_map_entry **ret,
                        size_t *ret_n);

/* A map of entries[0..n-1] (names copied), as if they were its lines in that order (a later one
 * wins where they overlap): *ret. -EINVAL for an entry with no bytes or no name, -E2BIG past
 * PERF_MAP_SYMBOLS_MAX or PERF_MAP_NAME_BYTES_MAX, -ENOMEM. */
int perf_map_new_from(const struct perf_map_entry *entries, size_t n, struct perf_map **ret);

/* The memory m holds (0 for NULL). */
size_t perf_map_bytes(const struct perf_map *m);

/* Whether lines were left unread (PERF_MAP_SYMBOLS_MAX, PERF_MAP_NAME_BYTES_MAX). */
bool perf_map_truncated(const struct perf_map *m);
