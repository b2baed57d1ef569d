/* SPDX-License-Identifier: GPL-2.0-only */
/* A userfaultfd over another process's memory: taken by the daemon, or held in the process. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "macro.h"
#include "process-inject.h"
#include "seccomp-check.h"
#include "uffd-handle.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* An ioctl's -ENOMEM (a process gone meanwhile gives it too) as -EIO: -ENOMEM stays ours. */
static int ioctl_error(int e)
{
        return e == ENOMEM ? -EIO : -e;
}

/* Whether pidfd_getfd is refused to us whatever the process: a seccomp filter on the daemon (a
 * container's) answers EPERM or ENOSYS for our own descriptors too. */
static bool may_take_fds(void)
{
        int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0), fd;

        if (pidfd < 0)
                return errno != ENOSYS && errno != EPERM;
        fd = (int)syscall(SYS_pidfd_getfd, pidfd, pidfd, 0);
        if (fd < 0) {
                int e = errno;

                close(pidfd);
                return e != ENOSYS && e != EPERM;
        }
        close(fd);
        close(pidfd);
        return true;
}

/* The inode of the file pid has as fd: 0 when it has none. */
static uint64_t inode_of(pid_t pid, int fd)
{
        char path[64];
        struct stat st;

        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
        return stat(path, &st) < 0 ? 0 : (uint64_t)st.st_ino;
}

/* Take fd of pid: ours, or -errno. */
static int take_fd(pid_t pid, int fd)
{
        int pidfd = (int)syscall(SYS_pidfd_open, pid, 0), r;

        if (pidfd < 0)
                return -errno;
        r = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
        if (r < 0)
                r = -errno;
        close(pidfd);
        return r;
}

/* A held handle's thread to call through, in stop, the handle checked to be still there:
 * -EAGAIN (no stop, or no thread without a signal to take), -EBADF (the process closed it). */
static int held_thread(const struct uffd_handle *h, struct process_stop *stop, struct thread_state **ret)
{
        if (!stop || stop->pid != h->pid)
                return -EAGAIN;
        if (inode_of(h->pid, h->theirs) != h->ino)
                return -EBADF;
        *ret = process_inject_pick_thread(stop);
        return *ret ? 0 : -EAGAIN;
}

/* ioctl(fd, request, arg) made by the process, arg (len bytes) copied in and back out. */
static int held_ioctl(struct uffd_handle *h, struct process_stop *stop, unsigned long request, void *arg,
                      size_t len, char **error)
{
        struct thread_state *t;
        long rax = 0;
        int r;

        r = held_thread(h, stop, &t);
        if (r < 0)
                return r;
        r = process_inject_syscall_buf(stop, t, h->insn, SYS_ioctl,
                                       (const uint64_t[6]) { (uint64_t)h->theirs, request, 0, 0, 0, 0 }, 2, arg,
                                       len, &rax, error);
        if (r < 0)
                return r;
        return rax < 0 ? ioctl_error((int)-rax) : 0;
}

static int handle_ioctl(struct uffd_handle *h, struct process_stop *stop, unsigned long request, void *arg,
                        size_t len, char **error)
{
        if (h->fd >= 0)
                return ioctl(h->fd, request, arg) < 0 ? ioctl_error(errno) : 0;
        if (h->theirs >= 0)
                return held_ioctl(h, stop, request, arg, len, error);
        return -EBADF;
}

/* Close their copy (t, in stop, made it): what the close answered. */
static int close_theirs(struct uffd_handle *h, struct thread_state *t, char **error)
{
        unsigned long forked = 0;
        long rax = 0;
        int r;

        r = process_inject_syscall(t, h->insn, SYS_close, (const uint64_t[6]) { (uint64_t)h->theirs, 0, 0, 0, 0, 0 },
                                   0, &rax, &forked, error);
        return r < 0 ? r : rax < 0 ? (int)rax : 0;
}

/* Whether a process whose pidfd_getfd was refused to us may hold it: its filters let its ioctls
 * and close through too (tid, stopped, makes the calls). */
static bool may_hold(pid_t tid)
{
        _cleanup_free_ char *why = NULL;

        return seccomp_check_call(tid, true, SECCOMP_CALL_USERFAULTFD_HELD, &why) == 0;
}

/* Close their copy in the process (t makes the call), what it says dropped. */
static void drop_theirs(struct uffd_handle *h, struct thread_state *t)
{
        _cleanup_free_ char *why = NULL;

        (void)close_theirs(h, t, &why);
        h->theirs = -1;
}

