/* SPDX-License-Identifier: GPL-2.0-only */
/* A directory's entries read through a descriptor of it, which stays the caller's. */
#pragma once

#include <dirent.h>

/* A stream of dir_fd's directory's entries, on a descriptor of its own (dir_fd stays open and
 * the caller's; closedir() closes the stream's). 0, or -errno. */
int dir_stream_open(int dir_fd, DIR **ret);
