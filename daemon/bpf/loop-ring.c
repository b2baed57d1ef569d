/* SPDX-License-Identifier: GPL-2.0-only */
/* A BPF ring buffer, read on the event loop (fork-watch, cgroup-events). */
#include <bpf/libbpf.h>
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include "loop-ring.h"

struct loop_ring {
        struct ring_buffer *ring;
        sd_event_source *io;
        loop_ring_fn fn;
        void *userdata;
        bool consuming;                 /* in ring_buffer__consume() */
};

static int on_record(void *ctx, void *data, size_t size)
{
        struct loop_ring *r = ctx;

        r->fn(r->userdata, data, size);
        return 0;
}

/* Read the ring, unless fn called from a read of it asks: libbpf moves the ring's consumer
 * position on after each record's callback returns, so a read from inside one would take that
 * record, and those after it, twice. */
static void consume(struct loop_ring *r)
{
        if (r->consuming)
                return;
        r->consuming = true;
        (void)ring_buffer__consume(r->ring);
        r->consuming = false;
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        consume(userdata);
        return 0;
}

void loop_ring_drain(struct loop_ring *r)
{
        if (r)
                consume(r);
}

struct loop_ring *loop_ring_free(struct loop_ring *r)
{
        if (!r)
                return NULL;
        sd_event_source_disable_unref(r->io);
        ring_buffer__free(r->ring);
        free(r);
        return NULL;
}

int loop_ring_new(sd_event *e, int map_fd, loop_ring_fn fn, void *userdata, const char *description,
                  struct loop_ring **ret)
{
        _cleanup_(loop_ring_freep) struct loop_ring *r = NULL;
        int k;

        assert(e);
        assert(fn);
        assert(ret);
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->fn = fn;
        r->userdata = userdata;
        r->ring = ring_buffer__new(map_fd, on_record, r, NULL);
        if (!r->ring)
                return -errno;
        k = sd_event_add_io(e, &r->io, ring_buffer__epoll_fd(r->ring), EPOLLIN, on_readable, r);
        if (k < 0)
                return k;
        (void)sd_event_source_set_description(r->io, description);
        *ret = TAKE_PTR(r);
        return 0;
}
