/* SPDX-License-Identifier: GPL-2.0-only */
/* Which configuration files the daemon reads, and in which order. */
#pragma once

#include <stddef.h>
#include "config.h"

/* Where the configuration comes from: one file named on the command line, or the layered set:
 * the shipped defaults (vendor_dir/memleakd.conf, e.g. /usr/share/memleakd), the administrator's
 * file (admin_dir/memleakd.conf, e.g. /etc/memleakd), then the drop-ins *.conf of both
 * memleakd.conf.d directories in the order of their names, a drop-in in admin_dir hiding the
 * shipped one of the same name. A later file's keys override an earlier one's. */
struct config_source {
        char *explicit_path;            /* --config FILE: that file alone, which must exist */
        char *vendor_dir;
        char *admin_dir;
        char *socket_path;              /* --socket or $MEMLEAKD_SOCKET: over the files' (NULL: none) */
};

int config_source_init(struct config_source *s, const char *explicit_path, const char *vendor_dir,
                       const char *admin_dir);
void config_source_done(struct config_source *s);

/* One drop-in's name and the directory it is read from. */
struct config_dropin {
        const char *name;
        const char *dir;
};

/* Pure: sorts dropins by name and removes, among equal names, all but the one from hide_dir's
 * (the administrator's); returns how many are left at the front. */
size_t config_source_dropins_order(struct config_dropin *dropins, size_t n, const char *hide_dir);

/* The files s names that exist, in reading order: a NULL-terminated array the caller frees with
 * config_source_files_free(). -ENOENT if the explicit file is missing; an unreadable directory is an
 * error, a missing one is not. */
int config_source_files(const struct config_source *s, char ***ret_paths, char **error);
void config_source_files_free(char **paths);

/* Parse the files of s over c, in order, then its socket_path over theirs. *c changes only if
 * every file is valid. *ret_files (if
 * not NULL) gets the files read, joined by ", " (an empty string when there were none: the
 * built-in defaults). */
int config_source_load(const struct config_source *s, struct memleakd_config *c, char **ret_files,
                       char **error);
