/* SPDX-License-Identifier: GPL-2.0-only */
/* A BPF array made with BPF_F_MMAPABLE, mapped into the daemon's memory. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <sys/mman.h>
#include <stdbool.h>
#include <unistd.h>
#include "bpf-types.h"
#include "mapped-array.h"

_Static_assert(ALLOC_SLOT_WORD(7, ALLOC_SLOT_LIVE) == COMBINED_ROW_WORD(7, 0, ALLOC_SLOT_LIVE),
               "alloc_table's state words are the combined table's with no space");

int mapped_array_open(int fd, size_t value_size, struct mapped_array *ret)
{
        struct bpf_map_info info = {};
        __u32 len = sizeof(info);
        long page = sysconf(_SC_PAGESIZE);
        size_t bytes;
        void *p;

        assert(ret);
        if (bpf_obj_get_info_by_fd(fd, &info, &len) < 0)
                return -errno;
        if (info.value_size != value_size || page <= 0)
                return -EINVAL;
        bytes = ((size_t)info.max_entries * value_size + (size_t)page - 1) / (size_t)page * (size_t)page;
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
                return -errno;
        *ret = (struct mapped_array) { .values = p, .n = info.max_entries, .value_size = value_size, .bytes = bytes };
        return 0;
}

void mapped_array_close(struct mapped_array *a)
{
        assert(a);
        if (a->values)
                (void)munmap(a->values, a->bytes);
        *a = (struct mapped_array) {};
}

int mapped_array_free_slots(const struct mapped_array *a, pid_t pid)
{
        int freed = 0;

        assert(a);
        for (uint32_t i = 0; i < a->n; i++) {
                uint64_t *word = (uint64_t *)((char *)a->values + (size_t)i * a->value_size);
                uint64_t seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
                uint32_t state = COMBINED_ROW_STATE(seen);

                if ((state != ALLOC_SLOT_LIVE && state != ALLOC_SLOT_RETIRING) ||
                    COMBINED_ROW_TGID(seen) != (uint32_t)pid)
                        continue;
                /* BPF ignores pid by now; a program of pid's that passed that check a moment
                 * before may still update the slot it found */
                freed += __atomic_compare_exchange_n(word, &seen, (seen & ~UINT64_C(0xffff)) | ALLOC_SLOT_FREE,
                                                     false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
        }
        return freed;
}
