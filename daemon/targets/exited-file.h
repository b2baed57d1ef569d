/* SPDX-License-Identifier: GPL-2.0-only */
/* An exited target's last report as bytes, and back: what a restart keeps of a process that
 * exited (its frozen rows with their addresses, what it mapped, its counters, its ring's sums,
 * its stacks' verdicts at its exit, who it was and the target it was followed from, the names of the JIT code its frames are in,
 * its scan at exit as bytes), with a checksum. Pure: no I/O (target-exited.c reads and writes
 * the files). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "elf-inspect.h"
#include "target.h"

/* Most of each a file may hold (a decoder allocates no more than the bytes it was given allow). */
#define EXITED_FILE_PATH_MAX 4096U
#define EXITED_FILE_RING_DEPTH_MAX 100000U       /* config.h's CONFIG_RING_DEPTH_MAX */

/* What identified a mapped file when its target exited, to tell at a restart whether the file at
 * its path is still that one: its GNU build ID, else its size and time of change as well as its
 * device and inode. */
struct exited_file_id {
        bool known;                     /* the file at its path was the one mapped (else: none of
                                         * its frames is named after a restart) */
        uint8_t build_id[ELF_BUILD_ID_MAX];
        uint32_t build_id_len;          /* 0: it has none */
        uint64_t size;
        int64_t mtime_ns;
};

/* t (exited: its frozen rows, its modules, its ring's sums, t->verdicts, t->parent_link, the entries of
 * t->perf_map that name its rows' frames, t->exit_scan) encoded with ids[i] for
 * t->modules.mappings[i]: *ret (malloc'd) and *ret_n. -ENOMEM. */
int exited_file_encode(const struct target *t, const struct exited_file_id *ids, void **ret, size_t *ret_n);

/* Fill t (zeroed but for pidfd -1 and jit_source.root_fd -EBADF; no target resource held) from
 * data (n bytes), *ret_ids (malloc'd, one for each of t->modules.mappings) with it. 0; -EBADMSG
 * when data is not a whole record this encoding wrote (cut, altered, out of bounds); -ENOMEM. On
 * failure t may hold part of it: target_free() it. Its phase is exited, its allocator a constant
 * string; its files are not registered (target-exited.c does that); t->perf_map holds the
 * entries kept (NULL: none), t->exit_scan the bytes kept, not looked into; parent_id is 0 (the
 * caller links it again by t->parent_link); t->verdicts the verdicts kept (NULL: none, as in a
 * file of the version before, "MEMEXIT2", read as one without them). A file of an earlier version
 * still (another magic) is -EBADMSG. */
int exited_file_decode(const void *data, size_t n, struct target *t, struct exited_file_id **ret_ids);
