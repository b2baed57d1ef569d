/* SPDX-License-Identifier: GPL-2.0-only */
/* The listening socket: the one systemd passed, or one of our own in a directory we checked. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>
#include "listen-socket.h"
#include "macro.h"
#include "util.h"

static int ensure_socket_dir(const char *path, char **error)
{
        _cleanup_free_ char *dir = strdup(path);
        char *slash;
        struct stat st;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = 0;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return error_set(error, -errno, "Cannot create %s: %m", dir);
        if (stat(dir, &st) < 0)
                return error_set(error, -errno, "Cannot stat %s: %m", dir);
        if (!S_ISDIR(st.st_mode))
                return error_set(error, -ENOTDIR, "%s is not a directory", dir);
        if ((st.st_mode & 0002) && !(st.st_mode & S_ISVTX))
                return error_set(error, -EPERM, "%s is writable by everyone: refusing to put the socket there", dir);
        return 0;
}

/* Whether a daemon answers at path: a socket file there whose listener is gone is a stale one
 * from an earlier run (connect() is refused); one that accepts is another memleakd's. */
static bool socket_answers(const struct sockaddr_un *sa)
{
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        return fd >= 0 && connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
}

int listen_socket_open(const char *path, mode_t mode, const char *group, char **error)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        int n, r;

        assert(path);
        assert(error);
        *error = NULL;
        n = sd_listen_fds(true);
        if (n > 1)
                return error_set(error, -EINVAL, "Expected one socket from systemd, got %d", n);
        if (n == 1) {
                fd = SD_LISTEN_FDS_START;
                if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0)
                        return error_set(error, -EINVAL, "The socket systemd passed is not a listening stream Unix socket");
                if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
                        return error_set(error, -errno, "Cannot set up the passed socket: %m");
                return TAKE_FD(fd);
        }
        if (strlen(path) >= sizeof(sa.sun_path))
                return error_set(error, -ENAMETOOLONG, "Socket path %s is too long", path);
        r = ensure_socket_dir(path, error);
        if (r < 0)
                return r;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return error_set(error, -errno, "Cannot create a socket: %m");
        if (socket_answers(&sa))
                return error_set(error, -EADDRINUSE, "Another memleakd answers on %s already: stop it first, or give "
                                 "this one another socket_path", path);
        (void)unlink(path);     /* a stale socket from an earlier run */
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return error_set(error, -errno, "Cannot bind %s: %m", path);
        if (chmod(path, mode) < 0)
                return error_set(error, -errno, "Cannot chmod %s: %m", path);
        if (group) {
                struct group *g = getgrnam(group);

                if (!g)
                        return error_set(error, -ENOENT, "Unknown socket group '%s'", group);
                if (chown(path, 0, g->gr_gid) < 0)
                        return error_set(error, -errno, "Cannot chown %s: %m", path);
        }
        if (listen(fd, SOMAXCONN) < 0)
                return error_set(error, -errno, "Cannot listen on %s: %m", path);
        return TAKE_FD(fd);
}
