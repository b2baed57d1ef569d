/* SPDX-License-Identifier: GPL-2.0-only */
/* What a target maps where: its file mappings, kept after it exits so its stacks still resolve. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "proc-maps.h"

struct module_mapping {
        uint64_t start, end, pgoff;
        uint64_t dev, ino;      /* makedev(major, minor) and inode, as /proc/PID/maps shows them */
        char *path;             /* as the target sees it */
        bool not_code;          /* mapped without execute permission: no return address is there */
};

/* Addresses [start, end). */
struct address_range {
        uint64_t start, end;
};

struct module_map {
        struct module_mapping *mappings;
        size_t n;
        /* executable mappings of no file (JIT code: V8's, the JVM's), in address order: a return
         * address may lie in them, and only the process's perf map names them */
        struct address_range *anon_code;
        size_t n_anon_code;
        /* CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns()'s clock) just before /proc/PID/maps was
         * read for this view; 0 if it was not read. A mapping recorded before then is in the view,
         * or was unmapped before it was taken. */
        uint64_t read_ns;
};

/* The file mappings of a parsed maps file (not anonymous, not "[vdso]"), in its order, and its
 * anonymous executable ones (unnamed, or "[anon:NAME]"): into *ret on success (release with
 * module_map_done()), -ENOMEM. */
int module_map_from_proc_maps(const struct proc_maps *maps, struct module_map *ret);

/* Re-read /proc/PID/maps: its file mappings. The map is replaced only on success, so the last
 * good view survives the target's exit. */
int module_map_refresh(struct module_map *mm, pid_t pid);
void module_map_done(struct module_map *mm);
/* A deep copy of from; -ENOMEM (to untouched). */
int module_map_copy(struct module_map *to, const struct module_map *from);

const struct module_mapping *module_map_find(const struct module_map *mm, uint64_t addr);
/* Whether addr lies in an anonymous executable mapping. */
bool module_map_is_anon_code(const struct module_map *mm, uint64_t addr);

/* Bytes [start, end) of a file, by offset in it: a function's code, wherever it is mapped. */
struct file_range {
        uint64_t dev, ino;
        uint64_t start, end;
};

/* Whether addr, as mm maps files, lies in one of the n ranges. */
bool module_map_in_ranges(const struct module_map *mm, const struct file_range *ranges, size_t n, uint64_t addr);

/* Open the file a target sees at path (inside its root, safe-open.h) and check it is the one with
 * dev/ino when those are non-zero, else the one it maps at [start, end) if start != end.
 * Returns an O_RDONLY|O_CLOEXEC fd of a regular file, or -errno (-ENOTREG: not a regular file). */
int module_map_open_file(pid_t pid, const char *path, uint64_t dev, uint64_t ino,
                          uint64_t start, uint64_t end);
