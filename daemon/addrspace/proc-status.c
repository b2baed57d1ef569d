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

int proc_status_ns_pid(pid_t pid, pid_t *ret)
{
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], line[512];

        assert(ret);
        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return errno == ESRCH ? -ENOENT : -errno;
        while (fgets(line, sizeof(line), f)) {
                char *p = line + strlen("NSpid:"), *end;
                long v = -1;

                if (strncmp(line, "NSpid:", strlen("NSpid:")) != 0)
                        continue;
                for (;;) {
                        long next;

                        errno = 0;
                        next = strtol(p, &end, 10);
                        if (end == p)
                                break;
                        if (errno || next <= 0 || next > INT32_MAX)
                                return -EINVAL;
                        v = next;
                        p = end;
                }
                if (v < 0)
                        return -EINVAL;
                *ret = (pid_t)v;
                return 0;
        }
        return -ENOENT;
}
