/* SPDX-License-Identifier: GPL-2.0-only */
/* Which pages of a running process were written since a moment (the kernel's asynchronous
 * userfaultfd write-protect, Linux 6.7+): a userfaultfd made by the process itself, in a short
 * stop (process-inject.h: userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY), taken with
 * pidfd_getfd, closed in the process at once), its ioctls acting on the process's memory from the
 * daemon while it runs: UFFDIO_API with UFFD_FEATURE_WP_ASYNC (the kernel resolves each write fault
 * itself, the process never waits for us, and marks the page written), UFFDIO_REGISTER (mode WP)
 * over the mappings to watch, their pages protected and later the pages written since found and
 * protected again in one walk by PAGEMAP_SCAN on /proc/PID/pagemap (only pages that are there:
 * protecting untouched ones would fill page tables over a sparse reservation). Closing the userfaultfd (or
 * the daemon dying) unregisters everything: the process is as it was. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "process-stop.h"
#include "reachability.h"

struct write_tracker {
        pid_t pid;
        int uffd;                       /* ours: a copy of the process's */
        int pagemap_fd;
        struct reach_span *watched;     /* the ranges registered */
        size_t n_watched, allocated;
};

/* In stop (every thread of pid stopped), make one thread create the userfaultfd, take it, close
 * the process's copy; then UFFDIO_API. -errno, *error saying why: -EPERM (a seccomp filter: the
 * call might kill it), -ENOSYS, -EINVAL (a kernel without asynchronous write-protect), the
 * system calls' errors. On error nothing is left in the process. */
int write_tracker_open(struct process_stop *stop, struct write_tracker *ret, char **error);

/* Watch [start, end), a mapping of the process, from now on: every page of it write-protected.
 * -EBUSY (the process registered it with a userfaultfd of its own), -EINVAL (a mapping that cannot
 * be watched), -EIO (the kernel's -ENOMEM: also a process that exited meanwhile), -ENOMEM (ours). */
int write_tracker_watch(struct write_tracker *w, uint64_t start, uint64_t end);

/* The pages of [start, end) written since they were last write-protected, write-protected again,
 * appended to (*spans)[*n] (grown as needed; adjacent pages as one span): their bytes. -EPERM when
 * some of [start, end) is not watched (mapped anew since; *n as it was), -EIO as above, -ENOMEM. */
int64_t write_tracker_written(struct write_tracker *w, uint64_t start, uint64_t end, struct reach_span **spans,
                              size_t *n, size_t *allocated);

/* Stop watching (the write-protection gone) and close. Accepts a zeroed struct with fds -1. */
void write_tracker_close(struct write_tracker *w);
