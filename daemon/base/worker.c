/* SPDX-License-Identifier: GPL-2.0-only */
/* A thread that runs long work in order, off the event loop, and hands each result back to it. */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "macro.h"
#include "worker.h"

struct job {
        void *data;
        worker_run_fn run;
        worker_done_fn done;
        struct job *next;
};

struct worker {
        pthread_t thread;
        bool started;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        struct job *queue, *queue_tail;         /* to run */
        struct job *finished, *finished_tail;   /* run, done() not called yet */
        unsigned pending;
        bool stopping;
        int efd;                                /* written when a job finished */
        sd_event_source *source;
};

static void append(struct job **head, struct job **tail, struct job *j)
{
        j->next = NULL;
        if (*tail)
                (*tail)->next = j;
        else
                *head = j;
        *tail = j;
}

static void *worker_main(void *userdata)
{
        struct worker *w = userdata;

        pthread_mutex_lock(&w->lock);
        for (;;) {
                struct job *j;

                while (!w->queue && !w->stopping)
                        pthread_cond_wait(&w->wake, &w->lock);
                if (w->stopping)
                        break;
                j = w->queue;
                w->queue = j->next;
                if (!w->queue)
                        w->queue_tail = NULL;
                pthread_mutex_unlock(&w->lock);
                j->run(j->data);
                pthread_mutex_lock(&w->lock);
                append(&w->finished, &w->finished_tail, j);
                (void)eventfd_write(w->efd, 1);
        }
        pthread_mutex_unlock(&w->lock);
        return NULL;
}

/* Call done() for every finished job, in order. */
static void deliver(struct worker *w)
{
        struct job *list;

        pthread_mutex_lock(&w->lock);
        list = w->finished;
        w->finished = w->finished_tail = NULL;
        pthread_mutex_unlock(&w->lock);
        while (list) {
                struct job *j = list;

                list = j->next;
                w->pending--;
                j->done(j->data, false);
                free(j);
        }
}

static int on_finished(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct worker *w = userdata;
        eventfd_t v;

        (void)eventfd_read(w->efd, &v);
        deliver(w);
        return 0;
}

int worker_new(sd_event *e, struct worker **ret)
{
        _cleanup_free_ struct worker *w = calloc(1, sizeof(*w));
        int r;

        assert(e);
        assert(ret);
        if (!w)
                return -ENOMEM;
        w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (w->efd < 0)
                return -errno;
        r = sd_event_add_io(e, &w->source, w->efd, EPOLLIN, on_finished, w);
        if (r >= 0)
                r = sd_event_source_set_description(w->source, "worker-finished");
        if (r < 0) {
                sd_event_source_disable_unref(w->source);
                close(w->efd);
                return r;
        }
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->wake, NULL);
        r = -pthread_create(&w->thread, NULL, worker_main, w);
        if (r < 0) {
                pthread_cond_destroy(&w->wake);
                pthread_mutex_destroy(&w->lock);
                sd_event_source_disable_unref(w->source);
                close(w->efd);
                return r;
        }
        w->started = true;
        *ret = TAKE_PTR(w);
        return 0;
}

struct worker *worker_free(struct worker *w)
{
        struct job *queued;

        if (!w)
                return NULL;
        pthread_mutex_lock(&w->lock);
        w->stopping = true;
        queued = w->queue;
        w->queue = w->queue_tail = NULL;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->lock);
        if (w->started)
                pthread_join(w->thread, NULL);  /* the job it runs now, if any, finishes */
        deliver(w);
        while (queued) {
                struct job *j = queued;

                queued = j->next;
                j->done(j->data, true);
                free(j);
        }
        sd_event_source_disable_unref(w->source);
        close(w->efd);
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
}

int worker_submit(struct worker *w, void *data, worker_run_fn run, worker_done_fn done)
{
        struct job *j = malloc(sizeof(*j));

        assert(w);
        assert(run);
        assert(done);
        if (!j)
                return -ENOMEM;
        *j = (struct job) { .data = data, .run = run, .done = done };
        pthread_mutex_lock(&w->lock);
        append(&w->queue, &w->queue_tail, j);
        w->pending++;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->lock);
        return 0;
}

unsigned worker_pending(const struct worker *w)
{
        assert(w);
        return w->pending;
}
