/* SPDX-License-Identifier: GPL-2.0-only */
/* A system call made by a stopped thread of another process (ptrace). */
#include <errno.h>
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
#include "process-inject.h"
#include "util.h"

/* The kernel's restart codes (include/linux/errno.h): a thread stopped inside a system call
 * returns one of them, and the kernel restarts the call when the thread resumes. */
#define ERESTARTSYS 512
#define ERESTARTNOINTR 513
#define ERESTARTNOHAND 514
#define ERESTART_RESTARTBLOCK 516

#define USER64_CS 0x33                  /* a 64-bit thread's code segment */
#define STACK_RED_ZONE 128              /* below a stack pointer, what the x86-64 ABI lets code use */
#define BUF_MAX 256                     /* a system call's argument struct written into the process */
#define SCAN_CODE_BYTES (256 * 1024)    /* read of an executable mapping, looking for `syscall` */

/* The address of a `syscall` instruction (0f 05) in an executable mapping of pid: the vDSO's
 * first, then the others'. -ENOEXEC when there is none. */
int process_inject_find_insn(pid_t pid, uint64_t *ret)
{
        _cleanup_(proc_maps_done) struct proc_maps maps = {};
        _cleanup_free_ uint8_t *buf = malloc(SCAN_CODE_BYTES);
        char path[64];
        int r;

        if (!buf)
                return -ENOMEM;
        snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
        r = proc_maps_parse_file(path, &maps);
        if (r < 0)
                return r;
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < maps.n; i++) {
                        const struct map_entry *e = &maps.entries[i];
                        bool vdso = e->path && strcmp(e->path, "[vdso]") == 0;
                        size_t len = (size_t)MIN(e->end - e->start, (uint64_t)SCAN_CODE_BYTES);
                        struct iovec local = { .iov_base = buf, .iov_len = len };
                        struct iovec remote = { .iov_base = (void *)(uintptr_t)e->start, .iov_len = len };
                        ssize_t n;
                        uint64_t off;

                        if (e->perms[0] != 'r' || e->perms[2] != 'x' || vdso != (pass == 0))
                                continue;
                        n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
                        if (n < 2)
                                continue;
                        for (off = 0; off + 1 < (uint64_t)n; off++)
                                if (buf[off] == 0x0f && buf[off + 1] == 0x05) {
                                        *ret = e->start + off;
                                        return 0;
                                }
                }
        return -ENOEXEC;
}

/* Wait for tid's next stop, at most until deadline: its wait status, or -ETIME, -ECHILD. */
int process_inject_wait_stop(pid_t tid, uint64_t deadline_usec)
{
        for (;;) {
                int status = 0;
                pid_t r = waitpid(tid, &status, __WALL | WNOHANG);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r > 0) {
                        if (!WIFSTOPPED(status))
                                return -ESRCH;          /* it died */
                        return status;
                }
                if (now_monotonic_usec() >= deadline_usec)
                        return -ETIME;
                (void)nanosleep(&(struct timespec) { .tv_nsec = 20 * 1000 }, NULL);
        }
}

/* The registers tid is to get back: those it stopped with, a system call it was interrupted in
 * set to be made again (as the kernel would have on its way back to user space, which a stop of
 * another kind, after the clone, does not promise). */
static struct user_regs_struct regs_to_restore(const struct user_regs_struct *saved)
{
        struct user_regs_struct r = *saved;
        long error = -(long)r.rax;

        if ((long)r.orig_rax < 0)
                return r;
        switch (error) {
        case ERESTARTSYS:
        case ERESTARTNOINTR:
        case ERESTARTNOHAND:
                r.rax = r.orig_rax;
                r.rip -= 2;
                break;
        case ERESTART_RESTARTBLOCK:
                r.rax = SYS_restart_syscall;
                r.rip -= 2;
                break;
        default:
                return r;
        }
        r.orig_rax = (unsigned long long)-1;
        return r;
}

/* Make t (stopped, without a signal to take) run system call nr with args at insn, the ptrace
 * options set for that step only; its return value in *ret_rax, the event message of a fork it made
 * in *ret_forked (0: none). t's registers are put back in every case it can be reached. -errno. */
