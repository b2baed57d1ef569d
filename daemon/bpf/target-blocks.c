/* SPDX-License-Identifier: GPL-2.0-only */
#include <assert.h>
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "memleak.skel.h"
#include "target-blocks.h"

int target_blocks_read_fill(struct memleak_bpf *skel, uint32_t slot, struct target_fill *ret)
{
        struct target_fill fill;

        assert(skel);
        assert(ret);
        if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.target_blocks), &slot, &fill) < 0)
                return -errno;
        *ret = fill;
        return 0;
}

int target_blocks_read(struct memleak_bpf *skel, uint32_t slot, uint64_t *ret)
{
        struct target_fill fill;
        int r;

        assert(ret);
        r = target_blocks_read_fill(skel, slot, &fill);
        if (r < 0)
                return r;
        *ret = fill.blocks > 0 ? (uint64_t)fill.blocks : 0;
        return 0;
}

int target_blocks_reset(struct memleak_bpf *skel, uint32_t slot)
{
        assert(skel);
        if (bpf_map_update_elem(bpf_map__fd(skel->maps.target_blocks), &slot, &(struct target_fill) {}, BPF_ANY) < 0)
                return -errno;
        return 0;
}
