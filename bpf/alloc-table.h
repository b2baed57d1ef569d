/* SPDX-License-Identifier: GPL-2.0 */
/* Where a process target's outstanding heap blocks are kept: alloc_table, an array searched by
 * open addressing (a block sits in one of the ALLOC_TABLE_WINDOW slots from its hash's), whose
 * look-ups the verifier writes inline and whose slots are claimed by compare-and-swap. A hash
 * map's insert takes a bucket lock and an element from its allocator, its delete gives them back;
 * here a block costs a few loads and two atomic operations. A block whose window is full goes to
 * the allocs hash map instead, and alloc_overflow says whether any is there, so that a free finds
 * a block in either. Included once, by memleak.bpf.c, after stack-table.h. */
#pragma once

struct {
        __uint(type, BPF_MAP_TYPE_ARRAY);
        __uint(map_flags, BPF_F_MMAPABLE);      /* the daemon reads and purges it in place */
        __uint(max_entries, ALLOC_TABLE_SLOTS_MAX);     /* set at load, a power of two */
        __type(key, __u32);
        __type(value, struct alloc_slot);
} alloc_table SEC(".maps");

/* alloc_table's max_entries - 1, set at load. */
const volatile __u32 alloc_table_mask = ALLOC_TABLE_SLOTS_MAX - 1;

/* A process target's blocks in the allocs map: 0 lets a free that missed the table skip its
 * look-up. Never below their number: raised before a block goes in, lowered once it is out, by
 * whoever deleted it (a free here, or the daemon's purge of a target that is gone). */
__u64 alloc_overflow = 0;

/* A block goes to the allocs map only when its window has no empty slot, and an empty slot never
 * comes back: a window with one says its blocks are nowhere else. Unless a block went there
 * after losing the race for a slot of a window with room: then this is set, for good. */
__u32 alloc_overflow_raced = 0;

#define compiler_barrier() asm volatile("" ::: "memory")

static __always_inline __u32 alloc_table_hash(__u32 tgid, __u64 addr)
{
        return memleak_alloc_hash(tgid, addr);
}

static __always_inline struct alloc_slot *alloc_table_slot(__u32 index)
{
        __u32 key = index & alloc_table_mask;

        return bpf_map_lookup_elem(&alloc_table, &key);
}

static __always_inline __u64 alloc_slot_word(const struct alloc_slot *s)
{
        return *(volatile const __u64 *)&s->word;
}

static __always_inline void alloc_slot_set_word(struct alloc_slot *s, __u64 word)
{
        *(volatile __u64 *)&s->word = word;
}

/* Whether a block whose window was searched may be in the allocs map: some are, and the
 * window had no empty slot (or a block went there out of turn). */
static __always_inline bool alloc_overflow_possible(bool window_has_empty)
{
        return alloc_overflow && (!window_has_empty || alloc_overflow_raced);
}

/* The live slot holding tgid's block at addr, or NULL; *elsewhere: whether it may be in the
 * allocs map instead. */
static __always_inline struct alloc_slot *alloc_table_find(__u32 tgid, __u64 addr, bool *elsewhere)
{
        __u32 h = alloc_table_hash(tgid, addr);
        __u64 live = ALLOC_SLOT_WORD(tgid, ALLOC_SLOT_LIVE);

        *elsewhere = alloc_overflow_possible(false);
        for (__u32 i = 0; i < ALLOC_TABLE_WINDOW; i++) {
                struct alloc_slot *s = alloc_table_slot(h + i);
                __u64 word;

                if (!s)
                        return NULL;
                word = alloc_slot_word(s);
                if (word == ALLOC_SLOT_EMPTY) {
                        /* no block was ever put past an empty slot, nor into the allocs map */
                        *elsewhere = alloc_overflow_possible(true);
                        return NULL;
                }
                if (word == live && s->addr == addr) {
                        *elsewhere = false;
                        return s;
                }
        }
        return NULL;
}

/* Hold live slot s (BUSY) when it still has tgid's block at addr: false when another CPU took
 * it first (a double free) or it holds another block now. */
