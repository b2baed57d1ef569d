/* SPDX-License-Identifier: MIT */
/* LeakSanitizer's suppressions file ("leak:PATTERN" lines) read from its text, and matched
 * against a report stack's frames (pure: no I/O). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#define SUPPRESSIONS_MAX_BYTES    (1u << 20)    /* a file larger than this is refused */
#define SUPPRESSIONS_MAX_PATTERNS 10000
#define SUPPRESSIONS_MAX_PATTERN  4096          /* bytes of one pattern */

/* One "leak:PATTERN" line. */
struct suppression {
        char *pattern;          /* as written after "leak:" */
        unsigned line;          /* its line in the file, from 1 */
};

struct suppressions {
        char *path;             /* the file's name, as given: named in messages and the report */
        struct suppression *items;
        size_t n;
};

/* Parse a suppressions file's text (size bytes; it need not end in a newline): '#' comments and
 * blank lines are skipped, leading and trailing blanks ignored, every other line is
 * "leak:PATTERN". Returns 0, or -EINVAL with *ret_error "PATH:LINE: why" (malloc'd), -EFBIG
 * past the limits above (*ret_error too), -ENOMEM. */
int suppressions_parse(const char *text, size_t size, const char *path, struct suppressions **ret,
                       char **ret_error);

struct suppressions *suppressions_free(struct suppressions *s);

/* LeakSanitizer's template match: pattern is found anywhere in s, '*' matching any run of
 * characters; a leading '^' anchors it at s's start, a trailing '$' at its end. An empty or
 * NULL s matches nothing. */
bool suppressions_pattern_match(const char *pattern, const char *s);

/* The index of the suppression a stack's frames (a report's "frames", innermost first) match,
 * or -1: frame by frame from the innermost, each frame's module (its path, then its file
 * name), function ("symbol") and source file (its path, then its file name) against every
 * pattern in the file's order, as LeakSanitizer does. */
ssize_t suppressions_match_frames(const struct suppressions *s, const cJSON *frames);
