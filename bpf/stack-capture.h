/* SPDX-License-Identifier: GPL-2.0 */
/* Taking a stack and interning it in the stack table: a user stack by the target's unwind
 * tables or by frame pointer, a kernel stack by the kernel's own walk. Included once, by
 * memleak.bpf.c, after stack-table.h and unwind.h. */
#pragma once

/* The calling thread's user stack (a uprobe's; tgid the target at slot), interned: its id, or
 * -errno. Targets with unwind tables are walked by them (unwind.h), the others by frame pointer
 * (bpf_get_stack).
 * A global function: the verifier checks it once per program, not once per path that reaches
 * it (the walker's loop would be checked again on each). */
__noinline __s64 user_stack_id(struct pt_regs *ctx, __u32 tgid, __u32 slot)
{
        struct user_stack_scratch *s;
        struct stack_trace *t;
        long r, walked;
        __s64 id = 0;

        if (!ctx)
                return -EINVAL;
        s = bpf_task_storage_get(&user_stack_scratch, bpf_get_current_task_btf(), NULL,
                                 BPF_LOCAL_STORAGE_GET_F_CREATE);
        if (!s) {
                count_in(slot, COUNTER_STACK_NO_SCRATCH);
                return -ENOMEM;
        }
        t = &s->trace;
        s->chunk.words = 0;     /* the stack is another now */
        walk_row_set(slot);     /* the walker's counts are the target's */
        walked = unwind_user_stack(ctx, tgid, slot, s, &id);
        walk_row_set(counter_row_other);
        if (walked == 1)
                return id;      /* the stack of a walk the thread made before (walk-memo.h) */
        if (walked == 0)
                r = t->depth > 0 ? 0 : -EFAULT;
        else
                r = stack_captured(slot, t, bpf_get_stack(ctx, t->ips, stack_capture_bytes(), BPF_F_USER_STACK));
        if (r < 0)
                return r;
        id = stack_intern(slot, t);
        if (walked == 0 && id >= 0) {
                struct walk_memo *m = &s->memo[s->memo_pending & (WALK_MEMOS - 1)];

                walk_memo_keep(m, &s->reads, id);
        }
        return id;
}

/* The stack table and the task storage allocate their elements through bpf_mem_alloc, which
 * refills its caches from an irq_work: the kernel allocations made there are memleakd's own,
 * whatever task they interrupted, and are not recorded (as the daemon's own are not). */
extern const void bpf_mem_refill __ksym __weak;
#define MEM_REFILL_MAX_BYTES 1024       /* bpf_mem_refill is about 0x100 bytes */
#define MEM_REFILL_FRAMES 4             /* it calls alloc_bulk, which calls the allocator */
#define STACK_ID_OWN (-ECANCELED)

static __always_inline bool stack_is_memleakd_own(const struct stack_trace *t)
{
        __u64 refill = (__u64)&bpf_mem_refill;

        if (!refill)
                return false;
        for (__u32 i = 0; i < MEM_REFILL_FRAMES; i++)
                if (i < t->depth && t->ips[i] - refill < MEM_REFILL_MAX_BYTES)
                        return true;
        return false;
}

/* The kernel stack of a tracepoint program, its first `skip` frames left out, interned; or
 * STACK_ID_OWN for an allocation memleakd's maps made. */
static __always_inline __s64 kernel_stack_id(void *ctx, __u64 skip)
{
        struct kernel_stack_scratch *s;
        __u32 zero = 0, level;
        __s64 id;
        long r;

        s = bpf_map_lookup_elem(&kernel_stack_scratch, &zero);
        if (!s)
                return -ENOMEM;
        level = s->nesting;
        if (level >= KERNEL_STACK_NESTING) {
                count_in(counter_row_kernel, COUNTER_STACK_NO_SCRATCH);
                return -ENOMEM;
        }
        s->nesting = level + 1;
        r = stack_captured(counter_row_kernel, &s->slot[level],
                           bpf_get_stack(ctx, s->slot[level].ips, stack_capture_bytes(),
                                         skip & BPF_F_SKIP_FIELD_MASK));
        if (r < 0)
                id = r;
        else if (stack_is_memleakd_own(&s->slot[level]))
                id = STACK_ID_OWN;
        else
                id = stack_intern(counter_row_kernel, &s->slot[level]);
        s->nesting = level;
        return id;
}
