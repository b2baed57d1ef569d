/* SPDX-License-Identifier: GPL-2.0-only */
/* The threads of a process, as /proc/PID/task lists them. */
#include "proc-tasks.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir);

int proc_tasks_list(pid_t pid, pid_t **ret, size_t *ret_n)
{
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        char path[64];

        assert(ret);
        assert(ret_n);
        snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
        d = opendir(path);
        if (!d)
                return errno == ENOENT ? -ESRCH : -errno;
        errno = 0;
        while ((de = readdir(d))) {
                char *end;
                long tid = strtol(de->d_name, &end, 10);

                if (*end || tid <= 0)
                        continue;
                if (n == allocated) {
                        size_t want = MAX(allocated * 2, (size_t)8);
                        pid_t *grown = reallocarray(tids, want, sizeof(*grown));

                        if (!grown)
                                return -ENOMEM;
                        tids = grown;
                        allocated = want;
                }
                tids[n++] = (pid_t)tid;
                errno = 0;
        }
        if (errno > 0)
                return errno == ENOENT ? -ESRCH : -errno;     /* it went while it was read */
        *ret = TAKE_PTR(tids);
        *ret_n = n;
        return 0;
}
