/* SPDX-License-Identifier: MIT */
/* Map keys, values and enums shared by bpf/memleak.bpf.c and the daemon. */
#pragma once

#ifdef __BPF__
/* vmlinux.h provides __u32/__u64 on the BPF side. */
#else
#include <linux/types.h>
#endif

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

/* Every way an event can be counted, lost or distorted (per-CPU array index). */
enum memleak_counter {
        COUNTER_ALLOCS = 0,             /* allocations recorded */
        COUNTER_FREES,                  /* frees that matched a recorded allocation */
        COUNTER_ALLOCS_FILTERED,        /* allocations outside the target's size filter */
        COUNTER_ALLOCS_FAILED,          /* allocator returned NULL / error: nothing changed */
        COUNTER_NESTED_CALLS,           /* allocator entries inside another (counted once, at the outer) */
        COUNTER_LOST_ALLOCS_MAP_FULL,   /* outstanding-allocations map full */
        COUNTER_LOST_COMBINED_MAP_FULL, /* per-stack totals map full */
        COUNTER_LOST_INFLIGHT_MAP_FULL, /* per-thread in-flight map full */
        COUNTER_STACK_EFAULT,           /* bpf_get_stackid -EFAULT: user stack unreadable */
        COUNTER_STACK_EEXIST,           /* bpf_get_stackid -EEXIST: stack map hash collision */
        COUNTER_STACK_ENOMEM,           /* bpf_get_stackid -ENOMEM: stack map full */
        COUNTER_STACK_OTHER,            /* bpf_get_stackid: any other error */
        COUNTER_RETURN_WITHOUT_ENTRY,   /* return probe with no matching entry */
        COUNTER_FREE_UNKNOWN,           /* free of an address never seen (pre-attach or filtered) */
        COUNTER_INFLIGHT_STALE,         /* entry left behind by a call that never returned */
        COUNTER_LOST_MMAPS_MAP_FULL,    /* --mmap: mappings map full, a mapping went untracked */
        COUNTER_LOST_MMAP_RANGES,       /* --mmap: an unmap touched more tracked mappings than one
                                         * call can split; the rest stay outstanding */
        COUNTER_LOST_FILE_MAPPINGS,     /* run: a file mapping the recording map had no room for
                                         * (frames in that file may stay unresolved) */
        COUNTER_LOST_FORK_EVENTS,       /* a target forked and the ring buffer had no room to say
                                         * so: that child keeps paying for the probes */
        _COUNTER_MAX,
};

/* A traced process forked a child (not a thread, not a vfork sharing its memory): the child
 * inherited the breakpoints of its parent's probes, which memleakd then clears. */
struct fork_event {
        __u32 parent_tgid;      /* as the daemon's pid namespace numbers them */
        __u32 child_tgid;
};
#define MEMLEAK_FORK_RING_BYTES (64 * 1024)

/* Stack ids below zero mean "no stack": the negated errno from bpf_get_stackid. */

/* Per-target settings, keyed by tgid in the `targets` map. */
struct target_config {
        __u64 min_size;         /* 0: no lower bound */
        __u64 max_size;         /* 0: no upper bound */
        /* The kernel target only: record only allocations made by this process (tgid, as the
         * daemon's pid namespace numbers it) and/or by tasks with this comm. */
        __u32 filter_pid;       /* 0: any process */
        __u32 filter_comm_set;  /* 0: any comm */
        char filter_comm[MEMLEAK_COMM_LEN];
};

/* One outstanding allocation, keyed by struct alloc_key. */
struct alloc_key {
        __u32 tgid;
        __u32 space;            /* enum alloc_space */
        __u64 addr;
};

struct alloc_info {
        __u64 size;
        __u64 timestamp_ns;     /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
        __s64 stack_id;         /* < 0: -errno from bpf_get_stackid */
};

/* Per-stack outstanding totals ("combined allocs"), keyed by struct combined_key. */
struct combined_key {
        __u32 tgid;
        __u32 space;            /* ALLOC_SPACE_MMAP for mappings, else 0 */
        __s64 stack_id;
};

struct combined_value {
        __u64 bytes;
        __u64 allocs;
};

/* In-flight call state between an allocator's entry and its return, keyed by pid_tgid (thread). */
struct inflight {
        __u64 size;
        __u64 arg;              /* realloc: old pointer; posix_memalign: memptr */
        __u64 entry_sp;         /* stack pointer at the outermost entry: detects stale entries */
        __u64 entry_ns;         /* when the outermost call entered */
        __u32 kind;             /* enum alloc_kind of the outermost call */
        __u32 depth;            /* nested allocator entries below the outermost */
        __u32 tgid;             /* target, as the daemon sees it: lets detach drop its threads' entries */
        __u32 pad;
        __u64 arg2;             /* mremap: old size */
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
