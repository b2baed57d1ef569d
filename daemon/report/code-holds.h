/* SPDX-License-Identifier: GPL-2.0-only */
/* Which threads of memleakctl run's family its tracer holds at new code until its unwind tables
 * are in (pure bookkeeping): per process held there (the program, and each followed child walked
 * by tables), BPF's SIGURGs the tracer took, the stops it held and the manager's answers; per
 * held thread, the answer it waits for and since when; and how many holds there were, how long
 * they lasted, how many ended at the time limit. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The longest a thread is held at new code for its tables (libLLVM's takes half a second). */
#define CODE_HOLD_MAX_USEC (5ULL * 1000 * 1000)

struct code_hold_process {
        pid_t pid;
        uint64_t signals;               /* BPF's SIGURGs for it taken as stops */
        uint64_t stops;                 /* stops held (each waits for its own answer) */
        uint64_t ready;                 /* the manager's answers (they come in order) */
};

struct code_hold_thread {
        pid_t tid;
        pid_t pid;                      /* its process */
        uint64_t waits_for;             /* its process's ready count that lets it go */
        uint64_t since_usec;
};

struct code_hold_stats {
        uint64_t holds;                 /* threads held and let go */
        uint64_t timeouts;              /* of them, let go at CODE_HOLD_MAX_USEC without an answer */
        uint64_t held_usec;             /* how long, in all */
        uint64_t held_usec_max;         /* the longest */
};

struct code_holds {
        struct code_hold_process *processes;
        size_t n_processes;
        struct code_hold_thread *held;
        size_t n_held;
        struct code_hold_stats stats;
};

/* pid is held at new code from now (a new process of a pid known starts its counts again).
 * -ENOMEM. */
int code_holds_add_process(struct code_holds *c, pid_t pid);
bool code_holds_has_process(const struct code_holds *c, pid_t pid);
/* pid is gone: out, with its threads still held (they are no tracees any longer). */
void code_holds_forget_process(struct code_holds *c, pid_t pid);
/* A SIGURG stop of a thread of pid, BPF having sent sent of them to pid: whether it is one of
 * BPF's not taken yet (then taken), not the program's own. */
bool code_holds_take_signal(struct code_holds *c, pid_t pid, uint64_t sent);
/* Hold tid, a thread of pid, until pid's next answer not waited for. -ENOMEM, -ESRCH (pid not
 * held at new code). */
int code_holds_hold(struct code_holds *c, pid_t tid, pid_t pid, uint64_t now_usec);
/* The manager's answers for pid: n more of its stops may go. */
void code_holds_ready(struct code_holds *c, pid_t pid, uint64_t n);
/* No answer will come for pid: each of its stops may go, now and later. */
void code_holds_release_process(struct code_holds *c, pid_t pid);
/* Whether the held thread at index i may go now (its answer came, or it waited
 * CODE_HOLD_MAX_USEC: then the answers it waited for are not waited for again, by later stops);
 * take it out with code_holds_unhold(). */
bool code_holds_due(struct code_holds *c, size_t i, uint64_t now_usec);
/* The thread at index i goes (counted in stats). */
void code_holds_unhold(struct code_holds *c, size_t i, uint64_t now_usec);
/* tid is gone: out of the held, uncounted. */
void code_holds_forget_thread(struct code_holds *c, pid_t tid);
void code_holds_done(struct code_holds *c);