int uffd_handle_open(struct process_stop *stop, uint64_t features, struct uffd_handle *ret, char **error)
{
        struct uffd_handle h = UFFD_HANDLE_NULL;
        struct uffdio_api api = { .api = UFFD_API, .features = features };
        _cleanup_free_ char *why = NULL;
        struct thread_state *t;
        unsigned long forked = 0;
        bool take = may_take_fds();
        long fd = 0;
        int r;

        assert(stop);
        assert(ret);
        assert(error);
        h.pid = stop->pid;
        t = process_inject_pick_thread(stop);
        if (!t) {
                (void)asprintf(error, "every thread of pid %d stopped with a signal to take", (int)stop->pid);
                return -EAGAIN;
        }
        /* filters are per thread: the one that calls may have one its leader has not */
        r = seccomp_check_call(t->tid, true, take ? SECCOMP_CALL_USERFAULTFD : SECCOMP_CALL_USERFAULTFD_HELD,
                               error);
        if (r < 0)
                return r;
        r = process_inject_find_insn(stop->pid, &h.insn);
        if (r < 0) {
                (void)asprintf(error, "no `syscall` instruction in pid %d's code", (int)stop->pid);
                return r;
        }
        r = process_inject_syscall(t, h.insn, SYS_userfaultfd,
                                   (const uint64_t[6]) { O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY, 0, 0, 0, 0, 0 },
                                   0, &fd, &forked, error);
        if (r == 0 && fd < 0)
                r = (int)fd;
        if (r < 0) {
                if (!*error)
                        (void)asprintf(error, "userfaultfd in pid %d failed: %s", (int)stop->pid, strerror(-r));
                return r;
        }
        h.theirs = (int)fd;
        if (take) {
                h.fd = take_fd(stop->pid, h.theirs);
                r = h.fd < 0 ? h.fd : 0;
                /* refused for this process alone: held, where its filters let the ioctls through */
                if ((r == -EPERM || r == -ENOSYS) && may_hold(t->tid))
                        take = false;
                else {
                        /* the process's own copy goes at once: it never sees it */
                        drop_theirs(&h, t);
                        if (r < 0) {
                                (void)asprintf(error, "cannot take pid %d's userfaultfd: pidfd_getfd: %s",
                                               (int)stop->pid, strerror(-r));
                                return r;
                        }
                }
        }
        if (!take) {
                h.ino = inode_of(stop->pid, h.theirs);
                if (h.ino == 0) {
                        r = -EBADF;
                        drop_theirs(&h, t);
                        (void)asprintf(error, "cannot see pid %d's userfaultfd: %s", (int)stop->pid, strerror(-r));
                        return r;
                }
        }
        r = handle_ioctl(&h, stop, UFFDIO_API, &api, sizeof(api), &why);
        if (r == 0 && (api.features & features) != features)
                r = -EINVAL;
        if (r < 0) {
                (void)asprintf(error, "the kernel has no asynchronous userfaultfd write-protect: UFFDIO_API%s: %s",
                               h.fd >= 0 ? "" : " (made by the process)", why ? why : strerror(-r));
                (void)uffd_handle_close(&h, stop);
                return r;
        }
        *ret = h;
        return 0;
}

bool uffd_handle_held(const struct uffd_handle *h)
{
        return h->fd < 0 && h->theirs >= 0;
}

int uffd_handle_register(struct uffd_handle *h, struct process_stop *stop, uint64_t start, uint64_t len,
                         uint64_t mode)
{
        _cleanup_free_ char *ignored = NULL;
        struct uffdio_register reg = { .range = { .start = start, .len = len }, .mode = mode };

        assert(h);
        return handle_ioctl(h, stop, UFFDIO_REGISTER, &reg, sizeof(reg), &ignored);
}

int uffd_handle_unregister(struct uffd_handle *h, struct process_stop *stop, uint64_t start, uint64_t len)
{
        _cleanup_free_ char *ignored = NULL;
        struct uffdio_range range = { .start = start, .len = len };

        assert(h);
        return handle_ioctl(h, stop, UFFDIO_UNREGISTER, &range, sizeof(range), &ignored);
}

int uffd_handle_close(struct uffd_handle *h, struct process_stop *stop)
{
        _cleanup_free_ char *ignored = NULL;
        struct thread_state *t;
        int r = 0;

        if (!h)
                return 0;
        if (h->fd >= 0) {
                close(h->fd);
                h->fd = -1;
        } else if (h->theirs >= 0) {
                r = held_thread(h, stop, &t);
                if (r == -EAGAIN)
                        return r;
                if (r == 0)
                        r = close_theirs(h, t, &ignored);
        }
        *h = (struct uffd_handle) { .pid = h->pid, .fd = -1, .theirs = -1 };
        return r == -EBADF ? 0 : r;
}
