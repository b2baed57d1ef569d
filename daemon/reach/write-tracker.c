/* SPDX-License-Identifier: GPL-2.0-only */
/* The pages a running process writes, from a userfaultfd it made (asynchronous write-protect). */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "macro.h"
#include "process-inject.h"
#include "seccomp-check.h"
#include "write-tracker.h"

/* What Debian 12's headers lack (Linux 6.7's uapi) */
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef PAGEMAP_SCAN
#define PAGE_IS_WRITTEN (1 << 1)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_SWAPPED (1 << 4)
struct page_region {
        __u64 start;
        __u64 end;
        __u64 categories;
};
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
struct pm_scan_arg {
        __u64 size;
        __u64 flags;
        __u64 start;
        __u64 end;
        __u64 walk_end;
        __u64 vec;
        __u64 vec_len;
        __u64 max_pages;
        __u64 category_inverted;
        __u64 category_mask;
        __u64 category_anyof_mask;
        __u64 return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#define REGIONS_PER_SCAN 512

/* An ioctl's error: its -ENOMEM (a process gone meanwhile gives it too) as -EIO, so that -ENOMEM
 * stays ours. */
static int ioctl_error(void)
{
        return errno == ENOMEM ? -EIO : -errno;
}

/* Make t call nr(args): its return value, or -errno of the injection. */
static long call_in(struct thread_state *t, uint64_t insn, long nr, const uint64_t args[6], char **error)
{
        unsigned long forked = 0;
        long rax = 0;
        int r;

        r = process_inject_syscall(t, insn, nr, args, 0, &rax, &forked, error);
        return r < 0 ? r : rax;
}

int write_tracker_open(struct process_stop *stop, struct write_tracker *ret, char **error)
{
        /* no UFFD_FEATURE_WP_UNPOPULATED: pages not there are not protected (protect()) */
        struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
        struct thread_state *t;
        uint64_t insn = 0;
        int pidfd = -1, theirs, r;
        long fd;

        assert(stop);
        assert(ret);
        assert(error);
        *ret = (struct write_tracker) { .pid = stop->pid, .uffd = -1, .pagemap_fd = -1 };
        t = process_inject_pick_thread(stop);
        if (!t) {
                (void)asprintf(error, "every thread of pid %d stopped with a signal to take", (int)stop->pid);
                return -EAGAIN;
        }
        /* filters are per thread: the one that calls may have one its leader has not */
        r = seccomp_check_call(t->tid, true, SECCOMP_CALL_USERFAULTFD, error);
        if (r < 0)
                return r;
        r = process_inject_find_insn(stop->pid, &insn);
        if (r < 0) {
                (void)asprintf(error, "no `syscall` instruction in pid %d's code", (int)stop->pid);
                return r;
        }
        fd = call_in(t, insn, SYS_userfaultfd,
                     (const uint64_t[6]) { O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY, 0, 0, 0, 0, 0 }, error);
        if (fd < 0) {
                if (!*error)
                        (void)asprintf(error, "userfaultfd in pid %d failed: %s", (int)stop->pid, strerror((int)-fd));
                return (int)fd;
        }
        theirs = (int)fd;
        pidfd = (int)syscall(SYS_pidfd_open, stop->pid, 0);
        if (pidfd >= 0) {
                ret->uffd = (int)syscall(SYS_pidfd_getfd, pidfd, theirs, 0);
                r = ret->uffd < 0 ? -errno : 0;
                close(pidfd);
        } else
                r = -errno;
        /* the process's own copy goes at once: it never sees it */
        (void)call_in(t, insn, SYS_close, (const uint64_t[6]) { (uint64_t)theirs, 0, 0, 0, 0, 0 }, error);
        if (r < 0) {
                /* EPERM: memleakd's own seccomp filter refuses pidfd_getfd (a container's, as
                 * systemd-nspawn's; a unit's SystemCallFilter=) */
                (void)asprintf(error, "cannot take pid %d's userfaultfd: pidfd_getfd: %s%s", (int)stop->pid,
                               strerror(-r), r == -EPERM ? " (memleakd's own seccomp filter may refuse it)" : "");
                return r;
        }
        if (ioctl(ret->uffd, UFFDIO_API, &api) < 0) {
                r = -errno;
                (void)asprintf(error, "the kernel has no asynchronous userfaultfd write-protect: %s", strerror(-r));
                write_tracker_close(ret);
                return r;
        }
        return 0;
}

static int64_t protect(struct write_tracker *w, uint64_t start, uint64_t end, struct reach_span **spans, size_t *n,
                       size_t *allocated);

static int open_pagemap(struct write_tracker *w)
{
        char path[64];

        if (w->pagemap_fd >= 0)
                return 0;
        snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)w->pid);
        w->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
        return w->pagemap_fd < 0 ? -errno : 0;
}

