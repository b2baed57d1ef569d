/* SPDX-License-Identifier: GPL-2.0-only */
/* Which pages of a running process were written since a moment (the kernel's asynchronous
 * userfaultfd write-protect, Linux 6.7+): a userfaultfd made by the process itself, in a short
 * stop (uffd-handle.h: taken by the daemon, or held in the process where the daemon may not take
 * it, a container's), with UFFDIO_API's UFFD_FEATURE_WP_ASYNC (the kernel resolves each write fault
 * itself, the process never waits for us, and marks the page written), UFFDIO_REGISTER (mode WP)
 * over the mappings to watch, their pages protected and later the pages written since found and
 * protected again in one walk by PAGEMAP_SCAN on /proc/PID/pagemap (our own descriptor, whoever
 * holds the userfaultfd; only pages that are there: protecting untouched ones would fill page
 * tables over a sparse reservation). Registering and closing a held one is done in a stop.
 * Closing the userfaultfd unregisters everything: the process is as it was. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "process-stop.h"
#include "uffd-handle.h"
#include "reachability.h"

struct write_tracker {
        pid_t pid;
        struct uffd_handle uffd;
        int pagemap_fd;
        uint64_t stop_timeout_ms;       /* a stop of its own, to close a held one */
        struct reach_span *watched;     /* the ranges registered */
        size_t n_watched, allocated;
        size_t n_protected;             /* watched[] up to there protected */
};

#define WRITE_TRACKER_NULL ((struct write_tracker) { .uffd = UFFD_HANDLE_NULL, .pagemap_fd = -1 })

/* In stop (every thread of pid stopped): the userfaultfd made, taken or held (uffd-handle.h), and
 * /proc/PID/pagemap opened. -errno, *error saying why: -EPERM (a seccomp filter: the call might
 * kill it), -ENOSYS, -EINVAL (a kernel without asynchronous write-protect), the system calls'
 * errors. On error nothing is left in the process. stop_timeout_ms bounds a stop
 * write_tracker_close() makes. */
int write_tracker_open(struct process_stop *stop, uint64_t stop_timeout_ms, struct write_tracker *ret,
                       char **error);

/* Whether its userfaultfd is held in the process: write_tracker_register() then needs a stop. */
bool write_tracker_held(const struct write_tracker *w);

/* Register [start, end), a mapping of the process (stop: the process stopped by the caller;
 * needed where held, NULL otherwise); its pages are protected by write_tracker_protect(). -EBUSY
 * (the process registered it with a userfaultfd of its own), -EINVAL (a mapping that cannot be
 * watched), -EIO (the kernel's -ENOMEM: also a process that exited meanwhile), -ENOMEM (ours),
 * -EAGAIN (held, without a stop), -EBADF (held, and the process closed it). */
int write_tracker_register(struct write_tracker *w, struct process_stop *stop, uint64_t start, uint64_t end);

/* Watch the mappings registered since the last call from now on: every page of them there
 * write-protected (while the process runs). -EIO, -ENOMEM. */
int write_tracker_protect(struct write_tracker *w);

/* The pages of [start, end) written since they were last write-protected, write-protected again,
 * appended to (*spans)[*n] (grown as needed; adjacent pages as one span): their bytes. -EPERM when
 * some of [start, end) is not watched (mapped anew since; *n as it was), -EIO as above, -ENOMEM. */
int64_t write_tracker_written(struct write_tracker *w, uint64_t start, uint64_t end, struct reach_span **spans,
                              size_t *n, size_t *allocated);

/* Stop watching (the write-protection gone) and close: where held, in the process, in stop (the
 * process stopped by the caller) or, NULL, in stops of its own (at most stop_timeout_ms to stop
 * it), each ending after 10 ms of unregistering (which clears every page's protection: about 11 ms
 * for 256 MiB, in the thread that makes the call), the process running between them. How long
 * those stops paused the process in all, in microseconds (0: none), the longest in
 * *ret_longest_usec (may be NULL). A process that cannot be stopped keeps it: harmless (the
 * kernel resolves its write faults itself). Accepts WRITE_TRACKER_NULL. */
uint64_t write_tracker_close(struct write_tracker *w, struct process_stop *stop, uint64_t *ret_longest_usec);
