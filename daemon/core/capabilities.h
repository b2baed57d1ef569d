/* SPDX-License-Identifier: GPL-2.0-only */
/* The capabilities memleakd keeps once it has started: those its work needs, no other. */
#pragma once

/* Drop every capability but CAP_SYS_ADMIN (uprobes, mounts, seccomp filters read), CAP_BPF and
 * CAP_PERFMON (BPF), CAP_SYS_PTRACE (maps, memory and stops of other users' processes),
 * CAP_DAC_READ_SEARCH (their files) and CAP_SYSLOG (/proc/kallsyms' addresses) from the calling
 * thread's effective, permitted and inheritable sets and the ambient set, and from the bounding
 * set too when it may (CAP_SETPCAP). Call it before any other thread starts: threads made after
 * inherit the trimmed sets. Never adds one. 0 or -errno (the sets as they were, or trimmed in part). */
int capabilities_trim(void);
