/* SPDX-License-Identifier: GPL-2.0-only */
/* Hear when a traced process forks a child, execs or maps code of a file not examined yet (BPF
 * on sched_process_fork, sched_process_exec and mmap's return, through a ring buffer). */
#include <bpf/libbpf.h>
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "bpf-loader.h"
#include "bpf-types.h"
#include "fork-watch.h"
#include "loop-ring.h"

struct fork_watch {
        struct memleak_bpf *skel;
        struct bpf_link *link;          /* only while some process is traced */
        struct bpf_link *code_link;     /* its mappings of code not examined yet, as link */
        struct loop_ring *ring;
        fork_watch_fn fn;
        void *userdata;
};

static void on_event(void *userdata, const void *data, size_t size)
{
        struct fork_watch *w = userdata;

        if (size >= sizeof(struct fork_event))
                w->fn(w->userdata, data);
}

void fork_watch_drain(struct fork_watch *w)
{
        if (w)
                loop_ring_drain(w->ring);
}

struct fork_watch *fork_watch_free(struct fork_watch *w)
{
        if (!w)
                return NULL;
        loop_ring_free(w->ring);
        bpf_link__destroy(w->code_link);
        bpf_link__destroy(w->link);
        free(w);
        return NULL;
}

int fork_watch_new(sd_event *e, struct memleak_bpf *skel, fork_watch_fn fn, void *userdata,
                   struct fork_watch **ret)
{
        _cleanup_(fork_watch_freep) struct fork_watch *w = NULL;
        int r;

        assert(e);
        assert(skel);
        assert(fn);
        assert(ret);
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->fn = fn;
        w->userdata = userdata;
        r = loop_ring_new(e, bpf_loader_forks_fd(skel), on_event, w, "fork-watch", &w->ring);
        if (r < 0)
                return r;
        w->skel = skel;
        *ret = TAKE_PTR(w);
        return 0;
}

int fork_watch_set_active(struct fork_watch *w, bool active)
{
        if (!w || active == !!w->link)
                return 0;
        if (!active) {
                w->code_link = (bpf_link__destroy(w->code_link), NULL);
                w->link = (bpf_link__destroy(w->link), NULL);
                return 0;
        }
        w->link = bpf_loader_attach_fork_watch(w->skel);
        if (!w->link)
                return -errno;
        /* best effort (a kernel without syscall tracepoints): new code is then found at the
         * next snapshot tick, and walks that meet it meanwhile say no_table */
        w->code_link = bpf_loader_attach_code_watch(w->skel);
        return 0;
}
