/* SPDX-License-Identifier: GPL-2.0-only */
/* Mount tracefs and bpffs when they are absent: uprobes and pinning may need them. */
#include <errno.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include "log.h"
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

void mounts_ensure(void)
{
        ensure_one("/sys/kernel/tracing", "tracefs", TRACEFS_MAGIC);
        ensure_one("/sys/fs/bpf", "bpf", BPF_FS_MAGIC);
}
