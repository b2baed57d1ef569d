/* SPDX-License-Identifier: GPL-2.0-only */
/* Find an object's separate debug file (by build ID, then .gnu_debuglink) the way gdb and libdwfl
 * look, but opening only regular files, checking each is the right one, and refusing one whose
 * compressed sections would inflate past the limits. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where debug files live (Debian: the -dbg and -dbgsym packages). */
#define DEBUGINFO_ROOT "/usr/lib/debug"

struct debuginfo_request {
        const char *object_path;        /* the object's path: debuglinks are looked for beside it */
        uint64_t object_dev, object_ino;/* the object itself, never taken for its own debug file */
        const uint8_t *build_id;        /* the object's GNU build ID (NULL: none) */
        size_t build_id_len;
        const char *debuglink;          /* its .gnu_debuglink file name (NULL: none) */
        uint32_t debuglink_crc;         /* that section's CRC of the debug file */
        uint64_t max_section_bytes;     /* one compressed section may inflate to this much */
        uint64_t max_bytes;             /* all of them together */
};

struct debuginfo_found {
        int fd;                         /* O_RDONLY, a checked ELF file; -1 when nothing was found */
        char *path;                     /* malloc'd */
        uint64_t inflated_bytes;        /* what its compressed debug sections inflate to */
        char *refused_path;             /* a match refused for its size (malloc'd; NULL: none) */
        uint64_t refused_bytes;         /* what that one would have inflated to */
};

/* Look for the debug file; 0 with found->fd >= 0 when there is one, 0 with fd -1 when there is
 * none (refused_path says when the right file was refused as too large), -ENOMEM. */
int debuginfo_find(const struct debuginfo_request *req, struct debuginfo_found *found);
void debuginfo_found_done(struct debuginfo_found *found);

/* The paths looked at for req, in order (for tests and messages): malloc'd strings in *ret. */
int debuginfo_candidates(const struct debuginfo_request *req, char ***ret, size_t *ret_n);
