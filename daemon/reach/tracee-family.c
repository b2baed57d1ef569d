/* SPDX-License-Identifier: GPL-2.0-only */
/* Who is who among the tracees of memleakctl run's tracer when it follows forks (pure). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include "tracee-family.h"

static int push_pid(pid_t **v, size_t *n, pid_t pid)
{
        pid_t *grown = reallocarray(*v, *n + 1, sizeof(**v));

        if (!grown)
                return -ENOMEM;
        *v = grown;
        (*v)[(*n)++] = pid;
        return 0;
}

static bool remove_pid(pid_t *v, size_t *n, pid_t pid)
{
        for (size_t i = 0; i < *n; i++)
                if (v[i] == pid) {
                        v[i] = v[--*n];
                        return true;
                }
        return false;
}

int tracee_family_hold(struct tracee_family *f, pid_t pid, uint64_t now_usec)
{
        struct tracee_family_held *grown;

        assert(f);
        grown = reallocarray(f->held, f->n_held + 1, sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        f->held = grown;
        f->held[f->n_held++] = (struct tracee_family_held) { .pid = pid, .since_usec = now_usec };
        return 0;
}

int tracee_family_answer(struct tracee_family *f, pid_t pid, bool followed)
{
        struct tracee_family_answer *grown;

        assert(f);
        grown = reallocarray(f->answers, f->n_answers + 1, sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        f->answers = grown;
        f->answers[f->n_answers++] = (struct tracee_family_answer) { .pid = pid, .followed = followed };
        return 0;
}

int tracee_family_decide(struct tracee_family *f, size_t i, uint64_t now_usec, enum tracee_family_verdict *ret)
{
        const struct tracee_family_held *h;

        assert(f);
        assert(i < f->n_held);
        assert(ret);
        h = &f->held[i];
        for (size_t k = 0; k < f->n_answers; k++) {
                bool followed;

                if (f->answers[k].pid != h->pid)
                        continue;
                followed = f->answers[k].followed;
                f->answers[k] = f->answers[--f->n_answers];
                if (!followed) {
                        *ret = TRACEE_FAMILY_LET_GO;
                        return 0;
                }
                *ret = TRACEE_FAMILY_MEMBER;
                return push_pid(&f->members, &f->n_members, h->pid);
        }
        *ret = now_usec - h->since_usec > TRACEE_FAMILY_HOLD_MAX_USEC ? TRACEE_FAMILY_LET_GO : TRACEE_FAMILY_WAIT;
        return 0;
}

void tracee_family_unhold(struct tracee_family *f, size_t i)
{
        assert(f);
        assert(i < f->n_held);
        f->held[i] = f->held[--f->n_held];
}

int tracee_family_add_member(struct tracee_family *f, pid_t tid)
{
        assert(f);
        return tracee_family_is_member(f, tid) ? 0 : push_pid(&f->members, &f->n_members, tid);
}

bool tracee_family_is_member(const struct tracee_family *f, pid_t tid)
{
        assert(f);
        for (size_t i = 0; i < f->n_members; i++)
                if (f->members[i] == tid)
                        return true;
        return false;
}

bool tracee_family_is_held(const struct tracee_family *f, pid_t pid)
{
        assert(f);
        for (size_t i = 0; i < f->n_held; i++)
                if (f->held[i].pid == pid)
                        return true;
        return false;
}

void tracee_family_forget(struct tracee_family *f, pid_t tid)
{
        assert(f);
        for (size_t i = 0; i < f->n_held; i++)
                if (f->held[i].pid == tid) {
                        tracee_family_unhold(f, i);
                        break;
                }
        (void)remove_pid(f->members, &f->n_members, tid);
        for (size_t i = 0; i < f->n_answers; i++)
                if (f->answers[i].pid == tid) {
                        f->answers[i] = f->answers[--f->n_answers];
                        break;
                }
}

void tracee_family_done(struct tracee_family *f)
{
        assert(f);
        free(f->held);
        free(f->members);
        free(f->answers);
        *f = (struct tracee_family) {};
}
