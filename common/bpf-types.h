/* SPDX-License-Identifier: MIT */
/* Map keys, values and enums shared by bpf/memleak.bpf.c and the daemon. */
#pragma once

#ifdef __BPF__
/* vmlinux.h provides __u32/__u64 on the BPF side. */
#else
#include <linux/types.h>
#endif

/* The 64-bit mixer (MurmurHash3's finalizer) BPF's tables hash their keys with, and the daemon
 * too where it finds a block's slot in BPF's allocation table itself: one definition, so that
 * both sides agree. */
static inline __attribute__((always_inline)) __u64 memleak_mix64(__u64 h)
{
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
        h *= 0xc4ceb9fe1a85ec53ull;
        h ^= h >> 33;
        return h;
}

/* Where a block of process tgid at addr hashes in the allocation table (bpf/alloc-table.h). */
static inline __attribute__((always_inline)) __u32 memleak_alloc_hash(__u32 tgid, __u64 addr)
{
        return (__u32)memleak_mix64(addr ^ ((__u64)tgid << 40));
}

/* Deepest user stack we record; frames past this are cut (counted as depth-limited). */
#define MEMLEAK_MAX_STACK_DEPTH 127

/* The kernel target's key in the targets, allocs and combined maps. No process has tgid 0 (the
 * idle tasks do not allocate through a target's probes), so it cannot collide with a user target. */
#define MEMLEAK_KERNEL_TGID 0

/* Which address space an outstanding allocation's address lives in: the kernel's slab objects,
 * struct page pointers and percpu pointers are different kinds of address and must not meet in
 * one key (a percpu pointer may equal a slab address numerically). */
enum alloc_space {
        ALLOC_SPACE_USER = 0,           /* a user target's heap */
        ALLOC_SPACE_SLAB,               /* kmalloc / kmem_cache_alloc object */
        ALLOC_SPACE_PAGE,               /* struct page * from the page allocator */
        ALLOC_SPACE_PERCPU,             /* __percpu pointer from pcpu_alloc */
        ALLOC_SPACE_MMAP,               /* a user target's anonymous mapping (--mmap): in the
                                         * mmaps map, and its own rows in the combined map */
};

/* Page size the kernel rounds mmap/munmap/mremap lengths to (x86_64). */
#define MEMLEAK_PAGE_SIZE 4096ULL

/* Longest comm the kernel keeps (TASK_COMM_LEN), terminating NUL included. */
#define MEMLEAK_COMM_LEN 16

/* Which allocator entry point a probe sits on: selects the entry/return semantics. */
enum alloc_kind {
        ALLOC_KIND_MALLOC = 0,
        ALLOC_KIND_CALLOC,
        ALLOC_KIND_REALLOC,
        ALLOC_KIND_REALLOCARRAY,
        ALLOC_KIND_POSIX_MEMALIGN,
        ALLOC_KIND_ALIGNED_ALLOC,
        ALLOC_KIND_MEMALIGN,
        ALLOC_KIND_VALLOC,
        ALLOC_KIND_PVALLOC,
        ALLOC_KIND_FREE,
        ALLOC_KIND_NEW,                 /* C++ operator new / new[], every form: size first */
        ALLOC_KIND_DELETE,              /* C++ operator delete / delete[], every form: pointer first */
        ALLOC_KIND_RESIZE,              /* jemalloc xallocx(ptr, size, extra, flags): grows or shrinks
                                         * in place, returns the real size (< size: not resized) */
        ALLOC_KIND_MMAP,                /* mmap(addr, len, prot, flags, fd, off): anonymous only */
        ALLOC_KIND_MUNMAP,              /* munmap(addr, len): any part of any tracked mappings */
        ALLOC_KIND_MREMAP,              /* mremap(old, old_size, new_size, flags, ...) */
        _ALLOC_KIND_MAX,
};

