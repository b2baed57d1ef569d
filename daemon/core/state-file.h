/* SPDX-License-Identifier: GPL-2.0-only */
/* The targets a daemon leaves recording, written for the next one to adopt: what each is (its pid
 * and the process's start time, which tells a reused pid), how it was attached, its slot. The
 * encoding and decoding are pure; reading and writing the file are the last two functions. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf-types.h"
#include "protocol.h"

#define STATE_FILE_NAME "targets.json"
/* The units and cgroups attach requests watched, as memleakd.conf [target] sections. */
#define STATE_FILE_WATCHES_NAME "watches.conf"
#define STATE_FILE_VERSION 1
#define STATE_FILE_MAX_BYTES (16U << 20)
#define STATE_FILE_MAX_OBJS 64U         /* --obj paths a target may name */
#define STATE_FILE_RING_MAX_BYTES (1ULL << 30)  /* a target's snapshot ring, read back */
/* A kept target's snapshot ring: "ring-<pid>-<start time>.bin" (snapshot-file.h's encoding). */
#define STATE_FILE_RING_PREFIX "ring-"
#define STATE_FILE_RING_SUFFIX ".bin"
/* An exited target's last report: "exited-<pid>-<exit time, usec>.bin" (exited-file.h's encoding). */
#define STATE_FILE_EXITED_PREFIX "exited-"
#define STATE_FILE_EXITED_SUFFIX ".bin"
#define STATE_FILE_EXITED_MAX_BYTES (1ULL << 30)

struct state_target {
        bool kernel;                    /* the kernel target (pid MEMLEAK_KERNEL_TGID, no start
                                         * time: its pins do not outlive a boot) */
        pid_t pid;
        uint64_t start_time;            /* /proc/PID/stat field 22, in clock ticks after boot */
        uint32_t slot;                  /* of BPF's target_slots */
        uint32_t ring_depth;
        enum memleak_unwind unwind;
        bool track_mmap;
        bool follow_forks;
        bool asked_by_user;             /* and by whom (manager-access) */
        uint32_t asker_uid, asker_gid;
        uint64_t attached_usec;         /* CLOCK_REALTIME */
        uint64_t counters_base[_COUNTER_MAX];
        char **objs;                    /* --obj: exactly these were probed */
        size_t n_objs;
        /* a followed child: the pid that forked it, and the target it is in the family of (its
         * pid and start time: linked again at the adoption); 0 (absent from the file): none */
        pid_t forked_from;
        pid_t parent_pid;
        uint64_t parent_start_time;
};

struct state_file {
        uint64_t layout;                /* the BPF layout the targets were recorded with */
        struct state_target *targets;
        size_t n_targets;
};

void state_file_done(struct state_file *s);

/* The JSON text of s (malloc'd), or NULL without memory. */
char *state_file_encode(const struct state_file *s);
/* Parse text (of size n) into *ret: 0, -EBADMSG when it is not a whole, valid state file (with
 * *error, malloc'd, saying what), -ENOMEM. */
int state_file_decode(const char *text, size_t n, struct state_file *ret, char **error);

/* /proc/PID/stat's field 22 from that file's text: 0, or -EINVAL. */
int state_file_parse_start_time(const char *stat_text, uint64_t *ret);

/* Write text to dir/name atomically (a temporary file, fsync'd, renamed over it; the directory
 * fsync'd). -errno. */
int state_file_write(const char *dir, const char *name, const char *text);
/* The same with n bytes of data; without sync, not fsync'd (what a daemon's crash must not lose,
 * not what a machine's must). */
int state_file_write_bytes(const char *dir, const char *name, const void *data, size_t n, bool sync);
/* Read dir/name whole (at most max bytes): 0 and *ret (malloc'd, NUL-terminated) and *ret_n,
 * -ENOENT when there is none, -EFBIG, or -errno. */
int state_file_read(const char *dir, const char *name, uint64_t max, char **ret, size_t *ret_n);
