/* SPDX-License-Identifier: GPL-2.0-only */
/* Open, size and load the memleak BPF object; attach probes. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bpf-loader.h"
#include "macro.h"
#include "map-budget.h"
#include "map-iter.h"
#include "memleak.skel.h"
#include "uprobe-multi.h"
#include "util.h"

/* The initial pid namespace's inode number (include/linux/proc_ns.h). */
#define PROC_PID_INIT_INO 0xEFFFFFFCU

static struct bpf_program *entry_program(struct memleak_bpf *skel, enum alloc_kind kind)
{
        switch (kind) {
        case ALLOC_KIND_MALLOC: return skel->progs.malloc_entry;
        case ALLOC_KIND_CALLOC: return skel->progs.calloc_entry;
        case ALLOC_KIND_REALLOC: return skel->progs.realloc_entry;
        case ALLOC_KIND_REALLOCARRAY: return skel->progs.reallocarray_entry;
        case ALLOC_KIND_POSIX_MEMALIGN: return skel->progs.posix_memalign_entry;
        case ALLOC_KIND_ALIGNED_ALLOC: return skel->progs.aligned_alloc_entry;
        case ALLOC_KIND_MEMALIGN: return skel->progs.memalign_entry;
        case ALLOC_KIND_VALLOC: return skel->progs.valloc_entry;
        case ALLOC_KIND_PVALLOC: return skel->progs.pvalloc_entry;
        case ALLOC_KIND_FREE: return skel->progs.free_entry;
        case ALLOC_KIND_NEW: return skel->progs.new_entry;
        case ALLOC_KIND_DELETE: return skel->progs.delete_entry;
        case ALLOC_KIND_RESIZE: return skel->progs.resize_entry;
        case ALLOC_KIND_MMAP: return skel->progs.mmap_entry;
        case ALLOC_KIND_MUNMAP: return skel->progs.munmap_entry;
        case ALLOC_KIND_MREMAP: return skel->progs.mremap_entry;
        default: return NULL;
        }
}

static struct bpf_program *uprobe_programs(struct memleak_bpf *skel, size_t i)
{
        if (i < _ALLOC_KIND_MAX)
                return entry_program(skel, (enum alloc_kind)i);
        return i == _ALLOC_KIND_MAX ? skel->progs.alloc_return : NULL;
}

/* Whether this kernel has uprobe_multi links (Linux 6.6). MEMLEAKD_UPROBE_MULTI=0 in the
 * environment says no, to exercise the fallback on any kernel. */
static bool probe_uprobe_multi(void)
{
        const char *env = getenv("MEMLEAKD_UPROBE_MULTI");

        if (env && strcmp(env, "0") == 0)
                return false;
        return uprobe_multi_supported();
}

/* Whether this kernel has uprobe sessions (Linux 6.12), which need uprobe_multi links too.
 * MEMLEAKD_UPROBE_SESSION=0 in the environment says no, to exercise the entry and return probes
 * on any kernel. */
static bool probe_uprobe_session(void)
{
        const char *env = getenv("MEMLEAKD_UPROBE_SESSION");

        if (env && strcmp(env, "0") == 0)
                return false;
        return uprobe_multi_session_supported();
}

int bpf_loader_clear_inherited_uprobes(struct memleak_bpf *skel, pid_t pid, const char *path,
                                       const uint64_t *offsets, size_t n)
{
        int link;

        assert(skel);
        assert(path);
        if (!bpf_loader_uprobe_multi(skel))
                return 0;       /* perf-event uprobes remove themselves at a child's first hit */
        link = uprobe_multi_link(bpf_program__fd(skel->progs.sweep_breakpoints), false, pid, path, offsets, NULL, n);
        if (link < 0)
                return link;
        /* Unregistering re-checks every process mapping the file and removes the breakpoints no
         * remaining probe wants there (each target's links want only its own memory). */
        close(link);
        return 0;
}

struct bpf_link *bpf_loader_attach_fork_watch(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_program__attach(skel->progs.record_fork);
}

struct bpf_link *bpf_loader_attach_code_watch(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_program__attach(skel->progs.watch_code_mapping);
}

struct bpf_link *bpf_loader_attach_exec_forget(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_program__attach(skel->progs.forget_exec_image);
}

int bpf_loader_code_holds_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.code_holds);
}

int bpf_loader_forks_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.forks);
}

bool bpf_loader_uprobe_multi(struct memleak_bpf *skel)
{
        assert(skel);
        /* bpf_loader_open() chose the programs' attach type from what this kernel has. */
        return bpf_program__expected_attach_type(skel->progs.sweep_breakpoints) ==
                (enum bpf_attach_type)UPROBE_MULTI_ATTACH_TYPE;
}

bool bpf_loader_uprobe_session(struct memleak_bpf *skel)
{
        assert(skel);
        /* bpf_loader_open() loads the session program only where the kernel has sessions */
        return bpf_program__autoload(skel->progs.alloc_session);
}

