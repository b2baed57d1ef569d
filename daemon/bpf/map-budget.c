/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel memory the BPF maps take at given sizes, and whether this machine can hold it. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "bpf-types.h"
#include "macro.h"
#include "map-budget.h"

#define HTAB_ELEM_BYTES 48u             /* struct htab_elem before its key */
#define HTAB_BUCKET_BYTES 16u
#define MEM_ALLOC_HEADER_BYTES 8u       /* bpf_mem_alloc's header on an element it hands out */

static uint64_t round8(uint64_t v)
{
        return (v + 7) & ~UINT64_C(7);
}

static uint64_t pow2_at_least(uint64_t v)
{
        uint64_t p = 1;

        while (p < v)
                p <<= 1;
        return p;
}

static uint64_t hash_map_bytes(uint64_t entries, uint64_t key_size, uint64_t value_size)
{
        return entries * (HTAB_ELEM_BYTES + round8(key_size) + round8(value_size)) +
               pow2_at_least(entries) * HTAB_BUCKET_BYTES;
}

/* The block bpf_mem_alloc hands out for size bytes: a power of two, or 96 or 192. */
static uint64_t mem_alloc_block(uint64_t size)
{
        uint64_t p = pow2_at_least(size);

        if (p == 128 && size <= 96)
                return 96;
        if (p == 256 && size <= 192)
                return 192;
        return p;
}

/* A map allocating its elements as they come (BPF_F_NO_PREALLOC), when full. */
static uint64_t hash_map_no_prealloc_bytes(uint64_t entries, uint64_t key_size, uint64_t value_size)
{
        return entries * mem_alloc_block(MEM_ALLOC_HEADER_BYTES + HTAB_ELEM_BYTES + round8(key_size) + round8(value_size)) +
               pow2_at_least(entries) * HTAB_BUCKET_BYTES;
}

static uint64_t array_map_bytes(uint64_t entries, uint64_t value_size)
{
        return entries * round8(value_size);
}

uint32_t map_budget_alloc_table_slots(uint32_t max_allocs)
{
        uint32_t slots = 1;

        while (slots * 2 <= max_allocs / 2 && slots * 2 <= ALLOC_TABLE_SLOTS_MAX)
                slots *= 2;
        return slots;
}

uint32_t map_budget_combined_rows(uint32_t max_combined)
{
        return (uint32_t)pow2_at_least((uint64_t)max_combined * 2);
}

uint64_t map_budget_estimate(const struct bpf_sizes *s)
{
        uint32_t table_slots;

        assert(s);
        table_slots = map_budget_alloc_table_slots(s->max_allocs);
        return hash_map_bytes(s->max_targets, sizeof(__u32), sizeof(struct target_config)) +
               array_map_bytes(s->max_targets, sizeof(struct target_slot)) +
               array_map_bytes((uint64_t)MEMLEAK_COUNTER_ROWS(s->max_targets) * _COUNTER_MAX,
                               sizeof(__u64)) * (s->n_cpus ? s->n_cpus : 1) +
               array_map_bytes(table_slots, sizeof(struct alloc_slot)) +
               hash_map_no_prealloc_bytes(s->max_allocs - table_slots, sizeof(struct alloc_key),
                                          sizeof(struct alloc_info)) +
               hash_map_no_prealloc_bytes(s->max_mmaps, sizeof(struct alloc_key), sizeof(struct alloc_info)) +
               array_map_bytes(map_budget_combined_rows(s->max_combined), sizeof(struct combined_row)) +
               hash_map_bytes(MEMLEAK_FILE_MAPPINGS_MAX, sizeof(struct file_mapping_key), sizeof(struct file_mapping)) +
               hash_map_no_prealloc_bytes(s->max_stacks, sizeof(__u64), STACK_TRACE_BYTES(s->max_stack_depth)) +
               array_map_bytes(s->max_targets, sizeof(struct unwind_target)) +
               array_map_bytes((uint64_t)s->max_targets * 2 * UNWIND_MAPPINGS_MAX, sizeof(struct unwind_mapping));
}

uint64_t map_budget_allowed(const struct memory_limits *l)
{
        uint64_t allowed = MIN(l->mem_available, l->mem_total / 2);

        assert(l);
        if (l->cgroup_max != UINT64_MAX)
                allowed = MIN(allowed, l->cgroup_max / 4 * 3);
        return allowed;
}

static uint64_t meminfo_field(FILE *f, const char *name)
{
        char line[256];
        size_t len = strlen(name);
        uint64_t kib;

        rewind(f);
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, name, len) == 0 && line[len] == ':' &&
                    sscanf(line + len + 1, "%" SCNu64, &kib) == 1)
                        return kib * 1024;
        return UINT64_MAX;
}

/* memory.max of the calling process's cgroup (v2); UINT64_MAX when none or unknown. */
static uint64_t cgroup_memory_max(void)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
        _cleanup_fclose_ FILE *m = NULL;
        char line[4096], path[4200], value[64];
        uint64_t v;

        if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "0::", 3) != 0)
                return UINT64_MAX;
        line[strcspn(line, "\n")] = '\0';
        snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", line + 3);
        m = fopen(path, "re");
        if (!m || !fgets(value, sizeof(value), m) || sscanf(value, "%" SCNu64, &v) != 1)
                return UINT64_MAX;     /* "max", or no memory controller */
        return v;
}

int map_budget_read_limits(const char *meminfo_path, struct memory_limits *ret)
{
        _cleanup_fclose_ FILE *f = fopen(meminfo_path, "re");

        assert(meminfo_path);
        assert(ret);
        if (!f)
                return -errno;
        ret->mem_total = meminfo_field(f, "MemTotal");
        ret->mem_available = meminfo_field(f, "MemAvailable");
        ret->cgroup_max = cgroup_memory_max();
        return 0;
}