static __always_inline bool alloc_slot_claim(struct alloc_slot *s, __u32 tgid, __u64 addr)
{
        __u64 live = ALLOC_SLOT_WORD(tgid, ALLOC_SLOT_LIVE);

        if (__sync_val_compare_and_swap(&s->word, live, ALLOC_SLOT_WORD(tgid, ALLOC_SLOT_BUSY)) != live)
                return false;
        if (s->addr != addr) {
                alloc_slot_set_word(s, live);
                return false;
        }
        return true;
}

/* Take tgid's block at addr out of the table, its info copied to *info: false when it is not
 * there (*elsewhere: whether it may be in the allocs map). */
static __always_inline bool alloc_table_take(__u32 tgid, __u64 addr, struct alloc_info *info, bool *elsewhere)
{
        struct alloc_slot *s = alloc_table_find(tgid, addr, elsewhere);

        if (!s || !alloc_slot_claim(s, tgid, addr))
                return false;
        *info = s->info;
        compiler_barrier();
        alloc_slot_set_word(s, ALLOC_SLOT_WORD(tgid, ALLOC_SLOT_FREE));
        return true;
}

/* Write the block into slot s, which this CPU holds BUSY, and let it be found. */
static __always_inline void alloc_slot_fill(struct alloc_slot *s, __u32 tgid, __u64 addr,
                                            const struct alloc_info *info)
{
        s->addr = addr;
        s->info = *info;
        compiler_barrier();     /* x86-64 keeps stores in order: the fields are in before the word */
        alloc_slot_set_word(s, ALLOC_SLOT_WORD(tgid, ALLOC_SLOT_LIVE));
}

/* Where alloc_table_put() put a block. */
enum { ALLOC_PUT_NEW, ALLOC_PUT_REPLACED, ALLOC_PUT_NO_ROOM, ALLOC_PUT_LOST_RACE };

/* Put tgid's block at addr into its window: ALLOC_PUT_NEW; ALLOC_PUT_REPLACED when a live
 * entry of the same block was there (its free was missed), *old its info; ALLOC_PUT_NO_ROOM
 * when every slot of the window is taken; ALLOC_PUT_LOST_RACE when another CPU claimed the slot
 * it had found. *elsewhere: whether a stale entry of the block may be in the allocs map. */
static __always_inline int alloc_table_put(__u32 tgid, __u64 addr, const struct alloc_info *info,
                                           struct alloc_info *old, bool *elsewhere)
{
        __u32 h = alloc_table_hash(tgid, addr), room = ALLOC_TABLE_WINDOW;
        __u64 live = ALLOC_SLOT_WORD(tgid, ALLOC_SLOT_LIVE), room_word = 0;
        struct alloc_slot *s;
        bool empty = false;

        *elsewhere = alloc_overflow_possible(false);
        for (__u32 i = 0; i < ALLOC_TABLE_WINDOW; i++) {
                __u64 word;
                __u32 state;

                s = alloc_table_slot(h + i);
                if (!s)
                        return ALLOC_PUT_NO_ROOM;
                word = alloc_slot_word(s);
                state = ALLOC_SLOT_STATE(word);
                if (word == live && s->addr == addr) {
                        if (!alloc_slot_claim(s, tgid, addr))
                                continue;
                        *old = s->info;
                        alloc_slot_fill(s, tgid, addr, info);
                        *elsewhere = false;     /* it was here */
                        return ALLOC_PUT_REPLACED;
                }
                if ((state == ALLOC_SLOT_EMPTY || state == ALLOC_SLOT_FREE) && room == ALLOC_TABLE_WINDOW) {
                        room = i;
                        room_word = word;
                }
                if (word == ALLOC_SLOT_EMPTY) {
                        empty = true;
                        break;          /* nothing of this block's past it */
                }
        }
        *elsewhere = alloc_overflow_possible(empty);
        if (room == ALLOC_TABLE_WINDOW)
                return ALLOC_PUT_NO_ROOM;
        s = alloc_table_slot(h + room);
        if (s && __sync_val_compare_and_swap(&s->word, room_word, ALLOC_SLOT_WORD(tgid, ALLOC_SLOT_BUSY)) == room_word) {
                alloc_slot_fill(s, tgid, addr, info);
                return ALLOC_PUT_NEW;
        }
        return ALLOC_PUT_LOST_RACE;
}
