/* SPDX-License-Identifier: GPL-2.0-only */
/* Where a cgroup v2 directory is and what it holds: the cgroup2 mount (/proc/self/mountinfo), a
 * unit's directory found by name, a directory's id (its inode: what BPF's cgroup ids are), the
 * processes in it and in the cgroups below it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How deep a unit is looked for below the mount, and the cgroups below a watched one are read. */
#define CGROUP_PATH_UNIT_DEPTH_MAX 6u
#define CGROUP_PATH_TREE_DEPTH_MAX 16u
#define CGROUP_PATH_UNIT_NAME_MAX 255u

/* The mount point of the first cgroup2 file system in a mountinfo text (pure): 0 and *ret
 * (malloc'd, octal escapes undone), -ENOENT when none, -EINVAL for a malformed line, -ENOMEM. */
int cgroup_path_mount_parse(const char *mountinfo, char **ret);
/* The same, read from the file at path (NULL: /proc/self/mountinfo). */
int cgroup_path_mount(const char *path, char **ret);

/* Whether name is a unit name a cgroup directory may have: NAME.service, .scope or .slice, no
 * '/', not "." or "..", at most CGROUP_PATH_UNIT_NAME_MAX bytes (pure). */
bool cgroup_path_unit_name_valid(const char *name);
/* The directory for spec below root (the cgroup2 mount): spec is a path under root, or one taken
 * relative to it ("/system.slice/x.service" too); no ".." component. 0 and *ret, -EINVAL for a
 * bad spec, -ENOENT when it is not there, -ENOTDIR when it is no cgroup2 directory. */
int cgroup_path_resolve(const char *root, const char *spec, char **ret);
/* The directory of unit below root: root/unit, root/system.slice/unit, root/user.slice/... then
 * breadth first down to CGROUP_PATH_UNIT_DEPTH_MAX levels. 0 and *ret; -ENOENT, -EINVAL. */
int cgroup_path_find_unit(const char *root, const char *unit, char **ret);
/* The cgroup id of the directory at path (its inode number): 0 and *ret, or a negative errno. */
int cgroup_path_id(const char *path, uint64_t *ret);
/* The processes in path's cgroup and in those below it (down to CGROUP_PATH_TREE_DEPTH_MAX),
 * appended to *pids (*n of them), sorted and each once. 0, or a negative errno (-ENOENT: gone). */
int cgroup_path_procs(const char *path, pid_t **pids, size_t *n);
/* The directories of path's cgroup and those below it, with their ids, appended (the same depth):
 * 0 or a negative errno. */
int cgroup_path_tree(const char *path, uint64_t **ids, size_t *n);
