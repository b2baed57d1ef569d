/* SPDX-License-Identifier: GPL-2.0-only */
/* The manager's pending operations, in one list: an attach that waits for the detacher to let
 * its pid go (queued), then for its target's unwind tables (awaiting tables), and a forked child
 * that waits to be followed (queued: for the detacher, or a moment, its loader not done yet).
 * Pure: the manager acts on them; one it is done with is marked done and goes at the end of that
 * sweep (pending_ops_prune()). Nothing a sweep calls sweeps the list again. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct server_request;
struct memleak_request;

enum pending_kind {
        PENDING_ATTACH,                 /* a client's attach request, answered once */
        PENDING_FOLLOW,                 /* a child of a target attached with follow_forks */
        _PENDING_KIND_MAX,
};

enum pending_state {
        PENDING_QUEUED,                 /* not tried yet, or to be tried again */
        PENDING_AWAITING_TABLES,        /* attached; answered once its target's tables are in */
        PENDING_DONE,                   /* answered or given up: goes at the next prune */
        _PENDING_STATE_MAX,
};

struct pending_op {
        enum pending_kind kind;
        enum pending_state state;
        pid_t pid;                      /* the pid to attach, or the child to follow */
        /* an attach */
        struct server_request *request; /* the client waiting for the answer */
        uint64_t id;                    /* its request's id */
        struct memleak_request *parsed; /* queued: the request (owned: freed with the op) */
        uint64_t target_id;             /* awaiting tables: the target made for it */
        /* a follow */
        uint64_t parent_id;             /* the target that forked it */
        unsigned tries;                 /* attaches that found no allocator yet */
        uint64_t not_before_usec;       /* CLOCK_MONOTONIC; 0: once the detacher is idle */
};

struct pending_ops {
        struct pending_op *ops;
        size_t n;
};

/* Append a copy of op (its parsed request is the list's from then on): 0, or -ENOMEM (the
 * caller keeps it). */
int pending_ops_add(struct pending_ops *l, const struct pending_op *op);
/* Drop the operations marked done, the others kept in their order. */
void pending_ops_prune(struct pending_ops *l);
/* How many of kind are in state. */
size_t pending_ops_count(const struct pending_ops *l, enum pending_kind kind, enum pending_state state);
/* The earliest not_before_usec of the queued follows that wait for a time; 0 if none does. */
uint64_t pending_ops_next_due(const struct pending_ops *l);
/* Free them all, their requests too (shutdown: the caller answered the attaches first). */
void pending_ops_done(struct pending_ops *l);
/* "queued", "awaiting-tables", "done"; NULL out of range. */
const char *pending_ops_state_to_string(enum pending_state s);
