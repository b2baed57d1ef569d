/* SPDX-License-Identifier: GPL-2.0-only */
/* Whether a process's seccomp filters let through a system call memleakd makes one of its threads
 * make (process-inject.h): the clone of a snapshot, the userfaultfd of a concurrent scan (and its
 * ioctls, where the process holds it: uffd-handle.h). A call a
 * filter refuses could kill the process (SECCOMP_RET_KILL), so it is never made on a guess. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

enum seccomp_call {
        SECCOMP_CALL_CLONE,             /* clone(SIGCHLD): a fork */
        SECCOMP_CALL_USERFAULTFD,       /* userfaultfd(O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY), then close */
        SECCOMP_CALL_USERFAULTFD_HELD,  /* the same, and between them its ioctls UFFDIO_API (WP_ASYNC),
                                         * UFFDIO_REGISTER (write-protect), UFFDIO_UNREGISTER */
        _SECCOMP_CALL_MAX,
};

/* 0 when tid may be made to make call: no seccomp, or filters that let it through. Strict
 * seccomp refuses it. A filter (mode 2) is asked only once tid is our stopped tracee (stopped
 * false: not yet, let it be): the kernel itself decides, in a child of ours that installs tid's
 * filters and makes the call; where the kernel shows them to no tracer under seccomp itself (a
 * container's), tid's filters are asked through ours if they are those everything here
 * inherits: once per call, and already with stopped false (not to fork a probe while it is
 * stopped). -EPERM with *error saying why; -ENOMEM. */
int seccomp_check_call(pid_t tid, bool stopped, enum seccomp_call call, char **error);
