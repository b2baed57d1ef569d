/* SPDX-License-Identifier: GPL-2.0-only */
/* Whether a user could ptrace a process. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "macro.h"
#include "proc-creds.h"

#define DESCENT_MAX 4096        /* parents walked at most (a loop in a racing /proc ends) */

/* The four numbers after field at the start of a line of text. */
static int parse_ids(const char *text, const char *field, unsigned long ret[4])
{
        size_t len = strlen(field);

        for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
                const char *p = line + len;
                char *end;

                if (strncmp(line, field, len) != 0)
                        continue;
                for (int i = 0; i < 4; i++) {
                        errno = 0;
                        ret[i] = strtoul(p, &end, 10);
                        if (end == p || errno != 0 || ret[i] > UINT32_MAX)
                                return -EINVAL;
                        p = end;
                }
                return 0;
        }
        return -EINVAL;
}

int proc_creds_parse(const char *status, struct proc_creds *ret)
{
        unsigned long u[4], g[4];

        assert(status);
        assert(ret);
        if (parse_ids(status, "Uid:", u) < 0 || parse_ids(status, "Gid:", g) < 0)
                return -EINVAL;
        for (int i = 0; i < 4; i++) {
                ret->uid[i] = (uid_t)u[i];
                ret->gid[i] = (gid_t)g[i];
        }
        return 0;
}

int proc_creds_read(pid_t pid, struct proc_creds *ret)
{
        _cleanup_close_ int dir = -1;
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], text[4096];
        struct stat st;
        size_t n;
        int fd;

        assert(ret);
        snprintf(path, sizeof(path), "/proc/%d", (int)pid);
        dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        /* the status read through the same directory: one process, whatever comes after */
        fd = openat(dir, "status", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        f = fdopen(fd, "re");
        if (!f) {
                close(fd);
                return -errno;
        }
        n = fread(text, 1, sizeof(text) - 1, f);
        text[n] = 0;
        if (fstat(dir, &st) < 0)
                return -errno;
        *ret = (struct proc_creds) {};
        if (proc_creds_parse(text, ret) < 0)
                return -EIO;
        ret->dumpable = st.st_uid == ret->uid[1];
        return 0;
}

const char *proc_creds_ptrace_refusal(const struct proc_creds *c, uid_t uid, gid_t gid, int yama, bool descendant)
{
        assert(c);
        for (int i = 0; i < 3; i++)
                if (c->uid[i] != uid)
                        return "it runs as another user";
        for (int i = 0; i < 3; i++)
                if (c->gid[i] != gid)
                        return "it runs with another group";
        if (!c->dumpable)
                return "it is not dumpable (set-user-ID, or it asked not to be: PR_SET_DUMPABLE)";
        if (yama >= 2)
                return "Yama's ptrace_scope allows only administrators to trace processes";
        if (yama == 1 && !descendant)
                return "Yama's ptrace_scope 1 allows tracing only one's own descendants";
        return NULL;
}

int proc_creds_yama_scope(void)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
        int scope;

        if (!f || fscanf(f, "%d", &scope) != 1)
                return 0;
        return scope < 0 ? 0 : scope;
}

/* pid's parent, from /proc/PID/stat (the field after the state, past the comm's last ')'). */
static pid_t parent_of(pid_t pid)
{
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], text[1024], *p;
        size_t n;
        int ppid;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return 0;
        n = fread(text, 1, sizeof(text) - 1, f);
        text[n] = 0;
        p = strrchr(text, ')');
        if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
                return 0;
        return ppid;
}

bool proc_creds_descends_from(pid_t pid, pid_t ancestor)
{
        for (int i = 0; i < DESCENT_MAX && pid > 1; i++) {
                pid = parent_of(pid);
                if (pid == ancestor)
                        return true;
        }
        return false;
}
