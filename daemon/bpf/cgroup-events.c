/* SPDX-License-Identifier: GPL-2.0-only */
/* Hear when a process enters a watched cgroup, and keep the map of the cgroups watched. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "bpf-loader.h"
#include "bpf-types.h"
#include "cgroup-events.h"

static const char *const programs[] = { "watch_cgroup_fork", "watch_cgroup_exec" };

struct cgroup_events {
        struct bpf_object *obj;
        int map_fd;                     /* watched_cgroups */
        struct bpf_link *links[ELEMENTSOF(programs)];   /* only while some cgroup is watched */
        struct ring_buffer *ring;
        sd_event_source *io;
        cgroup_events_fn fn;
        void *userdata;
        bool consuming;
};

static int on_event(void *ctx, void *data, size_t size)
{
        struct cgroup_events *w = ctx;

        if (size >= sizeof(struct cgroup_event))
                w->fn(w->userdata, data);
        return 0;
}

/* Not from inside a read (fork-watch.c says why). */
static void consume(struct cgroup_events *w)
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

void cgroup_events_drain(struct cgroup_events *w)
{
        if (w)
                consume(w);
}

struct cgroup_events *cgroup_events_free(struct cgroup_events *w)
{
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->io);
        ring_buffer__free(w->ring);
        for (size_t i = 0; i < ELEMENTSOF(w->links); i++)
                bpf_link__destroy(w->links[i]);
        free(w);
        return NULL;
}

int cgroup_events_new(sd_event *e, struct memleak_bpf *skel, cgroup_events_fn fn, void *userdata,
                      struct cgroup_events **ret)
{
        _cleanup_(cgroup_events_freep) struct cgroup_events *w = NULL;
        struct bpf_map *ring, *watched;
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
        w->obj = bpf_loader_object(skel);
        ring = bpf_object__find_map_by_name(w->obj, "cgroup_events");
        watched = bpf_object__find_map_by_name(w->obj, "watched_cgroups");
        if (!ring || !watched)
                return -ENOENT;
        w->map_fd = bpf_map__fd(watched);
        w->ring = ring_buffer__new(bpf_map__fd(ring), on_event, w, NULL);
        if (!w->ring)
                return -errno;
        r = sd_event_add_io(e, &w->io, ring_buffer__epoll_fd(w->ring), EPOLLIN, on_readable, w);
        if (r < 0)
                return r;
        (void)sd_event_source_set_description(w->io, "cgroup-events");
        *ret = TAKE_PTR(w);
        return 0;
}

int cgroup_events_set_active(struct cgroup_events *w, bool active)
{
        int r = 0;

        if (!w || active == !!w->links[0])
                return 0;
        for (size_t i = 0; active && i < ELEMENTSOF(programs); i++) {
                struct bpf_program *p = bpf_object__find_program_by_name(w->obj, programs[i]);

                if (!p)
                        r = -ENOENT;
                else if (!(w->links[i] = bpf_program__attach(p)))
                        r = -errno;
                if (r < 0)
                        break;
        }
        if (active && r == 0)
                return 0;
        /* off, or one of them failed: none linked */
        for (size_t i = 0; i < ELEMENTSOF(w->links); i++)
                w->links[i] = (bpf_link__destroy(w->links[i]), NULL);
        return r;
}

int cgroup_events_watch(struct cgroup_events *w, uint64_t cgroup_id, uint32_t watch_id)
{
        struct cgroup_watch_entry v = { .watch_id = watch_id };

        assert(w);
        if (bpf_map_lookup_elem(w->map_fd, &cgroup_id, &v) == 0 && v.watch_id == watch_id)
                return 0;
        v.watch_id = watch_id;
        if (bpf_map_update_elem(w->map_fd, &cgroup_id, &v, BPF_ANY) < 0)
                return errno == E2BIG || errno == ENOSPC ? -E2BIG : -errno;
        return 0;
}

int cgroup_events_unwatch(struct cgroup_events *w, uint64_t cgroup_id)
{
        assert(w);
        if (bpf_map_delete_elem(w->map_fd, &cgroup_id) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int cgroup_events_lost(struct cgroup_events *w, uint64_t cgroup_id, uint64_t *ret)
{
        struct cgroup_watch_entry v;

        assert(w);
        assert(ret);
        if (bpf_map_lookup_elem(w->map_fd, &cgroup_id, &v) < 0)
                return -errno;
        *ret = v.lost;
        return 0;
}