/* An entry probe's attach cookie: where the arguments its program reads are. 0: in the calling
 * convention's registers. Otherwise the probe sits past instructions that copied some elsewhere
 * (daemon/elf/probe-placement.h): MEMLEAK_ARGS_MOVED, and the x86-64 register number holding
 * argument i (0 rax, 1 rcx, 2 rdx, 3 rbx, 5 rbp, 6 rsi, 7 rdi, 8-15 r8-r15) in bits [4i, 4i + 4),
 * for the first MEMLEAK_COOKIE_ARGS arguments. */
#define MEMLEAK_ARGS_MOVED (1ULL << 32)
/* An alloc_session program's site is calloc's (its size is a0 * a1), not malloc's. */
#define MEMLEAK_COOKIE_CALLOC (1ULL << 33)
#define MEMLEAK_COOKIE_ARGS 4
#define MEMLEAK_ARG_REGISTER(cookie, i) ((unsigned)((cookie) >> (4 * (i))) & 15u)
/* Every uprobe's cookie (entry and return) also carries its target's slot in target_slots, in
 * bits [40, 56): its programs find the target's settings by an array index, not a hash look-up. */
#define MEMLEAK_COOKIE_SLOT_SHIFT 40
#define MEMLEAK_COOKIE_SLOTS (1u << 16)
#define MEMLEAK_COOKIE_OF_SLOT(slot) ((__u64)(slot) << MEMLEAK_COOKIE_SLOT_SHIFT)
#define MEMLEAK_COOKIE_SLOT(cookie) ((__u32)((cookie) >> MEMLEAK_COOKIE_SLOT_SHIFT) & (MEMLEAK_COOKIE_SLOTS - 1))

/* Every way an event can be counted, lost or distorted (per-CPU array index). */
enum memleak_counter {
        COUNTER_ALLOCS = 0,             /* allocations recorded */
        COUNTER_FREES,                  /* frees that matched a recorded allocation */
        COUNTER_ALLOCS_FILTERED,        /* allocations outside the target's size filter */
        COUNTER_ALLOCS_FAILED,          /* allocator returned NULL / error: nothing changed */
        COUNTER_NESTED_CALLS,           /* allocator entries inside another (counted once, at the outer) */
        COUNTER_UNWIND_WALKS,           /* stacks taken by the unwind-table walker */
        COUNTER_UNWIND_STOP_DEPTH,      /* walks cut at max_stack_depth */
        COUNTER_UNWIND_STOP_NO_CFI,     /* walks cut at a pc without CFI */
        COUNTER_UNWIND_STOP_UNCOMPUTABLE, /* walks that met a rule the walker cannot compute */
        COUNTER_UNWIND_STOP_UNREADABLE, /* walks stopped by unreadable stack memory */
        COUNTER_UNWIND_STOP_NO_TABLE,   /* walks that met an object whose table is not loaded */
        COUNTER_LOST_ALLOCS_MAP_FULL,   /* outstanding-allocations map full */
        COUNTER_LOST_COMBINED_MAP_FULL, /* per-stack totals: no row free in a stack's window */
        COUNTER_LOST_NO_THREAD_STATE,   /* no per-thread state for a call (task storage refused:
                                         * out of memory, or busy in a nested program) */
        COUNTER_STACK_EFAULT,           /* bpf_get_stack -EFAULT: the stack was unreadable */
        COUNTER_STACK_TABLE_FULL,       /* a new stack found the stack table full */
        COUNTER_STACK_HASH_CLASH,       /* every key a new stack may take held other stacks */
        COUNTER_STACK_NO_SCRATCH,       /* no buffer to capture the stack in (task storage refused,
                                         * interrupts nested too deep) */
        COUNTER_STACK_OTHER,            /* bpf_get_stack: any other error */
        COUNTER_RETURN_WITHOUT_ENTRY,   /* return probe with no matching entry */
        COUNTER_FREE_UNKNOWN,           /* free of an address never seen (pre-attach or filtered) */
        COUNTER_INFLIGHT_STALE,         /* entry left behind by a call that never returned */
        COUNTER_LOST_MMAPS_MAP_FULL,    /* --mmap: mappings map full, a mapping went untracked */
        COUNTER_LOST_MMAP_RANGES,       /* --mmap: an unmap touched more tracked mappings than one
                                         * call can split; the rest stay outstanding */
        COUNTER_LOST_FILE_MAPPINGS,     /* run: a file mapping the recording map had no room for
                                         * (frames in that file may stay unresolved) */
        COUNTER_LOST_FORK_EVENTS,       /* a target forked (exec'd, mapped new code) and the ring
                                         * buffer had no room to say so: that child keeps paying
                                         * for the probes (the maps are read at the next tick) */
        COUNTER_ALLOCS_UNSAMPLED,       /* --sample-bytes: allocations that crossed no sample point */
        COUNTER_FREE_UNSAMPLED,         /* --sample-bytes: frees of addresses not recorded (mostly
                                         * unsampled blocks) */
        COUNTER_UNWIND_REPEATS,         /* walks (in unwind_walks) whose stack the thread's memo
                                         * of a walk from the same registers over the same words gave */
        COUNTER_FREED_BY_EXEC,          /* blocks and mappings of a target's image that its exec of
                                         * another program took away with it */
        _COUNTER_MAX,
};