int write_tracker_watch(struct write_tracker *w, uint64_t start, uint64_t end)
{
        struct uffdio_register reg = { .range = { .start = start, .len = end - start },
                                       .mode = UFFDIO_REGISTER_MODE_WP };
        int64_t bytes;
        int r;

        assert(w);
        r = open_pagemap(w);
        if (r < 0)
                return r;
        if (w->n_watched == w->allocated) {
                size_t a = MAX(w->allocated * 2, (size_t)64);
                struct reach_span *g = realloc(w->watched, a * sizeof(*g));

                if (!g)
                        return -ENOMEM;
                w->watched = g;
                w->allocated = a;
        }
        if (ioctl(w->uffd, UFFDIO_REGISTER, &reg) < 0)
                return ioctl_error();
        w->watched[w->n_watched++] = (struct reach_span) { .addr = start, .len = end - start };
        /* its pages protected: every one, now, counts as written (not yet protected) */
        bytes = protect(w, start, end, NULL, NULL, NULL);
        return bytes < 0 ? (int)bytes : 0;
}

/* PAGEMAP_SCAN over [start, end): the pages written (not protected) protected, and appended to
 * (*spans)[*n] unless spans is NULL. Only pages that are there (present or swapped) count: a page
 * never touched needs no protection (the page a later fault brings is not protected, so written),
 * and protecting one would fill page tables for the whole range (2 MiB a GiB: ruinous over a
 * sparse reservation, as a sanitizer's shadow). */
static int64_t protect(struct write_tracker *w, uint64_t start, uint64_t end, struct reach_span **spans, size_t *n,
                       size_t *allocated)
{
        struct page_region regions[REGIONS_PER_SCAN];
        int64_t bytes = 0;
        uint64_t at = start;
        size_t first = n ? *n : 0;

        if (w->pagemap_fd < 0)
                return -EPERM;
        while (at < end) {
                struct pm_scan_arg a = {
                        .size = sizeof(a), .flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC,
                        .start = at, .end = end, .vec = (uint64_t)(uintptr_t)regions, .vec_len = REGIONS_PER_SCAN,
                        .category_mask = PAGE_IS_WRITTEN, .category_anyof_mask = PAGE_IS_PRESENT | PAGE_IS_SWAPPED,
                        .return_mask = PAGE_IS_WRITTEN,
                };
                long k = ioctl(w->pagemap_fd, PAGEMAP_SCAN, &a);

                if (k < 0) {
                        if (n)
                                *n = first;
                        return ioctl_error();
                }
                for (long i = 0; i < k; i++) {
                        bytes += (int64_t)(regions[i].end - regions[i].start);
                        if (!spans)
                                continue;
                        if (*n == *allocated) {
                                size_t g = MAX(*allocated * 2, (size_t)256);
                                struct reach_span *s = realloc(*spans, g * sizeof(*s));

                                if (!s)
                                        return -ENOMEM;
                                *spans = s;
                                *allocated = g;
                        }
                        (*spans)[(*n)++] = (struct reach_span) { .addr = regions[i].start,
                                                                 .len = regions[i].end - regions[i].start };
                }
                if (a.walk_end <= at)
                        break;
                at = a.walk_end;
        }
        return bytes;
}

int64_t write_tracker_written(struct write_tracker *w, uint64_t start, uint64_t end, struct reach_span **spans,
                              size_t *n, size_t *allocated)
{
        assert(w);
        assert(spans && n && allocated);
        return protect(w, start, end, spans, n, allocated);
}

void write_tracker_close(struct write_tracker *w)
{
        if (!w)
                return;
        /* unregistering clears the write-protection; closing alone would too, once the last
         * reference goes */
        for (size_t i = 0; w->uffd >= 0 && i < w->n_watched; i++)
                (void)ioctl(w->uffd, UFFDIO_UNREGISTER,
                            &(struct uffdio_range) { .start = w->watched[i].addr, .len = w->watched[i].len });
        if (w->uffd >= 0)
                close(w->uffd);
        if (w->pagemap_fd >= 0)
                close(w->pagemap_fd);
        free(w->watched);
        *w = (struct write_tracker) { .uffd = -1, .pagemap_fd = -1 };
}
