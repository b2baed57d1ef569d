/* SPDX-License-Identifier: GPL-2.0-only */
/* The listening socket: the one systemd passed, or one of our own in a directory we checked. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>
#include "listen-socket.h"
#include "macro.h"
#include "util.h"

/* Whether st, a directory on the way to the socket, is safe from everyone but us: ours (or
 * root's), writable by no one else, or sticky (as /tmp: no one else may rename or remove what we
 * put there). The socket's own directory must not even be sticky and writable by others: another
 * user could put a file of theirs at the socket's path. */
static bool dir_trusted(const struct stat *st, bool own)
{
        bool others_write = (st->st_mode & 0002) || ((st->st_mode & 0020) && st->st_gid != 0);

        if (st->st_uid != 0 && st->st_uid != geteuid())
                return false;
        return !others_write || (!own && (st->st_mode & S_ISVTX));
}

static int check_dir(const char *dir, bool own, char **error)
{
        struct stat st;

        if (lstat(dir, &st) < 0)
                return error_set(error, -errno, "Cannot stat %s: %m", dir);
        if (!S_ISDIR(st.st_mode))
                return error_set(error, -ENOTDIR, "%s is not a directory", dir);
        if (!dir_trusted(&st, own))
                return error_set(error, -EPERM, "%s is %s: refusing to put the socket %s (another user could "
                                 "replace it, or the socket); give socket_path a directory that root owns and "
                                 "only root may write to, as /run/memleakd", dir,
                                 st.st_uid != 0 && st.st_uid != geteuid() ? "owned by another user"
                                                                          : "writable by others",
                                 own ? "there" : "under it");
        return 0;
}

/* Check every directory from / down to dir (resolved: symbolic links followed once, here): each
 * must be trusted (dir_trusted()), so that no one else can swap any of them, or the socket, for
 * something of theirs between the checks, the bind() and the chown(). */
static int check_dirs(const char *dir, bool own, char **error)
{
        _cleanup_free_ char *real = realpath(dir, NULL);
        int r;

        if (!real)
                return error_set(error, -errno, "Cannot resolve %s: %m", dir);
        r = check_dir("/", own && strcmp(real, "/") == 0, error);
        for (char *end = real + 1; r >= 0 && end[-1] != 0; end++) {
                char saved = *end;

                if (saved != '/' && saved != 0)
                        continue;
                *end = 0;
                r = check_dir(real, own && saved == 0, error);
                *end = saved;
        }
        return r;
}

static int ensure_socket_dir(const char *path, char **error)
{
        _cleanup_free_ char *dir = strdup(path);
        char *slash;
        int r;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        if (!slash)
                return error_set(error, -EINVAL, "Socket path %s is not absolute", path);
        if (slash == dir)
                slash[1] = 0;   /* "/": the root directory itself */
        else
                *slash = 0;
        if (access(dir, F_OK) < 0) {
                /* made by us, 0755, in a directory checked first: not in another user's */
                _cleanup_free_ char *parent = strdup(dir);
                char *up = parent ? strrchr(parent, '/') : NULL;

                if (!parent)
                        return -ENOMEM;
                if (up == parent)
                        up[1] = 0;
                else if (up)
                        *up = 0;
                r = check_dirs(parent, false, error);
                if (r < 0)
                        return r;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return error_set(error, -errno, "Cannot create %s: %m", dir);
        }
        return check_dirs(dir, true, error);
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
        gid_t gid = (gid_t)-1;
        mode_t old_umask;
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
        if (group) {
                struct group *g = getgrnam(group);

                if (!g)
                        return error_set(error, -ENOENT, "Unknown socket group '%s'", group);
                gid = g->gr_gid;
        }
        (void)unlink(path);     /* a stale socket from an earlier run */
        /* the mode given at its making (no chmod() after, by path): none but root may write to
         * its directory (checked above), so the file chown()ed below is the one bound here, and
         * lchown() would not follow a link even so */
        old_umask = umask(~mode & 0777);
        r = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
        (void)umask(old_umask);
        if (r < 0)
                return error_set(error, r, "Cannot bind %s: %s", path, strerror(-r));
        if (gid != (gid_t)-1 && lchown(path, 0, gid) < 0)
                return error_set(error, -errno, "Cannot chown %s: %m", path);
        if (listen(fd, SOMAXCONN) < 0)
                return error_set(error, -errno, "Cannot listen on %s: %m", path);
        return TAKE_FD(fd);
}
