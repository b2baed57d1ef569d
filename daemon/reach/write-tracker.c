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
#include <time.h>
#include <unistd.h>
#include "macro.h"
#include "util.h"
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

#define REGIONS_PER_SCAN 512
/* Unregistering clears the write-protection of every page (256 MiB: about 11 ms here, in the
 * thread that makes the call): a held one is unregistered in pieces, in stops that each end after
 * CLOSE_STOP_USEC, the process running between them. */
#define CLOSE_PIECE_BYTES (16ULL << 20)
#define CLOSE_STOP_USEC 10000
#define CLOSE_MAX_STOPS 65536
/* A held one must not stay in the process: a stop for it that fails (a thread not run in time,
 * on a loaded machine) is tried again after CLOSE_RETRY_USEC, each time allowed twice as long up
 * to CLOSE_STOP_TIMEOUT_MAX_MS, CLOSE_MAX_FAILED_STOPS times. */
#define CLOSE_RETRY_USEC 20000
#define CLOSE_STOP_TIMEOUT_MAX_MS 200
#define CLOSE_MAX_FAILED_STOPS 20

/* An ioctl's error: its -ENOMEM (a process gone meanwhile gives it too) as -EIO, so that -ENOMEM
 * stays ours. */
static int ioctl_error(void)
{
        return errno == ENOMEM ? -EIO : -errno;
}

int write_tracker_open(struct process_stop *stop, uint64_t stop_timeout_ms, struct write_tracker *ret,
                       char **error)
{
        /* no UFFD_FEATURE_WP_UNPOPULATED: pages not there are not protected (protect()) */
        struct write_tracker w = WRITE_TRACKER_NULL;
        char path[64];
        int r;

        assert(stop);
        assert(ret);
        assert(error);
        w.pid = stop->pid;
        w.stop_timeout_ms = stop_timeout_ms;
        snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)stop->pid);
        w.pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (w.pagemap_fd < 0) {
                r = -errno;
                (void)asprintf(error, "cannot open %s: %s", path, strerror(-r));
                return r;
        }
        r = uffd_handle_open(stop, UFFD_FEATURE_WP_ASYNC, &w.uffd, error);
        if (r < 0) {
                close(w.pagemap_fd);
                return r;
        }
        *ret = w;
        return 0;
}

bool write_tracker_held(const struct write_tracker *w)
{
        return uffd_handle_held(&w->uffd);
}

static int64_t protect(struct write_tracker *w, uint64_t start, uint64_t end, struct reach_span **spans, size_t *n,
                       size_t *allocated);

int write_tracker_register(struct write_tracker *w, struct process_stop *stop, uint64_t start, uint64_t end)
{
        int r;

        assert(w);
        if (w->n_watched == w->allocated) {
                size_t a = MAX(w->allocated * 2, (size_t)64);
                struct reach_span *g = realloc(w->watched, a * sizeof(*g));

                if (!g)
                        return -ENOMEM;
                w->watched = g;
                w->allocated = a;
        }
        r = uffd_handle_register(&w->uffd, stop, start, end - start, UFFDIO_REGISTER_MODE_WP);
        if (r < 0)
                return r;
        w->watched[w->n_watched++] = (struct reach_span) { .addr = start, .len = end - start };
        return 0;
}

