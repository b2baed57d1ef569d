// SPDX-License-Identifier: GPL-2.0
/* Uprobes on the allocation family and tp_btf programs on the kernel's allocators: outstanding
 * allocations and per-stack totals per target (the kernel target is tgid MEMLEAK_KERNEL_TGID). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "bpf-types.h"

#define ENOENT 2
#define EFAULT 14
#define ENOMEM 12
#define EEXIST 17
#define EBUSY 16
#define EINVAL 22
#define ENOSPC 28
#define ECANCELED 125

/* Inode of the pid namespace whose pids the daemon sees; 0: the initial one (host pids). */
const volatile __u64 pidns_ino = 0;

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 64);
        __type(key, __u32);
        __type(value, struct target_config);
} targets SEC(".maps");

/* The same settings by slot, for the uprobe programs (the slot is in their cookie): an array
 * look-up is a few instructions the verifier writes inline, a hash look-up a call and a hash. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 64);                /* max_targets */
        __type(key, __u32);
        __type(value, struct target_slot);
} target_slots SEC(".maps");

/* What a thread carries between probes: its allocator call in flight, and its distance to the
 * next sample point. Task storage: no table to fill or to search, and it goes with the thread. */
struct thread_state {
        struct inflight call;           /* call.flags & INFLIGHT_ACTIVE: inside an allocator call */
        __u64 sample_remaining;         /* --sample-bytes: bytes to the next sample point; 0: none drawn */
        __u64 sample_mean;              /* the mean sample_remaining was drawn at (the daemon may
                                         * change a target's while it runs: bpf/sample.h) */
};

struct {
        __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __type(key, int);
        __type(value, struct thread_state);
} threads SEC(".maps");

/* The calling thread's state; created when create (an entry), else NULL when it has none. */
static __always_inline struct thread_state *thread_state(bool create)
{
        return bpf_task_storage_get(&threads, bpf_get_current_task_btf(), NULL,
                                    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* allocs and mmaps take memory for the entries there are, not for their limits (the
 * kernel's bpf_mem_alloc serves them from per-CPU caches), so the defaults stay small. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __uint(max_entries, 1000000);
        __type(key, struct alloc_key);
        __type(value, struct alloc_info);
} allocs SEC(".maps");

/* --mmap: a target's anonymous mappings, keyed like allocs (space ALLOC_SPACE_MMAP, addr = start),
 * apart from the heap blocks because an unmap may cut any part of any of them: it walks this
 * (small) map, never the big one. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(map_flags, BPF_F_NO_PREALLOC);
        __uint(max_entries, 65536);
        __type(key, struct alloc_key);
        __type(value, struct alloc_info);
} mmaps SEC(".maps");

/* A row of counters per target, and the kernel target's and no target's after them
 * (MEMLEAK_COUNTER_ROWS(max_targets) rows, bpf-types.h): the daemon sums the rows for its own. */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, MEMLEAK_COUNTER_ROWS(64) * _COUNTER_MAX);  /* set by the daemon */
        __type(key, __u32);
        __type(value, __u64);
} counters SEC(".maps");

/* MEMLEAK_COUNTER_ROW_KERNEL(max_targets) and MEMLEAK_COUNTER_ROW_OTHER(max_targets). */
const volatile __u32 counter_row_kernel = 64;
const volatile __u32 counter_row_other = 65;

/* The heap blocks each process target holds in the allocation table (alloc_table and the allocs
 * map), by its slot, and whether BPF switched it to sampling at its limit (struct target_fill):
 * what the daemon reads to see its share of the table fill. One count every CPU adds to
 * atomically: the limit is checked against it at each allocator call, where a sum over the CPUs
 * would cost a look-up per CPU. */
struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(max_entries, 64);                /* max_targets */
        __type(key, __u32);
        __type(value, struct target_fill);
} target_blocks SEC(".maps");

static __always_inline void target_blocks_add(__u32 slot, __s64 n)
{
        struct target_fill *f = bpf_map_lookup_elem(&target_blocks, &slot);

        if (f)
                __sync_fetch_and_add(&f->blocks, n);
}

static __always_inline void count_by(__u32 row, enum memleak_counter c, __u64 n)
{
        __u32 key = row * _COUNTER_MAX + c;
        __u64 *v = bpf_map_lookup_elem(&counters, &key);

        if (v)
                *v += n;        /* per-CPU slot: no atomics needed */
}

/* Count an event of the target whose counters are at row (its slot, or counter_row_kernel). */
static __always_inline void count_in(__u32 row, enum memleak_counter c)
{
        count_by(row, c, 1);
}

/* The row of the target whose stack this CPU is walking (set around the walk by user_stack_id(),
 * stack-capture.h): where the walker's own count()s go (unwind_walks, unwind_repeats,
 * unwind_stop_*). counter_row_other outside a walk. A uprobe program preempted mid-walk by
 * another target's on the same CPU may count some of its walker events in the other's row: the
 * daemon's sum stays exact, and no loss counter is counted this way. */
struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, __u32);
} walk_row SEC(".maps");

static __always_inline void walk_row_set(__u32 row)
{
        __u32 zero = 0, *r = bpf_map_lookup_elem(&walk_row, &zero);

        if (r)
                *r = row;
}

/* The walker's counters (unwind.h): counted in the row of the target being walked. */
static __always_inline void count(enum memleak_counter c)
{
        __u32 zero = 0, *r = bpf_map_lookup_elem(&walk_row, &zero);

        count_in(r ? *r : counter_row_other, c);
}

#define MAX_PIDNS_LEVEL 32

/* task's tgid as the daemon sees it; 0 if the daemon cannot see it. bpf_get_ns_current_pid_tgid()
 * only answers for tasks whose own pid namespace is the daemon's, not for those in containers
 * below it, so walk the leader's struct pid levels instead: its number at the level whose
 * namespace is the daemon's is the pid the daemon knows. */
static __always_inline __u32 task_tgid_seen(struct task_struct *task)
{
        struct pid *pid;
        unsigned int level;

        if (pidns_ino == 0)
                return BPF_CORE_READ(task, tgid);
        pid = BPF_CORE_READ(task, group_leader, thread_pid);
        if (!pid)
                return 0;
        level = BPF_CORE_READ(pid, level);
        for (unsigned int i = 0; i < MAX_PIDNS_LEVEL; i++) {
                struct upid up;

                if (i > level)
                        break;
                if (bpf_core_read(&up, sizeof(up), &pid->numbers[i]))
                        return 0;
                if (BPF_CORE_READ(up.ns, ns.inum) == pidns_ino)
                        return up.nr;
        }
        return 0;
}

/* The calling process's tgid as the daemon sees it; 0 if the daemon cannot see it. */
static __always_inline __u32 current_tgid(void)
{
        if (pidns_ino == 0)
                return bpf_get_current_pid_tgid() >> 32;
        return task_tgid_seen((struct task_struct *)bpf_get_current_task());
}

/* This load's generation: a target's probes record it while its slot names this generation
 * (struct target_slot's gen). A restarted daemon places its own probes beside the ones the
 * earlier daemon left recording, and moves the slot over to them once their unwind tables are
 * in: at any moment one program of the two records a call. Never 0. */
const volatile __u32 probe_gen = 1;

/* The settings of the calling process when it is the target at slot (a uprobe's cookie says
 * which) and this load's probes record it; NULL when it is not (not traced, or not seen: tgid 0),
 * or another load's probes record it. */
static __always_inline struct target_config *traced_target(__u32 slot, __u32 tgid)
{
        struct target_slot *s = bpf_map_lookup_elem(&target_slots, &slot);

        return s && tgid && s->tgid == tgid && s->gen == probe_gen ? &s->cfg : NULL;
}

/* The same for the return of an uprobe session, which runs only when its own entry recorded the
 * call: whichever load's probes record the target now, this one ends what it began. */
static __always_inline struct target_config *traced_target_any_gen(__u32 slot, __u32 tgid)
{
        struct target_slot *s = bpf_map_lookup_elem(&target_slots, &slot);

        return s && tgid && s->tgid == tgid ? &s->cfg : NULL;
}

#include "stack-table.h"
#include "alloc-table.h"
#include "combined-table.h"
#include "unwind.h"
#include "stack-capture.h"
#include "sample.h"

/* A block freed: out of the table, or of the allocs map where its window had no room. */
static __always_inline void record_freed(__u32 row, __u32 tgid, const struct alloc_info *info)
{
        combined_sub(tgid, info->stack_id, info);
        count_in(row, COUNTER_FREES);
}

/* Whether tgid's block at addr is recorded (a sampled target's free of an unsampled block is
 * not). */
static __always_inline bool alloc_recorded(__u32 tgid, __u64 addr)
{
        struct alloc_key key = { .tgid = tgid, .addr = addr };
        bool elsewhere;

        return alloc_table_find(tgid, addr, &elsewhere) || (elsewhere && bpf_map_lookup_elem(&allocs, &key));
}

