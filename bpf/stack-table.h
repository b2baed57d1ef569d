/* SPDX-License-Identifier: GPL-2.0 */
/* memleakd's own stack table: a stack is stored under a 64-bit hash of its frames, and the frames
 * are compared on every lookup, so two different stacks never share an id (bpf_get_stackid's
 * table keeps one stack per bucket and drops or, without frames compared, mixes up the others).
 * A stack's id depends on its frames only: it is the same in every snapshot, and a stack the
 * daemon deleted comes back under the same id. Included once, by memleak.bpf.c. */
#pragma once

/* Frames kept per stack (max_stack_depth); the stacks map's values hold exactly that many. */
const volatile __u32 stack_depth_max = MEMLEAK_MAX_STACK_DEPTH;

struct {
        __uint(type, BPF_MAP_TYPE_HASH);
        __uint(map_flags, BPF_F_NO_PREALLOC);   /* memory for the stacks there are, not the limit */
        __uint(max_entries, 65536);
        __uint(key_size, sizeof(__u64));
        /* sized at load to hold max_stack_depth frames: no BTF type, whose size would differ */
        __uint(value_size, sizeof(struct stack_trace));
} stacks SEC(".maps");

/* Stacks added to the table, and (by the daemon) deleted from it: their difference is about the
 * stacks in it, which tells the daemon when to look for stacks no row uses any more. */
__u64 stacks_added = 0;
__u64 stacks_deleted = 0;

/* The kernel target's programs run on tracepoints with preemption off, but an interrupt may run
 * another of them on the same CPU in the middle: each nesting level has its own slot. */
#define KERNEL_STACK_NESTING 4

struct kernel_stack_scratch {
        __u32 nesting;
        __u32 pad;
        struct stack_trace slot[KERNEL_STACK_NESTING];
};

struct {
        __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
        __uint(max_entries, 1);
        __type(key, __u32);
        __type(value, struct kernel_stack_scratch);
} kernel_stack_scratch SEC(".maps");

/* Ids are >= 0 (< 0 is -errno, "no stack") and below 2^53, so JSON numbers carry them exactly. */
#define STACK_ID_MASK ((1ull << 53) - 1)
#define STACK_PROBES 4                          /* keys tried before a stack counts as a clash */
#define GOLDEN64 0x9e3779b97f4a7c15ull

static __always_inline __u64 stack_hash(const struct stack_trace *t)
{
        __u64 h = GOLDEN64 ^ ((__u64)t->depth << 32 | t->stop);

        for (__u32 i = 0; i < MEMLEAK_MAX_STACK_DEPTH; i++) {
                if (i >= t->depth || i >= stack_depth_max)
                        break;
                h = (h ^ t->ips[i]) * GOLDEN64;
                h ^= h >> 29;
        }
        return memleak_mix64(h);
}

static __always_inline bool stack_equal(const struct stack_trace *a, const struct stack_trace *b)
{
        if (a->depth != b->depth || a->stop != b->stop)
                return false;
        for (__u32 i = 0; i < MEMLEAK_MAX_STACK_DEPTH; i++) {
                if (i >= a->depth || i >= stack_depth_max)
                        break;
                if (a->ips[i] != b->ips[i])
                        return false;
        }
        return true;
}

/* The id of stack t in the table, added if it is new; -ENOSPC when the table is full, -EEXIST
 * when every key this stack may take holds another stack (counted either way, in the counters'
 * row of the target it is taken for). */
static __noinline __s64 stack_intern(__u32 row, struct stack_trace *t)
{
        __u64 h;

        if (!t)
                return -EINVAL;
        h = stack_hash(t);
        for (__u32 probe = 0; probe < STACK_PROBES; probe++) {
                __u64 key = (h + probe) & STACK_ID_MASK;
                struct stack_trace *found = bpf_map_lookup_elem(&stacks, &key);
                long r;

                if (!found) {
                        r = bpf_map_update_elem(&stacks, &key, t, BPF_NOEXIST);
                        if (r == 0) {
                                __sync_fetch_and_add(&stacks_added, 1);
                                return key;
                        }
                        if (r != -EEXIST) {
                                count_in(row, COUNTER_STACK_TABLE_FULL);
                                return -ENOSPC;
                        }
                        /* Another CPU added a stack under this key just now: which one? */
                        found = bpf_map_lookup_elem(&stacks, &key);
                        if (!found)
                                continue;
                }
                if (stack_equal(found, t))
                        return key;
        }
        count_in(row, COUNTER_STACK_HASH_CLASH);
        return -EEXIST;
}

/* Capture size: the frames the table keeps, in bytes (a constant once the object is loaded). */
static __always_inline __u32 stack_capture_bytes(void)
{
        __u32 n = stack_depth_max;

        if (n == 0 || n > MEMLEAK_MAX_STACK_DEPTH)
                n = MEMLEAK_MAX_STACK_DEPTH;
        return n * sizeof(__u64);
}

/* Fill t from bpf_get_stack()'s answer; -errno (counted) when there is no stack. */
static __always_inline long stack_captured(__u32 row, struct stack_trace *t, long bytes)
{
        if (bytes < 0) {
                if (bytes == -EFAULT)
                        count_in(row, COUNTER_STACK_EFAULT);
                else
                        count_in(row, COUNTER_STACK_OTHER);
                return bytes;
        }
        t->depth = bytes / sizeof(__u64);
        t->stop = 0;
        if (t->depth == 0) {
                count_in(row, COUNTER_STACK_EFAULT);
                return -EFAULT;
        }
        return 0;
}
