/* SPDX-License-Identifier: GPL-2.0-only */
/* Never blind past the allocation table's limit: a target whose share of it nears full is
 * sampled from then on (targets/auto-sample.h), checked ten times a second; one that fills it
 * faster is switched by BPF itself at the limit set here, and the switch noted here. */
#include <assert.h>
#include <inttypes.h>
#include "log.h"
#include "manager.h"
#include "protocol.h"
#include "snapshot.h"
#include "target-blocks.h"
#include "target.h"
#include "util.h"

/* Note the change c BPF made (t's settings say it): 0 or -errno. */
static int note_change(struct manager *m, struct target *t, const struct auto_sample_change *c)
{
        int r;

        r = target_set_sample_bytes(&m->env, t, c, NULL);
        if (r < 0)
                log_warning_errno(r, "pid %d is sampled since its share of the allocation table filled, but "
                                  "its settings cannot say so (its reports may call it exact): %m", (int)t->pid);
        return r;
}

/* BPF switched it at its limit, or raised its mean at later steps (its share filled faster than
 * these checks): each change BPF logged since the last noted, as if it were made here, from when,
 * at what mean and at how many blocks BPF says, so that its reports say so as they do of any. A
 * change not written yet (another CPU between its log slot and its mean) waits for the next
 * check. One the daemon's own change overtook (BPF raised it while the daemon set a higher mean,
 * within one check) is left out: the mean it set held for an instant, and the blocks recorded
 * meanwhile carry their own weights. */
static void note_bpf_changes(struct manager *m, struct target *t, const struct target_fill *fill, uint64_t share)
{
        uint64_t now = now_realtime_usec(), mono = now_monotonic_usec();
        uint32_t logged = (uint32_t)MIN(fill->raises, (uint64_t)MEMLEAK_FILL_RAISES_MAX);

        for (; t->auto_sample.bpf_noted < logged; t->auto_sample.bpf_noted++) {
                const struct fill_raise *f = &fill->log[t->auto_sample.bpf_noted];
                bool switched = t->filter.sample_bytes <= 1;
                struct auto_sample_change c;

                if (f->sample_bytes == 0)
                        return;
                if (f->sample_bytes <= t->filter.sample_bytes)
                        continue;
                c = auto_sample_bpf_change(f->ns, f->sample_bytes, f->at > 0 ? (uint64_t)f->at : t->filter.limit_blocks,
                                           share, now, mono);
                if (note_change(m, t, &c) < 0)
                        return;
                log_info("pid %d (%s) filled %u%% of its share of the allocation table (%" PRIu64 ") faster than "
                         "it is checked: %s by BPF, a sample point every %" PRIu64 " bytes on average",
                         (int)t->pid, t->comm, c.fill_percent, share,
                         switched ? "sampled since" : "sampled more sparsely", c.sample_bytes);
        }
}

/* Where BPF raises its mean itself, should it fill faster than these checks: from v (its mean,
 * and the blocks it held at its last change, as they are to be). */
static struct target_limit limit_of(const struct auto_sample_view *v)
{
        uint64_t limit = auto_sample_bpf_limit(v);

        return (struct target_limit) {
                .blocks = limit,
                .sample_bytes = auto_sample_preset(v, limit, MEMLEAK_MAX_SAMPLE_BYTES),
                .share = v->share,
        };
}

