/* SPDX-License-Identifier: GPL-2.0-only */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "macro.h"
#include "memleak.skel.h"
#include "target-blocks.h"

static int ncpus_or_error(void)
{
        int ncpus = libbpf_num_possible_cpus();

        return ncpus > 0 ? ncpus : ncpus < 0 ? ncpus : -EINVAL;
}

int target_blocks_read(struct memleak_bpf *skel, uint32_t slot, uint64_t *ret)
{
        int ncpus = ncpus_or_error();
        _cleanup_free_ int64_t *values = NULL;
        int64_t sum = 0;

        assert(skel);
        assert(ret);
        if (ncpus < 0)
                return ncpus;
        values = calloc(ncpus, sizeof(int64_t));
        if (!values)
                return -ENOMEM;
        if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.target_blocks), &slot, values) < 0)
                return -errno;
        for (int i = 0; i < ncpus; i++)
                sum += values[i];
        *ret = sum > 0 ? (uint64_t)sum : 0;
        return 0;
}

int target_blocks_reset(struct memleak_bpf *skel, uint32_t slot)
{
        int ncpus = ncpus_or_error();
        _cleanup_free_ int64_t *zeros = NULL;

        assert(skel);
        if (ncpus < 0)
                return ncpus;
        zeros = calloc(ncpus, sizeof(int64_t));
        if (!zeros)
                return -ENOMEM;
        if (bpf_map_update_elem(bpf_map__fd(skel->maps.target_blocks), &slot, zeros, BPF_ANY) < 0)
                return -errno;
        return 0;
}
