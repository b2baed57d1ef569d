/* SPDX-License-Identifier: GPL-2.0-only */
/* The [target] sections of memleakd.conf and its drop-ins: processes memleakd attaches at its
 * start, and whenever one that matches appears, with their attach options (their forks followed,
 * as a unit's are). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "protocol.h"

#define CONFIG_TARGET_SECTION "target"
#define CONFIG_TARGETS_MAX 64u          /* [target] sections in all the files together */

/* What a [target] matches: exactly one of these keys. */
enum config_target_match {
        CONFIG_TARGET_NONE = 0,         /* not said yet (an error at the section's end) */
        CONFIG_TARGET_UNIT,             /* unit = NAME.service: every process of the unit's cgroup */
        CONFIG_TARGET_CGROUP,           /* cgroup = PATH: every process of a cgroup v2 directory */
        CONFIG_TARGET_EXE,              /* exe = /usr/sbin/nginx: each process running that file */
        CONFIG_TARGET_COMM,             /* comm = nginx: each process of that name (its first 15 bytes) */
};

struct config_target {
        enum config_target_match match;
        char *value;                    /* the unit's name, the cgroup's path, the file's path, or the name */
        char *where;                    /* "FILE:LINE" of its section header, for messages */
        /* the attach options (docs/protocol.md, "attach") */
        char *objs[MEMLEAK_MAX_OBJS];   /* objs = PATH ...: absolute, separated by spaces */
        unsigned n_objs;
        uint64_t min_size;              /* min_size, max_size: bytes, K/M/G allowed, 0 = none */
        uint64_t max_size;
        uint64_t sample_bytes;          /* sample_bytes: 0 = the daemon's default */
        enum memleak_unwind unwind;     /* unwind: auto, dwarf or fp (MEMLEAK_UNWIND_DEFAULT: the
                                         * daemon's) */
        bool mmap;                      /* mmap: yes/no (no) */
};

struct config_targets {
        struct config_target *v;
        size_t n;
};

/* A [target] header at where ("FILE:LINE"): a new section, the one keys go to until the next
 * header. 0, -E2BIG (past CONFIG_TARGETS_MAX) or -ENOMEM. */
int config_targets_begin(struct config_targets *ts, const char *where);

/* key = value in the latest section: 0; -ENOENT (no such key); -EINVAL with *expected set to
 * what a valid value looks like (a static string); -EEXIST (a second match key); -ENOMEM. */
int config_targets_set(struct config_targets *ts, const char *key, const char *value, const char **expected);

/* The latest section ended: complete and consistent, 0 (one before it matching the same is
 * replaced by it: a later file's section wins, as its keys do), or -EINVAL and *why (static). */
int config_targets_end_last(struct config_targets *ts, const char **why);

/* The match key's name ("unit", ...). */
const char *config_targets_match_name(enum config_target_match m);

/* Whether a and b declare the same (their place aside). */
bool config_targets_same(const struct config_target *a, const struct config_target *b);

/* ts as [target] sections memleakd.conf's parser reads back the same: malloc'd text, or NULL
 * without memory. */
char *config_targets_format(const struct config_targets *ts);

int config_targets_copy(const struct config_targets *src, struct config_targets *ret);
void config_targets_done(struct config_targets *ts);