/* Take tgid's block at addr out of the allocs map: true with its info in *info. Asked only
 * where alloc_table_find() says it may be there. */
static __always_inline bool alloc_overflow_take(__u32 tgid, __u64 addr, struct alloc_info *info)
{
        struct alloc_key key = { .tgid = tgid, .addr = addr };
        struct alloc_info *found;

        found = bpf_map_lookup_elem(&allocs, &key);
        if (!found)
                return false;
        *info = *found;         /* copy before the entry goes away */
        if (bpf_map_delete_elem(&allocs, &key))
                return false;   /* another CPU freed it first and accounted for it */
        __sync_fetch_and_sub(&alloc_overflow, 1);
        return true;
}

/* cfg: tgid's entry in targets, which every caller already holds. */
static __always_inline void record_free(const struct target_config *cfg, __u32 tgid, __u64 addr)
{
        struct alloc_info info;
        bool elsewhere;

        if (addr == 0)
                return;
        if (alloc_table_take(tgid, addr, &info, &elsewhere) ||
            (elsewhere && alloc_overflow_take(tgid, addr, &info))) {
                record_freed(cfg->counter_row, tgid, &info);
                target_blocks_add(cfg->slot, -1);
                return;
        }
        count_in(cfg->counter_row, cfg->sample_bytes ? COUNTER_FREE_UNSAMPLED : COUNTER_FREE_UNKNOWN);
}

/* weight: the bytes it stands for (its size when exact). The block's time is now, when its call
 * returns, not when it began: a snapshot taken while the call ran holds no pointer to the block
 * yet, and a time before the snapshot's would have it classified there, lost. */
static __always_inline void record_alloc(void *ctx, const struct target_config *cfg, __u32 slot, __u32 tgid,
                                         __u64 addr, __u64 size, __u64 weight)
{
        struct alloc_key key = { .tgid = tgid, .addr = addr };
        struct alloc_info info = {}, old;
        bool elsewhere;
        long r;

        if (size < cfg->min_size || (cfg->max_size && size > cfg->max_size)) {
                count_in(slot, COUNTER_ALLOCS_FILTERED);
                return;
        }
        info.size = size;
        info.weight = weight;
        info.timestamp_ns = striped_timestamp(bpf_ktime_get_ns());
        info.stack_id = user_stack_id(ctx, tgid, slot);
        /* A live entry of the same block means its free was missed: it is retired first. */
        switch (alloc_table_put(tgid, addr, &info, &old, &elsewhere)) {
        case ALLOC_PUT_REPLACED:
                record_freed(slot, tgid, &old);
                goto recorded;
        case ALLOC_PUT_NEW:
                if (elsewhere && alloc_overflow_take(tgid, addr, &old)) {
                        record_freed(slot, tgid, &old);
                        goto recorded;
                }
                target_blocks_add(slot, 1);
                goto recorded;
        case ALLOC_PUT_LOST_RACE:
                alloc_overflow_raced = 1;       /* before the block is in the map */
                break;
        }
        /* counted before it is in, so that the count is never below the map's blocks */
        __sync_fetch_and_add(&alloc_overflow, 1);
        r = bpf_map_update_elem(&allocs, &key, &info, BPF_NOEXIST);
        if (r == -EEXIST) {
                /* One insert that fails on the rare clash costs less than a look-up before each. */
                record_free(cfg, tgid, addr);
                r = bpf_map_update_elem(&allocs, &key, &info, BPF_ANY);
        }
        if (r) {
                __sync_fetch_and_sub(&alloc_overflow, 1);
                count_in(slot, COUNTER_LOST_ALLOCS_MAP_FULL);
                return;
        }
        target_blocks_add(slot, 1);
recorded:
        combined_add(slot, tgid, info.stack_id, &info);
        count_in(slot, COUNTER_ALLOCS);
}

/* Tail calls (reallocarray -> realloc, realloc(p, 0) -> free) enter the inner function with the
 * outer one's stack pointer: equal sp right after the outer entry is nesting too. */
#define TAIL_CALL_WINDOW_NS 1000000000ull

/* Whether cur is a call of this target in progress: not one entered before the target was
 * registered (an earlier attach of the same pid, detached before the call returned). */
static __always_inline bool in_call(const struct inflight *cur, const struct target_config *cfg, __u32 tgid)
{
        return (cur->flags & INFLIGHT_ACTIVE) && cur->tgid == tgid && cur->entry_ns >= cfg->registered_ns;
}

static __always_inline bool inside_outer_call(const struct inflight *cur, __u64 sp)
{
        if (sp < cur->entry_sp)
                return true;
        return sp == cur->entry_sp && bpf_ktime_get_ns() - cur->entry_ns < TAIL_CALL_WINDOW_NS;
}

/* Kinds whose return records a heap block (sampled when the target is). */
static __always_inline bool kind_allocates(__u32 kind)
{
        return kind != ALLOC_KIND_DELETE && kind != ALLOC_KIND_MMAP && kind != ALLOC_KIND_MUNMAP &&
               kind != ALLOC_KIND_MREMAP;
}

/* The calling thread's state at an entry of the target at slot (*ret_cfg its settings), when
 * the call is the outermost allocator call the thread is in; NULL when the process is not that
 * target, has no state for the thread (counted), or is inside an outer call (counted: nested, its
 * depth raised when nested_return says its return probe will come to lower it). */
static __always_inline struct thread_state *outer_call_state(__u32 slot, __u32 tgid, __u64 sp, bool nested_return,
                                                             struct target_config **ret_cfg)
{
        struct target_config *cfg = traced_target(slot, tgid);
        struct thread_state *th;
        struct inflight *cur;

        if (!cfg)
                return NULL;
        th = thread_state(true);
        if (!th) {
                count_in(slot, COUNTER_LOST_NO_THREAD_STATE);
                return NULL;
        }
        cur = &th->call;
        if (in_call(cur, cfg, tgid)) {
                if (inside_outer_call(cur, sp)) {
                        /* Called from inside an allocator this thread is already in. */
                        if (nested_return)
                                cur->depth++;
                        count_in(slot, COUNTER_NESTED_CALLS);
                        return NULL;
                }
                /* The outer call never returned (longjmp, thread cancelled): start over. */
                count_in(slot, COUNTER_INFLIGHT_STALE);
        }
        *ret_cfg = cfg;
        return th;
}

/* The mean to sample the target at slot at, from this call on: its own (0: exact), or, once it
 * holds its limit_blocks blocks in the allocation table, the limit_sample_bytes the daemon set
 * for then (an exact target), and four times its mean each time it passes half the room left
 * after that to its limit_share blocks. Those raises are made here, by BPF, at the first call
 * past each step, whatever the daemon's checks (a burst may fill a share within one of them):
 * the one CPU that moves the step on logs the mean, the step and the time in the target's struct
 * target_fill for the daemon, and writes the mean into the target's settings, so that its frees
 * and later calls see it. Calls in flight on other CPUs meanwhile are recorded at the mean
 * before: a few blocks past the step, none dropped. The blocks recorded before keep theirs. */
/* A slot of f's log taken for one raise (raises counted up by one): MEMLEAK_FILL_RAISES_MAX
 * when the log is full, or when other CPUs took it on each try (they raise at the steps after;
 * a 64-bit compare-and-swap: a fetch-and-add's result needs BPF's v3 instructions). */
#define LOG_SLOT_TRIES 8
static __always_inline __u32 log_slot_of(struct target_fill *f)
{
        for (int i = 0; i < LOG_SLOT_TRIES; i++) {
                __u64 n = f->raises;

                if (n >= MEMLEAK_FILL_RAISES_MAX)
                        break;
                if (__sync_val_compare_and_swap(&f->raises, n, n + 1) == n)
                        return (__u32)n;
        }
        return MEMLEAK_FILL_RAISES_MAX;
}

