/* SPDX-License-Identifier: GPL-2.0-only */
/* memleakctl run's program held at its exit for a reachability scan: a thread of its own traces
 * the process (PTRACE_SEIZE with PTRACE_O_TRACEEXIT and PTRACE_O_TRACECLONE, and with
 * PTRACE_O_TRACEFORK and PTRACE_O_TRACEVFORK to hold its children), passes every signal
 * and job-control stop through, and when the process exits (exit_group, a fatal signal, its last
 * thread's exit) holds every thread at its exit stop, before the kernel tears its memory down,
 * scans (reach-scan.h) and lets it go. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "code-holds.h"
#include "module-map.h"
#include "reach-scan.h"

struct exit_hold;
struct memleak_bpf;

/* Trace pid from a new thread; returns once it is traced (or not: -errno, *error says why). The
 * maps skel and lim name stay valid until exit_hold_free(). */
int exit_hold_start(pid_t pid, struct memleak_bpf *skel, const struct map_limits *lim, uint64_t max_pause_ms,
                    bool hold_children, bool hold_code, struct exit_hold **ret, char **error);
/* With hold_children (follow_forks), each process the program forks (fork, vfork), and theirs,
 * is traced from its birth and held stopped at its first instruction until the manager answers
 * here: followed (it goes on, traced, its own children held in turn, until the program exits) or
 * not (let go at once); 3 s at most. A followed child to scan (its blocks recorded exactly) is held
 * at its exit as the program is, scanned (its blocks of its program: after an exec, from its
 * start; else as a process attached while it ran, its parent's blocks its copy holds unknown) and
 * let go. One that ends without an exit stop (SIGKILL while at another stop) is not scanned, nor
 * is one still running when the program exits. With hold_code (the program held at new code, and
 * the child walked by unwind tables), a followed child is held at its execs and new code as the
 * program is (exit_hold_tables_ready()). */
void exit_hold_answer_child(struct exit_hold *h, pid_t child, bool followed, bool scan, bool hold_code);
/* A followed child's scan at its exit: 1 and a copy in *ret, or 1 and *why (malloc'd) when it has
 * none and never will; 0 while it has none yet, or was not to be scanned; -ENOMEM. The last
 * process of that pid's (an answer for a new one forgets it). */
int exit_hold_child_result(struct exit_hold *h, pid_t child, struct reach_result **ret, char **why);
/* With hold_code (its stacks walked by unwind tables), the program is held at each exec and
 * each mapping of code not examined yet (BPF sends the thread SIGURG there, which the tracer
 * takes as a stop and does not deliver) until the manager answers here, once per such event of
 * process pid (the program or a followed child), that the tables it needs are in (n events at
 * once); CODE_HOLD_MAX_USEC at most. Other threads and processes go on meanwhile. */
void exit_hold_tables_ready(struct exit_hold *h, pid_t pid, unsigned n);
/* pid (a followed child) is no longer held at new code: what it waits for now is let go, and
 * BPF sends it no more SIGURGs (the manager detached it: no answer would come). */
void exit_hold_release_code(struct exit_hold *h, pid_t pid);

/* The scan, once the process was held at its exit: 1 and a copy in *ret; 0 while it was not
 * (yet): *why says why not when it never will be (malloc'd, or NULL); -ENOMEM. */
int exit_hold_result(struct exit_hold *h, struct reach_result **ret, char **why);

/* What the process mapped when it was held at its exit, and each file open once (fds[i]: at the
 * first mapping of its file; -errno at the others and where it could not be opened). */
struct perf_map;

struct exit_maps {
        struct module_map map;
        int *fds;
        size_t n_fds;                   /* the map's n when taken (the map may be moved out) */
        struct perf_map *perf_map;      /* its JIT code's names (jit-names.h), or NULL */
};

/* Move the maps taken at the exit into *ret (release with exit_hold_maps_done()): 1, or 0 when the
 * process was not held at its exit (yet). */
int exit_hold_take_maps(struct exit_hold *h, struct exit_maps *ret);
void exit_hold_maps_done(struct exit_maps *m);

/* Stop tracing (a process still running goes on untraced) and free. */
struct exit_hold *exit_hold_free(struct exit_hold *h);
