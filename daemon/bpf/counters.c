/* SPDX-License-Identifier: GPL-2.0-only */
/* The BPF programs' per-CPU counters: every way an event was counted, lost or distorted. */
#include <assert.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include "counters.h"
#include "macro.h"
#include "memleak.skel.h"
#include "string-table.h"

static const char *const counters_table[_COUNTER_MAX] = {
        [COUNTER_ALLOCS] = "allocs",
        [COUNTER_FREES] = "frees",
        [COUNTER_ALLOCS_FILTERED] = "allocs_filtered",
        [COUNTER_ALLOCS_FAILED] = "allocs_failed",
        [COUNTER_NESTED_CALLS] = "nested_calls",
        [COUNTER_UNWIND_WALKS] = "unwind_walks",
        [COUNTER_UNWIND_STOP_DEPTH] = "unwind_stop_depth",
        [COUNTER_UNWIND_STOP_NO_CFI] = "unwind_stop_no_cfi",
        [COUNTER_UNWIND_STOP_UNCOMPUTABLE] = "unwind_stop_uncomputable",
        [COUNTER_UNWIND_STOP_UNREADABLE] = "unwind_stop_unreadable",
        [COUNTER_UNWIND_STOP_NO_TABLE] = "unwind_stop_no_table",
        [COUNTER_LOST_ALLOCS_MAP_FULL] = "allocs_map_full",
        [COUNTER_LOST_COMBINED_MAP_FULL] = "combined_map_full",
        [COUNTER_LOST_NO_THREAD_STATE] = "thread_state_unavailable",
        [COUNTER_STACK_EFAULT] = "stack_efault",
        [COUNTER_STACK_TABLE_FULL] = "stack_table_full",
        [COUNTER_STACK_HASH_CLASH] = "stack_hash_clash",
        [COUNTER_STACK_NO_SCRATCH] = "stack_no_scratch",
        [COUNTER_STACK_OTHER] = "stack_other",
        [COUNTER_RETURN_WITHOUT_ENTRY] = "return_without_entry",
        [COUNTER_FREE_UNKNOWN] = "free_unknown",
        [COUNTER_INFLIGHT_STALE] = "inflight_stale",
        [COUNTER_LOST_MMAPS_MAP_FULL] = "mmaps_map_full",
        [COUNTER_LOST_MMAP_RANGES] = "mmap_ranges_cut",
        [COUNTER_LOST_FILE_MAPPINGS] = "file_mappings_lost",
        [COUNTER_LOST_FORK_EVENTS] = "fork_events_lost",
        [COUNTER_ALLOCS_UNSAMPLED] = "allocs_unsampled",
        [COUNTER_FREE_UNSAMPLED] = "frees_unsampled",
        [COUNTER_UNWIND_REPEATS] = "unwind_repeats",
        [COUNTER_FREED_BY_EXEC] = "freed_by_exec",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(counters, enum memleak_counter);

bool counters_is_loss(enum memleak_counter c)
{
        /* sampling's counters say what it skipped by design: not losses */
        return c >= COUNTER_LOST_ALLOCS_MAP_FULL && c < COUNTER_ALLOCS_UNSAMPLED;
}

int counters_read(struct memleak_bpf *skel, uint64_t totals[_COUNTER_MAX])
{
        int ncpus = libbpf_num_possible_cpus();
        int fd = bpf_map__fd(skel->maps.counters);
        _cleanup_free_ uint64_t *values = NULL;

        assert(skel);
        assert(totals);
        if (ncpus <= 0)
                return ncpus < 0 ? ncpus : -EINVAL;
        values = calloc(ncpus, sizeof(uint64_t));
        if (!values)
                return -ENOMEM;
        for (uint32_t c = 0; c < _COUNTER_MAX; c++) {
                uint64_t sum = 0;

                if (bpf_map_lookup_elem(fd, &c, values) < 0)
                        return -errno;
                for (int i = 0; i < ncpus; i++)
                        sum += values[i];
                totals[c] = sum;
        }
        return 0;
}