static __always_inline __u64 sample_mean_of(struct target_config *cfg, __u32 slot)
{
        __u64 mean = cfg->sample_bytes, limit = cfg->limit_blocks, share = cfg->limit_share, raised;
        struct target_fill *f;
        __s64 seen, at, next;
        __u32 idx;

        if (limit == 0 || cfg->limit_sample_bytes <= 1)
                return mean;
        f = bpf_map_lookup_elem(&target_blocks, &slot);
        if (!f)
                return mean;
        /* the daemon's settings written over a raise of BPF's made meanwhile (it never sets a
         * mean below BPF's latest): BPF's again */
        if (f->switched_sample_bytes > mean && f->switched_sample_bytes > 1) {
                mean = f->switched_sample_bytes;
                cfg->sample_bytes = mean;
        }
        /* the next step: BPF's own after a raise of its, or the daemon's limit where later (the
         * daemon moves it on when it changes the mean itself: a raise of its at 89% is not
         * followed by one of BPF's at 90%) */
        seen = f->next_at;
        at = seen > (__s64)limit ? seen : (__s64)limit;
        if (f->blocks < at)
                return mean;
        if (mean > 1 && mean >= MEMLEAK_BPF_MAX_SAMPLE_BYTES)
                return mean;    /* as sparse as it goes */
        /* the next step half way to the share's end; past it, a sixteenth of the share further */
        next = (__s64)share > at + 1 ? at + (__s64)(((__u64)share - (__u64)at) >> 1) : at + (__s64)(share >> 4) + 1;
        if (__sync_val_compare_and_swap(&f->next_at, seen, next) != seen)
                return cfg->sample_bytes;       /* another CPU moved it on: its mean, once written */
        raised = mean > 1 ? mean * 4 : cfg->limit_sample_bytes;
        if (raised < cfg->limit_sample_bytes)
                raised = cfg->limit_sample_bytes;
        if (raised > MEMLEAK_BPF_MAX_SAMPLE_BYTES)
                raised = MEMLEAK_BPF_MAX_SAMPLE_BYTES;
        /* logged for the daemon: the step and time first, the mean after them (an atomic: a
         * full barrier), so that a daemon that sees the mean sees its step and time */
        idx = log_slot_of(f);
        if (idx < MEMLEAK_FILL_RAISES_MAX) {
                f->log[idx].ns = bpf_ktime_get_ns();
                f->log[idx].at = at;
                __sync_lock_test_and_set(&f->log[idx].sample_bytes, raised);
        }
        __sync_lock_test_and_set(&f->switched_sample_bytes, raised);
        cfg->sample_bytes = raised;
        return raised;
}

static __always_inline int on_entry2(struct pt_regs *ctx, __u32 slot, __u32 kind, __u64 size, __u64 arg,
                                     __u64 arg2)
{
        __u64 sp = PT_REGS_SP(ctx), now, mean;
        __u32 tgid = current_tgid();
        struct target_config *cfg = NULL;
        struct thread_state *th;
        struct inflight *cur;

        th = outer_call_state(slot, tgid, sp, true, &cfg);
        if (!th || !cfg)
                return 0;
        cur = &th->call;
        now = bpf_ktime_get_ns();
        *cur = (struct inflight) {
                .size = size, .arg = arg, .entry_sp = sp, .entry_ns = now,
                .kind = kind, .tgid = tgid, .arg2 = arg2, .weight = size, .flags = INFLIGHT_ACTIVE,
        };
        mean = kind_allocates(kind) ? sample_mean_of(cfg, slot) : cfg->sample_bytes;
        /* the outermost call decides, once, whether its block is a sample */
        if (mean && kind_allocates(kind)) {
                cur->weight = sample_weight_at(size, mean, &th->sample_remaining, &th->sample_mean);
                if (cur->weight == 0)
                        cur->flags |= INFLIGHT_UNSAMPLED;
        } else if (!mean) {
                th->sample_remaining = 0;       /* exact now: a later sampled attach draws afresh */
        }
        return 0;
}

static __always_inline int on_entry(struct pt_regs *ctx, __u32 slot, __u32 kind, __u64 size, __u64 arg)
{
        return on_entry2(ctx, slot, kind, size, arg, 0);
}

/* The entry of an uprobe session at a site of a call that allocates and calls no other
 * allocator function (malloc, calloc): whether its return has nothing to do, which skips it (the
 * kernel runs the session's program at the return only when this is 0). Nothing to do: the call
 * is nested in an outer one (operator new's malloc; the outer's return records the block), its
 * size is outside the target's filter, or --sample-bytes draws no sample point in it. Such a call
 * leaves no in-flight state behind, which is right only because nothing it calls is probed: the
 * daemon links sessions only at malloc's and calloc's sites of targets without --mmap (glibc's
 * malloc maps its big blocks itself). */
static __always_inline int on_leaf_entry(struct pt_regs *ctx, __u32 slot, __u32 kind, __u64 size)
{
        __u64 sp = PT_REGS_SP(ctx), weight = size, mean;
        __u32 tgid = current_tgid();
        struct target_config *cfg = NULL;
        struct thread_state *th;
        struct inflight *cur;

        th = outer_call_state(slot, tgid, sp, false, &cfg);     /* a nested call's return is not run */
        if (!th || !cfg)
                return 1;
        cur = &th->call;
        if (size < cfg->min_size || (cfg->max_size && size > cfg->max_size)) {
                cur->flags = 0;
                count_in(slot, COUNTER_ALLOCS_FILTERED);
                return 1;
        }
        mean = sample_mean_of(cfg, slot);
        if (mean) {
                weight = sample_weight_at(size, mean, &th->sample_remaining, &th->sample_mean);
                if (weight == 0) {
                        cur->flags = 0;
                        count_in(slot, COUNTER_ALLOCS_UNSAMPLED);
                        return 1;
                }
        } else {
                th->sample_remaining = 0;       /* exact now: a later sampled attach draws afresh */
        }
        *cur = (struct inflight) {
                .size = size, .entry_sp = sp, .entry_ns = bpf_ktime_get_ns(), .kind = kind, .tgid = tgid,
                .weight = weight, .flags = INFLIGHT_ACTIVE,
        };
        return 0;
}

static __always_inline __u64 page_round_up(__u64 len)
{
        return (len + MEMLEAK_PAGE_SIZE - 1) & ~(MEMLEAK_PAGE_SIZE - 1);
}

/* Record the mapping [start, start + len) made by the calling thread. */
static __always_inline void mmap_add(void *ctx, __u32 slot, __u32 tgid, __u64 start, __u64 len)
{
        struct alloc_key key = { .tgid = tgid, .space = ALLOC_SPACE_MMAP, .addr = start };
        struct alloc_info info = {
                .size = len, .weight = len, .timestamp_ns = bpf_ktime_get_ns(),
        };

        if (len == 0)
                return;
        info.stack_id = user_stack_id(ctx, tgid, slot);
        if (bpf_map_update_elem(&mmaps, &key, &info, BPF_ANY)) {
                count_in(slot, COUNTER_LOST_MMAPS_MAP_FULL);
                return;
        }
        if (combined_add_in(tgid, ALLOC_SPACE_MMAP, info.stack_id, len, 1) < 0)
                count_in(slot, COUNTER_LOST_COMBINED_MAP_FULL);
        count_in(slot, COUNTER_ALLOCS);
}

/* A piece left over when an unmap cuts a mapping: same stack and age as the mapping it was. */
static __always_inline void mmap_keep_piece(__u32 row, __u32 tgid, __u64 start, __u64 len,
                                            const struct alloc_info *of)
{
        struct alloc_key key = { .tgid = tgid, .space = ALLOC_SPACE_MMAP, .addr = start };
        struct alloc_info info = *of;

        info.size = len;
        info.weight = len;
        if (bpf_map_update_elem(&mmaps, &key, &info, BPF_ANY)) {
                count_in(row, COUNTER_LOST_MMAPS_MAP_FULL);
                return;
        }
        if (combined_add_in(tgid, ALLOC_SPACE_MMAP, info.stack_id, len, 1) < 0)
                count_in(row, COUNTER_LOST_COMBINED_MAP_FULL);
}

#define MMAP_OVERLAPS_PER_PASS 8
#define MMAP_UNMAP_PASSES 4

struct mmap_overlap_search {
        __u32 tgid;
        __u32 n;
        __u64 lo, hi;
        __u64 starts[MMAP_OVERLAPS_PER_PASS];
        __u32 more;
};

/* Whether the mapping [start, start + size) meets [lo, hi). */
static __always_inline bool mmap_overlaps(__u64 start, __u64 size, __u64 lo, __u64 hi)
{
        return start < hi && start + size > lo;
}

static long mmap_find_overlaps(struct bpf_map *map, struct alloc_key *key, struct alloc_info *info,
                               struct mmap_overlap_search *q)
{
        __u32 n = q->n;

        if (key->tgid != q->tgid || !mmap_overlaps(key->addr, info->size, q->lo, q->hi))
                return 0;
        if (n >= MMAP_OVERLAPS_PER_PASS) {
                q->more = 1;
                return 1;
        }
        q->starts[n & (MMAP_OVERLAPS_PER_PASS - 1)] = key->addr;
        q->n = n + 1;
        return 0;
}

/* Take tgid's mapping at start out of mmaps, keeping the pieces of it outside [lo, hi) (an
 * unmap cuts what it covers): the bytes of it that were inside, 0 when it is gone already. A
 * global function: the verifier checks it once, not once for each overlap of each pass. */