int process_inject_syscall(struct thread_state *t, uint64_t insn, long nr, const uint64_t args[6],
                          unsigned long options, long *ret_rax, unsigned long *ret_forked, char **error)
{
        pid_t tid = t->tid;
        struct user_regs_struct saved, call, after, restore;
        unsigned long forked = 0;
        int pending = 0, r = 0, status;

        if (ptrace(PTRACE_GETREGS, tid, NULL, &saved) < 0)
                return -errno;
        if (saved.cs != USER64_CS) {
                (void)asprintf(error, "thread %d runs 32-bit code", (int)tid);
                return -EPROTONOSUPPORT;
        }
        if (options && ptrace(PTRACE_SETOPTIONS, tid, NULL, (void *)(uintptr_t)options) < 0)
                return -errno;
        call = saved;
        call.rip = insn;
        call.rax = (unsigned long long)nr;
        call.orig_rax = (unsigned long long)-1;        /* no restart of what it was in */
        call.rdi = args[0];
        call.rsi = args[1];
        call.rdx = args[2];
        call.r10 = args[3];
        call.r8 = args[4];
        call.r9 = args[5];
        if (ptrace(PTRACE_SETREGS, tid, NULL, &call) < 0) {
                r = -errno;
                goto out;
        }
        for (;;) {
                if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0) {
                        r = -errno;
                        break;
                }
                /* no deadline: the thread must come back to have its registers put back */
                status = process_inject_wait_stop(tid, UINT64_MAX);
                if (status < 0) {
                        r = status;
                        break;
                }
                if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_FORK << 8))) {
                        if (ptrace(PTRACE_GETEVENTMSG, tid, NULL, &forked) < 0)
                                forked = 0;
                        continue;       /* on to the end of the call */
                }
                if ((status >> 16) != 0)
                        continue;       /* another event stop (an interrupt): step on */
                if (WSTOPSIG(status) == SIGTRAP)
                        break;          /* the step is done */
                /* a signal came meanwhile: given back when the thread is let go */
                pending = WSTOPSIG(status);
        }
        if (r == 0) {
                if (ptrace(PTRACE_GETREGS, tid, NULL, &after) < 0)
                        r = -errno;
                else
                        *ret_rax = (long)after.rax;
        }
        if (r != -ESRCH && r != -ECHILD) {
                restore = regs_to_restore(&saved);
                if (ptrace(PTRACE_SETREGS, tid, NULL, &restore) < 0 && r == 0)
                        r = -errno;
        }
out:
        if (options)
                (void)ptrace(PTRACE_SETOPTIONS, tid, NULL, NULL);
        if (pending)
                t->pending_signal = pending;    /* given back as it is let go */
        *ret_forked = forked;
        return r;
}

static int copy_with(pid_t pid, uint64_t addr, void *buf, size_t len, bool write)
{
        struct iovec local = { .iov_base = buf, .iov_len = len };
        struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
        ssize_t n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0) :
                            process_vm_readv(pid, &local, 1, &remote, 1, 0);

        if (n < 0)
                return -errno;
        return (size_t)n == len ? 0 : -EFAULT;
}

/* Where len bytes fit below sp past the red zone, 16-byte aligned: 0 when sp is too low. */
static uint64_t below_red_zone(uint64_t sp, size_t len)
{
        if (sp < STACK_RED_ZONE + len + 16)
                return 0;
        return (sp - STACK_RED_ZONE - len) & ~(uint64_t)15;
}

int process_inject_syscall_buf(struct process_stop *stop, struct thread_state *t, uint64_t insn, long nr,
                               const uint64_t args[6], unsigned buf_arg, void *buf, size_t len, long *ret_rax,
                               char **error)
{
        uint8_t saved[BUF_MAX];
        uint64_t call_args[6], at = 0;
        unsigned long forked = 0;
        int r, r2;

        if (len == 0 || len > BUF_MAX || buf_arg >= 6)
                return -EINVAL;
        /* t's own stack first; a stack whose mapping ends right there (a main thread's, grown no
         * lower yet) is refused by the read, and the next thread's tried */
        for (size_t i = 0; at == 0 && i <= stop->n; i++) {
                const struct thread_state *s = i == 0 ? t : &stop->threads[i - 1];
                uint64_t a = s->has_regs && (i == 0 || s != t) ? below_red_zone(s->sp, len) : 0;

                if (a && copy_with(stop->pid, a, saved, len, false) == 0)
                        at = a;
        }
        if (at == 0) {
                (void)asprintf(error, "no stack of pid %d has room below its red zone for a system call's "
                               "argument", (int)stop->pid);
                return -EFAULT;
        }
        r = copy_with(stop->pid, at, buf, len, true);
        if (r < 0) {
                (void)asprintf(error, "cannot write to pid %d's stack: %s", (int)stop->pid, strerror(-r));
                return r;
        }
        memcpy(call_args, args, sizeof(call_args));
        call_args[buf_arg] = at;
        r = process_inject_syscall(t, insn, nr, call_args, 0, ret_rax, &forked, error);
        if (r == 0)
                r = copy_with(stop->pid, at, buf, len, false);
        /* no trace of it left (a stack frame made later would hold it, and a scan read it) */
        r2 = copy_with(stop->pid, at, saved, len, true);
        return r < 0 ? r : r2;
}

struct thread_state *process_inject_pick_thread(struct process_stop *stop)
{
        for (size_t i = 0; i < stop->n; i++)
                if (stop->threads[i].has_regs && stop->threads[i].pending_signal == 0)
                        return &stop->threads[i];
        return NULL;
}
