/* SPDX-License-Identifier: GPL-2.0 */
/* The per-stack totals: combined, an array of struct combined_row searched by open addressing (a
 * (tgid, space, stack) sits in one of the COMBINED_TABLE_WINDOW rows from its hash's), whose rows
 * are claimed by compare-and-swap, as alloc_table's slots are. The daemon reads it in place, in
 * one pass over its memory, where a hash map's entries had to be visited one by one, scattered
 * in kernel memory (most of a snapshot tick). A key's heap bytes are spread over a row per stripe
 * of CPUs (COMBINED_STRIPES), each block's free taking from the row its add went to: CPUs
 * allocating from one stack at once do not all update one cache line. A row at zero (its
 * stack's blocks all freed) is retired by the daemon (ALLOC_SLOT_RETIRING) and freed at its next
 * pass if nothing came back to it meanwhile: an add to a retiring row makes it live again first,
 * a take finds it as it is (daemon/bpf/reclaim.c). The daemon frees a target's rows once it is
 * gone. Two CPUs making the same row at once may make two: the daemon sums the rows of a key,
 * and a free takes from the first. Included once, by memleak.bpf.c, after alloc-table.h (GOLDEN64,
 * compiler_barrier). */
#pragma once

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_MMAPABLE);      /* the daemon reads and purges it in place */
        __uint(max_entries, 1);                 /* set at load, a power of two */
        __type(key, __u32);
        __type(value, struct combined_row);
} combined SEC(".maps");

/* combined's max_entries - 1, set at load. */
const volatile __u32 combined_mask = 0;

/* Claims of a row lost to another CPU before a row counts as lost. */
#define COMBINED_CLAIM_ATTEMPTS 2

static __always_inline __u32 combined_hash(__u64 live, __s64 stack_id)
{
        return (__u32)memleak_mix64((__u64)stack_id ^ live * GOLDEN64);
}

static __always_inline struct combined_row *combined_row(__u32 index)
{
        __u32 key = index & combined_mask;

        return bpf_map_lookup_elem(&combined, &key);
}

static __always_inline __u64 combined_row_word(const struct combined_row *r)
{
        return *(volatile const __u64 *)&r->word;
}

/* Add bytes and allocs to tgid's row of (space, stack_id), claiming one in its window when it has
 * none: 0, or -ENOSPC when the window has no room (its caller counts it, in its target's row). A
 * global function: the verifier checks it once, not at each of its callers. */
__noinline int combined_add_in(__u32 tgid, __u32 space, __s64 stack_id, __u64 bytes, __u64 allocs)
{
        __u64 live = COMBINED_ROW_WORD(tgid, space, ALLOC_SLOT_LIVE);
        __u64 retiring = COMBINED_ROW_WORD(tgid, space, ALLOC_SLOT_RETIRING);
        __u32 h = combined_hash(live, stack_id);

        for (int attempt = 0; attempt < COMBINED_CLAIM_ATTEMPTS; attempt++) {
                __u32 room = COMBINED_TABLE_WINDOW;
                __u64 room_word = 0;
                struct combined_row *r;

                for (__u32 i = 0; i < COMBINED_TABLE_WINDOW; i++) {
                        __u64 word;
                        __u32 state;

                        r = combined_row(h + i);
                        if (!r)
                                break;
                        word = combined_row_word(r);
                        /* A retiring row is made live again before the add: the daemon frees
                         * only rows still retiring (and at zero) at its next pass. */
                        if (word == retiring && r->stack_id == stack_id)
                                word = __sync_val_compare_and_swap(&r->word, retiring, live);
                        if ((word == live || word == retiring) && r->stack_id == stack_id) {
                                __sync_fetch_and_add(&r->bytes, bytes);
                                __sync_fetch_and_add(&r->allocs, allocs);
                                return 0;
                        }
                        state = COMBINED_ROW_STATE(word);
                        if ((state == ALLOC_SLOT_EMPTY || state == ALLOC_SLOT_FREE) && room == COMBINED_TABLE_WINDOW) {
                                room = i;
                                room_word = word;
                        }
                        if (word == ALLOC_SLOT_EMPTY)
                                break;  /* no row was ever made past it */
                }
                if (room == COMBINED_TABLE_WINDOW)
                        break;
                r = combined_row(h + room);
                if (r && __sync_val_compare_and_swap(&r->word, room_word,
                                                     COMBINED_ROW_WORD(tgid, space, ALLOC_SLOT_BUSY)) == room_word) {
                        r->stack_id = stack_id;
                        r->bytes = bytes;
                        r->allocs = allocs;
                        compiler_barrier();     /* x86-64 keeps stores in order: the row is in before its word */
                        *(volatile __u64 *)&r->word = live;
                        return 0;
                }
                /* Another CPU claimed that row first: search again, it may be this stack's now. */
        }
        return -ENOSPC;
}

/* Take bytes and allocs from tgid's row of (space, stack_id): 0, or -ENOENT when it has none (its
 * add was lost, and counted then). Global, as combined_add_in(). */
__noinline int combined_sub_in(__u32 tgid, __u32 space, __s64 stack_id, __u64 bytes, __u64 allocs)
{
        __u64 live = COMBINED_ROW_WORD(tgid, space, ALLOC_SLOT_LIVE);
        __u64 retiring = COMBINED_ROW_WORD(tgid, space, ALLOC_SLOT_RETIRING);
        __u32 h = combined_hash(live, stack_id);

        for (__u32 i = 0; i < COMBINED_TABLE_WINDOW; i++) {
                struct combined_row *r = combined_row(h + i);
                __u64 word;

                if (!r)
                        break;
                word = combined_row_word(r);
                if ((word == live || word == retiring) && r->stack_id == stack_id) {
                        __sync_fetch_and_sub(&r->bytes, bytes);
                        __sync_fetch_and_sub(&r->allocs, allocs);
                        return 0;
                }
                if (word == ALLOC_SLOT_EMPTY)
                        break;
        }
        return -ENOENT;
}

/* Heap blocks (and the kernel's objects) share their stack's rows, one per stripe of CPUs, the
 * block's stripe in its timestamp (striped_timestamp()); mappings have their own row. A block
 * counts for its weight (its size unless sampled). */
static __always_inline void combined_add(__u32 row, __u32 tgid, __s64 stack_id, const struct alloc_info *info)
{
        if (combined_add_in(tgid, COMBINED_SPACE_STRIPE(0, ALLOC_INFO_STRIPE(info->timestamp_ns)), stack_id,
                            info->weight, MEMLEAK_WEIGHT_ALLOCS(info->weight, info->size)) < 0)
                count_in(row, COUNTER_LOST_COMBINED_MAP_FULL);
}

static __always_inline void combined_sub(__u32 tgid, __s64 stack_id, const struct alloc_info *info)
{
        combined_sub_in(tgid, COMBINED_SPACE_STRIPE(0, ALLOC_INFO_STRIPE(info->timestamp_ns)), stack_id, info->weight,
                        MEMLEAK_WEIGHT_ALLOCS(info->weight, info->size));
}

/* A block's timestamp (ns) with this CPU's stripe in its low bits: the row combined_add() adds
 * its bytes to. */
static __always_inline __u64 striped_timestamp(__u64 ns)
{
        return (ns & ~(__u64)(COMBINED_STRIPES - 1)) | (bpf_get_smp_processor_id() & (COMBINED_STRIPES - 1));
}