__noinline __u64 mmap_remove_overlap(__u32 row, __u32 tgid, __u64 start, __u64 lo, __u64 hi)
{
        struct alloc_key key = { .tgid = tgid, .space = ALLOC_SPACE_MMAP, .addr = start };
        struct alloc_info *found, info;
        __u64 end;

        found = bpf_map_lookup_elem(&mmaps, &key);
        if (!found)
                return 0;
        info = *found;
        if (!mmap_overlaps(start, info.size, lo, hi))
                return 0;       /* another thread's mapping, made there since the search */
        if (bpf_map_delete_elem(&mmaps, &key))
                return 0;       /* another thread unmapped it first */
        end = start + info.size;
        combined_sub_in(tgid, ALLOC_SPACE_MMAP, info.stack_id, info.size, 1);
        if (start < lo)
                mmap_keep_piece(row, tgid, start, lo - start, &info);
        if (end > hi)
                mmap_keep_piece(row, tgid, hi, end - hi, &info);
        count_in(row, COUNTER_FREES);
        return (end < hi ? end : hi) - (start > lo ? start : lo);
}

/* Forget [lo, lo + len) of tgid's mappings, whatever mappings it covers in part or whole (as
 * munmap does). Returns the bytes that were tracked there. A global function: the verifier
 * checks it once, not once for each of the three returns that call it. */
__noinline __u64 mmap_remove_range(__u32 row, __u32 tgid, __u64 lo, __u64 len)
{
        struct mmap_overlap_search q = { .tgid = tgid, .lo = lo, .hi = lo + page_round_up(len) };
        __u64 removed = 0;

        if (q.hi <= q.lo)
                return 0;
        for (int pass = 0; pass < MMAP_UNMAP_PASSES; pass++) {
                q.n = 0;
                q.more = 0;
                bpf_for_each_map_elem(&mmaps, mmap_find_overlaps, &q, 0);
                for (int i = 0; i < MMAP_OVERLAPS_PER_PASS; i++) {
                        if (i >= q.n)
                                break;
                        removed += mmap_remove_overlap(row, tgid, q.starts[i], q.lo, q.hi);
                }
                if (!q.more)
                        return removed;
        }
        count_in(row, COUNTER_LOST_MMAP_RANGES);
        return removed;
}

/* The return of an mmap-family call (the outermost: those inside an allocator are its own). */
static __always_inline int mmap_family_return(void *ctx, __u32 slot, __u32 tgid, const struct inflight *state,
                                              __u64 rc)
{
        switch (state->kind) {
        case ALLOC_KIND_MMAP:
                if (rc == (__u64)-1) {
                        count_in(slot, COUNTER_ALLOCS_FAILED);
                        return 0;
                }
                /* MAP_FIXED replaces whatever was mapped there. */
                mmap_remove_range(slot, tgid, rc, state->size);
                if (!state->arg2)
                        mmap_add(ctx, slot, tgid, rc, page_round_up(state->size));
                return 0;
        case ALLOC_KIND_MUNMAP:
                if ((int)rc != 0) {
                        count_in(slot, COUNTER_ALLOCS_FAILED);
                        return 0;
                }
                mmap_remove_range(slot, tgid, state->arg, state->size);
                return 0;
        case ALLOC_KIND_MREMAP:
                if (rc == (__u64)-1) {
                        count_in(slot, COUNTER_ALLOCS_FAILED);
                        return 0;
                }
                /* Moved or resized: the old range goes; the new one is tracked when the old one
                 * was (it may be a file mapping, or older than the attach). */
                if (mmap_remove_range(slot, tgid, state->arg, state->arg2) > 0)
                        mmap_add(ctx, slot, tgid, rc, page_round_up(state->size));
                return 0;
        }
        return 0;
}

/* Kinds that return the new block itself and free nothing. */
static __always_inline bool kind_returns_block(__u32 kind)
{
        return kind == ALLOC_KIND_MALLOC || kind == ALLOC_KIND_CALLOC || kind == ALLOC_KIND_NEW ||
               kind == ALLOC_KIND_ALIGNED_ALLOC || kind == ALLOC_KIND_MEMALIGN || kind == ALLOC_KIND_VALLOC ||
               kind == ALLOC_KIND_PVALLOC;
}

/* --sample-bytes: the return of an unsampled call that frees nothing has nothing to record
 * (most returns of a sampled target). */
static __always_inline bool unsampled_return_done(struct thread_state *th, __u32 slot, __u32 tgid, __u64 rc)
{
        struct inflight *cur = &th->call;

        if ((cur->flags & (INFLIGHT_ACTIVE | INFLIGHT_UNSAMPLED)) != (INFLIGHT_ACTIVE | INFLIGHT_UNSAMPLED) ||
            cur->tgid != tgid || cur->depth != 0 || rc == 0 || !kind_returns_block(cur->kind))
                return false;
        cur->flags = 0;
        count_in(slot, COUNTER_ALLOCS_UNSAMPLED);
        return true;
}

/* session: the return of an uprobe session (its entry recorded the call); else of a return
 * probe, which every load's probes on the site run: only the one recording the target acts. */
static __always_inline int on_return(struct pt_regs *ctx, __u32 slot, bool session)
{
        __u64 rc = PT_REGS_RC(ctx);
        __u32 tgid = current_tgid();
        struct target_config *cfg;
        struct thread_state *th;
        struct inflight *cur, state;
        __u64 addr = 0;

        cfg = session ? traced_target_any_gen(slot, tgid) : traced_target(slot, tgid);
        if (!cfg)
                return 0;
        th = thread_state(false);
        if (th && unsampled_return_done(th, slot, tgid, rc))
                return 0;
        if (!th || !in_call(&th->call, cfg, tgid)) {
                count_in(slot, COUNTER_RETURN_WITHOUT_ENTRY);
                return 0;
        }
        cur = &th->call;
        if (cur->depth > 0) {
                cur->depth--;
                return 0;
        }
        state = *cur;
        cur->flags = 0;

        switch (state.kind) {
        case ALLOC_KIND_MMAP:
        case ALLOC_KIND_MUNMAP:
        case ALLOC_KIND_MREMAP:
                return mmap_family_return(ctx, slot, tgid, &state, rc);
        case ALLOC_KIND_RESIZE:
                /* xallocx: the real size now; below the size asked for, nothing was resized. */
                if (rc < state.size) {
                        count_in(slot, COUNTER_ALLOCS_FAILED);
                        return 0;
                }
                record_free(cfg, tgid, state.arg);
                addr = state.arg;
                break;
        case ALLOC_KIND_DELETE:
                /* The free it did inside was nested and ignored: account for the block here. */
                record_free(cfg, tgid, state.arg);
                return 0;
        case ALLOC_KIND_POSIX_MEMALIGN:
                /* int posix_memalign(void **memptr, ...): 0 on success, then *memptr is the block. */
                if ((int)rc != 0 || bpf_probe_read_user(&addr, sizeof(addr), (void *)state.arg)) {
                        count_in(slot, COUNTER_ALLOCS_FAILED);
                        return 0;
                }
                break;
        case ALLOC_KIND_REALLOC:
        case ALLOC_KIND_REALLOCARRAY:
                if (rc == 0 && state.size != 0) {
                        /* A failed realloc leaves the old block as it was. */
                        count_in(slot, COUNTER_ALLOCS_FAILED);
                        return 0;
                }
                /* Moved, shrunk in place or freed (size 0): the old block is gone either way. */
                record_free(cfg, tgid, state.arg);
                addr = rc;
                if (!addr)
                        return 0;
                break;
        default:
                addr = rc;
                if (!addr) {
                        count_in(slot, COUNTER_ALLOCS_FAILED);
                        return 0;
                }
        }
        if (state.flags & INFLIGHT_UNSAMPLED) {
                count_in(slot, COUNTER_ALLOCS_UNSAMPLED);
                return 0;
        }
        record_alloc(ctx, cfg, slot, tgid, addr, state.size, state.weight);
        return 0;
}

static __always_inline int on_free(struct pt_regs *ctx, __u32 slot, __u64 addr)
{
        __u32 tgid = current_tgid();
        struct target_config *cfg;
        struct thread_state *th;

        cfg = traced_target(slot, tgid);
        if (!cfg)
                return 0;
        /* --sample-bytes: most blocks were never recorded, and one failed search says so before
         * the thread's state is looked up (an array look-up costs less than the task storage's). */
        if (cfg->sample_bytes && addr && !alloc_recorded(tgid, addr)) {
                count_in(slot, COUNTER_FREE_UNSAMPLED);
                return 0;
        }
        th = thread_state(false);
        if (th && in_call(&th->call, cfg, tgid) && inside_outer_call(&th->call, PT_REGS_SP(ctx))) {
                /* realloc(p, 0) and friends free through free(): the outer call accounts for it. */
                count_in(slot, COUNTER_NESTED_CALLS);
                return 0;
        }
        record_free(cfg, tgid, addr);
        return 0;
}

