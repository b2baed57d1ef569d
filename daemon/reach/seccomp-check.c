/* SPDX-License-Identifier: GPL-2.0-only */
/* Whether a process's seccomp filters let through a system call we make it make. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "macro.h"
#include "proc-status.h"
#include "seccomp-check.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* How a call is named in what we say: "it may not VERB", "NOUN there might kill it", "do not
 * let NOUN through". */
static const struct {
        const char *verb, *noun;
} call_names[] = {
        [SECCOMP_CALL_CLONE] = { "clone", "a clone" },
        [SECCOMP_CALL_USERFAULTFD] = { "call userfaultfd", "a userfaultfd" },
        [SECCOMP_CALL_USERFAULTFD_HELD] = { "call userfaultfd and its ioctls", "a userfaultfd and its ioctls" },
};

#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

/* The ioctls a process holding its userfaultfd is made to call (uffd-handle.h), on a page of the
 * probe's own: 0 when they went through. */
static int probe_uffd_ioctls(int uffd)
{
        static char page[1 << 12] __attribute__((aligned(1 << 12)));
        struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC };
        struct uffdio_register reg = { .range = { .start = (uintptr_t)page, .len = sizeof(page) },
                                       .mode = UFFDIO_REGISTER_MODE_WP };

        if (ioctl(uffd, UFFDIO_API, &api) < 0 || ioctl(uffd, UFFDIO_REGISTER, &reg) < 0 ||
            ioctl(uffd, UFFDIO_UNREGISTER, &reg.range) < 0)
                return 7;
        return 0;
}

/* The call itself, in the probe (after its filters are in): 0 when it went through. */
static int probe_call(enum seccomp_call call)
{
        long r;
        int e;

        switch (call) {
        case SECCOMP_CALL_CLONE:
                r = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
                return r < 0 ? 4 : 0;   /* the clone and its parent alike: it went through */
        case SECCOMP_CALL_USERFAULTFD:
                r = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
                if (r < 0)
                        return 4;
                return syscall(SYS_close, (int)r) < 0 ? 5 : 0;
        case SECCOMP_CALL_USERFAULTFD_HELD:
                r = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
                if (r < 0)
                        return 4;
                e = probe_uffd_ioctls((int)r);
                return syscall(SYS_close, (int)r) < 0 ? 5 : e;
        case _SECCOMP_CALL_MAX:
                break;
        }
        return 6;
}

/* Filters a thread may have (the kernel allows a chain of up to 32 KiB of instructions). */
#define SECCOMP_FILTERS_MAX 64u

struct seccomp_filters {
        struct sock_fprog progs[SECCOMP_FILTERS_MAX];   /* newest first, as the kernel numbers them */
        size_t n;
};

static void seccomp_filters_done(struct seccomp_filters *f)
{
        for (size_t i = 0; i < f->n; i++)
                free(f->progs[i].filter);
        f->n = 0;
}

/* The seccomp filters of tid, our stopped tracee (PTRACE_SECCOMP_GET_FILTER, CAP_SYS_ADMIN). */
static int seccomp_filters_read(pid_t tid, struct seccomp_filters *ret)
{
        for (unsigned long i = 0; i < SECCOMP_FILTERS_MAX; i++) {
                long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, NULL);
                struct sock_filter *insns;

                if (n < 0 && errno == ENOENT)
                        return 0;       /* that was all */
                if (n <= 0 || n > BPF_MAXINSNS)
                        return n < 0 ? -errno : -EINVAL;
                insns = calloc((size_t)n, sizeof(*insns));
                if (!insns)
                        return -ENOMEM;
                if (ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, insns) != n) {
                        free(insns);
                        return -EIO;
                }
                ret->progs[ret->n++] = (struct sock_fprog) { .len = (unsigned short)n, .filter = insns };
        }
        return -E2BIG;
}

/* Whether the filters f let call through: the kernel itself decides, in a child of ours that
 * installs them (oldest first) and makes the call. It makes only system calls between its fork
 * and its exit (this process has threads). */
