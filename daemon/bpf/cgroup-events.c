/* SPDX-License-Identifier: GPL-2.0-only */
/* Hear when a process enters a watched cgroup, and keep the map of the cgroups watched. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include "bpf-loader.h"
#include "bpf-types.h"
#include "cgroup-events.h"
#include "loop-ring.h"

static const char *const programs[] = { "watch_cgroup_fork", "watch_cgroup_exec" };

struct cgroup_events {
        struct bpf_object *obj;
        int map_fd;                     /* watched_cgroups */
        int exes_fd;                    /* watched_exes */
        int comms_fd;                   /* watched_comms */
        struct bpf_link *links[ELEMENTSOF(programs)];   /* only while some cgroup is watched */
        struct loop_ring *ring;
        cgroup_events_fn fn;
        void *userdata;
};

static void on_event(void *userdata, const void *data, size_t size)
{
        struct cgroup_events *w = userdata;

        if (size >= sizeof(struct cgroup_event))
                w->fn(w->userdata, data);
}

void cgroup_events_drain(struct cgroup_events *w)
{
        if (w)
                loop_ring_drain(w->ring);
}

struct cgroup_events *cgroup_events_free(struct cgroup_events *w)
{
        if (!w)
                return NULL;
        loop_ring_free(w->ring);
        for (size_t i = 0; i < ELEMENTSOF(w->links); i++)
                bpf_link__destroy(w->links[i]);
        free(w);
        return NULL;
}

int cgroup_events_new(sd_event *e, struct memleak_bpf *skel, cgroup_events_fn fn, void *userdata,
                      struct cgroup_events **ret)
{
        _cleanup_(cgroup_events_freep) struct cgroup_events *w = NULL;
        struct bpf_map *ring, *watched, *exes, *comms;
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
        exes = bpf_object__find_map_by_name(w->obj, "watched_exes");
        comms = bpf_object__find_map_by_name(w->obj, "watched_comms");
        if (!ring || !watched || !exes || !comms)
                return -ENOENT;
        w->map_fd = bpf_map__fd(watched);
        w->exes_fd = bpf_map__fd(exes);
        w->comms_fd = bpf_map__fd(comms);
        r = loop_ring_new(e, bpf_map__fd(ring), on_event, w, "cgroup-events", &w->ring);
        if (r < 0)
                return r;
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

/* Watch key of map fd for watch_id (again: its lost count kept). */
static int watch_key(int fd, const void *key, uint32_t watch_id)
{
        struct cgroup_watch_entry v = { .watch_id = watch_id };

        if (bpf_map_lookup_elem(fd, key, &v) == 0 && v.watch_id == watch_id)
                return 0;
        v.watch_id = watch_id;
        if (bpf_map_update_elem(fd, key, &v, BPF_ANY) < 0)
                return errno == E2BIG || errno == ENOSPC ? -E2BIG : -errno;
        return 0;
}

static int unwatch_key(int fd, const void *key)
{
        if (bpf_map_delete_elem(fd, key) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int cgroup_events_watch(struct cgroup_events *w, uint64_t cgroup_id, uint32_t watch_id)
{
        assert(w);
        return watch_key(w->map_fd, &cgroup_id, watch_id);
}

int cgroup_events_unwatch(struct cgroup_events *w, uint64_t cgroup_id)
{
        assert(w);
        return unwatch_key(w->map_fd, &cgroup_id);
}

/* The program file's key as the kernel has it (dev: major << 20 | minor). */
static struct unwind_file_key exe_key(dev_t dev, ino_t ino)
{
        return (struct unwind_file_key) { .dev = (uint64_t)major(dev) << 20 | minor(dev), .ino = ino };
}

/* A name's key: its first MEMLEAK_COMM_LEN - 1 bytes, zero-filled. */
static void comm_key(const char *comm, char key[MEMLEAK_COMM_LEN])
{
        memset(key, 0, MEMLEAK_COMM_LEN);
        strncpy(key, comm, MEMLEAK_COMM_LEN - 1);
}

int cgroup_events_watch_exe(struct cgroup_events *w, dev_t dev, ino_t ino, uint32_t watch_id)
{
        struct unwind_file_key key = exe_key(dev, ino);

        assert(w);
        return watch_key(w->exes_fd, &key, watch_id);
}

int cgroup_events_unwatch_exe(struct cgroup_events *w, dev_t dev, ino_t ino)
{
        struct unwind_file_key key = exe_key(dev, ino);

        assert(w);
        return unwatch_key(w->exes_fd, &key);
}

int cgroup_events_watch_comm(struct cgroup_events *w, const char *comm, uint32_t watch_id)
{
        char key[MEMLEAK_COMM_LEN];

        assert(w);
        assert(comm);
        comm_key(comm, key);
        return watch_key(w->comms_fd, key, watch_id);
}

int cgroup_events_unwatch_comm(struct cgroup_events *w, const char *comm)
{
        char key[MEMLEAK_COMM_LEN];

        assert(w);
        assert(comm);
        comm_key(comm, key);
        return unwatch_key(w->comms_fd, key);
}

int cgroup_events_program_lost(struct cgroup_events *w, const char *comm, dev_t dev, ino_t ino, uint64_t *ret)
{
        struct unwind_file_key exe = exe_key(dev, ino);
        struct cgroup_watch_entry v;
        char key[MEMLEAK_COMM_LEN];

        assert(w);
        assert(ret);
        if (comm) {
                comm_key(comm, key);
                if (bpf_map_lookup_elem(w->comms_fd, key, &v) < 0)
                        return -errno;
        } else if (bpf_map_lookup_elem(w->exes_fd, &exe, &v) < 0)
                return -errno;
        *ret = v.lost;
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
