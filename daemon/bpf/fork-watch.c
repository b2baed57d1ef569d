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

struct fork_watch {
        struct memleak_bpf *skel;
        struct bpf_link *link;          /* only while some process is traced */
        struct bpf_link *code_link;     /* its mappings of code not examined yet, as link */
        struct ring_buffer *ring;
        sd_event_source *io;
        fork_watch_fn fn;
        void *userdata;
        bool consuming;                 /* in ring_buffer__consume() */
};

static int on_event(void *ctx, void *data, size_t size)
{
        struct fork_watch *w = ctx;
        const struct fork_event *e = data;

        if (size >= sizeof(*e))
                w->fn(w->userdata, e);
        return 0;
}

/* Read the ring, unless fn called from a read of it asks: libbpf moves the ring's consumer
 * position on after each event's callback returns, so a read from inside one would take that
 * event, and those after it, twice. */
static void consume(struct fork_watch *w)
{
        if (w->consuming)
                return;
        w->consuming = true;
        (void)ring_buffer__consume(w->ring);
        w->consuming = false;
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        consume(userdata);
        return 0;
}

void fork_watch_drain(struct fork_watch *w)
{
        if (w)
                consume(w);
}

struct fork_watch *fork_watch_free(struct fork_watch *w)
{
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->io);
        ring_buffer__free(w->ring);
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
        w->ring = ring_buffer__new(bpf_loader_forks_fd(skel), on_event, w, NULL);
        if (!w->ring)
                return -errno;
        r = sd_event_add_io(e, &w->io, ring_buffer__epoll_fd(w->ring), EPOLLIN, on_readable, w);
        if (r < 0)
                return r;
        (void)sd_event_source_set_description(w->io, "fork-watch");
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