/* The counters map holds a row of _COUNTER_MAX counters for each target (counted by the programs
 * that record it) and the daemon's total is the sum of the rows: index row * _COUNTER_MAX + c. A
 * process target's row is its slot of target_slots; the kernel target's and that of events no
 * target owns come after the max_targets slots. */
#define MEMLEAK_COUNTER_ROW_KERNEL(max_targets) ((__u32)(max_targets))
#define MEMLEAK_COUNTER_ROW_OTHER(max_targets) ((__u32)(max_targets) + 1)
#define MEMLEAK_COUNTER_ROWS(max_targets) ((__u32)(max_targets) + 2)

/* A traced process forked a child (not a thread, not a vfork sharing its memory): the child
 * inherited the breakpoints of its parent's probes, which memleakd then clears. */
struct fork_event {
        __u32 parent_tgid;      /* as the daemon's pid namespace numbers them */
        __u32 child_tgid;       /* 0: not a fork: parent_tgid exec'd or mapped code (exec_kind) */
        __u32 shares_memory;    /* the child runs in the parent's memory until it execs (vfork,
                                 * posix_spawn, system): it inherited no breakpoints */
        __u32 exec_kind;        /* with child_tgid 0: enum fork_event_exec */
        char comm[MEMLEAK_COMM_LEN];    /* the child's name; after an exec, the new program's */
};
enum fork_event_exec {
        FORK_EVENT_EXEC_LEADER = 1,     /* by its leader: its probes stay */
        FORK_EVENT_EXEC_THREAD = 2,     /* by another thread, which took the leader's pid: its
                                         * probes' links name the old leader and are gone */
        FORK_EVENT_CODE_MAPPED = 3,     /* not an exec: it mapped code of a file whose unwind
                                         * table is not loaded (not in unwind_files) */
};
#define MEMLEAK_FORK_RING_BYTES (64 * 1024)

/* The cgroups watched (attach "unit" or "cgroup"), in BPF's `watched_cgroups`, keyed by the cgroup
 * v2 id (the directory's inode number): a process that enters one by a fork or execs in it while
 * no target yet is said in the `cgroup_events` ring; an event the full ring could not take is
 * counted in `lost` (the daemon shows it with the watch's missed processes). */
