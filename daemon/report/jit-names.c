/* SPDX-License-Identifier: GPL-2.0-only */
/* The names a running process gives its JIT code. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include "jit-names.h"
#include "macro.h"
#include "perf-map.h"
#include "proc-status.h"
#include "safe-open.h"

int jit_names_load(pid_t pid, struct perf_map **ret)
{
        _cleanup_close_ int root_fd = -EBADF;
        char proc_path[32];
        struct stat st;
        pid_t ns_pid;
        int r;

        assert(ret);
        r = proc_status_ns_pid(pid, &ns_pid);
        if (r < 0)
                return r;
        snprintf(proc_path, sizeof(proc_path), "/proc/%d", (int)pid);
        if (stat(proc_path, &st) < 0)           /* owned by the process's user */
                return errno == ENOENT ? -ENOENT : -errno;
        root_fd = safe_open_root(pid);
        if (root_fd < 0)
                return root_fd;
        return perf_map_load(root_fd, ns_pid, st.st_uid, ret);
}
