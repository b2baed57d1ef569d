/* SPDX-License-Identifier: GPL-2.0-only */
/* The file a process runs, as /proc/PID/exe names it. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include "proc-exe.h"

int proc_exe_stat(pid_t pid, struct stat *ret)
{
        char exe[64];

        assert(ret);
        snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
        return stat(exe, ret) < 0 ? -errno : 0;
}