struct cgroup_watch_entry {
        __u32 watch_id;         /* the daemon's */
        __u32 pad;
        __u64 lost;             /* events the ring had no room for */
};
struct cgroup_event {
        __u32 tgid;             /* as the daemon's pid namespace numbers it */
        __u32 watch_id;
        __u64 cgroup_id;
        __u32 kind;             /* enum cgroup_event_kind */
        __u32 pad;
        char comm[MEMLEAK_COMM_LEN];
};
enum cgroup_event_kind {
        CGROUP_EVENT_FORK = 1,  /* forked into a watched cgroup by a process not traced */
        CGROUP_EVENT_EXEC = 2,  /* exec'd in a watched cgroup, not traced yet (moved in before) */
        CGROUP_EVENT_PROGRAM = 3, /* exec'd a program watched (memleakd.conf's [target] exe= or
                                   * comm=: watched_exes, watched_comms), cgroup_id 0 */
};
#define MEMLEAK_PROGRAM_WATCHES_MAX 64  /* CONFIG_TARGETS_MAX */
#define MEMLEAK_CGROUP_WATCHES_MAX 256
#define MEMLEAK_CGROUP_RING_BYTES (64 * 1024)

/* One stack in the stack table (bpf/stack-table.h), keyed by a __u64 id that hashes its frames.
 * Ids below zero mean "no stack": a negated errno (-EFAULT unreadable, -ENOSPC table full,
 * -EEXIST hash clash, -ENOMEM no capture buffer). The map's values hold max_stack_depth frames,
 * not always all MEMLEAK_MAX_STACK_DEPTH: read it with a buffer of this full size. */
struct stack_trace {
        __u32 depth;            /* frames in ips[], innermost first */
        __u32 stop;             /* 0: the walk ended normally */
        __u64 ips[MEMLEAK_MAX_STACK_DEPTH];
};

/* The size of a stack-table value holding depth frames. */
#define STACK_TRACE_BYTES(depth) (sizeof(struct stack_trace) - (MEMLEAK_MAX_STACK_DEPTH - (depth)) * sizeof(__u64))

/* Per-target settings, keyed by tgid in the `targets` map. */
struct target_config {
        __u64 min_size;         /* 0: no lower bound */
        __u64 max_size;         /* 0: no upper bound */
        /* The kernel target only: record only allocations made by this process (tgid, as the
         * daemon's pid namespace numbers it) and/or by tasks with this comm. */
        __u32 filter_pid;       /* 0: any process */
        __u32 filter_comm_set;  /* 0: any comm */
        char filter_comm[MEMLEAK_COMM_LEN];
        /* Processes only: 0 records every allocation; N records the allocations that cross one of
         * the sample points each thread draws at exponentially distributed gaps of mean N bytes,
         * each weighing N per point it crosses (those of N bytes or more: their size, always). */
        __u64 sample_bytes;
        /* CLOCK_MONOTONIC when the daemon registered the target: a thread's in-flight state from
         * before (a call entered while an earlier target of the same pid was attached) is stale. */
        __u64 registered_ns;
        /* Its row of the counters map (MEMLEAK_COUNTER_ROW_*): where the tracepoint programs,
         * which find it by tgid, count its events. */
        __u32 counter_row;
        /* Processes only: its slot (as in its probes' cookies), where target_blocks counts the
         * heap blocks it holds in the allocation table (bpf/alloc-table.h and the allocs map). */
        __u32 slot;
        /* Processes only: once it holds limit_blocks blocks in the allocation table (its share
         * times auto_sample_percent; 0: no limit), BPF itself switches an exact target to
         * sampling at a mean of limit_sample_bytes, at its next allocator call, and says so in its
         * struct target_fill: a burst that fills its share between two of the daemon's checks is
         * sampled, not dropped. Should it go on filling (a burst the first mean does not fit),
         * BPF raises its mean fourfold each time it passes half the room left to limit_share
         * blocks (its whole share), whatever its mean then (its own or the daemon's). */
        __u64 limit_blocks;
        __u64 limit_sample_bytes;
        __u64 limit_share;
};
/* One change of a target's mean made by BPF (struct target_fill). */
struct fill_raise {
        __u64 sample_bytes;             /* the mean it set; 0: not written yet (written last) */
        __u64 ns;                       /* when: CLOCK_MONOTONIC (bpf_ktime_get_ns) */
        __s64 at;                       /* the blocks at which it set it (its step) */
};

