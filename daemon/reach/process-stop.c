/* SPDX-License-Identifier: GPL-2.0-only */
/* Stop every thread of a process and read its registers; let it go. */
#include <assert.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "macro.h"
#include "proc-status.h"
#include "proc-tasks.h"
#include "process-stop.h"
#include "util.h"

_Static_assert(sizeof(struct user_regs_struct) == THREAD_REGS_WORDS * sizeof(uint64_t), "x86_64 registers");

/* Rounds of listing /proc/PID/task: a thread may start one more before it stops. */
#define MAX_ROUNDS 64
/* How long a release waits for a thread asked to stop that had not stopped yet (one a loaded
 * machine had not run in time stops within that; one in uninterruptible sleep may not). */
#define RELEASE_LATE_MS 100

int process_stop_read_thread(pid_t tid, struct thread_state *ret)
{
        struct user_regs_struct regs;
        struct iovec iov = { .iov_base = &regs, .iov_len = sizeof(regs) };

        assert(ret);
        if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)NT_PRSTATUS, &iov) < 0)
                return -errno;
        ret->tid = tid;
        ret->has_regs = true;
        ret->sp = regs.rsp;
        memcpy(ret->regs, &regs, sizeof(regs));
        return 0;
}

static struct thread_state *find(struct process_stop *s, pid_t tid)
{
        for (size_t i = 0; i < s->n; i++)
                if (s->threads[i].tid == tid)
                        return &s->threads[i];
        return NULL;
}

/* "State:" of /proc/PID/task/TID/status: 'Z' or 'X' for a thread that is gone but not reaped. */
static char thread_state_letter(pid_t pid, pid_t tid)
{
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], line[256];

        snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
        f = fopen(path, "re");
        while (f && fgets(line, sizeof(line), f))
                if (strncmp(line, "State:", 6) == 0) {
                        const char *p = line + 6;

                        while (*p == ' ' || *p == '\t')
                                p++;
                        return *p;
                }
        return 0;
}

static int tracer_of(pid_t pid)
{
        int tracer;

        return proc_status_int(pid, "TracerPid:", &tracer) < 0 ? 0 : tracer;
}

/* Seize and interrupt each thread of pid not seized yet: how many, or -errno. */
static int seize_new_threads(struct process_stop *s, char **error)
{
        _cleanup_free_ pid_t *tids = NULL;
        size_t n_tids = 0;
        int added = 0, r;

        r = proc_tasks_list(s->pid, &tids, &n_tids);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_tids; i++) {
                pid_t tid = tids[i];

                if (find(s, tid))
                        continue;
                if (ptrace(PTRACE_SEIZE, (pid_t)tid, NULL, NULL) < 0) {
                        int e = errno;
                        char state;

                        if (e == ESRCH)
                                continue;       /* it exited meanwhile */
                        state = thread_state_letter(s->pid, (pid_t)tid);
                        if (e == EPERM && (state == 'Z' || state == 'X'))
                                continue;       /* gone, not reaped: nothing to stop */
                        if (e == EPERM && tracer_of((pid_t)tid) == gettid()) {
                                /* ours: asked to stop by an earlier stop, it has not stopped since */
                                (void)asprintf(error, "thread %d of pid %d did not stop in time (state %c: "
                                               "uninterruptible sleep?)", (int)tid, (int)s->pid, state);
                                return -ETIME;
                        }
                        if (e == EPERM && tracer_of((pid_t)tid) > 0) {
                                (void)asprintf(error, "pid %d is traced by pid %d (a debugger?): a process has "
                                               "one tracer", (int)s->pid, tracer_of((pid_t)tid));
                                return -EBUSY;
                        }
                        return -e;
                }
                if (s->n == s->allocated) {
                        size_t want = MAX(s->allocated * 2, (size_t)16);
                        struct thread_state *grown = reallocarray(s->threads, want, sizeof(*grown));

                        if (!grown) {
                                (void)ptrace(PTRACE_DETACH, (pid_t)tid, NULL, NULL);
                                return -ENOMEM;
                        }
                        s->threads = grown;
                        s->allocated = want;
                }
                s->threads[s->n++] = (struct thread_state) { .tid = (pid_t)tid };
                if (s->stopped_usec == 0)
                        s->stopped_usec = now_monotonic_usec();
                (void)ptrace(PTRACE_INTERRUPT, (pid_t)tid, NULL, NULL);
                added++;
        }
        return added;
}

/* Drop thread i (it exited). */
static void forget(struct process_stop *s, size_t i)
{
        s->threads[i] = s->threads[--s->n];
}

