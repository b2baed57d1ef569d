/* SPDX-License-Identifier: GPL-2.0-only */
/* A thread that runs long work in order, off the event loop, and hands each result back to it
 * (heapprofd's UnwindingWorker): the loop always answers. */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

struct worker;

/* On the worker thread: the work. It must not touch what the event loop owns. */
typedef void (*worker_run_fn)(void *job);
/* On the event loop, once run returned (cancelled: it never ran, the worker is going away): hand
 * the result out, and free the job. */
typedef void (*worker_done_fn)(void *job, bool cancelled);

int worker_new(sd_event *e, struct worker **ret);
/* Cancel what has not started, wait for what has, and call every done. */
struct worker *worker_free(struct worker *w);

/* Queue job: run(job) on the worker thread after every job queued before it, then done(job) on
 * the event loop. -ENOMEM (neither is called). */
int worker_submit(struct worker *w, void *job, worker_run_fn run, worker_done_fn done);

/* Jobs queued or running. */
unsigned worker_pending(const struct worker *w);
