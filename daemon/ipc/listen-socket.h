/* SPDX-License-Identifier: GPL-2.0-only */
/* The listening socket: the one systemd passed, or one of our own in a directory we checked. */
#pragma once

#include <sys/types.h>

/* The socket systemd passed us, else bind path (its directory is created 0755 if missing; it and
 * every directory above it must be root's and writable by no one else, else refused: sticky ones
 * above it, as /tmp, will do), made with mode and then given to group. Returns the fd or -errno, with a malloc'd
 * message in *error. */
int listen_socket_open(const char *path, mode_t mode, const char *group, char **error);
