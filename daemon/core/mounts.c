/* SPDX-License-Identifier: GPL-2.0-only */
/* Mount tracefs, bpffs and cgroup2 when they are absent: uprobes, pinning and watching units and
 * cgroups may need them. */
#include <errno.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include "cgroup-path.h"
#include "log.h"
#include "macro.h"
#include "mounts.h"

static void ensure_one(const char *where, const char *type, unsigned long magic)
{
        struct statfs sfs;

        if (statfs(where, &sfs) == 0 && (unsigned long)sfs.f_type == magic)
                return;
        if (mkdir(where, 0700) < 0 && errno != EEXIST) {
                log_warning_errno(errno, "Cannot create %s for %s, ignoring: %m", where, type);
                return;
        }
        if (mount(type, where, type, MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") < 0) {
                log_warning_errno(errno, "Cannot mount %s on %s, ignoring: %m", type, where);
                return;
        }
        log_info("Mounted %s on %s", type, where);
}

/* No cgroup2 mounted anywhere (a container showing only cgroup v1, a host booted in the legacy
 * layout): one of memleakd's own, where the units and cgroups it watches are found. */
static void ensure_cgroup2(void)
{
        _cleanup_free_ char *root = NULL;

        if (cgroup_path_mount(NULL, &root) != -ENOENT)
                return;
        if ((mkdir(MOUNTS_CGROUP2_FALLBACK_PARENT, 0755) < 0 && errno != EEXIST) ||
            (mkdir(MOUNTS_CGROUP2_FALLBACK, 0755) < 0 && errno != EEXIST)) {
                log_warning_errno(errno, "Cannot create %s for cgroup2, ignoring (units and cgroups cannot be "
                                  "watched): %m", MOUNTS_CGROUP2_FALLBACK);
                return;
        }
        if (mount("cgroup2", MOUNTS_CGROUP2_FALLBACK, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
                log_warning_errno(errno, "Cannot mount cgroup2 on %s, ignoring (units and cgroups cannot be "
                                  "watched): %m", MOUNTS_CGROUP2_FALLBACK);
                return;
        }
        log_info("Mounted cgroup2 on %s: none was mounted", MOUNTS_CGROUP2_FALLBACK);
}

void mounts_ensure(void)
{
        ensure_one("/sys/kernel/tracing", "tracefs", TRACEFS_MAGIC);
        ensure_one("/sys/fs/bpf", "bpf", BPF_FS_MAGIC);
        ensure_cgroup2();
}
