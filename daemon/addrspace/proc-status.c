/* SPDX-License-Identifier: GPL-2.0-only */
/* Numbers from a process's /proc/PID/status. */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "proc-status.h"

/* The text after field (its name with the colon) in pid's status file, into line (size bytes):
 * 0 and *ret pointing into line, -ENOENT when pid or the field is not there, -errno. */
static int read_field(pid_t pid, const char *field, char *line, size_t size, const char **ret)
{
        _cleanup_fclose_ FILE *f = NULL;
        size_t len = strlen(field);
        char path[64];

        snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return errno == ESRCH ? -ENOENT : -errno;
        while (fgets(line, (int)size, f))
                if (strncmp(line, field, len) == 0) {
                        *ret = line + len;
                        return 0;
                }
        return -ENOENT;
}

int proc_status_int(pid_t pid, const char *field, int *ret)
{
        const char *value;
        char line[256], *end;
        long v;
        int r;

        assert(field);
        assert(ret);
        r = read_field(pid, field, line, sizeof(line), &value);
        if (r < 0)
                return r;
        errno = 0;
        v = strtol(value, &end, 10);
        if (errno || end == value || v < 0 || v > INT32_MAX)
                return -EINVAL;
        *ret = (int)v;
        return 0;
}

int proc_status_ns_pid(pid_t pid, pid_t *ret)
{
        const char *p;
        char line[512];
        long v = -1;
        int r;

        assert(ret);
        r = read_field(pid, "NSpid:", line, sizeof(line), &p);
        if (r < 0)
                return r;
        /* the pid in each namespace from the outermost in: the last is its own */
        for (;;) {
                char *end;
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