int write_tracker_protect(struct write_tracker *w)
{
        int r = 0;

        assert(w);
        for (; w->n_protected < w->n_watched; w->n_protected++) {
                const struct reach_span *s = &w->watched[w->n_protected];
                /* its pages protected: every one, now, counts as written (not yet protected) */
                int64_t bytes = protect(w, s->addr, s->addr + s->len, NULL, NULL, NULL);

                if (bytes < 0 && r == 0)
                        r = (int)bytes;
        }
        return r;
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

/* Unregister the ranges watched, in stop (NULL where taken), the last first: all of them, or
 * (piece) CLOSE_PIECE_BYTES at a time until the stop has lasted CLOSE_STOP_USEC. 0 when none is
 * left; -EAGAIN (some left: another stop, or no thread to call), -EBADF (the process closed it). */
static int unregister_watched(struct write_tracker *w, struct process_stop *stop, bool piece)
{
        while (w->n_watched > 0) {
                struct reach_span *s = &w->watched[w->n_watched - 1];
                uint64_t len = piece ? MIN(s->len, CLOSE_PIECE_BYTES) : s->len;
                int r = uffd_handle_unregister(&w->uffd, stop, s->addr + s->len - len, len);

                if (r == -EAGAIN || r == -EBADF)
                        return r;
                /* another error (a range unmapped since): nothing left there to unregister */
                s->len -= len;
                if (s->len == 0)
                        w->n_watched--;
                if (piece && w->n_watched > 0 && stop && now_monotonic_usec() - stop->stopped_usec >= CLOSE_STOP_USEC)
                        return -EAGAIN;
        }
        return 0;
}

static uint64_t watched_bytes(const struct write_tracker *w)
{
        uint64_t bytes = 0;

        for (size_t i = 0; i < w->n_watched; i++)
                bytes += w->watched[i].len;
        return bytes;
}

/* A held one unregistered and closed in stops of our own, each ending at CLOSE_STOP_USEC (the
 * process runs between them): their pauses added to *paused, the longest in *longest. */
static void close_in_own_stops(struct write_tracker *w, uint64_t *paused, uint64_t *longest)
{
        unsigned idle = 0, failed = 0;

        for (unsigned stops = 0; uffd_handle_held(&w->uffd) && stops < CLOSE_MAX_STOPS && idle < 3; stops++) {
                _cleanup_free_ char *error = NULL;
                struct process_stop own = {};
                uint64_t before = watched_bytes(w), p;
                uint64_t timeout = MIN(w->stop_timeout_ms << MIN(failed, 16u), (uint64_t)CLOSE_STOP_TIMEOUT_MAX_MS);
                int r;

                r = process_stop(w->pid, MAX(timeout, w->stop_timeout_ms), &own, &error);
                if (r == -ESRCH || (r < 0 && ++failed >= CLOSE_MAX_FAILED_STOPS))
                        break;          /* gone, or it will not stop: what is left stays */
                if (r < 0) {
                        (void)nanosleep(&(struct timespec) { .tv_nsec = CLOSE_RETRY_USEC * 1000 }, NULL);
                        continue;
                }
                r = unregister_watched(w, &own, true);
                if (r == 0 || r == -EBADF)
                        (void)uffd_handle_close(&w->uffd, &own);
                /* no thread without a signal to take: again, a few times */
                idle = r == -EAGAIN && watched_bytes(w) == before ? idle + 1 : 0;
                p = process_stop_release(&own);
                *paused += p;
                *longest = MAX(*longest, p);
        }
}

uint64_t write_tracker_close(struct write_tracker *w, struct process_stop *stop, uint64_t *ret_longest_usec)
{
        uint64_t paused = 0, longest = 0;

        if (!w)
                return 0;
        if (uffd_handle_held(&w->uffd) && !stop)
                close_in_own_stops(w, &paused, &longest);
        else if (unregister_watched(w, stop, false) != -EAGAIN)
                /* unregistering clears the write-protection at once, whoever else holds a copy of
                 * a held one (a child the process forked meanwhile); closing alone would once the
                 * last copy goes */
                (void)uffd_handle_close(&w->uffd, stop);
        /* what could not be closed stays in the process: its writes are still resolved by the kernel */
        if (w->uffd.fd >= 0)
                close(w->uffd.fd);
        if (w->pagemap_fd >= 0)
                close(w->pagemap_fd);
        free(w->watched);
        *w = WRITE_TRACKER_NULL;
        if (ret_longest_usec)
                *ret_longest_usec = longest;
        return paused;
}
