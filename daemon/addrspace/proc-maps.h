/* SPDX-License-Identifier: GPL-2.0-only */
/* Parse /proc/PID/maps text into an array of its lines, every field kept (anonymous mappings,
 * permissions, " (deleted)"). module-map.h keeps what the rest of memleakd needs of it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct map_entry {
        uint64_t start, end;            /* [start, end) */
        uint64_t pgoff;                 /* file offset of start */
        uint64_t dev_major, dev_minor, inode;
        char perms[5];                  /* "r-xp" */
        char *path;                     /* NULL for anonymous; "[heap]", "[vdso]" etc. kept as is;
                                         * the kernel's " (deleted)" suffix stripped ... */
        bool deleted;                   /* ... and flagged here */
};

struct proc_maps {
        struct map_entry *entries;      /* sorted by start, not overlapping, as the kernel lists them */
        size_t n;
};

/* Parse the maps file at path (e.g. "/proc/1234/maps"). A read that lists mappings out of order
 * (the process mapped or unmapped while it was read) is taken again, a few times. Returns 0,
 * -errno of opening or reading it, -EINVAL if a line is malformed or the mappings are not sorted,
 * or -ENOMEM. *ret is written only on success; release it with proc_maps_done(). */
int proc_maps_parse_file(const char *path, struct proc_maps *ret);

/* Same, from text already in memory. */
int proc_maps_parse_string(const char *text, struct proc_maps *ret);

/* Free the entries; accepts a zeroed struct. */
void proc_maps_done(struct proc_maps *m);