/* The changes BPF makes to one target's mean, logged one by one: each is at least fourfold, from
 * a mean of 2 bytes or more, to MEMLEAK_BPF_MAX_SAMPLE_BYTES (2^32) at most: 16 at most. */
#define MEMLEAK_FILL_RAISES_MAX 20

/* What BPF keeps of a process target's share of the allocation table, in target_blocks[slot]:
 * the blocks it holds there (added to and taken from atomically by every CPU), and each change
 * of its mean BPF made at its limits (struct target_config): its switch to sampling and every
 * raise after it, in the order made, and the blocks at which it raises it next. The daemon
 * zeroes it before a target takes the slot, and notes each of BPF's changes as if it had made
 * it, from the log (none missed between two of its checks: a burst makes several at once). */
struct target_fill {
        __s64 blocks;                   /* below zero for an instant at most (a free seen first) */
        __u64 switched_sample_bytes;    /* 0: never switched; else the latest mean BPF set */
        __s64 next_at;                  /* 0: none yet; else where BPF raises the mean next,
                                         * unless limit_blocks is later (the daemon's step) */
        __u64 raises;                   /* the changes BPF made (the first MEMLEAK_FILL_RAISES_MAX
                                         * of them in log[]) */
        struct fill_raise log[MEMLEAK_FILL_RAISES_MAX];
};

/* The sparsest mean BPF raises a target to: MEMLEAK_MAX_SAMPLE_BYTES (common/protocol.h). */
#define MEMLEAK_BPF_MAX_SAMPLE_BYTES (1ULL << 32)

/* sample_bytes is at most MEMLEAK_MAX_SAMPLE_BYTES (common/protocol.h, 2^32): N times the gap
 * table's entries (bpf/sample.h) stays far below 2^64. */

/* A process target's settings where its probes' programs find them: target_slots[slot], slot
 * being in its probes' cookies. tgid 0: a free slot (a program of an earlier target that had the
 * slot, still running or not yet unlinked, finds another tgid or none). The targets map, keyed
 * by tgid, holds the same settings for the tracepoint programs, which have no cookie. gen: which
 * load's probe programs record it (their probe_gen): after a restart, the earlier daemon's
 * until the new one's probes on the target, placed alongside, have their unwind tables. */
struct target_slot {
        __u32 tgid;
        __u32 gen;
        struct target_config cfg;
};

/* A slot of alloc_table, where a process target's heap blocks are kept while their windows
 * have room (bpf/alloc-table.h); the rest go to the allocs map. */
enum alloc_slot_state {
        ALLOC_SLOT_EMPTY = 0,           /* never used: a search stops here */
        ALLOC_SLOT_BUSY,                /* being written or taken by one CPU */
        ALLOC_SLOT_LIVE,                /* holds the block (tgid, addr) */
        ALLOC_SLOT_FREE,                /* held a block that went: reusable, a search goes on */
        ALLOC_SLOT_RETIRING,            /* combined table only: a row the daemon found at zero and
                                         * frees if it is still so at its next pass; an add brings
                                         * it back to LIVE, a take still finds it */
};
#define ALLOC_TABLE_WINDOW 8            /* slots a block may sit in, from its hash's */
#define ALLOC_TABLE_SLOTS_MAX (1u << 19)

/* One outstanding allocation, keyed by struct alloc_key. */
struct alloc_key {
        __u32 tgid;
        __u32 space;            /* enum alloc_space */
        __u64 addr;
};

struct alloc_info {
        __u64 size;
        __u64 timestamp_ns;     /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
        __s64 stack_id;         /* < 0: -errno, no stack (struct stack_trace) */
        __u64 weight;           /* bytes it stands for in the totals: size, or a sampled block's
                                 * estimate (sample_bytes per sample point it crossed); the
                                 * allocations it stands for: MEMLEAK_WEIGHT_ALLOCS() */
};

