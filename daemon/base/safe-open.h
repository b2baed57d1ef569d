/* SPDX-License-Identifier: GPL-2.0-only */
/* Open files a traced process names (its mappings, its libraries, debug links) without letting it
 * hang, mislead or escape us: regular files only, never a FIFO or device, symlinks kept inside the
 * process's root. */
#pragma once

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Linux has no errno for "not a regular file"; this one is otherwise unused by memleakd. */
#define ENOTREG EMEDIUMTYPE

enum safe_open_flags {
        SAFE_OPEN_NOFOLLOW = 1 << 0,    /* refuse a symlink as the last component (canonical paths) */
};

/* The root directory of pid (/proc/PID/root) as an O_PATH directory fd, or -errno. */
int safe_open_root(pid_t pid);

/* Open path for reading, resolved inside root_fd (symlinks, "..", absolute links included, as the
 * process whose root it is sees them), or in the daemon's own view with AT_FDCWD. The file is
 * looked at (O_PATH, fstat) before it is opened, so a FIFO, socket or device is never opened:
 * -ENOTREG. Returns an O_RDONLY|O_CLOEXEC fd, and its stat in *ret_st when not NULL. */
int safe_open_regular(int root_fd, const char *path, unsigned flags, struct stat *ret_st);
/* The same, for a file expected to be (dev, ino) (a mapping's): -ESTALE, unopened, when the path
 * names another file now. ino == 0 expects nothing. Files on kernel pseudo filesystems (proc,
 * sysfs, debugfs, ...) are -ENOTREG too. */
int safe_open_regular_as(int root_fd, const char *path, unsigned flags, uint64_t dev, uint64_t ino,
                         struct stat *ret_st);

/* The file pid maps at [start, end) (/proc/PID/map_files), checked as above against (dev, ino). */
int safe_open_mapped(pid_t pid, uint64_t start, uint64_t end, uint64_t dev, uint64_t ino,
                     struct stat *ret_st);

/* A directory inside root_fd (as above) opened for reading its entries, or -errno. */
int safe_open_dir(int root_fd, const char *path);

/* Read at most max_bytes of a regular file opened as above into a NUL-terminated malloc'd buffer
 * (*ret_len without the NUL). -EFBIG when the file is larger. */
int safe_open_read_file(int root_fd, const char *path, size_t max_bytes, char **ret, size_t *ret_len);

/* Why a file was refused, for messages: "is not a regular file" for -ENOTREG, strerror otherwise. */
const char *safe_open_strerror(int error);
