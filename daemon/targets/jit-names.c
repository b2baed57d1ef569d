/* SPDX-License-Identifier: GPL-2.0-only */
/* The names a running process gives its JIT code. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "jit-names.h"
#include "macro.h"
#include "perf-map.h"
#include "proc-status.h"
#include "safe-open.h"

int jit_names_source_open(pid_t pid, struct jit_names_source *ret)
{
        char proc_path[32];
        struct stat st;
        pid_t ns_pid;
        int root_fd, r;

        assert(ret);
        *ret = (struct jit_names_source) { .root_fd = -EBADF };
        r = proc_status_ns_pid(pid, &ns_pid);
        if (r < 0)
                return r;
        snprintf(proc_path, sizeof(proc_path), "/proc/%d", (int)pid);
        if (stat(proc_path, &st) < 0)           /* owned by the process's user */
                return errno == ENOENT ? -ENOENT : -errno;
        root_fd = safe_open_root(pid);
        if (root_fd < 0)
                return root_fd;
        *ret = (struct jit_names_source) { .root_fd = root_fd, .ns_pid = ns_pid, .owner = st.st_uid };
        return 0;
}

void jit_names_source_done(struct jit_names_source *s)
{
        assert(s);
        if (s->root_fd >= 0)
                close(s->root_fd);
        *s = (struct jit_names_source) { .root_fd = -EBADF };
}

int jit_names_load_from(const struct jit_names_source *s, struct perf_map **ret)
{
        assert(s);
        assert(ret);
        if (s->root_fd < 0)
                return -ENOENT;
        return perf_map_load(s->root_fd, s->ns_pid, s->owner, ret);
}

int jit_names_load(pid_t pid, struct perf_map **ret)
{
        struct jit_names_source s;
        int r;

        assert(ret);
        r = jit_names_source_open(pid, &s);
        if (r < 0)
                return r;
        r = jit_names_load_from(&s, ret);
        jit_names_source_done(&s);
        return r;
}
