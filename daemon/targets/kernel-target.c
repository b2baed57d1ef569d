/* SPDX-License-Identifier: GPL-2.0-only */
/* The kernel target: tp_btf programs on the kmem and percpu tracepoints, kernel stacks via kallsyms. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf-loader.h"
#include "kernel-symbols.h"
#include "kernel-target.h"
#include "macro.h"
#include "target-pins.h"
#include "util.h"

/* The map value the BPF programs read: its layout is part of the contract with bpf/. */
_Static_assert(sizeof(struct target_config) == 88, "struct target_config layout");
_Static_assert(sizeof(struct target_fill) == 512, "struct target_fill layout");
_Static_assert(MEMLEAK_BPF_MAX_SAMPLE_BYTES == MEMLEAK_MAX_SAMPLE_BYTES, "BPF's sparsest mean is the protocol's");
_Static_assert(sizeof(struct alloc_key) == 16, "struct alloc_key layout");
_Static_assert(KERNEL_TRACEPOINTS_MAX == 8, "every tracepoint pair fits the gaps array");

/* An allocation tracepoint and the one that frees what it hands out: linked as a pair or not at
 * all, since allocations whose frees go unseen would all look leaked. */
struct kernel_tracepoint {
        const char *name;       /* "kmem:kmalloc", as tracefs and perf name it */
        const char *btf_name;   /* the tracepoint's typedef in vmlinux BTF */
        const char *program;    /* in bpf/memleak.bpf.c */
        unsigned n_args;        /* arguments the program reads */
};

static const struct kernel_tracepoint tracepoint_pairs[][2] = {
        { { "kmem:kmalloc", "btf_trace_kmalloc", "tp_kmalloc", 4 },
          { "kmem:kfree", "btf_trace_kfree", "tp_kfree", 2 } },
        { { "kmem:kmem_cache_alloc", "btf_trace_kmem_cache_alloc", "tp_cache_alloc", 3 },
          { "kmem:kmem_cache_free", "btf_trace_kmem_cache_free", "tp_cache_free", 2 } },
        { { "kmem:mm_page_alloc", "btf_trace_mm_page_alloc", "tp_page_alloc", 2 },
          { "kmem:mm_page_free", "btf_trace_mm_page_free", "tp_page_free", 1 } },
        { { "percpu:percpu_alloc_percpu", "btf_trace_percpu_alloc_percpu", "tp_percpu_alloc", 9 },
          { "percpu:percpu_free_percpu", "btf_trace_percpu_free_percpu", "tp_percpu_free", 3 } },
};

/* The number of arguments tracepoint btf_name passes, from vmlinux BTF; -errno if it has none. */
static int tracepoint_args(const struct btf *vmlinux, const char *btf_name)
{
        const struct btf_type *t;
        int id = btf__find_by_name_kind(vmlinux, btf_name, BTF_KIND_TYPEDEF);

        if (id < 0)
                return -ENOENT;
        t = btf__type_by_id(vmlinux, id);
        t = t ? btf__type_by_id(vmlinux, t->type) : NULL;      /* pointer */
        t = t && btf_is_ptr(t) ? btf__type_by_id(vmlinux, t->type) : NULL;
        if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 1)
                return -EINVAL;
        return btf_vlen(t) - 1;         /* the first is the tracepoint's private data */
}

size_t kernel_target_prepare(struct bpf_object *obj, struct kernel_tracepoint_gap gaps[KERNEL_TRACEPOINTS_MAX])
{
        struct btf *vmlinux = btf__load_vmlinux_btf();
        size_t n_gaps = 0;

        assert(obj);
        assert(gaps);
        for (size_t i = 0; i < ELEMENTSOF(tracepoint_pairs); i++) {
                bool usable = vmlinux != NULL;

                for (size_t j = 0; j < 2; j++) {
                        const struct kernel_tracepoint *tp = &tracepoint_pairs[i][j];
                        int n = vmlinux ? tracepoint_args(vmlinux, tp->btf_name) : -ENOENT;

                        if (n >= 0 && (unsigned)n >= tp->n_args)
                                continue;
                        gaps[n_gaps++] = (struct kernel_tracepoint_gap) {
                                .name = tp->name, .error = n < 0 ? n : -EINVAL };
                        usable = false;
                }
                for (size_t j = 0; j < 2; j++) {
                        struct bpf_program *prog = bpf_object__find_program_by_name(obj, tracepoint_pairs[i][j].program);

                        if (prog && !usable)
                                (void)bpf_program__set_autoload(prog, false);
                }
        }
        btf__free(vmlinux);
        return n_gaps;
}

static int add_object(struct target *t, const char *name)
{
        struct target_object *no = realloc(t->objects, (t->n_objects + 1) * sizeof(*no));

        if (!no)
                return -ENOMEM;
        t->objects = no;
        t->objects[t->n_objects] = (struct target_object) {
                .path = strdup(name), .probes = 1, .role = OBJECT_ROLE_TRACEPOINT, .fd = -1,
        };
        if (!t->objects[t->n_objects].path)
                return -ENOMEM;
        t->n_objects++;
        return 0;
}

static int add_link(struct target *t, struct bpf_link *link)
{
        struct bpf_link **nl = realloc(t->links.links, (t->links.n_links + 1) * sizeof(*nl));

        if (!nl)
                return -ENOMEM;
        t->links.links = nl;
        t->links.links[t->links.n_links++] = link;
        return 0;
}

/* The usable pairs' programs (both loaded: the kernel has both tracepoints), each pair's in
 * progs[i][0..1] (NULL where unusable): how many pairs, or -ENOENT when a program is missing. */