struct alloc_slot {
        __u64 word;             /* ALLOC_SLOT_WORD(tgid, state): claimed whole by compare-and-swap */
        __u64 addr;
        struct alloc_info info;
};
#define ALLOC_SLOT_WORD(tgid, state) ((__u64)(tgid) << 32 | (state))
#define ALLOC_SLOT_STATE(word) ((__u32)(word))
#define ALLOC_SLOT_TGID(word) ((__u32)((word) >> 32))

/* How many allocations a block recorded with this weight stands for: 1 exact, else about
 * weight / size (at least 1). */
#define MEMLEAK_WEIGHT_ALLOCS(weight, size) \
        ((size) == 0 || (weight) <= (size) ? 1 : ((weight) + (size) / 2) / (size))

/* Per-stack outstanding totals ("combined allocs"): a (tgid, space, stack) is a row of the combined
 * table, an array searched by open addressing as alloc_table is (bpf/combined-table.h) and read in
 * place by the daemon each snapshot tick, in one pass over its memory. */
struct combined_key {
        __u32 tgid;
        __u32 space;            /* ALLOC_SPACE_MMAP for mappings, else 0 */
        __s64 stack_id;
};

/* Two rows to a cache line: the word says whose row it is and its state, claimed whole by
 * compare-and-swap with the states of enum alloc_slot_state. */
struct combined_row {
        __u64 word;             /* COMBINED_ROW_WORD(tgid, space, state) */
        __s64 stack_id;
        __u64 bytes;
        __u64 allocs;
};
#define COMBINED_ROW_WORD(tgid, space, state) ((__u64)(tgid) << 32 | (__u64)(space) << 16 | (state))
#define COMBINED_ROW_STATE(word) ((__u32)(word) & 0xffffu)
#define COMBINED_ROW_SPACE(word) ((((__u32)(word)) >> 16) & 0xffu)
/* A key's bytes are spread over up to COMBINED_STRIPES rows, one per stripe of CPUs (the row's
 * space carries its stripe in its high byte), so that CPUs allocating from one stack at once do
 * not all update one cache line; a reader sums them. A block keeps the stripe its bytes went to
 * in the low bits of its timestamp (ns: an age loses nothing), where its free finds it. */
#define COMBINED_STRIPES 8u
#define COMBINED_SPACE_STRIPE(space, stripe) ((space) | (stripe) << 8)
#define COMBINED_ROW_STRIPE(word) (((__u32)(word)) >> 24)
#define ALLOC_INFO_STRIPE(timestamp_ns) ((__u32)(timestamp_ns) & (COMBINED_STRIPES - 1))
#define COMBINED_ROW_TGID(word) ((__u32)((word) >> 32))
#define COMBINED_TABLE_WINDOW 16        /* rows a (tgid, space, stack) may sit in, from its hash's */

/* A stack as the dump_stacks iterator writes it: this, then depth frames (__u64 each). */
struct stack_iter_record {
        __u64 id;
        __u32 depth;
        __u32 stop;             /* enum unwind_stop */
};

/* In-flight call state between an allocator's entry and its return: one per thread, in BPF task
 * storage (bpf/memleak.bpf.c's struct thread_state). */
#define INFLIGHT_ACTIVE 1u              /* inside an allocator call of a target */
#define INFLIGHT_UNSAMPLED 2u           /* --sample-bytes: the allocation crossed no sample point */

struct inflight {
        __u64 size;
        __u64 arg;              /* realloc: old pointer; posix_memalign: memptr */
        __u64 entry_sp;         /* stack pointer at the outermost entry: detects stale entries */
        __u64 entry_ns;         /* when the outermost call entered */
        __u32 kind;             /* enum alloc_kind of the outermost call */
        __u32 depth;            /* nested allocator entries below the outermost */
        __u32 tgid;             /* target, as the daemon sees it */
        __u32 flags;            /* INFLIGHT_* */
        __u64 arg2;             /* mremap: old size */
        __u64 weight;           /* the bytes the allocation stands for (see struct alloc_info) */
};

