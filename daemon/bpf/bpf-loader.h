/* SPDX-License-Identifier: GPL-2.0-only */
/* Open, size and load the memleak BPF object; attach probes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "bpf-types.h"
#include "macro.h"

struct bpf_link;
struct memleak_bpf;

struct bpf_sizes {
        uint32_t max_targets;
        uint32_t max_allocs;
        uint32_t max_stacks;
        uint32_t max_combined;
        uint32_t max_mmaps;
        uint32_t max_stack_depth;       /* frames per stack-map entry, <= MEMLEAK_MAX_STACK_DEPTH */
        uint32_t n_cpus;                /* possible CPUs: a per-CPU map's copies (0: counted as 1) */
};

/* Open the BPF object and size its maps; the programs of its users can be turned off before
 * bpf_loader_load() (bpf_loader_object()). -errno. */
int bpf_loader_open(const struct bpf_sizes *sizes, struct memleak_bpf **ret);
/* The generation of this load's probe programs: a target's slot names it while they record
 * the target (struct target_slot's gen). */
uint32_t bpf_loader_probe_gen(const struct memleak_bpf *skel);
/* Verify and load the programs, create the maps. -errno (EPERM without the capabilities). */
int bpf_loader_load(struct memleak_bpf *skel);
void bpf_loader_destroy(struct memleak_bpf *skel);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct memleak_bpf *, bpf_loader_destroy)

int bpf_loader_targets_fd(struct memleak_bpf *skel);
/* target_slots: the targets' settings by slot (struct target_slot), for the uprobe programs. */
int bpf_loader_target_slots_fd(struct memleak_bpf *skel);
/* alloc_table (struct alloc_slot, mmapable): the heap blocks whose windows had room; allocs: the
 * others, and the kernel target's objects. */
int bpf_loader_alloc_table_fd(struct memleak_bpf *skel);
/* n blocks of process targets were deleted from the allocs map by the daemon: BPF's count of
 * them (alloc_overflow) is lowered, as BPF lowers it for each it deletes. */
void bpf_loader_overflow_removed(struct memleak_bpf *skel, uint64_t n);
/* n stacks were deleted from the stack table: the threads' walk memos (which name a stack by its
 * id) made before now are not used again. Called after the deletions. */
void bpf_loader_stacks_purged(struct memleak_bpf *skel, uint64_t n);
/* n of the stacks deleted were put back. */
void bpf_loader_stacks_restored(struct memleak_bpf *skel, uint64_t n);
/* About how many stacks the stack table holds: those BPF added less those deleted. */
uint64_t bpf_loader_stacks_held(struct memleak_bpf *skel);
int bpf_loader_allocs_fd(struct memleak_bpf *skel);
int bpf_loader_combined_fd(struct memleak_bpf *skel);
/* Attach the iterator of the stack table (kept in the skeleton, gone with it). Returns 0 or
 * -errno, -EOPNOTSUPP where this kernel would not load the iterator's program (map_iter_probe());
 * without it, the map is read by batch look-ups. */
int bpf_loader_attach_iters(struct memleak_bpf *skel);
/* The iterator's link fd (bpf_iter_create() on it reads the stack table whole: struct
 * stack_iter_record and its frames), or -EBADF when not attached. */
int bpf_loader_stacks_iter_fd(struct memleak_bpf *skel);
/* The stack table's value size: struct stack_trace holding max_stack_depth frames. */
size_t bpf_loader_stacks_value_size(struct memleak_bpf *skel);
int bpf_loader_stacks_fd(struct memleak_bpf *skel);
/* The unwind tables (a map of maps, UNWIND_TABLES_MAX slots), the targets walked by them and
 * their mappings (UNWIND_MAPPINGS_MAX per target slot). */
