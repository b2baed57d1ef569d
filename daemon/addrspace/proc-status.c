/* SPDX-License-Identifier: GPL-2.0-only */
/* A number from a process's /proc/PID/status. */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "proc-status.h"

int proc_status_int(pid_t pid, const char *field, int *ret)
{
        _cleanup_fclose_ FILE *f = NULL;
        size_t len = strlen(field);
        char path[64], line[256];

        assert(field);
        assert(ret);
        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return errno == ESRCH ? -ENOENT : -errno;
        while (fgets(line, sizeof(line), f)) {
                char *end;
                long v;

                if (strncmp(line, field, len) != 0)
                        continue;
                errno = 0;
                v = strtol(line + len, &end, 10);
                if (errno || end == line + len || v < 0 || v > INT32_MAX)
                        return -EINVAL;
                *ret = (int)v;
                return 0;
        }
        return -ENOENT;
}
