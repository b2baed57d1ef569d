/* SPDX-License-Identifier: GPL-2.0-only */
/* A copy-on-write snapshot of a running process's memory, taken in a short freeze: every thread
 * stopped (process-stop.h) and its registers read, a fork-like clone(SIGCHLD) made by one of its
 * stopped threads (ptrace: its registers pointed at a `syscall` instruction of one of its
 * executable mappings, one single step, its registers put back as they were), every thread let
 * go. The copy never runs a user instruction: it is traced from its birth (PTRACE_O_TRACEFORK,
 * PTRACE_O_EXITKILL: it dies with its tracer), read with process_vm_readv at leisure, then killed
 * with SIGKILL and waited for by the process itself, made to call wait4 in a second short freeze.
 * Every call on one snapshot comes from the same thread (its tracer). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "process-stop.h"

struct process_snapshot {
        pid_t pid;                      /* the process */
        pid_t copy;                     /* its copy, stopped; 0 once killed */
        struct thread_state *threads;   /* the process's threads at the freeze */
        size_t n;
        uint64_t paused_usec;           /* how long the process was stopped */
        uint64_t taken_at_ns;           /* CLOCK_MONOTONIC when every thread was stopped */
        uint64_t insn;                  /* the `syscall` instruction its threads are made to run */
        bool copy_reaped;               /* after process_snapshot_done(): the process waited for it */
};

/* Take a snapshot of pid, waiting at most timeout_ms for its threads to stop. -ESRCH, -EBUSY
 * (another tracer: *error says which), -ETIME, -ENOMEM; -EPERM (a seccomp filter or strict mode:
 * a clone there might kill it), -EPROTONOSUPPORT (a 32-bit process), -ENOEXEC (no `syscall`
 * instruction found), or the clone's own error (-EAGAIN, -ENOMEM). *error says why where it can.
 * On error the process runs on as it was and no copy is left. */
int process_snapshot_take(pid_t pid, uint64_t timeout_ms, struct process_snapshot *ret, char **error);

/* Kill the copy, wait for it as its tracer, then have the process wait for it (its child: it
 * would keep its zombie) in a second freeze as short as the first's stop (one thread made to call
 * wait4 for it); free the rest. Returns how long
 * the process was stopped for that (0 when it could not be stopped: the zombie is then its to
 * reap, and it gets a SIGCHLD). Accepts a zeroed struct. */
uint64_t process_snapshot_done(struct process_snapshot *s);

/* Whether child is (or was, in the last minute) the copy of parent a snapshot made: its fork
 * event is not the program's. Thread-safe; reads /proc/CHILD/status while parent is frozen for a
 * snapshot (its copy made but not yet registered). */
bool process_snapshot_owns(pid_t parent, pid_t child);