static __always_inline __u64 mul_or_max(__u64 a, __u64 b)
{
        __u64 product;

        if ((a >> 32) == 0 && (b >> 32) == 0)
                return a * b;
        product = a * b;
        asm volatile("" : "+r"(product));      /* keep clang from emitting __multi3 */
        if (product / a != b)
                return ~0ULL;   /* overflow: the allocator will fail the call */
        return product;
}

/* Does nothing: a short-lived link of it on a target's probe sites makes the kernel re-check the
 * breakpoints of every process mapping the file, removing those a forked child inherited. */
SEC("uprobe")
int sweep_breakpoints(void *ctx) { return 0; }

/* A field of the probe's struct pt_regs, loaded at its constant offset by one instruction: the
 * verifier refuses a context access at a computed offset, which is what the compiler makes of a
 * switch of plain field reads. */
#define REGS_FIELD(ctx, field) ({                                                               \
        __u64 _value;                                                                           \
        asm("%0 = *(u64 *)(%1 + %2)" : "=r"(_value) : "r"(ctx), "i"(offsetof(struct pt_regs, field))); \
        _value;                                                                                 \
})

/* A register of the probed thread by its x86-64 number (struct pt_regs has its own order). */
static __always_inline __u64 register_value(struct pt_regs *ctx, unsigned reg)
{
        switch (reg) {
        case 0: return REGS_FIELD(ctx, ax);
        case 1: return REGS_FIELD(ctx, cx);
        case 2: return REGS_FIELD(ctx, dx);
        case 3: return REGS_FIELD(ctx, bx);
        case 4: return REGS_FIELD(ctx, sp);
        case 5: return REGS_FIELD(ctx, bp);
        case 6: return REGS_FIELD(ctx, si);
        case 7: return REGS_FIELD(ctx, di);
        case 8: return REGS_FIELD(ctx, r8);
        case 9: return REGS_FIELD(ctx, r9);
        case 10: return REGS_FIELD(ctx, r10);
        case 11: return REGS_FIELD(ctx, r11);
        case 12: return REGS_FIELD(ctx, r12);
        case 13: return REGS_FIELD(ctx, r13);
        case 14: return REGS_FIELD(ctx, r14);
        default: return REGS_FIELD(ctx, r15);
        }
}

/* Argument i (< MEMLEAK_COOKIE_ARGS) of the probed call: in the calling convention's register, or
 * where the probe's attach cookie says it is when the probe sits past instructions that moved it
 * (mimalloc's malloc copies its size to %rsi and reuses %rdi before its first branch). */
static __always_inline __u64 call_arg(struct pt_regs *ctx, __u64 cookie, unsigned i)
{
        if (cookie & MEMLEAK_ARGS_MOVED)
                return register_value(ctx, MEMLEAK_ARG_REGISTER(cookie, i));
        switch (i) {
        case 0: return PT_REGS_PARM1(ctx);
        case 1: return PT_REGS_PARM2(ctx);
        case 2: return PT_REGS_PARM3(ctx);
        default: return PT_REGS_PARM4(ctx);
        }
}

/* An entry program of kind: its target's slot, its arguments a0.. as call_arg() finds them,
 * then body. */
#define ENTRY_PROGRAM(name, body)                                                       \
        SEC("uprobe")                                                                   \
        int name(struct pt_regs *ctx)                                                   \
        {                                                                               \
                __u64 cookie = bpf_get_attach_cookie(ctx);                              \
                __u32 slot = MEMLEAK_COOKIE_SLOT(cookie);                               \
                __u64 a0 = call_arg(ctx, cookie, 0), a1 = call_arg(ctx, cookie, 1);     \
                __u64 a2 = call_arg(ctx, cookie, 2), a3 = call_arg(ctx, cookie, 3);     \
                                                                                        \
                (void)a0, (void)a1, (void)a2, (void)a3;                                 \
                return body;                                                            \
        }

ENTRY_PROGRAM(malloc_entry, on_entry(ctx, slot, ALLOC_KIND_MALLOC, a0, 0))
/* calloc(n, size) */
ENTRY_PROGRAM(calloc_entry, on_entry(ctx, slot, ALLOC_KIND_CALLOC, mul_or_max(a0, a1), 0))
/* realloc(ptr, size) */
ENTRY_PROGRAM(realloc_entry, on_entry(ctx, slot, ALLOC_KIND_REALLOC, a1, a0))
/* reallocarray(ptr, n, size) */
ENTRY_PROGRAM(reallocarray_entry, on_entry(ctx, slot, ALLOC_KIND_REALLOCARRAY, mul_or_max(a1, a2), a0))
/* posix_memalign(memptr, align, size) */
ENTRY_PROGRAM(posix_memalign_entry, on_entry(ctx, slot, ALLOC_KIND_POSIX_MEMALIGN, a2, a0))
/* aligned_alloc(align, size), memalign(align, size) */
ENTRY_PROGRAM(aligned_alloc_entry, on_entry(ctx, slot, ALLOC_KIND_ALIGNED_ALLOC, a1, 0))
ENTRY_PROGRAM(memalign_entry, on_entry(ctx, slot, ALLOC_KIND_MEMALIGN, a1, 0))
ENTRY_PROGRAM(valloc_entry, on_entry(ctx, slot, ALLOC_KIND_VALLOC, a0, 0))
ENTRY_PROGRAM(pvalloc_entry, on_entry(ctx, slot, ALLOC_KIND_PVALLOC, a0, 0))
ENTRY_PROGRAM(free_entry, on_free(ctx, slot, a0))
/* C++ operator new/delete in every form: they call malloc/free (or each other) inside, so they
 * are outer calls whose return is where the caller's own frame is intact. new(size), delete(ptr) */
ENTRY_PROGRAM(new_entry, on_entry(ctx, slot, ALLOC_KIND_NEW, a0, 0))
ENTRY_PROGRAM(delete_entry, on_entry(ctx, slot, ALLOC_KIND_DELETE, 0, a0))
/* xallocx(ptr, size, ...) */
ENTRY_PROGRAM(resize_entry, on_entry(ctx, slot, ALLOC_KIND_RESIZE, a1, a0))

/* --mmap. Mappings of files, and the ones allocators make for their pools inside malloc & co
 * (nested calls), are not the program's: only anonymous mappings it makes itself are tracked. */
#define MEMLEAK_MAP_ANONYMOUS 0x20
/* mmap(addr, len, prot, flags, ...); arg2: a file mapping, not tracked (its return still needs
 * its entry) */
ENTRY_PROGRAM(mmap_entry, on_entry2(ctx, slot, ALLOC_KIND_MMAP, a1, a0, !(a3 & MEMLEAK_MAP_ANONYMOUS)))
/* munmap(addr, len) */
ENTRY_PROGRAM(munmap_entry, on_entry(ctx, slot, ALLOC_KIND_MUNMAP, a1, a0))
/* mremap(old_addr, old_size, new_size, ...) */
ENTRY_PROGRAM(mremap_entry, on_entry2(ctx, slot, ALLOC_KIND_MREMAP, a2, a0, a1))

/* One return program serves every allocating kind: the in-flight state says which it was. */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_return) { return on_return(ctx, MEMLEAK_COOKIE_SLOT(bpf_get_attach_cookie(ctx)), false); }

/* Uprobe sessions (Linux 6.12): one program run at the entry and, unless the entry returned
 * non-zero, at the return. Not loaded where the kernel has none (the kfuncs are weak). */
extern bool bpf_session_is_return(void) __ksym __weak;

/* malloc's and calloc's sites (MEMLEAK_COOKIE_CALLOC in the cookie), where the daemon links this
 * instead of their entry programs and alloc_return. */
SEC("uprobe")
int alloc_session(struct pt_regs *ctx)
{
        __u64 cookie = bpf_get_attach_cookie(ctx);
        __u32 slot = MEMLEAK_COOKIE_SLOT(cookie);
        __u64 a0;

        if (bpf_session_is_return())
                return on_return(ctx, slot, true);
        a0 = call_arg(ctx, cookie, 0);
        if (cookie & MEMLEAK_COOKIE_CALLOC)
                return on_leaf_entry(ctx, slot, ALLOC_KIND_CALLOC, mul_or_max(a0, call_arg(ctx, cookie, 1)));
        return on_leaf_entry(ctx, slot, ALLOC_KIND_MALLOC, a0);
}

/* The kernel target: tp_btf programs on the kmem and percpu tracepoints (no kprobes needed).
 * They are loaded with the rest and linked only while the kernel target is attached; its
 * settings are the targets map's entry MEMLEAK_KERNEL_TGID, whose removal stops recording. */

/* The daemon's own tgid: its map reads and socket writes allocate too, and must not feed back. */
const volatile __u32 self_tgid = 0;

#define KERNEL_PAGE_SIZE 4096ull        /* x86-64 (__TARGET_ARCH_x86) */

