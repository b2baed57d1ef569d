/* SPDX-License-Identifier: GPL-2.0-only */
#include <assert.h>
#include <string.h>
#include "auto-sample.h"
#include "macro.h"

uint64_t auto_sample_share(uint64_t max_allocs, uint32_t n_targets)
{
        return max_allocs / MAX(n_targets, 1u);
}

uint32_t auto_sample_fill_percent(uint64_t blocks, uint64_t share)
{
        if (share == 0)
                return blocks ? 100 : 0;
        return (uint32_t)MIN(blocks * 100 / share, (uint64_t)UINT32_MAX);
}

static uint64_t power_of_two_at_least(uint64_t n)
{
        uint64_t p = 1;

        while (p < n && p < (UINT64_C(1) << 62))
                p <<= 1;
        return p;
}

/* a * b / c without overflow for the sizes here (a heap's bytes times a small factor). */
static uint64_t mul_div(uint64_t a, uint64_t b, uint64_t c)
{
        return (uint64_t)((unsigned __int128)a * b / c);
}

/* The room left in a share of blocks: at least a sixteenth of it (full, or past it when more
 * targets came: still a finite mean). */
static uint64_t room_left(uint64_t share, uint64_t blocks)
{
        return MAX(share > blocks ? share - blocks : 0, MAX(share / 16, (uint64_t)1));
}

uint64_t auto_sample_decide(const struct auto_sample_view *v, uint64_t max_mean)
{
        uint64_t room, mean, mean_block, least, ahead;

        assert(v);
        if (v->percent == 0 || v->share == 0)
                return 0;
        /* where it will be by the next check, at the pace since the last */
        ahead = v->blocks + (v->blocks_before > 0 && v->blocks > v->blocks_before ? v->blocks - v->blocks_before : 0);
        if (v->dropped == 0) {
                /* past its threshold, or full by the next check at its pace */
                if ((unsigned __int128)v->blocks * 100 < (unsigned __int128)v->share * v->percent &&
                    ahead < v->share)
                        return 0;
                /* changed before: again once half the room it had left then is used */
                if (v->blocks_at_change > 0 && v->sample_bytes > 0 &&
                    ahead < v->blocks_at_change + room_left(v->share, v->blocks_at_change) / 2)
                        return 0;
        }
        room = room_left(v->share, v->blocks);
        mean = mul_div(v->bytes, AUTO_SAMPLE_HEADROOM, room);
        mean_block = v->allocs ? v->bytes / v->allocs : 0;
        least = MAX((uint64_t)AUTO_SAMPLE_MIN_BYTES, MAX(mean_block * 4, v->sample_bytes * 2));
        mean = MIN(power_of_two_at_least(MAX(mean, least)), max_mean);
        return mean > v->sample_bytes ? mean : 0;
}

uint64_t auto_sample_limit(uint64_t share, uint32_t percent)
{
        if (percent == 0 || share == 0)
                return 0;
        /* rounded up: where auto_sample_decide() switches too */
        return (uint64_t)(((unsigned __int128)share * MIN(percent, 100u) + 99) / 100);
}

uint64_t auto_sample_bpf_limit(const struct auto_sample_view *v)
{
        uint64_t limit;

        assert(v);
        limit = auto_sample_limit(v->share, v->percent);
        if (limit == 0 || v->sample_bytes == 0 || v->blocks_at_change == 0)
                return limit;
        return MAX(limit, v->blocks_at_change + room_left(v->share, v->blocks_at_change) / 2);
}

uint64_t auto_sample_preset(const struct auto_sample_view *v, uint64_t limit, uint64_t max_mean)
{
        uint64_t mean_block, mean, least;

        assert(v);
        if (v->percent == 0 || v->share == 0 || limit == 0)
                return 0;
        mean_block = v->allocs ? v->bytes / v->allocs : 0;
        mean = mul_div(mul_div(mean_block, limit, 1), AUTO_SAMPLE_HEADROOM, room_left(v->share, limit));
        least = MAX((uint64_t)AUTO_SAMPLE_MIN_BYTES, mean_block * 4);
        return MIN(power_of_two_at_least(MAX(mean, least)), max_mean);
}

struct auto_sample_change auto_sample_bpf_change(uint64_t switched_ns, uint64_t sample_bytes, uint64_t blocks,
                                                 uint64_t share, uint64_t now_realtime_usec,
                                                 uint64_t now_monotonic_usec)
{
        uint64_t ago = now_monotonic_usec > switched_ns / 1000 ? now_monotonic_usec - switched_ns / 1000 : 0;

        return (struct auto_sample_change) {
                .at_usec = now_realtime_usec > ago ? now_realtime_usec - ago : 0,
                .sample_bytes = sample_bytes,
                .fill_percent = auto_sample_fill_percent(blocks, share),
                .blocks = blocks,
        };
}

void auto_sample_note(struct auto_sample_history *h, const struct auto_sample_change *c)
{
        assert(h);
        assert(c);
        if (h->n_changes < AUTO_SAMPLE_CHANGES_MAX)
                h->changes[h->n_changes] = *c;
        else {
                /* the first stays: when it started */
                memmove(&h->changes[1], &h->changes[2], (AUTO_SAMPLE_CHANGES_MAX - 2) * sizeof(h->changes[0]));
                h->changes[AUTO_SAMPLE_CHANGES_MAX - 1] = *c;
        }
        h->n_changes++;
}

uint32_t auto_sample_kept(const struct auto_sample_history *h)
{
        assert(h);
        return MIN(h->n_changes, AUTO_SAMPLE_CHANGES_MAX);
}

const struct auto_sample_change *auto_sample_first(const struct auto_sample_history *h)
{
        assert(h);
        return h->n_changes ? &h->changes[0] : NULL;
}

const struct auto_sample_change *auto_sample_last(const struct auto_sample_history *h)
{
        assert(h);
        return h->n_changes ? &h->changes[auto_sample_kept(h) - 1] : NULL;
}
