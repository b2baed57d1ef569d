/* SPDX-License-Identifier: GPL-2.0-only */
/* Per-stack outstanding totals, the unit that flows from the maps into a report. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "stack-rows.h"

void stack_rows_done(struct stack_rows *r)
{
        assert(r);
        for (size_t i = 0; i < r->n; i++)
                free(r->rows[i].ips);
        free(r->rows);
        *r = (struct stack_rows) {};
}

/* Order by pid, space, then the frames themselves; unavailable stacks by their error. */
static int row_by_frames(const void *a, const void *b)
{
        const struct stack_row *x = a, *y = b;

        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        if (x->space != y->space)
                return x->space < y->space ? -1 : 1;
        if ((x->stack_id < 0) != (y->stack_id < 0) || (x->stack_id < 0 && x->stack_id != y->stack_id))
                return x->stack_id < y->stack_id ? -1 : 1;
        if (x->n_ips != y->n_ips)
                return x->n_ips < y->n_ips ? -1 : 1;
        if (x->n_ips > 0) {
                int c = memcmp(x->ips, y->ips, x->n_ips * sizeof(*x->ips));

                if (c != 0)
                        return c;
        }
        /* an unavailable (ips == NULL) stack never merges with a captured one */
        return (x->ips == NULL) - (y->ips == NULL);
}

/* Rows of the same stack, pid and space as one: bytes and allocations summed, the lowest id. */
static void merge_same_stacks(struct stack_rows *r)
{
        size_t out = 0;

        if (r->n < 2)
                return;
        qsort(r->rows, r->n, sizeof(*r->rows), row_by_frames);
        for (size_t i = 0; i < r->n; i++) {
                struct stack_row *row = &r->rows[i];

                if (out > 0 && row->stack_id >= 0 && row_by_frames(&r->rows[out - 1], row) == 0) {
                        struct stack_row *into = &r->rows[out - 1];

                        into->bytes += row->bytes;
                        into->allocs += row->allocs;
                        into->n_cut = into->n_cut > row->n_cut ? into->n_cut : row->n_cut;
                        into->n_allocator = into->n_allocator > row->n_allocator ? into->n_allocator
                                                                                 : row->n_allocator;
                        into->stack_id = into->stack_id < row->stack_id ? into->stack_id : row->stack_id;
                        free(row->ips);
                        continue;
                }
                r->rows[out++] = *row;
        }
        r->n = out;
}

void stack_rows_cut_broken_chains(struct stack_rows *r, stack_rows_is_code_fn is_code, void *userdata)
{
        bool any_cut = false;

        assert(r);
        assert(is_code);
        for (size_t i = 0; i < r->n; i++) {
                struct stack_row *row = &r->rows[i];

                for (size_t k = 1; k < row->n_ips; k++)
                        if (!is_code(userdata, row->pid, row->ips[k])) {
                                row->n_cut += row->n_ips - k;
                                row->n_ips = k;
                                any_cut = true;
                                break;
                        }
        }
        if (any_cut)
                merge_same_stacks(r);
}

void stack_rows_drop_allocator_frames(struct stack_rows *r, stack_rows_is_allocator_fn is_allocator, void *userdata)
{
        bool any_dropped = false;

        assert(r);
        assert(is_allocator);
        for (size_t i = 0; i < r->n; i++) {
                struct stack_row *row = &r->rows[i];
                size_t k = 0;

                while (k + 1 < row->n_ips && is_allocator(userdata, row->pid, row->ips[k]))
                        k++;
                if (k == 0)
                        continue;
                memmove(row->ips, row->ips + k, (row->n_ips - k) * sizeof(*row->ips));
                row->n_ips -= k;
                row->n_allocator += k;
                any_dropped = true;
        }
        if (any_dropped)
                merge_same_stacks(r);
}
