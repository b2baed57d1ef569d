/* SPDX-License-Identifier: GPL-2.0-only */
/* The BPF programs' per-CPU counters: every way an event was counted, lost or distorted. */
#include <assert.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "counters.h"
#include "macro.h"
#include "memleak.skel.h"
#include "reply-fields.h"
#include "string-table.h"

static const char *const counters_table[_COUNTER_MAX] = {
        [COUNTER_ALLOCS] = RF_ALLOCS,
        [COUNTER_FREES] = RF_FREES,
        [COUNTER_ALLOCS_FILTERED] = RF_ALLOCS_FILTERED,
        [COUNTER_ALLOCS_FAILED] = RF_ALLOCS_FAILED,
        [COUNTER_NESTED_CALLS] = RF_NESTED_CALLS,
        [COUNTER_UNWIND_WALKS] = RF_UNWIND_WALKS,
        [COUNTER_UNWIND_STOP_DEPTH] = RF_UNWIND_STOP_DEPTH,
        [COUNTER_UNWIND_STOP_NO_CFI] = RF_UNWIND_STOP_NO_CFI,
        [COUNTER_UNWIND_STOP_UNCOMPUTABLE] = RF_UNWIND_STOP_UNCOMPUTABLE,
        [COUNTER_UNWIND_STOP_UNREADABLE] = RF_UNWIND_STOP_UNREADABLE,
        [COUNTER_UNWIND_STOP_NO_TABLE] = RF_UNWIND_STOP_NO_TABLE,
        [COUNTER_LOST_ALLOCS_MAP_FULL] = RF_ALLOCS_MAP_FULL,
        [COUNTER_LOST_COMBINED_MAP_FULL] = RF_COMBINED_MAP_FULL,
        [COUNTER_LOST_NO_THREAD_STATE] = RF_THREAD_STATE_UNAVAILABLE,
        [COUNTER_STACK_EFAULT] = RF_STACK_EFAULT,
        [COUNTER_STACK_TABLE_FULL] = RF_STACK_TABLE_FULL,
        [COUNTER_STACK_HASH_CLASH] = RF_STACK_HASH_CLASH,
        [COUNTER_STACK_NO_SCRATCH] = RF_STACK_NO_SCRATCH,
        [COUNTER_STACK_OTHER] = RF_STACK_OTHER,
        [COUNTER_RETURN_WITHOUT_ENTRY] = RF_RETURN_WITHOUT_ENTRY,
        [COUNTER_FREE_UNKNOWN] = RF_FREE_UNKNOWN,
        [COUNTER_INFLIGHT_STALE] = RF_INFLIGHT_STALE,
        [COUNTER_LOST_MMAPS_MAP_FULL] = RF_MMAPS_MAP_FULL,
        [COUNTER_LOST_MMAP_RANGES] = RF_MMAP_RANGES_CUT,
        [COUNTER_LOST_FILE_MAPPINGS] = RF_FILE_MAPPINGS_LOST,
        [COUNTER_LOST_FORK_EVENTS] = RF_FORK_EVENTS_LOST,
        [COUNTER_ALLOCS_UNSAMPLED] = RF_ALLOCS_UNSAMPLED,
        [COUNTER_FREE_UNSAMPLED] = RF_FREES_UNSAMPLED,
        [COUNTER_UNWIND_REPEATS] = RF_UNWIND_REPEATS,
        [COUNTER_FREED_BY_EXEC] = RF_FREED_BY_EXEC,
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(counters, enum memleak_counter);

bool counters_is_loss(enum memleak_counter c)
{
        /* sampling's counters say what it skipped by design: not losses */
        return c >= COUNTER_LOST_ALLOCS_MAP_FULL && c < COUNTER_ALLOCS_UNSAMPLED;
}

/* The sums over the CPUs of keys [first, first + n) of the counters map, into sums[0..n): one
 * batch look-up, else one look-up a key. */
static int read_keys(int fd, uint32_t first, uint32_t n, uint64_t *sums)
{
        int ncpus = libbpf_num_possible_cpus();
        _cleanup_free_ uint64_t *values = NULL;
        _cleanup_free_ uint32_t *keys = NULL;
        LIBBPF_OPTS(bpf_map_batch_opts, opts);
        uint32_t count = n, out = 0, prev = first - 1;
        int r;

        if (ncpus <= 0)
                return ncpus < 0 ? ncpus : -EINVAL;
        values = calloc((size_t)n * (size_t)ncpus, sizeof(uint64_t));
        keys = calloc(n, sizeof(uint32_t));
        if (!values || !keys)
                return -ENOMEM;
        /* an array's batch starts after the key it is given */
        r = bpf_map_lookup_batch(fd, first > 0 ? &prev : NULL, &out, keys, values, &count, &opts);
        if ((r == 0 || errno == ENOENT) && count == n) {
                for (uint32_t k = 0; k < n; k++) {
                        if (keys[k] != first + k)
                                goto one_by_one;
                        sums[k] = 0;
                        for (int i = 0; i < ncpus; i++)
                                sums[k] += values[(size_t)k * ncpus + i];
                }
                return 0;
        }
one_by_one:
        for (uint32_t k = 0; k < n; k++) {
                uint32_t key = first + k;

                if (bpf_map_lookup_elem(fd, &key, values) < 0)
                        return -errno;
                sums[k] = 0;
                for (int i = 0; i < ncpus; i++)
                        sums[k] += values[i];
        }
        return 0;
}

int counters_read(struct memleak_bpf *skel, uint64_t totals[_COUNTER_MAX])
{
        uint32_t n = bpf_map__max_entries(skel->maps.counters);
        _cleanup_free_ uint64_t *sums = NULL;
        int r;

        assert(skel);
        assert(totals);
        sums = calloc(MAX(n, 1u), sizeof(uint64_t));
        if (!sums)
                return -ENOMEM;
        r = read_keys(bpf_map__fd(skel->maps.counters), 0, n, sums);
        if (r < 0)
                return r;
        for (uint32_t c = 0; c < _COUNTER_MAX; c++)
                totals[c] = 0;
        for (uint32_t k = 0; k < n; k++)
                totals[k % _COUNTER_MAX] += sums[k];
        return 0;
}

uint32_t counters_row_of(struct memleak_bpf *skel, uint32_t slot, bool kernel)
{
        assert(skel);
        return kernel ? MEMLEAK_COUNTER_ROW_KERNEL(bpf_map__max_entries(skel->maps.target_slots)) : slot;
}

int counters_read_row(struct memleak_bpf *skel, uint32_t row, uint64_t totals[_COUNTER_MAX])
{
        uint64_t sums[_COUNTER_MAX];
        int r;

        assert(skel);
        assert(totals);
        if ((uint64_t)(row + 1) * _COUNTER_MAX > bpf_map__max_entries(skel->maps.counters))
                return -ERANGE;
        r = read_keys(bpf_map__fd(skel->maps.counters), row * _COUNTER_MAX, _COUNTER_MAX, sums);
        if (r < 0)
                return r;
        memcpy(totals, sums, sizeof(sums));
        return 0;
}

void counters_subtract(uint64_t totals[_COUNTER_MAX], const uint64_t base[_COUNTER_MAX])
{
        for (int c = 0; c < _COUNTER_MAX; c++)
                totals[c] = totals[c] > base[c] ? totals[c] - base[c] : 0;
}
