/* SPDX-License-Identifier: GPL-2.0-only */
/* A copy-on-write snapshot of a running process, made by a clone it is made to call. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "macro.h"
#include "proc-maps.h"
#include "proc-status.h"
#include "process-inject.h"
#include "process-snapshot.h"
#include "seccomp-check.h"
#include "util.h"

/* A single step of clone (the kernel copies the page tables): bound, far above what it takes. */
#define CLONE_STEP_USEC (2000 * 1000)
#define OWNED_KEEP_USEC (60ULL * 1000 * 1000)
#define OWNED_SLOTS 64
/* How long the second freeze, the one that reaps the copy, may take to stop every thread. */
#define REAP_STOP_MS 50

/* The copies made lately, and the process being stopped for one now: their fork events are not
 * the program's (core/manager-targets asks). */
static struct {
        pthread_mutex_t lock;
        pid_t freezing;
        struct { pid_t parent, child; uint64_t at_usec; } made[OWNED_SLOTS];
        unsigned next;
} owned = { .lock = PTHREAD_MUTEX_INITIALIZER };

bool process_snapshot_owns(pid_t parent, pid_t child)
{
        uint64_t now = now_monotonic_usec();
        bool found = false, freezing;
        int tracer = 0, tracer_tgid = 0;

        pthread_mutex_lock(&owned.lock);
        freezing = owned.freezing == parent;
        for (unsigned i = 0; i < OWNED_SLOTS && !found; i++)
                found = owned.made[i].child == child && owned.made[i].parent == parent &&
                        now - owned.made[i].at_usec < OWNED_KEEP_USEC;
        pthread_mutex_unlock(&owned.lock);
        /* a fork the process made just before the freeze may be seen during it: the copy is the
         * child a thread of this process traces (from its birth); TracerPid names the thread */
        if (!found && freezing && proc_status_int(child, "TracerPid:", &tracer) >= 0 && tracer > 0 &&
            proc_status_int(tracer, "Tgid:", &tracer_tgid) >= 0)
                found = tracer_tgid == getpid();
        return found;
}

static void owned_set_freezing(pid_t parent)
{
        pthread_mutex_lock(&owned.lock);
        owned.freezing = parent;
        pthread_mutex_unlock(&owned.lock);
}

static void owned_add(pid_t parent, pid_t child)
{
        pthread_mutex_lock(&owned.lock);
        owned.made[owned.next] = (typeof(owned.made[0])) { parent, child, now_monotonic_usec() };
        owned.next = (owned.next + 1) % OWNED_SLOTS;
        pthread_mutex_unlock(&owned.lock);
}

/* SIGKILL to the copy, as its tracer: PTRACE_KILL sends it (Linux 5.19 on) whatever memleakd's
 * capabilities, where kill() needs CAP_KILL for a copy of another user's process, which the unit
 * does not keep (tried second: from a thread that is not its tracer). 0, or -errno: then it stays
 * stopped until its tracer thread exits (PTRACE_O_EXITKILL), and no wait for it may block. */
static int copy_kill(pid_t copy)
{
        if (ptrace(PTRACE_KILL, copy, 0, 0) == 0 || kill(copy, SIGKILL) == 0)
                return 0;
        return -errno;
}

/* Make t call clone(SIGCHLD) at insn: the copy's pid in *ret_copy, or -errno. */
static int inject_clone(struct thread_state *t, uint64_t insn, pid_t *ret_copy, char **error)
{
        /* flags: a fork; the same stack (copied); no tids, no TLS */
        const uint64_t args[6] = { SIGCHLD, 0, 0, 0, 0, 0 };
        unsigned long copy = 0;
        long rax = 0;
        int r;

        /* the copy inherits the options: it dies with its tracer. Only for this step: a failure of
         * the daemon must not kill the process itself. */
        r = process_inject_syscall(t, insn, SYS_clone, args, PTRACE_O_TRACEFORK | PTRACE_O_EXITKILL, &rax, &copy,
                                   error);
        if (r == 0 && rax < 0) {
                r = (int)rax;
                (void)asprintf(error, "clone in thread %d failed: %s", (int)t->tid, strerror(-r));
        } else if (r == 0 && (copy == 0 || (pid_t)rax != (pid_t)copy)) {
                r = -EIO;
                (void)asprintf(error, "clone in thread %d returned %ld, its fork event said %lu", (int)t->tid, rax,
                               copy);
        }
        if (r < 0 && copy > 0) {
                /* made but not usable: gone at once */
                if (copy_kill((pid_t)copy) == 0)
                        (void)waitpid((pid_t)copy, NULL, __WALL);
                return r;
        }
        if (r == 0)
                *ret_copy = (pid_t)copy;
        return r;
}

