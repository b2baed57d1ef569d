/* SPDX-License-Identifier: MIT */
/* A file memleakctl writes (--output FILE): whole or not at all. */
#pragma once

#include <stdio.h>

/* Write path through write(f, userdata): into a new file beside it (never one already there: in
 * /tmp another user may have put a symlink where a fixed name would be), with the mode a file the
 * user creates gets (umask), then renamed over path, so no half-written file is ever at path.
 * write returns 0 or a negative errno, which this returns (the new file removed); -errno when
 * the file cannot be made, written or renamed. */
int output_file_write(const char *path, int (*write)(FILE *f, void *userdata), void *userdata);
