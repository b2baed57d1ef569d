/* SPDX-License-Identifier: GPL-2.0-only */
/* The manager's pending operations, in one list (pending-ops.h). */
#include <errno.h>
#include <stdlib.h>
#include "pending-ops.h"
#include "protocol.h"
#include "string-table.h"

static const char *const pending_ops_state_table[_PENDING_STATE_MAX] = {
        [PENDING_QUEUED] = "queued",
        [PENDING_AWAITING_TABLES] = "awaiting-tables",
        [PENDING_DONE] = "done",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(pending_ops_state, enum pending_state);

int pending_ops_add(struct pending_ops *l, const struct pending_op *op)
{
        struct pending_op *n;

        if (!l || !op)
                return -EINVAL;
        n = realloc(l->ops, (l->n + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        l->ops = n;
        l->ops[l->n++] = *op;
        return 0;
}

static void op_free(struct pending_op *op)
{
        if (!op->parsed)
                return;
        memleak_request_done(op->parsed);
        free(op->parsed);
        op->parsed = NULL;
}

void pending_ops_prune(struct pending_ops *l)
{
        size_t k = 0;

        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++) {
                if (l->ops[i].state == PENDING_DONE) {
                        op_free(&l->ops[i]);
                        continue;
                }
                l->ops[k++] = l->ops[i];
        }
        l->n = k;
        if (k == 0) {
                free(l->ops);
                l->ops = NULL;
        }
}

size_t pending_ops_count(const struct pending_ops *l, enum pending_kind kind, enum pending_state state)
{
        size_t n = 0;

        for (size_t i = 0; l && i < l->n; i++)
                n += l->ops[i].kind == kind && l->ops[i].state == state;
        return n;
}

uint64_t pending_ops_next_due(const struct pending_ops *l)
{
        uint64_t next = 0;

        for (size_t i = 0; l && i < l->n; i++) {
                const struct pending_op *op = &l->ops[i];

                if (op->kind == PENDING_FOLLOW && op->state == PENDING_QUEUED && op->not_before_usec &&
                    (!next || op->not_before_usec < next))
                        next = op->not_before_usec;
        }
        return next;
}

void pending_ops_done(struct pending_ops *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++)
                op_free(&l->ops[i]);
        free(l->ops);
        l->ops = NULL;
        l->n = 0;
}
