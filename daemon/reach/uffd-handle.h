/* SPDX-License-Identifier: GPL-2.0-only */
/* A userfaultfd over another process's memory, made by that process in a stop (process-inject.h)
 * and called one of two ways: taken (pidfd_getfd), its ioctls made by the daemon while the process
 * runs, the process's own copy closed at once; or, where the daemon may not take it (pidfd_getfd
 * refused: EPERM from a container's seccomp filter, as systemd-nspawn's, or ENOSYS), held in the
 * process, every ioctl and the close made by one of its threads in a stop, their argument structs
 * written below its stack (process_inject_syscall_buf()). Before each call on a held one, its
 * number in the process is checked to name the same file still (each userfaultfd has an inode of
 * its own): one the process closed meanwhile, and a file it opened under that number, is never
 * touched. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "process-stop.h"

struct uffd_handle {
        pid_t pid;
        int fd;                 /* taken: ours; -1 */
        int theirs;             /* held: its number in the process; -1 */
        uint64_t ino;           /* held: its inode, that names it */
        uint64_t insn;          /* held: a `syscall` instruction of the process */
};

#define UFFD_HANDLE_NULL ((struct uffd_handle) { .fd = -1, .theirs = -1 })

/* In stop (every thread of the process stopped): make one thread create a userfaultfd
 * (O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY) once its seccomp filters are known to let it
 * through (with the ioctls and close too where it is to be held), take it or hold it, then
 * UFFDIO_API with features (all of them granted, or -EINVAL). -errno, *error saying why: -EPERM (a
 * seccomp filter: the call might kill it), -ENOSYS, -EINVAL, -EAGAIN (no thread to make the
 * call), the system calls' errors. On error nothing is left in the process. */
int uffd_handle_open(struct process_stop *stop, uint64_t features, struct uffd_handle *ret, char **error);

/* Whether it is held in the process: its calls then need the process stopped (stop below). */
bool uffd_handle_held(const struct uffd_handle *h);

/* UFFDIO_REGISTER of [start, start + len) in mode; UFFDIO_UNREGISTER. stop: the process stopped
 * by the caller, needed where it is held (ignored where taken: NULL). The ioctl's -errno (its
 * -ENOMEM, which a process gone meanwhile gives too, as -EIO); -EAGAIN held without a stop or a
 * thread to call; -EBADF where the process closed it. */
int uffd_handle_register(struct uffd_handle *h, struct process_stop *stop, uint64_t start, uint64_t len,
                         uint64_t mode);
int uffd_handle_unregister(struct uffd_handle *h, struct process_stop *stop, uint64_t start, uint64_t len);

/* Close it (held: in the process, stop as above; -EAGAIN, the handle kept, without one). The
 * kernel unregisters what is left registered when its last copy goes. Accepts a closed handle. */
int uffd_handle_close(struct uffd_handle *h, struct process_stop *stop);
