/* SPDX-License-Identifier: GPL-2.0-only */
/* What stopping a target leaves to do, done in background threads. */
#include <assert.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "bpf-loader.h"
#include "detacher.h"
#include "macro.h"
#include "mapping-log.h"

/* Links per thread: each unregistration waits for its own grace period (tens of milliseconds),
 * so threads working side by side overlap those waits: a target's ten links go in about two of
 * them, not ten. */
#define LINKS_PER_THREAD 2U

struct detacher {
        struct memleak_bpf *skel;
        struct map_limits limits;
        struct mapping_log *log;
        detacher_idle_fn on_idle;
        void *userdata;
        pthread_mutex_t lock;
        pthread_cond_t done;
        unsigned running;               /* threads */
        unsigned purging;               /* of those, still to purge the maps */
        struct busy_pid { pid_t pid; unsigned threads; } *busy;
        size_t n_busy;
        pid_t *idle;                    /* pids no longer busy, for the event loop */
        size_t n_idle;
        int efd;
        sd_event_source *source;
};

/* One thread's share of a pid's work. */
struct batch {
        struct detacher *d;
        struct detach_work w;
};

void detacher_work_done(struct detach_work *w)
{
        assert(w);
        for (size_t i = 0; i < w->n_sweeps; i++) {
                close(w->sweeps[i].fd);
                free(w->sweeps[i].offsets);
        }
        free(w->sweeps);
        free(w->links);
        free(w->multi_fds);
        *w = (struct detach_work) {};
}

/* What the pid left in the maps: first, since BPF ignores the pid already and a new target wants
 * the room. */
static void purge(struct detacher *d, const struct detach_work *w)
{
        if (w->purge) {
                (void)stack_collect_purge(d->skel, &d->limits, w->pid);
                mapping_log_purge(d->log, w->pid);
        }
}

/* Its probes: the breakpoints its children inherited, then its links. */
static void remove_probes(struct detacher *d, const struct detach_work *w)
{
        for (size_t i = 0; i < w->n_sweeps; i++) {
                char fd_path[64];

                snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", w->sweeps[i].fd);
                (void)bpf_loader_clear_inherited_uprobes(d->skel, w->pid, fd_path, w->sweeps[i].offsets,
                                                         w->sweeps[i].n_offsets);
        }
        for (size_t i = 0; i < w->n_links; i++)
                bpf_link__destroy(w->links[i]);
        for (size_t i = 0; i < w->n_multi_fds; i++)
                close(w->multi_fds[i]);
}

static struct busy_pid *busy_find(struct detacher *d, pid_t pid)
{
        for (size_t i = 0; i < d->n_busy; i++)
                if (d->busy[i].pid == pid)
                        return &d->busy[i];
        return NULL;
}

/* With the lock held. */
static void thread_finished(struct detacher *d, pid_t pid)
{
        struct busy_pid *b = busy_find(d, pid);
        pid_t *n;

        d->running--;
        if (b && --b->threads == 0) {
                *b = d->busy[--d->n_busy];
                n = realloc(d->idle, (d->n_idle + 1) * sizeof(*n));
                if (n) {
                        d->idle = n;
                        d->idle[d->n_idle++] = pid;
                }
                (void)eventfd_write(d->efd, 1);
        }
        pthread_cond_broadcast(&d->done);
}

static void *thread_main(void *userdata)
{
        struct batch *b = userdata;
        struct detacher *d = b->d;

        purge(d, &b->w);
        if (b->w.purge) {
                /* other pids need not wait for the probes to go too */
                pthread_mutex_lock(&d->lock);
                d->purging--;
                pthread_mutex_unlock(&d->lock);
        }
        remove_probes(d, &b->w);
        pthread_mutex_lock(&d->lock);
        thread_finished(d, b->w.pid);
        pthread_mutex_unlock(&d->lock);
        detacher_work_done(&b->w);
        free(b);
        return NULL;
}

static int on_idle(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct detacher *d = userdata;
        pid_t *idle;
        size_t n;
        eventfd_t v;

        (void)eventfd_read(d->efd, &v);
        pthread_mutex_lock(&d->lock);
        idle = d->idle;
        n = d->n_idle;
        d->idle = NULL;
        d->n_idle = 0;
        pthread_mutex_unlock(&d->lock);
        for (size_t i = 0; i < n; i++)
                if (d->on_idle)
                        d->on_idle(d->userdata, idle[i]);
        free(idle);
        return 0;
}

int detacher_new(sd_event *e, struct memleak_bpf *skel, const struct map_limits *limits, struct mapping_log *log,
                 detacher_idle_fn fn, void *userdata, struct detacher **ret)
{
        _cleanup_free_ struct detacher *d = calloc(1, sizeof(*d));
        int r;

        assert(e);
        assert(skel);
        assert(limits);
        assert(log);
        assert(ret);
        if (!d)
                return -ENOMEM;
        *d = (struct detacher) { .skel = skel, .limits = *limits, .log = log, .on_idle = fn, .userdata = userdata };
        d->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (d->efd < 0)
                return -errno;
        r = sd_event_add_io(e, &d->source, d->efd, EPOLLIN, on_idle, d);
        if (r >= 0)
                r = sd_event_source_set_description(d->source, "detacher-idle");
        if (r < 0) {
                sd_event_source_disable_unref(d->source);
                close(d->efd);
                return r;
        }
        pthread_mutex_init(&d->lock, NULL);
        pthread_cond_init(&d->done, NULL);
        *ret = TAKE_PTR(d);
        return 0;
}

