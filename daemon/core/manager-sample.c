/* SPDX-License-Identifier: GPL-2.0-only */
/* Never blind past the allocation table's limit: a target whose share of it nears full is
 * sampled from then on (targets/auto-sample.h), checked by the snapshot tick. */
#include <assert.h>
#include <inttypes.h>
#include "log.h"
#include "manager.h"
#include "protocol.h"
#include "snapshot.h"
#include "target-blocks.h"
#include "target.h"
#include "util.h"

static void check_target(struct manager *m, struct target *t, uint64_t share)
{
        const struct snapshot *s = snapshot_ring_newest(t->ring);
        const struct auto_sample_change *last = auto_sample_last(&t->auto_sample);
        uint64_t counters[_COUNTER_MAX], dropped = 0;
        struct auto_sample_view v;
        struct auto_sample_change c;
        uint64_t blocks, mean;
        int r;

        if (target_blocks_read(m->env.skel, t->slot.slot, &blocks) < 0)
                return;
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
        if (mean == 0)
                return;
        c = (struct auto_sample_change) {
                .at_usec = now_realtime_usec(), .sample_bytes = mean,
                .fill_percent = auto_sample_fill_percent(blocks, share), .blocks = blocks,
        };
        r = target_set_sample_bytes(&m->env, t, &c);
        if (r < 0) {
                log_warning_errno(r, "Cannot sample pid %d, whose share of the allocation table is %u%% full "
                                  "(its allocations past it will be dropped, counted): %m", (int)t->pid,
                                  c.fill_percent);
                return;
        }
        log_info("pid %d (%s) holds %" PRIu64 " blocks, %u%% of its share of the allocation table (%" PRIu64 "): "
                 "sampling its heap%s from now on, a sample point every %" PRIu64 " bytes on average",
                 (int)t->pid, t->comm, blocks, c.fill_percent, share, v.sample_bytes ? " more sparsely" : "", mean);
}

void manager_auto_sample(struct manager *m)
{
        uint64_t share;

        assert(m);
        if (m->config.auto_sample_percent == 0)
                return;
        share = auto_sample_share(m->config.max_allocs, manager_live_targets(m));
        for (size_t i = 0; i < m->n_targets; i++) {
                struct target *t = m->targets[i];

                if (!t->exited && !t->kernel && !t->register_deferred && t->slot.set)
                        check_target(m, t, share);
        }
}
