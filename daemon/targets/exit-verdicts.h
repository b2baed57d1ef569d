/* SPDX-License-Identifier: GPL-2.0-only */
/* The leak verdict each heap stack of an exited target had at its exit, kept with its frozen rows
 * (its ring's rows are dropped then): made by report/stack-verdict.c from the ring, read by a
 * report after the exit, and kept across a restart (exited-file.c). Pure. */
#pragma once

#include <stddef.h>
#include <stdint.h>

/* One stack's verdict as report/leak-verdict.h's struct leak_assessment says it, by number:
 * this component stores it, the report component makes and reads it. */
/* The verdicts there are (enum leak_verdict's values are below it; stack-verdict.c checks). */
#define EXIT_VERDICT_KINDS 4U

struct exit_verdict {
        int64_t stack_id;
        uint32_t verdict;               /* enum leak_verdict */
        uint32_t points_missing;
        double slope_bytes_per_s;
        double fit_r2;
        double recent_growth_bytes;
        double first_bytes;
        double last_bytes;
};

struct exit_verdicts {
        struct exit_verdict *items;     /* sorted by stack_id, each once */
        size_t n;
};

struct exit_verdicts *exit_verdicts_free(struct exit_verdicts *v);

/* Sort v's items by stack_id; -EINVAL when one is there twice. */
int exit_verdicts_sort(struct exit_verdicts *v);

/* The verdict kept for stack_id; NULL: none (v may be NULL). */
const struct exit_verdict *exit_verdicts_find(const struct exit_verdicts *v, int64_t stack_id);

/* A copy of v (NULL for NULL): 0 or -ENOMEM. */
int exit_verdicts_copy(const struct exit_verdicts *v, struct exit_verdicts **ret);

/* The memory v holds. */
uint64_t exit_verdicts_bytes(const struct exit_verdicts *v);
