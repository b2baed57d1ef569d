/* SPDX-License-Identifier: GPL-2.0-only */
/* A directory's entries read through a descriptor of it, which stays the caller's. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "dir-stream.h"

int dir_stream_open(int dir_fd, DIR **ret)
{
        int fd, r;

        assert(ret);
        fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        *ret = fdopendir(fd);
        if (!*ret) {
                r = -errno;
                close(fd);
                return r;
        }
        return 0;
}