static bool seccomp_filters_allow(const struct seccomp_filters *f, enum seccomp_call call)
{
        int status = 0;
        pid_t probe, r;

        probe = fork();
        if (probe < 0)
                return false;
        if (probe == 0) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(2);
                /* prctl() where seccomp() is filtered itself (it is the older way in) */
                for (size_t i = f->n; i-- > 0;)
                        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &f->progs[i]) < 0 &&
                            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &f->progs[i], 0, 0) < 0)
                                _exit(3);
                _exit(probe_call(call));
        }
        do
                r = waitpid(probe, &status, __WALL);
        while (r < 0 && errno == EINTR);
        return r == probe && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Whether tid's seccomp filters are those this process and PID 1 (as our /proc numbers it: the
 * container's init, whose filters every process in it inherits) have, as many of each: filters
 * only accumulate, so the same count on a descendant of PID 1 that started none of its own. */
static bool filters_are_everyones(pid_t tid)
{
        int theirs = -1, ours = -2, init = -3;

        if (proc_status_int(tid, "Seccomp_filters:", &theirs) < 0 ||
            proc_status_int(getpid(), "Seccomp_filters:", &ours) < 0 ||
            proc_status_int(1, "Seccomp_filters:", &init) < 0)
                return false;
        return theirs > 0 && theirs == ours && ours == init;
}

/* Whether this process runs under seccomp: the kernel then shows it no process's filters. */
static bool under_seccomp(void)
{
        int mode = 0;

        return proc_status_int(getpid(), "Seccomp:", &mode) == 0 && mode != 0;
}

/* Whether our own filters let call through, asked once (they never change) in a probe: what a
 * process whose filters are everyone's here (filters_are_everyones()) would meet. Known before
 * the process is stopped, so that no probe forks while it is (the fork copies our page tables:
 * tens of ms for a daemon built with ASan). */
static bool our_filters_allow(enum seccomp_call call)
{
        static int known[_SECCOMP_CALL_MAX];    /* 0 not asked, 1 let through, -1 not */
        static const struct seccomp_filters none = {};
        int k = __atomic_load_n(&known[call], __ATOMIC_ACQUIRE);

        if (k == 0) {
                k = seccomp_filters_allow(&none, call) ? 1 : -1;
                __atomic_store_n(&known[call], k, __ATOMIC_RELEASE);
        }
        return k > 0;
}

int seccomp_check_call(pid_t tid, bool stopped, enum seccomp_call call, char **error)
{
        _cleanup_(seccomp_filters_done) struct seccomp_filters filters = {};
        const char *verb = call_names[call].verb, *noun = call_names[call].noun;
        int seccomp = 0, r;

        if (proc_status_int(tid, "Seccomp:", &seccomp) < 0 || seccomp == 0)
                return 0;
        if (seccomp != 2) {
                (void)asprintf(error, "pid %d runs under strict seccomp: it may not %s", (int)tid, verb);
                return -EPERM;
        }
        /* under seccomp ourselves (a container's), tid's filters cannot be read: where they are
         * those everything here inherits, ours answer, asked before it is stopped */
        if (under_seccomp() && filters_are_everyones(tid) && our_filters_allow(call))
                return 0;
        if (!stopped)
                return 0;
        r = seccomp_filters_read(tid, &filters);
        /* the kernel shows no filter to a tracer under seccomp itself (a container's): where tid
         * has just the filters everything here inherits, ours among them, our own call answers */
        if (r == -EACCES && filters_are_everyones(tid) && our_filters_allow(call))
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                (void)asprintf(error, "pid %d runs under seccomp and its filters cannot be read (%s): %s "
                               "there might kill it", (int)tid, strerror(-r), noun);
                return -EPERM;
        }
        if (!seccomp_filters_allow(&filters, call)) {
                (void)asprintf(error, "pid %d runs under seccomp whose filters do not let %s through", (int)tid,
                               noun);
                return -EPERM;
        }
        return 0;
}