struct detacher *detacher_free(struct detacher *d)
{
        if (!d)
                return NULL;
        pthread_mutex_lock(&d->lock);
        while (d->running > 0)
                pthread_cond_wait(&d->done, &d->lock);
        pthread_mutex_unlock(&d->lock);
        sd_event_source_disable_unref(d->source);
        close(d->efd);
        pthread_cond_destroy(&d->done);
        pthread_mutex_destroy(&d->lock);
        free(d->busy);
        free(d->idle);
        free(d);
        return NULL;
}

bool detacher_busy(struct detacher *d, pid_t pid)
{
        bool busy;

        assert(d);
        pthread_mutex_lock(&d->lock);
        /* A purge going on holds room in the maps (and stacks in the stack map) a new target
         * would miss: any attach waits for it. */
        busy = busy_find(d, pid) != NULL || d->purging > 0;
        pthread_mutex_unlock(&d->lock);
        return busy;
}

bool detacher_pid_busy(struct detacher *d, pid_t pid)
{
        bool busy;

        assert(d);
        pthread_mutex_lock(&d->lock);
        busy = busy_find(d, pid) != NULL;
        pthread_mutex_unlock(&d->lock);
        return busy;
}

/* Start a thread on part of a pid's work (taken); 0, or -errno and the part is done here. */
static int start(struct detacher *d, struct detach_work *w)
{
        struct batch *b = malloc(sizeof(*b));
        struct busy_pid *busy, *n;
        pthread_attr_t attr;
        pthread_t thread;
        int r = -ENOMEM;

        pthread_mutex_lock(&d->lock);
        busy = busy_find(d, w->pid);
        if (!busy && (n = realloc(d->busy, (d->n_busy + 1) * sizeof(*n)))) {
                d->busy = n;
                busy = &d->busy[d->n_busy++];
                *busy = (struct busy_pid) { .pid = w->pid };
        }
        if (b && busy) {
                *b = (struct batch) { .d = d, .w = *w };
                busy->threads++;
                d->running++;
                d->purging += w->purge;
                pthread_attr_init(&attr);
                pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                r = -pthread_create(&thread, &attr, thread_main, b);
                pthread_attr_destroy(&attr);
                if (r < 0) {
                        busy->threads++;        /* thread_finished() takes one off */
                        d->purging -= w->purge;
                        thread_finished(d, w->pid);
                }
        }
        pthread_mutex_unlock(&d->lock);
        if (r < 0) {
                free(b);
                purge(d, w);            /* the slow way: on the caller's thread */
                remove_probes(d, w);
                detacher_work_done(w);
                return r;
        }
        *w = (struct detach_work) {};
        return 0;
}

/* w's links: n uprobe_multi link fds at items when multi, else n struct bpf_link pointers. */
static void set_links(struct detach_work *w, bool multi, void *items, size_t n)
{
        if (multi) {
                w->multi_fds = items;
                w->n_multi_fds = n;
        } else {
                w->links = items;
                w->n_links = n;
        }
}

/* Start threads on a pid's links (n of them at items: uprobe_multi link fds when multi, else
 * struct bpf_link pointers), LINKS_PER_THREAD each; the array stays the caller's. */
static int start_links(struct detacher *d, pid_t pid, const void *items, size_t n, bool multi)
{
        size_t size = multi ? sizeof(int) : sizeof(struct bpf_link *);
        int r = 0;

        for (size_t i = 0; i < n; i += LINKS_PER_THREAD) {
                size_t k = MIN(n - i, (size_t)LINKS_PER_THREAD);
                const char *from = (const char *)items + i * size;
                void *part = malloc(k * size);
                struct detach_work w = { .pid = pid };
                int s;

                if (!part) {
                        /* here and now, from the caller's array */
                        set_links(&w, multi, (void *)from, n - i);
                        remove_probes(d, &w);
                        return -ENOMEM;
                }
                memcpy(part, from, k * size);
                set_links(&w, multi, part, k);
                s = start(d, &w);
                r = r < 0 ? r : s;
        }
        return r;
}

int detacher_submit(struct detacher *d, struct detach_work *w)
{
        int r, k;

        assert(d);
        assert(w);
        /* The first thread: the purge and the sweeps; then the links, a few per thread. */
        r = start(d, &(struct detach_work) {
                .pid = w->pid, .sweeps = w->sweeps, .n_sweeps = w->n_sweeps, .purge = w->purge,
        });
        k = start_links(d, w->pid, w->multi_fds, w->n_multi_fds, true);
        r = r < 0 ? r : k;
        k = start_links(d, w->pid, w->links, w->n_links, false);
        r = r < 0 ? r : k;
        free(w->multi_fds);
        free(w->links);
        *w = (struct detach_work) {};
        return r;
}