int bpf_loader_unwind_tables_fd(struct memleak_bpf *skel);
int bpf_loader_unwind_files_fd(struct memleak_bpf *skel);
int bpf_loader_unwind_targets_fd(struct memleak_bpf *skel);
int bpf_loader_unwind_mappings_fd(struct memleak_bpf *skel);
int bpf_loader_mmaps_fd(struct memleak_bpf *skel);
/* File mappings of targets, recorded as they are made (struct file_mapping), and how many
 * did not fit (one __u64). */
int bpf_loader_file_mappings_fd(struct memleak_bpf *skel);
/* The loaded object, for the programs kernel-target.c links by name. */
struct bpf_object *bpf_loader_object(struct memleak_bpf *skel);

/* Whether probes are uprobe_multi links (Linux 6.6+); else one perf-event uprobe per site. */
bool bpf_loader_uprobe_multi(struct memleak_bpf *skel);
/* Whether malloc's and calloc's sites may take one uprobe session each (Linux 6.12+, with uprobe_multi)
 * instead of an entry and a return probe: the session skips the return of a call with nothing to
 * record (nested, filtered out, or unsampled). */
bool bpf_loader_uprobe_session(struct memleak_bpf *skel);

/* Without uprobe_multi: kind's entry program (or the return program) at offset of path, for
 * pid only, with attach cookie (the target's slot, MEMLEAK_COOKIE_OF_SLOT(), and an entry's
 * struct alloc_site entry_cookie). Returns 0 with *ret set, or -errno. */
int bpf_loader_attach_uprobe(struct memleak_bpf *skel, enum alloc_kind kind, bool is_return, int pid,
                             const char *path, uint64_t offset, uint64_t cookie, struct bpf_link **ret);

/* Place kind's entry program (or, with is_return, the return program) at offsets[0..n) of
 * path, for pid only, as one uprobe_multi link; cookies[i] (or none if NULL) goes with
 * offsets[i]. Returns the link's fd or -errno. */
int bpf_loader_attach_uprobes(struct memleak_bpf *skel, enum alloc_kind kind, bool is_return, int pid,
                              const char *path, const uint64_t *offsets, const uint64_t *cookies, size_t n);

/* Place the session program of malloc and calloc at offsets[0..n) of path, for pid only, as one
 * uprobe session link, with cookies as above (calloc's sites' with MEMLEAK_COOKIE_CALLOC).
 * Returns the link's fd, -EOPNOTSUPP without sessions, or -errno. */
int bpf_loader_attach_alloc_sessions(struct memleak_bpf *skel, int pid, const char *path, const uint64_t *offsets,
                                      const uint64_t *cookies, size_t n);

/* Remove, from every process mapping path, the breakpoints at offsets that no probe wants there:
 * those a target's child inherited when it forked. pid: the target (its own stay). Blocks for a
 * grace period (tens of milliseconds): call it off the event loop. A no-op with perf-event
 * uprobes, which remove themselves from a child at its first hit. */
int bpf_loader_clear_inherited_uprobes(struct memleak_bpf *skel, pid_t pid, const char *path,
                                       const uint64_t *offsets, size_t n);

/* Fork events of targets (struct fork_event) come through this ring buffer once the program is
 * attached. */
struct bpf_link *bpf_loader_attach_fork_watch(struct memleak_bpf *skel);
int bpf_loader_forks_fd(struct memleak_bpf *skel);

/* The program that forgets a target's blocks, mappings and per-stack bytes when it execs another
 * program (they went with its old image): linked while some process is traced. */
struct bpf_link *bpf_loader_attach_exec_forget(struct memleak_bpf *skel);
/* The program that says a target mapped code of a file whose unwind table is not loaded (the
 * fork ring, FORK_EVENT_CODE_MAPPED). */
struct bpf_link *bpf_loader_attach_code_watch(struct memleak_bpf *skel);
/* The processes held at new code until its tables are in (by pid: the SIGURGs sent, __u64). */
int bpf_loader_code_holds_fd(struct memleak_bpf *skel);


