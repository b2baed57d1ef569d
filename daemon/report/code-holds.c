/* SPDX-License-Identifier: GPL-2.0-only */
/* Which threads of memleakctl run's family are held at new code until its tables are in. */
#include <errno.h>
#include <stdlib.h>
#include "code-holds.h"

static struct code_hold_process *find(const struct code_holds *c, pid_t pid)
{
        for (size_t i = 0; i < c->n_processes; i++)
                if (c->processes[i].pid == pid)
                        return &c->processes[i];
        return NULL;
}

int code_holds_add_process(struct code_holds *c, pid_t pid)
{
        struct code_hold_process *p = find(c, pid), *grown;

        if (p)
                code_holds_forget_process(c, pid);      /* an earlier process's, its threads too */
        grown = reallocarray(c->processes, c->n_processes + 1, sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        c->processes = grown;
        c->processes[c->n_processes++] = (struct code_hold_process) { .pid = pid };
        return 0;
}

bool code_holds_has_process(const struct code_holds *c, pid_t pid)
{
        return find(c, pid) != NULL;
}

void code_holds_forget_process(struct code_holds *c, pid_t pid)
{
        for (size_t i = 0; i < c->n_held;)
                if (c->held[i].pid == pid)
                        c->held[i] = c->held[--c->n_held];
                else
                        i++;
        for (size_t i = 0; i < c->n_processes; i++)
                if (c->processes[i].pid == pid) {
                        c->processes[i] = c->processes[--c->n_processes];
                        return;
                }
}

bool code_holds_take_signal(struct code_holds *c, pid_t pid, uint64_t sent)
{
        struct code_hold_process *p = find(c, pid);

        if (!p || sent <= p->signals)
                return false;
        p->signals++;
        return true;
}

int code_holds_hold(struct code_holds *c, pid_t tid, pid_t pid, uint64_t now_usec)
{
        struct code_hold_process *p = find(c, pid);
        struct code_hold_thread *grown;

        if (!p)
                return -ESRCH;
        grown = reallocarray(c->held, c->n_held + 1, sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        c->held = grown;
        p->stops++;
        c->held[c->n_held++] = (struct code_hold_thread) {
                .tid = tid, .pid = pid, .waits_for = p->stops, .since_usec = now_usec };
        return 0;
}

void code_holds_ready(struct code_holds *c, pid_t pid, uint64_t n)
{
        struct code_hold_process *p = find(c, pid);

        if (p && p->ready != UINT64_MAX)
                p->ready += n;
}

void code_holds_release_process(struct code_holds *c, pid_t pid)
{
        struct code_hold_process *p = find(c, pid);

        if (p)
                p->ready = UINT64_MAX;
}

bool code_holds_due(struct code_holds *c, size_t i, uint64_t now_usec)
{
        const struct code_hold_thread *t = &c->held[i];
        struct code_hold_process *p = find(c, t->pid);

        if (!p || p->ready >= t->waits_for)
                return true;
        if (now_usec - t->since_usec < CODE_HOLD_MAX_USEC)
                return false;
        /* an answer that never comes (its event lost) is not waited for again at the next stop */
        c->stats.timeouts++;
        p->ready = t->waits_for;
        return true;
}

void code_holds_unhold(struct code_holds *c, size_t i, uint64_t now_usec)
{
        uint64_t held = now_usec - c->held[i].since_usec;

        c->stats.holds++;
        c->stats.held_usec += held;
        if (held > c->stats.held_usec_max)
                c->stats.held_usec_max = held;
        c->held[i] = c->held[--c->n_held];
}

void code_holds_forget_thread(struct code_holds *c, pid_t tid)
{
        for (size_t i = 0; i < c->n_held; i++)
                if (c->held[i].tid == tid) {
                        c->held[i] = c->held[--c->n_held];
                        return;
                }
}

void code_holds_done(struct code_holds *c)
{
        free(c->processes);
        free(c->held);
        *c = (struct code_holds) {};
}