static void check_target(struct manager *m, struct target *t, uint64_t share)
{
        const struct snapshot *s = snapshot_ring_newest(t->ring);
        const struct auto_sample_change *last;
        uint64_t counters[_COUNTER_MAX], dropped = 0;
        struct auto_sample_view v;
        struct auto_sample_change c;
        struct target_fill fill;
        struct target_limit l;
        uint64_t blocks, mean;
        bool resampled;
        int r;

        if (target_blocks_read_fill(m->env.skel, t->slot.slot, &fill) < 0)
                return;
        blocks = fill.blocks > 0 ? (uint64_t)fill.blocks : 0;
        note_bpf_changes(m, t, &fill, share);
        last = auto_sample_last(&t->auto_sample);
        /* its own drops since the last check: the table was full for it (read only once it holds
         * half its share: the check runs ten times a second) */
        if (blocks >= share / 2 && target_counters_read(&m->env, t, counters) >= 0) {
                if (counters[COUNTER_LOST_ALLOCS_MAP_FULL] > t->auto_sample.dropped_seen)
                        dropped = counters[COUNTER_LOST_ALLOCS_MAP_FULL] - t->auto_sample.dropped_seen;
                t->auto_sample.dropped_seen = counters[COUNTER_LOST_ALLOCS_MAP_FULL];
        }
        v = (struct auto_sample_view) {
                /* its heap as the last snapshot saw it (none yet: the least mean) */
                .share = share, .blocks = blocks, .bytes = s ? s->bytes : 0, .allocs = s ? s->allocs : 0,
                .sample_bytes = t->filter.sample_bytes > 1 ? t->filter.sample_bytes : 0,
                .blocks_at_change = last ? last->blocks : 0,
                .blocks_before = t->auto_sample.blocks_checked,
                .dropped = dropped,
                .percent = m->config.auto_sample_percent,
        };
        t->auto_sample.blocks_checked = blocks;
        mean = auto_sample_decide(&v, MEMLEAK_MAX_SAMPLE_BYTES);
        if (mean == 0) {
                l = limit_of(&v);
                r = target_set_limit(&m->env, t, &l);
                if (r < 0)
                        log_debug_errno(r, "Cannot set the sampling limit of pid %d (checked here only): %m",
                                        (int)t->pid);
                return;
        }
        c = (struct auto_sample_change) {
                .at_usec = now_realtime_usec(), .sample_bytes = mean,
                .fill_percent = auto_sample_fill_percent(blocks, share), .blocks = blocks,
        };
        resampled = v.sample_bytes > 0;
        /* BPF's next step from this change on, in the same write (else BPF could raise it again
         * at the step before, at once) */
        v.sample_bytes = mean;
        v.blocks_at_change = blocks;
        l = limit_of(&v);
        r = target_set_sample_bytes(&m->env, t, &c, &l);
        if (r < 0) {
                log_warning_errno(r, "Cannot sample pid %d, whose share of the allocation table is %u%% full "
                                  "(its allocations past it will be dropped, counted): %m", (int)t->pid,
                                  c.fill_percent);
                return;
        }
        log_info("pid %d (%s) holds %" PRIu64 " blocks, %u%% of its share of the allocation table (%" PRIu64 "): "
                 "sampling its heap%s from now on, a sample point every %" PRIu64 " bytes on average",
                 (int)t->pid, t->comm, blocks, c.fill_percent, share, resampled ? " more sparsely" : "", mean);
}

void manager_sample_first_limit(const struct manager *m, struct target_config *filter)
{
        struct auto_sample_view v;
        struct target_limit l = {};

        assert(m);
        assert(filter);
        if (m->config.auto_sample_percent > 0) {
                v = (struct auto_sample_view) {
                        .share = auto_sample_share(m->config.max_allocs, manager_live_targets(m) + 1),
                        .sample_bytes = filter->sample_bytes > 1 ? filter->sample_bytes : 0,
                        .percent = m->config.auto_sample_percent,
                };
                l = limit_of(&v);
        }
        filter->limit_blocks = l.blocks;
        filter->limit_sample_bytes = l.sample_bytes;
        filter->limit_share = l.share;
}

void manager_auto_sample_sync(struct manager *m)
{
        uint64_t share;

        assert(m);
        share = auto_sample_share(m->config.max_allocs, manager_live_targets(m));
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];
                struct target_fill fill;

                if (t->phase == TARGET_PHASE_RECORDING && !t->kernel && t->slot.set &&
                    target_blocks_read_fill(m->env.skel, t->slot.slot, &fill) >= 0)
                        note_bpf_changes(m, t, &fill, share);
        }
}

void manager_auto_sample(struct manager *m)
{
        uint64_t share;

        assert(m);
        if (m->config.auto_sample_percent == 0) {
                /* off (maybe since a reload): BPF switches none itself either */
                for (size_t i = 0; i < m->n_targets; i++) {
                        struct target *t = m->targets[i];

                        if (t->phase == TARGET_PHASE_RECORDING && !t->kernel && t->slot.set)
                                (void)target_set_limit(&m->env, t, &(struct target_limit) {});
                }
                return;
        }
        share = auto_sample_share(m->config.max_allocs, manager_live_targets(m));
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];

                if (t->phase == TARGET_PHASE_RECORDING && !t->kernel && t->slot.set)
                        check_target(m, t, share);
        }
}
