/* SPDX-License-Identifier: GPL-2.0-only */
/* An exited target's kept verdicts: sorted, found by stack, copied. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "exit-verdicts.h"
#include "macro.h"

struct exit_verdicts *exit_verdicts_free(struct exit_verdicts *v)
{
        if (!v)
                return NULL;
        free(v->items);
        free(v);
        return NULL;
}

static int by_stack_id(const void *a, const void *b)
{
        const struct exit_verdict *x = a, *y = b;

        return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

int exit_verdicts_sort(struct exit_verdicts *v)
{
        if (!v || v->n == 0)
                return 0;
        qsort(v->items, v->n, sizeof(*v->items), by_stack_id);
        for (size_t i = 1; i < v->n; i++)
                if (v->items[i].stack_id == v->items[i - 1].stack_id)
                        return -EINVAL;
        return 0;
}

const struct exit_verdict *exit_verdicts_find(const struct exit_verdicts *v, int64_t stack_id)
{
        struct exit_verdict key = { .stack_id = stack_id };

        if (!v || v->n == 0)
                return NULL;
        return bsearch(&key, v->items, v->n, sizeof(*v->items), by_stack_id);
}

int exit_verdicts_copy(const struct exit_verdicts *v, struct exit_verdicts **ret)
{
        struct exit_verdicts *c;

        if (!v) {
                *ret = NULL;
                return 0;
        }
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->items = malloc(MAX(v->n, (size_t)1) * sizeof(*c->items));
        if (!c->items) {
                free(c);
                return -ENOMEM;
        }
        if (v->n > 0)
                memcpy(c->items, v->items, v->n * sizeof(*c->items));
        c->n = v->n;
        *ret = c;
        return 0;
}

uint64_t exit_verdicts_bytes(const struct exit_verdicts *v)
{
        return v ? sizeof(*v) + v->n * sizeof(*v->items) : 0;
}