int bpf_loader_attach_uprobe(struct memleak_bpf *skel, enum alloc_kind kind, bool is_return, int pid,
                             const char *path, uint64_t offset, uint64_t cookie, struct bpf_link **ret)
{
        LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = is_return, .bpf_cookie = cookie);
        struct bpf_program *prog = is_return ? skel->progs.alloc_return : entry_program(skel, kind);
        struct bpf_link *link;

        assert(skel);
        assert(path);
        assert(ret);
        if (!prog)
                return -EINVAL;
        link = bpf_program__attach_uprobe_opts(prog, pid, path, offset, &opts);
        if (!link)
                return -errno;
        *ret = link;
        return 0;
}

static void set_uprobe_multi_attach_type(struct memleak_bpf *skel)
{
        struct bpf_program *p;

        for (size_t i = 0; i <= _ALLOC_KIND_MAX; i++)
                if ((p = uprobe_programs(skel, i)))
                        (void)bpf_program__set_expected_attach_type(p, (enum bpf_attach_type)UPROBE_MULTI_ATTACH_TYPE);
        (void)bpf_program__set_expected_attach_type(skel->progs.sweep_breakpoints,
                                                    (enum bpf_attach_type)UPROBE_MULTI_ATTACH_TYPE);
}

/* A generation for this load's probe programs: not 0 (no slot's), and not the earlier daemon's
 * (whose slots a restart finds) but by a chance of one in 2^32. */
static uint32_t new_probe_gen(void)
{
        uint32_t gen = 0;

        if (getrandom(&gen, sizeof(gen), GRND_NONBLOCK) != sizeof(gen))
                gen = (uint32_t)(now_realtime_usec() ^ ((uint64_t)getpid() << 16));
        return gen ?: 1;
}

int bpf_loader_open(const struct bpf_sizes *sizes, struct memleak_bpf **ret)
{
        _cleanup_(bpf_loader_destroyp) struct memleak_bpf *skel = NULL;
        uint32_t table_slots, combined_rows;
        struct stat st;
        int r;

        assert(sizes);
        assert(ret);
        skel = memleak_bpf__open();
        if (!skel)
                return -errno;
        /* Report pids as this daemon's pid namespace sees them (it may run in a container). */
        if (stat("/proc/self/ns/pid", &st) < 0)
                return -errno;
        if (st.st_ino != PROC_PID_INIT_INO)
                skel->rodata->pidns_ino = st.st_ino;
        /* The kernel target leaves out our own allocations (pids as our namespace sees them). */
        skel->rodata->self_tgid = getpid();
        skel->rodata->probe_gen = new_probe_gen();
        if (probe_uprobe_multi()) {
                set_uprobe_multi_attach_type(skel);
                if (probe_uprobe_session())
                        (void)bpf_program__set_expected_attach_type(skel->progs.alloc_session,
                                                                    (enum bpf_attach_type)UPROBE_SESSION_ATTACH_TYPE);
        }
        if (bpf_program__expected_attach_type(skel->progs.alloc_session) !=
            (enum bpf_attach_type)UPROBE_SESSION_ATTACH_TYPE)
                (void)bpf_program__set_autoload(skel->progs.alloc_session, false);
        /* Without the iterator the stack table is read by look-ups (stack-collect.c). */
        if (map_iter_probe() < 0)
                (void)bpf_program__set_autoload(skel->progs.dump_stacks, false);
        table_slots = map_budget_alloc_table_slots(sizes->max_allocs);
        skel->rodata->alloc_table_mask = table_slots - 1;
        combined_rows = map_budget_combined_rows(sizes->max_combined);
        skel->rodata->combined_mask = combined_rows - 1;
        if ((r = bpf_map__set_max_entries(skel->maps.targets, sizes->max_targets)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.alloc_table, table_slots)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.target_slots, sizes->max_targets)) < 0 ||
            /* a row of counters per target slot, the kernel target's and no target's */
            (r = bpf_map__set_max_entries(skel->maps.counters,
                                          MEMLEAK_COUNTER_ROWS(sizes->max_targets) * _COUNTER_MAX)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.target_blocks, sizes->max_targets)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.allocs, sizes->max_allocs - table_slots)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.stacks, sizes->max_stacks)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.combined, combined_rows)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.mmaps, sizes->max_mmaps)) < 0 ||
            (r = bpf_map__set_max_entries(skel->maps.unwind_targets, sizes->max_targets)) < 0 ||
            /* memleakctl run's programs and the children they follow, each a target */
            (r = bpf_map__set_max_entries(skel->maps.code_holds, sizes->max_targets)) < 0 ||
            /* two lists a target: one written while walks read the other */
            (r = bpf_map__set_max_entries(skel->maps.unwind_mappings, sizes->max_targets * 2 * UNWIND_MAPPINGS_MAX)) < 0 ||
            /* a stack keeps max_stack_depth frames: the stacks map's values hold no more */
            (r = bpf_map__set_value_size(skel->maps.stacks, STACK_TRACE_BYTES(sizes->max_stack_depth))) < 0)
                return r;
        skel->rodata->stack_depth_max = sizes->max_stack_depth;
        skel->rodata->counter_row_kernel = MEMLEAK_COUNTER_ROW_KERNEL(sizes->max_targets);
        skel->rodata->counter_row_other = MEMLEAK_COUNTER_ROW_OTHER(sizes->max_targets);
        *ret = TAKE_PTR(skel);
        return 0;
}

