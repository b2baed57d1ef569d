/* SPDX-License-Identifier: GPL-2.0-only */
/* The live targets' per-stack totals, read from the combined table every snapshot tick. */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include "combined-table.h"
#include "macro.h"
#include "stack-totals.h"

/* A reader keeps room for at least this many rows, and gives back room past four times what it
 * last needed (a target with many stacks detached). */
#define ROWS_MIN 1024u
#define ROWS_SLACK 4u

struct stack_totals {
        struct mapped_array table;      /* the combined table, mapped at the first read */
        int table_fd;                   /* its fd then */
        /* The targets' rows as read, then the radix sort's other half: one block, so that the
         * two always have the same room. */
        struct stack_total *halves;
        size_t capacity;                /* rows per half */
        size_t n_rows;
        size_t rows_held;               /* live and retiring rows in the table, any target's */
        const pid_t *pids;              /* the targets of the read under way */
        size_t n_pids;
};

int stack_totals_new(struct stack_totals **ret)
{
        struct stack_totals *t;

        assert(ret);
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

struct stack_totals *stack_totals_free(struct stack_totals *t)
{
        if (!t)
                return NULL;
        mapped_array_close(&t->table);
        free(t->halves);
        free(t);
        return NULL;
}

bool stack_totals_release(struct stack_totals *t)
{
        bool held;

        assert(t);
        held = t->table.values || t->halves;
        mapped_array_close(&t->table);
        free(t->halves);
        t->halves = NULL;
        t->capacity = t->n_rows = t->rows_held = 0;
        return held;
}

/* Room for capacity rows in each half, keeping the rows read so far (at the start of the first). */
static int halves_resize(struct stack_totals *t, size_t capacity)
{
        struct stack_total *p;

        if (capacity > SIZE_MAX / 2 / sizeof(*p))
                return -ENOMEM;
        p = realloc(t->halves, 2 * capacity * sizeof(*p));
        if (!p)
                return -ENOMEM;
        t->halves = p;
        t->capacity = capacity;
        return 0;
}

bool stack_totals_pid_wanted(const pid_t *pids, size_t n, pid_t pid)
{
        for (size_t i = 0; i < n; i++)
                if (pids[i] == pid)
                        return true;
        return false;
}

/* combined_table_for_each(): keep a row when it is of a target read and not at zero. */
static int add_row(const struct combined_key *k, int64_t bytes, int64_t allocs, void *userdata)
{
        struct stack_totals *t = userdata;

        t->rows_held++;
        if ((bytes == 0 && allocs == 0) || !stack_totals_pid_wanted(t->pids, t->n_pids, (pid_t)k->tgid))
                return 0;
        if (t->n_rows == t->capacity) {
                int r = halves_resize(t, MAX(2 * t->capacity, (size_t)ROWS_MIN));

                if (r < 0)
                        return r;
        }
        t->halves[t->n_rows++] = (struct stack_total) {
                .pid = (pid_t)k->tgid, .space = k->space, .stack_id = k->stack_id,
                .bytes = (uint64_t)bytes, .allocs = (uint64_t)allocs,
        };
        return 0;
}

/* The sort key's digits, least significant first: the stack id's six, the space's three, the
 * pid's three. The sign bits are flipped so that unsigned digits order signed numbers (negative
 * ids, errors, first). 11 bits: a pass's counts stay in the cache, and the random 53-bit ids
 * (hashes) take five passes. */
#define DIGIT_BITS 11u
#define DIGIT_VALUES (1u << DIGIT_BITS)
#define DIGITS_64 6u            /* ceil(64 / DIGIT_BITS) */
#define DIGITS_32 3u            /* ceil(32 / DIGIT_BITS) */
#define SORT_DIGITS (DIGITS_64 + 2 * DIGITS_32)

static unsigned sort_digit(const struct stack_total *row, unsigned d)
{
        uint64_t part;

        if (d < DIGITS_64)
                part = (uint64_t)row->stack_id ^ (1ull << 63);
        else if (d < DIGITS_64 + DIGITS_32) {
                part = row->space;
                d -= DIGITS_64;
        } else {
                part = (uint32_t)row->pid ^ (1u << 31);
                d -= DIGITS_64 + DIGITS_32;
        }
        return (unsigned)(part >> (DIGIT_BITS * d)) & (DIGIT_VALUES - 1);
}

static bool same_key(const struct stack_total *a, const struct stack_total *b)
{
        return a->pid == b->pid && a->space == b->space && a->stack_id == b->stack_id;
}

size_t stack_totals_sort_merge(struct stack_total **rows, struct stack_total **scratch, size_t n)
{
        struct stack_total *src, *dst;
        size_t out = 0;

        assert(rows);
        assert(scratch);
        src = *rows;
        dst = *scratch;
        /* Least significant digit first, each pass stable: O(n) where qsort took most of a tick. */
        for (unsigned d = 0; n > 1 && d < SORT_DIGITS; d++) {
                size_t counts[DIGIT_VALUES] = {}, at = 0;
                struct stack_total *swap;

                for (size_t i = 0; i < n; i++)
                        counts[sort_digit(&src[i], d)]++;
                if (counts[sort_digit(&src[0], d)] == n)
                        continue;       /* every row has that digit: the pass would keep the order */
                for (unsigned b = 0; b < DIGIT_VALUES; b++) {
                        size_t c = counts[b];

                        counts[b] = at;
                        at += c;
                }
                for (size_t i = 0; i < n; i++)
                        dst[counts[sort_digit(&src[i], d)]++] = src[i];
                swap = src;
                src = dst;
                dst = swap;
        }
        *rows = src;
        *scratch = dst;
        for (size_t i = 0; i < n;) {
                struct stack_total sum = src[i];

                for (i++; i < n && same_key(&src[i], &sum); i++) {
                        sum.bytes += src[i].bytes;
                        sum.allocs += src[i].allocs;
                }
                if (sum.allocs != 0)
                        src[out++] = sum;
        }
        return out;
}

int stack_totals_read(struct stack_totals *t, int combined_fd, const pid_t *pids, size_t n_pids,
                      const struct stack_total **ret, size_t *ret_n)
{
        struct stack_total *rows, *scratch;
        size_t want;
        int r;

        assert(t);
        assert(pids || n_pids == 0);
        assert(ret);
        assert(ret_n);
        if (!t->table.values || t->table_fd != combined_fd) {
                mapped_array_close(&t->table);
                r = mapped_array_open(combined_fd, sizeof(struct combined_row), &t->table);
                if (r < 0)
                        return r;
                t->table_fd = combined_fd;
        }
        want = MAX(2 * t->n_rows, (size_t)ROWS_MIN);    /* from the last read */
        if (t->capacity > ROWS_SLACK * want)
                (void)halves_resize(t, want);   /* without memory, keep the room there is */
        t->n_rows = 0;
        t->rows_held = 0;
        t->pids = pids;
        t->n_pids = n_pids;
        r = combined_table_for_each(&t->table, add_row, t);
        t->pids = NULL;
        t->n_pids = 0;
        if (r < 0) {
                t->n_rows = 0;
                return r;
        }
        rows = t->halves;
        scratch = t->halves + t->capacity;
        t->n_rows = stack_totals_sort_merge(&rows, &scratch, t->n_rows);
        *ret = rows;
        *ret_n = t->n_rows;
        return 0;
}

size_t stack_totals_rows_held(const struct stack_totals *t)
{
        assert(t);
        return t->rows_held;
}