/* A file mapping a target made (mmap of a file, by its loader or by the kernel at exec), keyed by
 * struct file_mapping_key, recorded as it is made: a program that exits before the daemon reads
 * /proc/PID/maps still has its frames resolved (memleakctl run). */
#define MEMLEAK_FILE_MAPPINGS_MAX 16384

struct file_mapping_key {
        __u32 tgid;
        __u32 pad;
        __u64 start;
};

struct file_mapping {
        __u64 end;
        __u64 pgoff;            /* file offset of start, in bytes */
        __u64 dev;              /* the mapped file's inode: its superblock's s_dev (kernel encoding,
                                 * major << 20 | minor) and number, as fstat() on its path shows them */
        __u64 ino;
        __u64 mm;               /* the address space (an exec starts a new one) */
        __u64 timestamp_ns;     /* bpf_ktime_get_ns(): a later mapping covers what it overlaps */
};

/* Unwind tables: an object's call-frame information as compact x86-64 rows sorted by address
 * (daemon/unwind builds them from .eh_frame/.debug_frame, bpf/unwind.h walks them). */
/* How to find the canonical frame address (the caller's rsp just before its call instruction). */
enum unwind_cfa_rule {
        UNWIND_CFA_NONE = 0,            /* no CFI covers these addresses: fall back to rbp, or stop */
        UNWIND_CFA_RSP,                 /* CFA = rsp + cfa_offset */
        UNWIND_CFA_RBP,                 /* CFA = rbp + cfa_offset */
        UNWIND_CFA_RSP_DEREF,           /* CFA = *(u64 *)(rsp + cfa_offset): a signal trampoline's
                                         * saved rsp in the ucontext the kernel pushed */
        UNWIND_CFA_RBP_DEREF,           /* CFA = *(u64 *)(rbp + cfa_offset): a function that realigns
                                         * its stack (gcc's DRAP), after its prologue */
        UNWIND_CFA_PLT,                 /* CFA = rsp + cfa_offset, plus 8 when (pc & 15) >= 11: the
                                         * entries of a lazy .plt (push at 6, jmp at 11) */
        UNWIND_CFA_REGISTER,            /* CFA = another register + offset (r10 during a DRAP
                                         * prologue): only the interrupted frame's registers know it */
        UNWIND_CFA_EXPRESSION,          /* any other DWARF expression: the walker cannot compute it */
        _UNWIND_CFA_RULE_MAX,
};

/* Where the frame keeps a register of its caller (the return address, or rbp). */
enum unwind_reg_rule {
        UNWIND_REG_UNDEFINED = 0,       /* not recoverable; for the return address: the outermost
                                         * frame (_start, a thread's first), the walk ends cleanly */
        UNWIND_REG_SAME_VALUE,          /* this frame did not change it: the register still holds it */
        UNWIND_REG_AT_CFA,              /* saved at CFA + offset */
        UNWIND_REG_AT_RSP,              /* saved at rsp + offset (a signal frame's ucontext) */
        UNWIND_REG_AT_RBP,              /* saved at rbp + offset (a realigned frame) */
        UNWIND_REG_OTHER,               /* a rule this table does not express (in another register,
                                         * a computed value, an expression) */
        _UNWIND_REG_RULE_MAX,
};

/* reg_rules: the return address rule in bits 0-2, rbp's in bits 3-5, and bit 7 set in a signal
 * frame (the frame "called" by the kernel to run a handler: its caller's pc is the interrupted
 * instruction itself, not a return address, so the walker looks that pc up as is, not pc - 1). */
#define UNWIND_ROW_RA_RULE_MASK   0x07u
#define UNWIND_ROW_RBP_RULE_SHIFT 3
#define UNWIND_ROW_RBP_RULE_MASK  0x38u
#define UNWIND_ROW_SIGNAL_FRAME   0x80u

/* One row: its rule holds from start up to the next row's start. Fixed-width fields, no padding:
 * the layout a BPF map value can share. */
