/* SPDX-License-Identifier: MIT */
/* A file memleakctl writes, whole or not at all. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "macro.h"
#include "output-file.h"

int output_file_write(const char *path, int (*write)(FILE *f, void *userdata), void *userdata)
{
        _cleanup_free_ char *tmp = NULL;
        mode_t mask;
        FILE *f;
        int fd, r;

        if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        mask = umask(0);
        umask(mask);
        (void)fchmod(fd, 0666 & ~mask);         /* as a file the user creates, not mkstemp's 0600 */
        f = fdopen(fd, "w");
        if (!f) {
                r = -errno;
                close(fd);
                (void)unlink(tmp);
                return r;
        }
        r = write(f, userdata);
        if (fclose(f) != 0 && r >= 0)
                r = -errno;
        if (r >= 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                (void)unlink(tmp);
        return r;
}