/* Wait until every seized thread is stopped (its registers read) or gone. */
static int wait_stopped(struct process_stop *s, uint64_t deadline_usec, char **error)
{
        for (;;) {
                size_t waiting = 0;

                for (size_t i = 0; i < s->n; ) {
                        struct thread_state *t = &s->threads[i];
                        int status = 0;
                        pid_t r;

                        if (t->has_regs) {
                                i++;
                                continue;
                        }
                        r = waitpid(t->tid, &status, __WALL | WNOHANG);
                        if (r < 0 && errno == EINTR)
                                continue;
                        if (r == 0) {
                                waiting++;
                                i++;
                                continue;
                        }
                        if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
                                forget(s, i);
                                continue;
                        }
                        /* a signal-delivery stop (not a PTRACE_EVENT_STOP): the signal is given back */
                        if (WIFSTOPPED(status) && (status >> 16) == 0)
                                t->pending_signal = WSTOPSIG(status);
                        if (process_stop_read_thread(t->tid, t) < 0)
                                forget(s, i);   /* killed meanwhile */
                        else
                                i++;
                }
                if (waiting == 0)
                        return 0;
                if (now_monotonic_usec() >= deadline_usec) {
                        for (size_t i = 0; i < s->n; i++)
                                if (!s->threads[i].has_regs) {
                                        (void)asprintf(error, "thread %d of pid %d did not stop in time (state %c: "
                                                       "uninterruptible sleep?)", (int)s->threads[i].tid,
                                                       (int)s->pid, thread_state_letter(s->pid, s->threads[i].tid));
                                        break;
                                }
                        return -ETIME;
                }
                (void)nanosleep(&(struct timespec) { .tv_nsec = 100 * 1000 }, NULL);
        }
}

int process_stop(pid_t pid, uint64_t timeout_ms, struct process_stop *ret, char **error)
{
        struct process_stop s = { .pid = pid };
        uint64_t deadline = now_monotonic_usec() + timeout_ms * 1000;
        int r = 0;

        assert(ret);
        assert(error);
        for (int round = 0; round < MAX_ROUNDS; round++) {
                r = seize_new_threads(&s, error);
                if (r <= 0)
                        break;
                r = wait_stopped(&s, deadline, error);
                if (r < 0)
                        break;
        }
        if (r == 0 && s.n == 0)
                r = -ESRCH;
        if (r > 0)
                r = -EAGAIN;            /* still starting threads after MAX_ROUNDS */
        if (r < 0) {
                (void)process_stop_release(&s);
                return r;
        }
        *ret = s;
        return 0;
}

/* Let go of tid, asked to stop and not stopped yet (PTRACE_DETACH fails on a tracee that runs):
 * wait for its stop, until deadline_usec, and detach it then. false when it did not stop in time:
 * it stays the calling thread's tracee. */
static bool release_late(pid_t tid, uint64_t deadline_usec)
{
        for (;;) {
                int status = 0;
                pid_t r = waitpid(tid, &status, __WALL | WNOHANG);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0 || (r > 0 && !WIFSTOPPED(status)))
                        return true;            /* gone */
                if (r > 0) {
                        /* a signal-delivery stop: the signal is given back */
                        int sig = (status >> 16) == 0 ? WSTOPSIG(status) : 0;

                        return ptrace(PTRACE_DETACH, tid, NULL, (void *)(uintptr_t)sig) == 0 || errno != ESRCH;
                }
                if (now_monotonic_usec() >= deadline_usec)
                        return false;
                (void)nanosleep(&(struct timespec) { .tv_nsec = 100 * 1000 }, NULL);
        }
}

uint64_t process_stop_release(struct process_stop *s)
{
        uint64_t stopped = 0, deadline;

        if (!s)
                return 0;
        for (size_t i = 0; i < s->n; i++)
                if (ptrace(PTRACE_DETACH, s->threads[i].tid, NULL,
                           (void *)(uintptr_t)s->threads[i].pending_signal) == 0 || errno != ESRCH ||
                    s->threads[i].has_regs)
                        s->threads[i].tid = 0;
        if (s->stopped_usec)
                stopped = now_monotonic_usec() - s->stopped_usec;
        /* those asked to stop that had not stopped yet (a stop that gave up) */
        deadline = now_monotonic_usec() + RELEASE_LATE_MS * 1000;
        for (size_t i = 0; i < s->n; i++)
                if (s->threads[i].tid > 0)
                        (void)release_late(s->threads[i].tid, deadline);
        free(s->threads);
        *s = (struct process_stop) {};
        return stopped;
}
