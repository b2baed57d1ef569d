/* SPDX-License-Identifier: GPL-2.0-only */
/* Who is who among the tracees of memleakctl run's tracer when it follows forks (pure
 * bookkeeping): the program's own threads are the exit hold's; the children it forks are held at
 * their first stop until memleakd follows them or not; the followed ones, and their threads, are
 * members whose stops are passed through. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How long a child waits at its first stop for the manager's answer before it is let go. */
#define TRACEE_FAMILY_HOLD_MAX_USEC (3ULL * 1000 * 1000)

struct tracee_family_held {
        pid_t pid;
        uint64_t since_usec;
};

/* An answer for a child, maybe before its first stop was seen. */
struct tracee_family_answer {
        pid_t pid;
        bool followed;
};

struct tracee_family {
        struct tracee_family_held *held;        /* stopped at their first instruction */
        size_t n_held;
        pid_t *members;                         /* followed: the processes' tids */
        size_t n_members;
        struct tracee_family_answer *answers;   /* not matched with a held child yet */
        size_t n_answers;
};

/* What to do with a held child now. */
enum tracee_family_verdict {
        TRACEE_FAMILY_WAIT,             /* no answer yet: stays stopped */
        TRACEE_FAMILY_MEMBER,           /* followed: goes on, a member */
        TRACEE_FAMILY_LET_GO,           /* not followed, or waited too long: detach it */
};

/* A child's first stop: held from now. -ENOMEM. */
int tracee_family_hold(struct tracee_family *f, pid_t pid, uint64_t now_usec);
/* The manager's answer for pid (followed or not). -ENOMEM. */
int tracee_family_answer(struct tracee_family *f, pid_t pid, bool followed);
/* The verdict for the held child at index i (an answer found is used up; a member is added). Its
 * hold ends with any verdict but WAIT: take it out with tracee_family_unhold(f, i). -ENOMEM
 * (from adding the member: let it go then). */
int tracee_family_decide(struct tracee_family *f, size_t i, uint64_t now_usec, enum tracee_family_verdict *ret);
void tracee_family_unhold(struct tracee_family *f, size_t i);
/* tid, a new thread of the member process tgid: a member too. -ENOMEM. */
int tracee_family_add_member(struct tracee_family *f, pid_t tid);
bool tracee_family_is_member(const struct tracee_family *f, pid_t tid);
bool tracee_family_is_held(const struct tracee_family *f, pid_t pid);
/* tid is gone: out of the held, the members and the answers. */
void tracee_family_forget(struct tracee_family *f, pid_t tid);
void tracee_family_done(struct tracee_family *f);