uint32_t bpf_loader_probe_gen(const struct memleak_bpf *skel)
{
        assert(skel);
        return skel->rodata->probe_gen;
}

int bpf_loader_load(struct memleak_bpf *skel)
{
        assert(skel);
        return memleak_bpf__load(skel);
}

void bpf_loader_destroy(struct memleak_bpf *skel)
{
        memleak_bpf__destroy(skel);     /* accepts NULL */
}

int bpf_loader_targets_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.targets);
}

int bpf_loader_target_slots_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.target_slots);
}

int bpf_loader_alloc_table_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.alloc_table);
}

void bpf_loader_overflow_removed(struct memleak_bpf *skel, uint64_t n)
{
        assert(skel);
        if (skel->bss)
                __atomic_fetch_sub(&skel->bss->alloc_overflow, n, __ATOMIC_RELAXED);
}

void bpf_loader_stacks_purged(struct memleak_bpf *skel, uint64_t n)
{
        assert(skel);
        if (!skel->bss)
                return;
        __atomic_fetch_add(&skel->bss->stacks_deleted, n, __ATOMIC_RELAXED);
        __atomic_fetch_add(&skel->bss->stack_purges, 1, __ATOMIC_RELEASE);
}

void bpf_loader_stacks_restored(struct memleak_bpf *skel, uint64_t n)
{
        assert(skel);
        if (skel->bss)
                __atomic_fetch_sub(&skel->bss->stacks_deleted, n, __ATOMIC_RELAXED);
}

uint64_t bpf_loader_stacks_held(struct memleak_bpf *skel)
{
        uint64_t added, deleted;

        assert(skel);
        if (!skel->bss)
                return 0;
        deleted = __atomic_load_n(&skel->bss->stacks_deleted, __ATOMIC_RELAXED);
        added = __atomic_load_n(&skel->bss->stacks_added, __ATOMIC_RELAXED);
        return added > deleted ? added - deleted : 0;
}

int bpf_loader_allocs_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.allocs);
}

int bpf_loader_combined_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.combined);
}

static struct bpf_link *attach_map_iter(struct bpf_program *prog, struct bpf_map *map)
{
        union bpf_iter_link_info info = { .map.map_fd = bpf_map__fd(map) };
        /* LIBBPF_OPTS zeroes the padding too, which libbpf checks */
        LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info, .link_info_len = sizeof(info));

        return bpf_program__attach_iter(prog, &opts);
}

int bpf_loader_attach_iters(struct memleak_bpf *skel)
{
        assert(skel);
        if (!bpf_program__autoload(skel->progs.dump_stacks))
                return -EOPNOTSUPP;
        if (!skel->links.dump_stacks &&
            !(skel->links.dump_stacks = attach_map_iter(skel->progs.dump_stacks, skel->maps.stacks)))
                return -errno;
        return 0;
}

int bpf_loader_stacks_iter_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return skel->links.dump_stacks ? bpf_link__fd(skel->links.dump_stacks) : -EBADF;
}

size_t bpf_loader_stacks_value_size(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__value_size(skel->maps.stacks);
}

int bpf_loader_stacks_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.stacks);
}

int bpf_loader_unwind_tables_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.unwind_tables);
}

int bpf_loader_unwind_files_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.unwind_files);
}

int bpf_loader_unwind_targets_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.unwind_targets);
}

int bpf_loader_unwind_mappings_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.unwind_mappings);
}

int bpf_loader_mmaps_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.mmaps);
}

struct bpf_object *bpf_loader_object(struct memleak_bpf *skel)
{
        assert(skel);
        return skel->obj;
}

int bpf_loader_file_mappings_fd(struct memleak_bpf *skel)
{
        assert(skel);
        return bpf_map__fd(skel->maps.file_mappings);
}

int bpf_loader_attach_uprobes(struct memleak_bpf *skel, enum alloc_kind kind, bool is_return, int pid,
                              const char *path, const uint64_t *offsets, const uint64_t *cookies, size_t n)
{
        struct bpf_program *prog = is_return ? skel->progs.alloc_return : entry_program(skel, kind);

        assert(skel);
        assert(path);
        if (!prog)
                return -EINVAL;
        return uprobe_multi_link(bpf_program__fd(prog), is_return, pid, path, offsets, cookies, n);
}

int bpf_loader_attach_alloc_sessions(struct memleak_bpf *skel, int pid, const char *path, const uint64_t *offsets,
                                      const uint64_t *cookies, size_t n)
{
        assert(skel);
        assert(path);
        if (!bpf_loader_uprobe_session(skel))
                return -EOPNOTSUPP;
        return uprobe_multi_session_link(bpf_program__fd(skel->progs.alloc_session), pid, path, offsets, cookies, n);
}