/* A tp_btf program's kernel stack starts with memleakd's own frames: the program, bpf_trace_runN
 * that ran it (the tracepoint's __bpf_trace_* stub tail-calls it), and __traceiter_<tracepoint>
 * when the tracepoint has several probes (it calls each in turn; a lone probe is called
 * directly). The allocator's frame comes next: that is where the recorded stack starts. */
#define KERNEL_PROBE_FRAMES 2
#define TRACEITER_MAX_BYTES 1024        /* __traceiter_* are about 0x80 bytes */

extern const void __traceiter_kmalloc __ksym __weak;
extern const void __traceiter_kmem_cache_alloc __ksym __weak;
extern const void __traceiter_mm_page_alloc __ksym __weak;
extern const void __traceiter_percpu_alloc_percpu __ksym __weak;

static __always_inline __u64 kernel_stack_skip(void *ctx, __u64 traceiter)
{
        __u64 ips[KERNEL_PROBE_FRAMES + 1];

        if (traceiter && bpf_get_stack(ctx, ips, sizeof(ips), 0) == sizeof(ips) &&
            ips[KERNEL_PROBE_FRAMES] - traceiter < TRACEITER_MAX_BYTES)
                return KERNEL_PROBE_FRAMES + 1;
        return KERNEL_PROBE_FRAMES;
}

static __always_inline bool comm_matches(const struct target_config *cfg)
{
        char comm[MEMLEAK_COMM_LEN];

        if (bpf_get_current_comm(comm, sizeof(comm)))
                return false;
        for (int i = 0; i < MEMLEAK_COMM_LEN; i++) {
                if (comm[i] != cfg->filter_comm[i])
                        return false;
                if (comm[i] == 0)
                        break;
        }
        return true;
}

/* Whether the task allocating now is one the kernel target records. */
static __always_inline bool kernel_alloc_wanted(const struct target_config *cfg)
{
        __u32 tgid = current_tgid();

        if (self_tgid && tgid == self_tgid)
                return false;
        if (cfg->filter_pid && tgid != cfg->filter_pid)
                return false;
        return !cfg->filter_comm_set || comm_matches(cfg);
}

static __always_inline int kernel_free(__u32 space, __u64 addr)
{
        struct alloc_key key = { .tgid = MEMLEAK_KERNEL_TGID, .space = space, .addr = addr };
        struct alloc_info *found, info;

        found = bpf_map_lookup_elem(&allocs, &key);
        if (!found)
                return 0;       /* allocated before the attach, or by a task the filter leaves out */
        info = *found;          /* copy before the entry goes away */
        if (bpf_map_delete_elem(&allocs, &key))
                return 0;       /* another CPU freed it first and accounted for it */
        combined_sub(MEMLEAK_KERNEL_TGID, info.stack_id, &info);
        count_in(counter_row_kernel, COUNTER_FREES);
        return 0;
}

static __always_inline int kernel_alloc(void *ctx, __u32 space, __u64 addr, __u64 size, const void *traceiter)
{
        __u32 tgid = MEMLEAK_KERNEL_TGID;
        struct alloc_key key = { .tgid = MEMLEAK_KERNEL_TGID, .space = space, .addr = addr };
        struct alloc_info info = {};
        struct target_config *cfg;

        cfg = bpf_map_lookup_elem(&targets, &tgid);
        if (!cfg || !kernel_alloc_wanted(cfg))
                return 0;
        if (!addr) {
                count_in(counter_row_kernel, COUNTER_ALLOCS_FAILED);
                return 0;
        }
        if (size < cfg->min_size || (cfg->max_size && size > cfg->max_size)) {
                count_in(counter_row_kernel, COUNTER_ALLOCS_FILTERED);
                return 0;
        }
        /* A live entry at this address means its free was not traced (bulk frees): retire it. */
        if (bpf_map_lookup_elem(&allocs, &key))
                kernel_free(space, addr);

        info.size = size;
        info.weight = size;
        info.timestamp_ns = striped_timestamp(bpf_ktime_get_ns());
        info.stack_id = kernel_stack_id(ctx, kernel_stack_skip(ctx, (__u64)traceiter));
        if (info.stack_id == STACK_ID_OWN)
                return 0;
        if (bpf_map_update_elem(&allocs, &key, &info, BPF_ANY)) {
                count_in(counter_row_kernel, COUNTER_LOST_ALLOCS_MAP_FULL);
                return 0;
        }
        combined_add(counter_row_kernel, MEMLEAK_KERNEL_TGID, info.stack_id, &info);
        count_in(counter_row_kernel, COUNTER_ALLOCS);
        return 0;
}

/* Sizes are what the allocator hands out (kmalloc's bytes_alloc, the cache's object stride,
 * whole pages, percpu size times the possible CPUs), not what the caller asked for. */
SEC("tp_btf/kmalloc")
int BPF_PROG(tp_kmalloc, unsigned long call_site, const void *ptr, size_t bytes_req, size_t bytes_alloc)
{
        return kernel_alloc(ctx, ALLOC_SPACE_SLAB, (__u64)ptr, bytes_alloc, &__traceiter_kmalloc);
}
SEC("tp_btf/kfree")
int BPF_PROG(tp_kfree, unsigned long call_site, const void *ptr)
{
        return kernel_free(ALLOC_SPACE_SLAB, (__u64)ptr);
}
SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(tp_cache_alloc, unsigned long call_site, const void *ptr, struct kmem_cache *s)
{
        return kernel_alloc(ctx, ALLOC_SPACE_SLAB, (__u64)ptr, BPF_CORE_READ(s, size),
                            &__traceiter_kmem_cache_alloc);
}
SEC("tp_btf/kmem_cache_free")
int BPF_PROG(tp_cache_free, unsigned long call_site, const void *ptr)
{
        return kernel_free(ALLOC_SPACE_SLAB, (__u64)ptr);
}
SEC("tp_btf/mm_page_alloc")
int BPF_PROG(tp_page_alloc, struct page *page, unsigned int order)
{
        return kernel_alloc(ctx, ALLOC_SPACE_PAGE, (__u64)page, KERNEL_PAGE_SIZE << order,
                            &__traceiter_mm_page_alloc);
}
SEC("tp_btf/mm_page_free")
int BPF_PROG(tp_page_free, struct page *page)
{
        return kernel_free(ALLOC_SPACE_PAGE, (__u64)page);
}
SEC("tp_btf/percpu_alloc_percpu")
int BPF_PROG(tp_percpu_alloc, unsigned long call_site, bool reserved, bool is_atomic, size_t size,
             size_t align, void *base_addr, int off, void *ptr, size_t bytes_alloc)
{
        return kernel_alloc(ctx, ALLOC_SPACE_PERCPU, (__u64)ptr, bytes_alloc,
                            &__traceiter_percpu_alloc_percpu);
}
SEC("tp_btf/percpu_free_percpu")
int BPF_PROG(tp_percpu_free, void *base_addr, int off, void *ptr)
{
        return kernel_free(ALLOC_SPACE_PERCPU, (__u64)ptr);
}

char LICENSE[] SEC("license") = "GPL";

/* File mappings of targets, recorded as they are made: the program and its interpreter at exec,
 * then each mmap of a file (the loader mapping libraries, dlopen). The daemon builds the module
 * map of a program that exits before it could read /proc/PID/maps from these (memleakctl run).
 * Tracepoints only: these run where fentry and kprobes are not allowed. */
#define NR_MMAP 9                       /* x86-64 */
#define MAP_ANONYMOUS_FLAG 0x20
#define AT_NULL_TYPE 0
#define AT_BASE_TYPE 7                  /* the interpreter's load address */
#define AUXV_PAIRS_MAX 32
#define INTERP_VMAS_MAX 8

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, MEMLEAK_FILE_MAPPINGS_MAX);
        __type(key, struct file_mapping_key);
        __type(value, struct file_mapping);
} file_mappings SEC(".maps");

struct vma_walk {
        __u32 tgid;
        __u32 row;              /* its counters' */
        __u32 found;            /* the vma maps a file and was recorded */
        __u64 ino;              /* its file's */
        __u64 end;              /* where the next one would start */
};

static long record_vma(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
        struct vma_walk *w = data;
        struct file *file = vma->vm_file;
        struct file_mapping_key key = { .tgid = w->tgid, .start = vma->vm_start };
        struct file_mapping m = {};

        w->found = 0;
        w->end = vma->vm_end;
        if (!file)
                return 0;
        m.end = vma->vm_end;
        m.pgoff = (__u64)vma->vm_pgoff * KERNEL_PAGE_SIZE;
        m.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
        m.ino = BPF_CORE_READ(file, f_inode, i_ino);
        m.mm = (__u64)vma->vm_mm;
        m.timestamp_ns = bpf_ktime_get_ns();
        w->found = 1;
        w->ino = m.ino;
        if (bpf_map_update_elem(&file_mappings, &key, &m, BPF_ANY) < 0)
                count_in(w->row, COUNTER_LOST_FILE_MAPPINGS);
        return 0;
}

