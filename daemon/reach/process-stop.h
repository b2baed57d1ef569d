/* SPDX-License-Identifier: GPL-2.0-only */
/* Stop every thread of a process and read its registers (ptrace: PTRACE_SEIZE, PTRACE_INTERRUPT,
 * PTRACE_GETREGSET), then let it go as it was. A tracee belongs to the thread that seized it:
 * every call on one process_stop comes from the same thread. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define THREAD_REGS_WORDS 27            /* struct user_regs_struct, x86_64 */

/* A stopped thread: where its stack is and what its registers hold (roots of a scan). */
struct thread_state {
        pid_t tid;
        bool has_regs;
        uint64_t sp;
        uint64_t regs[THREAD_REGS_WORDS];
        int pending_signal;             /* a signal it stopped to take, given back at release */
};

struct process_stop {
        pid_t pid;
        struct thread_state *threads;   /* those stopped */
        size_t n, allocated;
        uint64_t stopped_usec;          /* CLOCK_MONOTONIC when the first one was asked to stop */
};

/* Stop every thread of pid from the calling thread, waiting at most timeout_ms for them all:
 * -ESRCH (gone), -EBUSY (another tracer holds it: *error names it), -ETIME (a thread did not stop
 * in time, for example one in uninterruptible sleep), -ENOMEM. On error the threads that stopped
 * are let go, and one asked to stop that had not stopped yet as soon as it does, within 100 ms
 * (ptrace lets go of a stopped tracee only); past that it stays the calling thread's tracee, stops
 * on its way back to user space, and is let go only when the calling thread exits. Call it from
 * a thread that ends with the work (reach_scan_live() runs each scan on one). */
int process_stop(pid_t pid, uint64_t timeout_ms, struct process_stop *ret, char **error);

/* Let every thread go (PTRACE_DETACH, a signal it stopped for delivered): how long the process was
 * stopped, in microseconds. Accepts a zeroed struct. */
uint64_t process_stop_release(struct process_stop *s);

/* The registers of tid, a stopped tracee of the calling thread. -errno. */
int process_stop_read_thread(pid_t tid, struct thread_state *ret);