struct unwind_row {
        __u32 start;            /* first address covered, minus the table's base_vaddr */
        __s32 cfa_offset;       /* bytes added to the CFA rule's register */
        __u8 cfa_rule;          /* enum unwind_cfa_rule */
        __u8 reg_rules;         /* see UNWIND_ROW_* above */
        __s8 ra_offset8;        /* the return address's AT_* offset, in 8-byte units */
        __s8 rbp_offset8;       /* rbp's AT_* offset, in 8-byte units */
};

/* Objects whose tables can be loaded at once (slots of the unwind_tables map of maps). */
#define UNWIND_TABLES_MAX 4096
/* Executable mappings of one target the walker knows; the others are walked by frame pointer. */
#define UNWIND_MAPPINGS_MAX 512

/* One executable mapping of a target: a pc in [start, end) is looked up in its object's rows
 * at pc - bias (the ELF address minus the table's base_vaddr). A mapping without rows is walked
 * by frame pointer (the object has no CFI, or keeps rbp as a frame pointer). */
struct unwind_mapping {
        __u64 start;
        __u64 end;
        __u64 bias;
        __u32 table;            /* slot in unwind_tables; with n_rows 0, UNWIND_TABLE_PENDING:
                                 * its file's table is being built (the walk stops, NO_TABLE) */
        __u32 n_rows;           /* 0: frame pointers */
};
#define UNWIND_TABLE_PENDING 0xffffffffu

/* A target walked by its unwind tables, at its slot of target_slots in unwind_targets (another
 * tgid there: frame pointers, by the kernel): its mappings are
 * unwind_mappings[(slot * 2 + half) * UNWIND_MAPPINGS_MAX + i] for i < n, sorted by start, not
 * overlapping. Each slot has two lists: the daemon writes the one walks do not read, then this
 * entry, so no walk searches a list while it is rewritten. */
struct unwind_target {
        __u32 tgid;             /* whose it is; 0: nobody's */
        __u32 generation;       /* changes with every list the daemon writes (any target's): rows
                                 * a thread cached under another generation are not used */
        __u32 n;                /* n and half: one aligned 8-byte word, read at once */
        __u32 half;             /* which of the slot's two lists is current: 0 or 1 */
};

/* A file whose table is loaded, keyed by its inode (dev in the kernel's encoding, major << 20 |
 * minor): what the walker needs to look up a pc in a mapping of it that is not in its target's
 * list yet (a program memleakctl run just started, whose maps the daemon has not read): the
 * mapping's start and file offset, from its vma, give the bias through the segments. */
#define UNWIND_FILE_SEGMENTS 4

struct unwind_file_key {
        __u64 dev;
        __u64 ino;
};

struct unwind_file_segment {
        __u64 vaddr;
        __u64 offset;           /* p_offset */
        __u64 size;
};

struct unwind_file {
        __u32 table;            /* slot in unwind_tables */
        __u32 n_rows;
        __u64 base_vaddr;
        __u32 n_segments;
        __u32 pad;
        struct unwind_file_segment segments[UNWIND_FILE_SEGMENTS];
};

/* Why a walk ended (struct stack_trace's stop). */
enum unwind_stop {
        UNWIND_STOP_END = 0,            /* the outermost frame (CFI says so, or rbp 0 where the
                                         * stack began, or a return address of 0) */
        UNWIND_STOP_DEPTH,              /* max_stack_depth frames taken */
        UNWIND_STOP_NO_CFI,             /* the last frame's pc has no row in its object's CFI, and
                                         * it is not the first stack's outermost frame (rbp 0) */
        UNWIND_STOP_UNCOMPUTABLE,       /* its CFA or return address needs a rule the walker lacks */
        UNWIND_STOP_UNREADABLE,         /* the stack memory it needed could not be read */
        UNWIND_STOP_NO_TABLE,           /* its object's table is not loaded (yet) */
        _UNWIND_STOP_MAX,
};
