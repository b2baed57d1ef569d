/* SPDX-License-Identifier: GPL-2.0-only */
/* A system call made by a thread of another process, stopped under ptrace (process-stop.h): its
 * registers pointed at a `syscall` instruction of one of its executable mappings, one single
 * step, its registers put back as they were (a system call it was interrupted in set to be made
 * again). What process-snapshot.h's clone and wait4 and uffd-handle.h's userfaultfd, its ioctls and
 * close are made of. Every call on one tracee comes from the thread that stopped it. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "process-stop.h"

/* The address of a `syscall` instruction (0f 05) in an executable mapping of pid: the vDSO's
 * first, then the others'. -ENOEXEC when there is none. */
int process_inject_find_insn(pid_t pid, uint64_t *ret);

/* Wait for tid's next stop, at most until deadline_usec (CLOCK_MONOTONIC): its wait status, or
 * -ETIME, -ECHILD, -ESRCH (it died). */
int process_inject_wait_stop(pid_t tid, uint64_t deadline_usec);

/* Make t (stopped, without a signal to take) run system call nr with args at insn, the ptrace
 * options set for that step only; its return value in *ret_rax, the event message of a fork it
 * made in *ret_forked (0: none). t's registers are put back in every case it can be reached; a
 * signal that came meanwhile is kept in t->pending_signal. -errno; -EPROTONOSUPPORT (*error says
 * so) for a thread running 32-bit code. */
int process_inject_syscall(struct thread_state *t, uint64_t insn, long nr, const uint64_t args[6],
                           unsigned long options, long *ret_rax, unsigned long *ret_forked, char **error);

/* process_inject_syscall() with args[buf_arg] pointing at a copy of buf[len] in the process's
 * memory: below a stopped thread's stack pointer past its 128-byte red zone (t's own first, then
 * the others': memory no thread of it uses while stopped), written with process_vm_writev; what
 * the call left there read back into buf, the bytes that were there put back. -EFAULT (*error
 * says so) where no stack has room, or process_inject_syscall()'s errors. */
int process_inject_syscall_buf(struct process_stop *stop, struct thread_state *t, uint64_t insn, long nr,
                               const uint64_t args[6], unsigned buf_arg, void *buf, size_t len, long *ret_rax,
                               char **error);

/* A stopped thread with its registers read and without a signal to take, or NULL. */
struct thread_state *process_inject_pick_thread(struct process_stop *stop);
