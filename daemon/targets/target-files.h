/* SPDX-License-Identifier: GPL-2.0-only */
/* The files a target maps (or will map): its module map kept current, each file registered for
 * symbolization once (a reference released with the target), within TARGET_FILES_MAX. */
#pragma once

#include <stdbool.h>
#include "discovery.h"
#include "target.h"

/* Register the files the planned program will map (memleakctl run), while they are open. */
int target_files_remember_planned(const struct target_env *env, struct target *t, const struct discovery *d);

/* Bring t's module map up to date: /proc/PID/maps while it runs (once it runs the program it was
 * attached to exec), then the file mappings BPF recorded as it made them, which are all there is
 * once it has exited (process_gone). New files get registered. -errno, the map unchanged. */
int target_files_refresh(const struct target_env *env, struct target *t, bool process_gone);

/* t's maps as they were at its exit (mm, taken: left empty), with a descriptor of each mapping's
 * file (fds[i] < 0: none; the caller keeps them): the files it mapped since the last refresh are
 * registered for symbols, so that its frames there are named once it is gone. */
void target_files_adopt_exit_maps(struct target *t, struct module_map *mm, const int *fds);

/* An exited target read back after a restart (target-exited.c): the file open on fd, found to be
 * the one it mapped as (dev, ino) at path, registered for symbols under that identity (opened
 * again, once closed, from the daemon's own view, if it is still (dev, ino)). 0, or -errno (not
 * registered). */
int target_files_register_restored(struct target *t, uint64_t dev, uint64_t ino, const char *path, int fd);

/* Release what t's files hold (symbolizer references, paths). */
void target_files_done(struct target_files *f);

/* The memory they take. */
uint64_t target_files_bytes(const struct target_files *f);
