/* SPDX-License-Identifier: GPL-2.0-only */
/* A walk of /proc, for the processes of a program memleakd.conf declares ([target] exe, comm). */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "macro.h"
#include "proc-match.h"

/* Whether the process whose /proc directory is dirfd matches. */
static bool matches(int dirfd, const char *comm, dev_t dev, ino_t ino)
{
        char name[32] = {};
        struct stat st;
        ssize_t n;
        int fd;

        /* a kernel thread has no program file: never a match, whatever its name */
        if (fstatat(dirfd, "exe", &st, 0) < 0)
                return false;
        if (!comm)
                return st.st_dev == dev && st.st_ino == ino;
        fd = openat(dirfd, "comm", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return false;
        n = read(fd, name, sizeof(name) - 1);
        close(fd);
        if (n <= 0)
                return false;
        name[strcspn(name, "\n")] = '\0';
        return strncmp(name, comm, 15) == 0 && strlen(name) == MIN(strlen(comm), (size_t)15);
}

static int compare_pids(const void *a, const void *b)
{
        pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

        return (x > y) - (x < y);
}

int proc_match_list(const char *comm, dev_t dev, ino_t ino, pid_t **ret, size_t *ret_n)
{
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0, cap = 0;
        pid_t self = getpid();
        struct dirent *de;
        DIR *d;

        assert(ret);
        assert(ret_n);
        d = opendir("/proc");
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                int fd;

                if (*end != '\0' || pid <= 0 || pid == self)
                        continue;
                fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        continue;
                if (matches(fd, comm, dev, ino)) {
                        if (n == cap) {
                                pid_t *grown = reallocarray(pids, cap ? cap * 2 : 16, sizeof(*pids));

                                if (!grown) {
                                        close(fd);
                                        closedir(d);
                                        return -ENOMEM;
                                }
                                pids = grown;
                                cap = cap ? cap * 2 : 16;
                        }
                        pids[n++] = (pid_t)pid;
                }
                close(fd);
        }
        closedir(d);
        if (n > 1)
                qsort(pids, n, sizeof(*pids), compare_pids);
        *ret = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}
