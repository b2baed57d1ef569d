/* SPDX-License-Identifier: GPL-2.0-only */
/* Open files a traced process names without letting it hang, mislead or escape us. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "macro.h"
#include "safe-open.h"

int safe_open_root(pid_t pid)
{
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
        fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        return fd;
}

/* An O_PATH fd for path: nothing is opened for real (a FIFO's open would wait for a writer, a
 * device's would run its driver). Inside a root, openat2's RESOLVE_IN_ROOT keeps every symlink
 * within it, as the process sees them, and refuses /proc magic links. */
static int open_path_only(int root_fd, const char *path, unsigned flags)
{
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC | ((flags & SAFE_OPEN_NOFOLLOW) ? O_NOFOLLOW : 0),
                .resolve = RESOLVE_NO_MAGICLINKS | (root_fd != AT_FDCWD ? RESOLVE_IN_ROOT : 0),
        };
        int fd;

        fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
        if (fd >= 0 || errno != ENOSYS)
                return fd >= 0 ? fd : -errno;
        /* Before Linux 5.6: no escape protection, but still nothing opened for real. */
        fd = openat(root_fd, root_fd != AT_FDCWD && path[0] == '/' ? path + 1 : path, how.flags);
        return fd >= 0 ? fd : -errno;
}

/* Kernel interfaces dressed as files: regular in name only (a read of trace_pipe waits, kcore is
 * the machine's memory). No object or debug file a process maps or names lives there. */
static bool on_pseudo_filesystem(int fd)
{
        static const unsigned long pseudo[] = {
                PROC_SUPER_MAGIC, SYSFS_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC, SECURITYFS_MAGIC,
                CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC,
        };
        struct statfs sfs;

        if (fstatfs(fd, &sfs) < 0)
                return true;
        for (size_t i = 0; i < ELEMENTSOF(pseudo); i++)
                if ((unsigned long)sfs.f_type == pseudo[i])
                        return true;
        return false;
}

int safe_open_regular(int root_fd, const char *path, unsigned flags, struct stat *ret_st)
{
        return safe_open_regular_as(root_fd, path, flags, 0, 0, ret_st);
}

/* Open for reading the inode path_fd (O_PATH) stands for, if it is a regular file on a real
 * filesystem and, with ino != 0, the file (dev, ino). */
static int reopen_checked(int path_fd, uint64_t dev, uint64_t ino, struct stat *ret_st)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st, opened;
        char self[64];

        if (fstat(path_fd, &st) < 0)
                return -errno;
        /* Identity first: a FIFO put where a mapped file was is another file (-ESTALE: the caller
         * can look for the mapped one elsewhere), a device mapped there is the file and not regular. */
        if (ino != 0 && ((uint64_t)st.st_dev != dev || (uint64_t)st.st_ino != ino))
                return -ESTALE;         /* not the file expected there: not opened at all */
        if (S_ISLNK(st.st_mode))
                return -ELOOP;
        if (!S_ISREG(st.st_mode) || on_pseudo_filesystem(path_fd))
                return -ENOTREG;
        /* Reopening the O_PATH fd opens exactly the inode looked at, whatever the path names now. */
        snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
        fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &opened) < 0)
                return -errno;
        if (opened.st_dev != st.st_dev || opened.st_ino != st.st_ino || !S_ISREG(opened.st_mode))
                return -ESTALE;
        if (ret_st)
                *ret_st = opened;
        return TAKE_FD(fd);
}

int safe_open_regular_as(int root_fd, const char *path, unsigned flags, uint64_t dev, uint64_t ino,
                         struct stat *ret_st)
{
        _cleanup_close_ int path_fd = -EBADF;

        if (!path || !*path)
                return -EINVAL;
        path_fd = open_path_only(root_fd, path, flags);
        if (path_fd < 0)
                return path_fd;
        return reopen_checked(path_fd, dev, ino, ret_st);
}

int safe_open_mapped(pid_t pid, uint64_t start, uint64_t end, uint64_t dev, uint64_t ino,
                     struct stat *ret_st)
{
        _cleanup_close_ int path_fd = -EBADF;
        char path[96];

        /* A magic link to the very file mapped there, even deleted or replaced since. */
        snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
        path_fd = open(path, O_PATH | O_CLOEXEC);
        if (path_fd < 0)
                return -errno;
        return reopen_checked(path_fd, dev, ino, ret_st);
}

int safe_open_dir(int root_fd, const char *path)
{
        struct open_how how = {
                .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_NO_MAGICLINKS | (root_fd != AT_FDCWD ? RESOLVE_IN_ROOT : 0),
        };
        int fd;

        assert(path);
        /* O_DIRECTORY refuses anything else before opening it: a FIFO cannot make this wait. */
        fd = (int)syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
        if (fd < 0 && errno == ENOSYS)
                fd = openat(root_fd, root_fd != AT_FDCWD && path[0] == '/' ? path + 1 : path, how.flags);
        return fd >= 0 ? fd : -errno;
}

int safe_open_read_file(int root_fd, const char *path, size_t max_bytes, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        size_t len = 0;

        assert(ret);
        fd = safe_open_regular(root_fd, path, 0, &st);
        if (fd < 0)
                return fd;
        if ((uint64_t)st.st_size > max_bytes)
                return -EFBIG;
        buf = malloc(max_bytes + 1);
        if (!buf)
                return -ENOMEM;
        /* st_size may be stale: read until EOF, never past the bound. */
        for (;;) {
                ssize_t k = read(fd, buf + len, max_bytes + 1 - len);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                len += k;
                if (len > max_bytes)
                        return -EFBIG;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

const char *safe_open_strerror(int error)
{
        if (error == -ENOTREG || error == ENOTREG)
                return "not a regular file";
        return strerror(error < 0 ? -error : error);
}