int process_snapshot_take(pid_t pid, uint64_t timeout_ms, struct process_snapshot *ret, char **error)
{
        struct process_stop stop = {};
        struct thread_state *t;
        uint64_t insn = 0, taken_at;
        pid_t copy = 0;
        int r, status;

        assert(ret);
        assert(error);
        r = seccomp_check_call(pid, false, SECCOMP_CALL_CLONE, error);
        if (r < 0)
                return r;
        r = process_inject_find_insn(pid, &insn);
        if (r < 0) {
                if (r == -ENOEXEC)
                        (void)asprintf(error, "no `syscall` instruction in pid %d's code", (int)pid);
                return r;
        }
        r = process_stop(pid, timeout_ms, &stop, error);
        if (r < 0)
                return r;
        /* from here until the copy is registered, a fork event of pid's may be the copy's */
        owned_set_freezing(pid);
        taken_at = now_monotonic_usec() * 1000;
        t = process_inject_pick_thread(&stop);
        if (!t) {
                (void)asprintf(error, "every thread of pid %d stopped with a signal to take", (int)pid);
                r = -EAGAIN;
        } else {
                /* filters are per thread: the one that clones may have one its leader has not */
                r = seccomp_check_call(t->tid, true, SECCOMP_CALL_CLONE, error);
                if (r == 0)
                        r = inject_clone(t, insn, &copy, error);
        }
        if (r == 0) {
                owned_add(pid, copy);
                /* its first stop: it is born stopped, never having run */
                status = process_inject_wait_stop(copy, now_monotonic_usec() + CLONE_STEP_USEC);
                if (status < 0) {
                        (void)asprintf(error, "the copy %d of pid %d did not stop at its birth: %s", (int)copy,
                                       (int)pid, strerror(-status));
                        if (copy_kill(copy) == 0)
                                (void)waitpid(copy, NULL, __WALL);
                        r = status;
                }
        }
        *ret = (struct process_snapshot) { .pid = pid, .taken_at_ns = taken_at, .insn = insn };
        if (r == 0) {
                ret->copy = copy;
                ret->threads = calloc(stop.n, sizeof(*ret->threads));
                if (ret->threads) {
                        memcpy(ret->threads, stop.threads, stop.n * sizeof(*ret->threads));
                        ret->n = stop.n;
                }
        }
        ret->paused_usec = process_stop_release(&stop);
        owned_set_freezing(0);
        if (r == 0 && !ret->threads) {
                process_snapshot_done(ret);
                return -ENOMEM;
        }
        return r;
}

/* Kill the copy, wait for it as its tracer, and have the process wait for it (a wait4 made by one
 * of its threads in a second short freeze): the copy is its child, and one that never waits for
 * children would keep its zombie. Whether it is reaped. */
static bool kill_and_reap(struct process_snapshot *s, uint64_t *paused_usec)
{
        const uint64_t args[6] = { (uint64_t)s->copy, 0, (uint64_t)(__WALL | WNOHANG), 0, 0, 0 };
        _cleanup_free_ char *error = NULL;
        struct process_stop stop = {};
        struct thread_state *t;
        unsigned long forked = 0;
        long rax = 0;
        bool stopped;

        /* its memory torn down first (tens of ms for a big one), the process running meanwhile */
        if (copy_kill(s->copy) < 0)
                return false;
        while (waitpid(s->copy, NULL, __WALL) < 0 && errno == EINTR)
                ;
        stopped = process_stop(s->pid, REAP_STOP_MS, &stop, &error) >= 0;
        if (stopped) {
                t = process_inject_pick_thread(&stop);
                if (t && process_inject_syscall(t, s->insn, SYS_wait4, args, 0, &rax, &forked, &error) < 0)
                        rax = 0;
                *paused_usec = process_stop_release(&stop);
        }
        /* ECHILD: no such child left, the kernel reaped it (the process ignores SIGCHLD) */
        return stopped && (rax == s->copy || rax == -ECHILD);
}

uint64_t process_snapshot_done(struct process_snapshot *s)
{
        uint64_t paused = 0;

        if (!s)
                return 0;
        if (s->copy > 0)
                s->copy_reaped = kill_and_reap(s, &paused);
        free(s->threads);
        *s = (struct process_snapshot) { .copy_reaped = s->copy_reaped };
        return paused;
}