static int usable_pairs(const struct target_env *env, struct bpf_program *progs[][2], char **error)
{
        struct bpf_object *obj = bpf_loader_object(env->skel);
        int n = 0;

        for (size_t i = 0; i < ELEMENTSOF(tracepoint_pairs); i++) {
                for (size_t j = 0; j < 2; j++) {
                        progs[i][j] = bpf_object__find_program_by_name(obj, tracepoint_pairs[i][j].program);
                        if (!progs[i][j])
                                return error_set(error, -ENOENT, "BPF program %s is missing",
                                                 tracepoint_pairs[i][j].program);
                }
                if (!bpf_program__autoload(progs[i][0]) || !bpf_program__autoload(progs[i][1]))
                        progs[i][0] = progs[i][1] = NULL;       /* the kernel lacks one: logged at load */
                else
                        n++;
        }
        if (n == 0)
                return error_set(error, -EOPNOTSUPP, "This kernel has none of the kmem and percpu "
                                 "tracepoints memleakd uses (see memleakd's log)");
        return n;
}

/* Link the usable pairs, each link pinned when the daemon pins (a restart takes them back), and
 * name their tracepoints as t's objects; with adopt, only named: the links are the pinned ones. */
static int link_tracepoints(const struct target_env *env, struct target *t, bool adopt, char **error)
{
        struct bpf_program *progs[ELEMENTSOF(tracepoint_pairs)][2];
        int r = usable_pairs(env, progs, error);

        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(tracepoint_pairs); i++) {
                if (!progs[i][0])
                        continue;
                for (size_t j = 0; j < 2; j++) {
                        const char *name = tracepoint_pairs[i][j].name;
                        struct bpf_link *link;

                        if (!adopt) {
                                link = bpf_program__attach(progs[i][j]);
                                if (!link)
                                        return error_set(error, -errno, "Cannot attach to tracepoint %s: %m", name);
                                r = add_link(t, link);
                                if (r < 0) {
                                        bpf_link__destroy(link);
                                        return error_set(error, r, "Out of memory");
                                }
                                (void)target_pins_add(t, bpf_link__fd(link));   /* a failure is counted */
                        }
                        r = add_object(t, name);
                        if (r < 0)
                                return error_set(error, r, "Out of memory");
                }
        }
        return 0;
}

static int describe(struct target *t, const struct target_config *f)
{
        const char *tail = "";
        _cleanup_free_ char *who = NULL;
        int r;

        if (f->filter_pid && f->filter_comm_set)
                r = asprintf(&who, "allocations by pid %u with comm %.*s", f->filter_pid,
                             MEMLEAK_COMM_LEN, f->filter_comm);
        else if (f->filter_pid)
                r = asprintf(&who, "allocations by pid %u", f->filter_pid);
        else if (f->filter_comm_set)
                r = asprintf(&who, "allocations by comm %.*s", MEMLEAK_COMM_LEN, f->filter_comm);
        else {
                r = asprintf(&who, "allocations by every task");
                tail = " but memleakd";
        }
        if (r < 0)
                return -ENOMEM;
        t->allocator = "kernel";
        if (asprintf(&t->allocator_reason, "kmem and percpu tracepoints (tp_btf): %s%s", who, tail) < 0) {
                t->allocator_reason = NULL;
                return -ENOMEM;
        }
        return 0;
}

/* t as the kernel target: its name, kallsyms, what it records (by its settings), its tracepoints
 * linked (with adopt: named only, the links being the pinned ones). */
static int name_and_link(const struct target_env *env, struct target *t, bool adopt, char **error)
{
        snprintf(t->comm, sizeof(t->comm), "%s", KERNEL_TARGET_COMM);
        /* The symbols first: the programs just linked show up in them. */
        if (kernel_symbols_new("/proc/kallsyms", &t->kernel) < 0 || describe(t, &t->filter) < 0)
                return error_set(error, -ENOMEM, "Out of memory");
        return link_tracepoints(env, t, adopt, error);
}

int kernel_target_attach(const struct target_env *env, const struct kernel_target_params *p,
                         struct target **ret, char **error)
{
        _cleanup_(target_freep) struct target *t = NULL;
        int r;

        assert(env);
        assert(p);
        assert(ret);
        assert(error);
        *error = NULL;
        r = target_new(env, KERNEL_TARGET_PID, &p->filter, p->ring_depth, &t, error);
        if (r < 0)
                return r;
        r = name_and_link(env, t, false, error);
        if (r < 0)
                return r;
        /* From here on BPF records kernel allocations. */
        r = target_register(env, t, error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}

int kernel_target_adopt(const struct target_env *env, uint32_t ring_depth, const struct target_adoption *adopt,
                        struct target **ret, char **error)
{
        _cleanup_(target_freep) struct target *t = NULL;
        int r;

        assert(env);
        assert(adopt);
        assert(ret);
        assert(error);
        *error = NULL;
        r = target_new_adopted(env, KERNEL_TARGET_PID, ring_depth, adopt, &t, error);
        if (r < 0)
                return r;
        r = name_and_link(env, t, true, error);
        if (r < 0)
                return r;
        r = target_pins_adopt(t);
        if (r == 0)
                return error_set(error, -ENOLINK, "No pinned link of the kernel target is left");
        if (r < 0)
                return error_set(error, r, "Cannot reopen the kernel target's pinned links: %s", strerror(-r));
        /* recorded all along: at once */
        r = target_register(env, t, error);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(t);
        return 0;
}