/* The calling process's tgid when it is a traced process, its counters' row in *row; else 0. */
static __always_inline __u32 traced_tgid(__u32 *row)
{
        __u32 tgid = current_tgid();
        struct target_config *cfg;

        if (tgid == MEMLEAK_KERNEL_TGID || !(cfg = bpf_map_lookup_elem(&targets, &tgid)))
                return 0;
        *row = cfg->counter_row;
        return tgid;
}

/* The loader's mmap of a file returned: record the vma it made (maybe merged with a neighbour). */
SEC("tp_btf/sys_exit")
int BPF_PROG(record_mmap_exit, struct pt_regs *regs, long ret)
{
        struct vma_walk w = {};

        if (BPF_CORE_READ(regs, orig_ax) != NR_MMAP || (ret < 0 && ret > -4096) ||
            (BPF_CORE_READ(regs, r10) & MAP_ANONYMOUS_FLAG))
                return 0;
        w.tgid = traced_tgid(&w.row);
        if (w.tgid)
                bpf_find_vma(bpf_get_current_task_btf(), (__u64)ret, record_vma, &w, 0);
        return 0;
}

/* The kernel mapped the program and its interpreter: the program's code, and the interpreter's
 * mappings from its load address on (they lie side by side). */
/* Its heap blocks gone from the table, its count of them lowered as much (no branch on their
 * number: the verifier would track it through every callback above, and give up). */
static __always_inline void forget_target_blocks(__u32 tgid, __u64 blocks)
{
        struct target_config *cfg = bpf_map_lookup_elem(&targets, &tgid);

        if (cfg)
                target_blocks_add(cfg->slot, -(__s64)blocks);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(record_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
        struct task_struct *task = bpf_get_current_task_btf();
        /* read as a number: the auxiliary vector is reached by arithmetic on it */
        __u64 mm = (__u64)BPF_CORE_READ(task, mm);
        __u64 auxv = mm + bpf_core_field_offset(struct mm_struct, saved_auxv);
        struct vma_walk w = {};
        __u64 base = 0, first_ino;

        w.tgid = traced_tgid(&w.row);
        if (!w.tgid || !mm)
                return 0;
        bpf_find_vma(task, BPF_CORE_READ(task, mm, start_code), record_vma, &w, 0);
        for (int i = 0; i < AUXV_PAIRS_MAX; i++) {
                unsigned long pair[2];

                if (bpf_probe_read_kernel(pair, sizeof(pair), (void *)(auxv + i * sizeof(pair))) < 0 ||
                    pair[0] == AT_NULL_TYPE)
                        break;
                if (pair[0] == AT_BASE_TYPE) {
                        base = pair[1];
                        break;
                }
        }
        if (!base)
                return 0;       /* a static program: no interpreter */
        w.found = 0;
        bpf_find_vma(task, base, record_vma, &w, 0);
        first_ino = w.ino;
        for (int i = 1; i < INTERP_VMAS_MAX; i++) {
                __u64 next = w.end;

                if (!w.found || w.ino != first_ino)
                        break;
                w.found = 0;
                bpf_find_vma(task, next, record_vma, &w, 0);
        }
        return 0;
}

/* A traced process forked: the child's copy of its memory holds the probes' breakpoints, and
 * every allocator call of the child would trap for nothing (unless the daemon follows it). Say
 * so, and the daemon has them removed, or attaches the child. Threads share the target's memory
 * (and are traced): not reported; a vfork child (posix_spawn, system) shares it until it execs,
 * with no breakpoints of its own: reported as such, to be followed, or counted. */
struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, MEMLEAK_FORK_RING_BYTES);
} forks SEC(".maps");

SEC("tp_btf/sched_process_fork")
int BPF_PROG(record_fork, struct task_struct *parent, struct task_struct *child)
{
        struct target_config *cfg;
        struct fork_event *e;
        __u32 parent_tgid;

        if (BPF_CORE_READ(child, tgid) == BPF_CORE_READ(parent, tgid))
                return 0;
        parent_tgid = task_tgid_seen(parent);
        if (!parent_tgid || parent_tgid == MEMLEAK_KERNEL_TGID || !(cfg = bpf_map_lookup_elem(&targets, &parent_tgid)))
                return 0;
        e = bpf_ringbuf_reserve(&forks, sizeof(*e), 0);
        if (!e) {
                count_in(cfg->counter_row, COUNTER_LOST_FORK_EVENTS);
                return 0;
        }
        e->parent_tgid = parent_tgid;
        e->child_tgid = task_tgid_seen(child);
        e->shares_memory = BPF_CORE_READ(child, mm) == BPF_CORE_READ(parent, mm);
        e->exec_kind = 0;
        bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), child->comm);
        bpf_ringbuf_submit(e, 0);
        return 0;
}

/* Whole services (attach "unit" or "cgroup"): the cgroups watched, and each process that enters
 * one by a fork, or execs in one, while it is no target yet (its parent was not traced, or it was
 * moved in: written to cgroup.procs, which fires nothing, then exec'd). The daemon attaches it
 * with the watch's options; the processes moved in that never exec are found by its rescan of
 * cgroup.procs. The child's cgroup at its fork is the parent's, copied into its css_set before
 * the tracepoint; an exec's is the caller's own, bpf_get_current_cgroup_id() (v2 on a hybrid
 * v1+v2 host too). */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, MEMLEAK_CGROUP_WATCHES_MAX);
        __type(key, __u64);
        __type(value, struct cgroup_watch_entry);
} watched_cgroups SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_RINGBUF);
        __uint(max_entries, MEMLEAK_CGROUP_RING_BYTES);
} cgroup_events SEC(".maps");

/* The event that pid tgid (task) entered what w watches: in the ring, or counted lost in w. */
static __always_inline void watched_entered(struct cgroup_watch_entry *w, __u64 cgroup_id, __u32 tgid,
                                            struct task_struct *task, __u32 kind)
{
        struct cgroup_event *e = bpf_ringbuf_reserve(&cgroup_events, sizeof(*e), 0);

        if (!e) {
                __sync_fetch_and_add(&w->lost, 1);
                return;
        }
        e->tgid = tgid;
        e->watch_id = w->watch_id;
        e->cgroup_id = cgroup_id;
        e->kind = kind;
        e->pad = 0;
        bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
        bpf_ringbuf_submit(e, 0);
}

/* Whether cgroup_id is watched (the process said in the ring, if it is no target yet). */
static __always_inline bool cgroup_entered(__u64 cgroup_id, __u32 tgid, struct task_struct *task, __u32 kind)
{
        struct cgroup_watch_entry *w = bpf_map_lookup_elem(&watched_cgroups, &cgroup_id);

        if (!w)
                return false;
        if (tgid && !bpf_map_lookup_elem(&targets, &tgid))
                watched_entered(w, cgroup_id, tgid, task, kind);
        return true;
}

/* Programs declared in memleakd.conf ([target] exe= or comm=): by the file exec'd (as the kernel
 * keys it; for a script, its interpreter's, as /proc/PID/exe), or by the name the process takes
 * at its exec. Their entries have the same shape as a cgroup's. */
struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, MEMLEAK_PROGRAM_WATCHES_MAX);
        __type(key, struct unwind_file_key);
        __type(value, struct cgroup_watch_entry);
} watched_exes SEC(".maps");

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, MEMLEAK_PROGRAM_WATCHES_MAX);
        __type(key, char[MEMLEAK_COMM_LEN]);
        __type(value, struct cgroup_watch_entry);
} watched_comms SEC(".maps");

