/* SPDX-License-Identifier: GPL-2.0-only */
/* Whether a user could ptrace a process: its credentials as the kernel weighs them
 * (__ptrace_may_access), its dumpability, and Yama's ptrace_scope. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct proc_creds {
        uid_t uid[4];           /* real, effective, saved, filesystem ("Uid:" in /proc/PID/status) */
        gid_t gid[4];           /* the same ("Gid:") */
        bool dumpable;          /* /proc/PID is its euid's, not root's (a non-dumpable one's is root's) */
};

/* Parse the "Uid:" and "Gid:" lines of a /proc/PID/status text into *ret (dumpable left as is):
 * 0, or -EINVAL when either is missing or malformed. Pure. */
int proc_creds_parse(const char *status, struct proc_creds *ret);

/* pid's credentials: 0, -ESRCH when it is gone, -errno. */
int proc_creds_read(pid_t pid, struct proc_creds *ret);

/* Why a process of uid and gid may not ptrace one with creds c, under Yama's ptrace_scope yama
 * (0: classic, 1: its descendants only: descendant says whether it is one, 2: admins only,
 * 3: none); NULL when it may. Pure. */
const char *proc_creds_ptrace_refusal(const struct proc_creds *c, uid_t uid, gid_t gid, int yama, bool descendant);

/* Yama's kernel.yama.ptrace_scope: 0..3; 0 without Yama. */
int proc_creds_yama_scope(void);

/* Whether pid descends from ancestor (its parent, or its parent's, ... by /proc/PID/stat). */
bool proc_creds_descends_from(pid_t pid, pid_t ancestor);
