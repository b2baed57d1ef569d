/* SPDX-License-Identifier: GPL-2.0-only */
/* Per-stack outstanding totals, the unit that flows from the maps into a report. */
#include <stdlib.h>
#include "stack-rows.h"

void stack_rows_done(struct stack_rows *r)
{
        for (size_t i = 0; i < r->n; i++)
                free(r->rows[i].ips);
        free(r->rows);
        *r = (struct stack_rows) {};
}