static __always_inline void program_exec(__u32 tgid, struct task_struct *task, struct linux_binprm *bprm)
{
        struct unwind_file_key exe = {
                .dev = BPF_CORE_READ(bprm, file, f_inode, i_sb, s_dev),
                .ino = BPF_CORE_READ(bprm, file, f_inode, i_ino),
        };
        char comm[MEMLEAK_COMM_LEN] = {};
        struct cgroup_watch_entry *w;

        if (!tgid || bpf_map_lookup_elem(&targets, &tgid))
                return;
        w = bpf_map_lookup_elem(&watched_exes, &exe);
        if (!w) {
                bpf_probe_read_kernel_str(comm, sizeof(comm), task->comm);
                w = bpf_map_lookup_elem(&watched_comms, comm);
        }
        if (w)
                watched_entered(w, 0, tgid, task, CGROUP_EVENT_PROGRAM);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(watch_cgroup_fork, struct task_struct *parent, struct task_struct *child)
{
        __u32 parent_tgid = task_tgid_seen(parent);

        if (BPF_CORE_READ(child, tgid) == BPF_CORE_READ(parent, tgid))
                return 0;       /* a thread */
        /* a target's child is followed from its fork (record_fork), as its family's */
        if (parent_tgid && bpf_map_lookup_elem(&targets, &parent_tgid))
                return 0;
        (void)cgroup_entered(BPF_CORE_READ(child, cgroups, dfl_cgrp, kn, id), task_tgid_seen(child), child,
                             CGROUP_EVENT_FORK);
        return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(watch_cgroup_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
        __u32 tgid = current_tgid();

        if (!cgroup_entered(bpf_get_current_cgroup_id(), tgid, p, CGROUP_EVENT_EXEC))
                program_exec(tgid, p, bprm);
        return 0;
}

/* Processes a tracer of the daemon's holds (memleakctl run's program, under its exit holder, and
 * the children it follows): at each event below that says it mapped code not examined yet, the
 * thread is sent SIGURG, which the tracer takes as a stop and holds until the file's table is in
 * (reach/exit-hold.c); the value counts the signals sent, for the tracer to tell them from the
 * program's own. Untraced, SIGURG's default action is to ignore it. */
#define SIGURG_NUMBER 23

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(max_entries, 64);                /* max_targets, set at load */
        __type(key, __u32);
        __type(value, __u64);
} code_holds SEC(".maps");

static __always_inline void hold_for_tables(__u32 tgid)
{
        __u64 *sent = bpf_map_lookup_elem(&code_holds, &tgid);

        if (sent && bpf_send_signal_thread(SIGURG_NUMBER) == 0)
                __sync_fetch_and_add(sent, 1);
}

/* A traced process mapped code of a file the daemon has not examined (dlopen, the loader mapping
 * a new program's libraries): said at once, and the daemon reads its maps and loads the file's
 * unwind table then, not at its next snapshot tick; until it is in, a walk that meets the file
 * stops there (unwind.h: NO_TABLE). A syscall tracepoint: it runs for mmap alone. */
struct code_mapping {
        struct unwind_file_key key;
        __u32 found;            /* an executable mapping of a file */
};

static long code_mapping_of(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
        struct code_mapping *c = data;
        struct file *file = vma->vm_file;

        if (!file || !(BPF_CORE_READ(vma, vm_flags) & VM_EXEC))
                return 0;
        c->key.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
        c->key.ino = BPF_CORE_READ(file, f_inode, i_ino);
        c->found = 1;
        return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int watch_code_mapping(struct trace_event_raw_sys_exit *ctx)
{
        struct code_mapping c = {};
        struct fork_event *e;
        long ret = ctx->ret;
        __u32 tgid, row = 0;

        if (ret < 0 && ret > -4096)
                return 0;
        tgid = traced_tgid(&row);
        if (!tgid)
                return 0;
        if (bpf_find_vma(bpf_get_current_task_btf(), (__u64)ret, code_mapping_of, &c, 0) < 0 || !c.found ||
            bpf_map_lookup_elem(&unwind_files, &c.key))
                return 0;
        e = bpf_ringbuf_reserve(&forks, sizeof(*e), 0);
        if (!e) {
                count_in(row, COUNTER_LOST_FORK_EVENTS);
                return 0;
        }
        e->parent_tgid = tgid;
        e->child_tgid = 0;
        e->shares_memory = 0;
        e->exec_kind = FORK_EVENT_CODE_MAPPED;
        e->comm[0] = 0;                 /* (not read for this event) */
        bpf_ringbuf_submit(e, 0);
        hold_for_tables(tgid);
        return 0;
}

/* A traced process execs: its old image's memory goes with it, and so do its outstanding blocks,
 * its mappings and its per-stack bytes here. Forgotten in the exec itself, before the new image
 * runs and after its other threads are gone: nothing of the process can be recorded meanwhile,
 * so what is there is the old image's, all of it. Its rows stay, at zero: the reclaim gives them
 * and their stacks back. */
struct exec_forget {
        __u32 tgid;
        __u64 blocks;           /* heap blocks and mappings forgotten */
};

static long forget_table_block(struct bpf_map *map, __u32 *index, struct alloc_slot *s, struct exec_forget *f)
{
        __u64 live = ALLOC_SLOT_WORD(f->tgid, ALLOC_SLOT_LIVE);

        if (alloc_slot_word(s) == live &&
            __sync_val_compare_and_swap(&s->word, live, ALLOC_SLOT_WORD(f->tgid, ALLOC_SLOT_FREE)) == live)
                f->blocks++;
        return 0;
}

static long forget_overflow_block(struct bpf_map *map, struct alloc_key *key, struct alloc_info *info,
                                  struct exec_forget *f)
{
        if (key->tgid == f->tgid && bpf_map_delete_elem(&allocs, key) == 0) {
                __sync_fetch_and_sub(&alloc_overflow, 1);
                f->blocks++;
        }
        return 0;
}

static long forget_mapping(struct bpf_map *map, struct alloc_key *key, struct alloc_info *info, struct exec_forget *f)
{
        if (key->tgid == f->tgid && bpf_map_delete_elem(&mmaps, key) == 0)
                f->blocks++;
        return 0;
}

static long forget_row_bytes(struct bpf_map *map, __u32 *index, struct combined_row *r, struct exec_forget *f)
{
        __u64 word = combined_row_word(r);
        __u32 state = COMBINED_ROW_STATE(word);

        if (COMBINED_ROW_TGID(word) == f->tgid && (state == ALLOC_SLOT_LIVE || state == ALLOC_SLOT_RETIRING)) {
                r->bytes = 0;
                r->allocs = 0;
        }
        return 0;
}

/* Its mapping list (unwind.h) is the old image's: emptied, under a generation of its own (odd:
 * the daemon's are even), so no row a thread cached and no memo holds; until the daemon lists the
 * new image's mappings, each frame is found by its vma, and one in a file not examined yet stops
 * the walk (NO_TABLE) rather than being stepped by another program's table. */
static long forget_mapping_list(struct bpf_map *map, __u32 *slot, struct unwind_target *t, struct exec_forget *f)
{
        if (t->tgid != f->tgid)
                return 0;
        t->n = 0;
        t->generation += 1 + (t->generation & 1);
        return 1;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(forget_exec_image, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
        struct exec_forget f = {};
        struct fork_event *e;
        __u32 row = 0;

        f.tgid = traced_tgid(&row);
        if (!f.tgid)
                return 0;
        bpf_for_each_map_elem(&alloc_table, forget_table_block, &f, 0);
        if (alloc_overflow)
                bpf_for_each_map_elem(&allocs, forget_overflow_block, &f, 0);
        forget_target_blocks(f.tgid, f.blocks);
        bpf_for_each_map_elem(&mmaps, forget_mapping, &f, 0);
        bpf_for_each_map_elem(&combined, forget_row_bytes, &f, 0);
        bpf_for_each_map_elem(&unwind_targets, forget_mapping_list, &f, 0);
        count_by(row, COUNTER_FREED_BY_EXEC, f.blocks);
        /* The daemon hears of it: the new program's maps are read at once (its tables loaded
         * before the next snapshot). Exec'd by a thread other than the leader, which took over the
         * leader's pid: the probes' links name the old leader, now gone, and the kernel no longer
         * breaks in the new image: the daemon probes the new image again. */
        e = bpf_ringbuf_reserve(&forks, sizeof(*e), 0);
        if (!e) {
                count_in(row, COUNTER_LOST_FORK_EVENTS);
                return 0;
        }
        e->parent_tgid = f.tgid;
        e->child_tgid = 0;
        e->shares_memory = 0;
        e->exec_kind = old_pid != BPF_CORE_READ(p, pid) ? FORK_EVENT_EXEC_THREAD : FORK_EVENT_EXEC_LEADER;
        /* set by the exec already: a process gone before the daemon reads /proc still has it */
        bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), p->comm);
        bpf_ringbuf_submit(e, 0);
        hold_for_tables(f.tgid);
        return 0;
}

/* The stack table read whole, for a report over many stacks: each stack as a struct
 * stack_record and its depth's frames, not the value's full max_stack_depth. */
SEC("iter/bpf_map_elem")
int dump_stacks(struct bpf_iter__bpf_map_elem *ctx)
{
        const __u64 *id = ctx->key;
        const struct stack_trace *t = ctx->value;
        struct stack_iter_record rec;
        __u32 depth;

        if (!id || !t)
                return 0;
        depth = t->depth;
        if (depth > stack_depth_max)
                depth = stack_depth_max;
        if (depth > MEMLEAK_MAX_STACK_DEPTH)
                depth = MEMLEAK_MAX_STACK_DEPTH;
        rec = (struct stack_iter_record) { .id = *id, .depth = depth, .stop = t->stop };
        bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
        bpf_seq_write(ctx->meta->seq, t->ips, depth * sizeof(__u64));
        return 0;
}
