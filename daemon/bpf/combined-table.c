/* SPDX-License-Identifier: GPL-2.0-only */
/* BPF's combined table, mapped and read or purged in place. */
#include <assert.h>
#include "combined-table.h"

int combined_table_for_each(const struct mapped_array *t, combined_row_fn fn, void *userdata)
{
        const struct combined_row *rows;

        assert(t);
        assert(fn);
        rows = t->values;
        for (uint32_t i = 0; i < t->n; i++) {
                const struct combined_row *row = &rows[i];
                uint64_t word = __atomic_load_n(&row->word, __ATOMIC_ACQUIRE);
                uint32_t state = COMBINED_ROW_STATE(word);
                struct combined_key key;
                int r;

                /* a retiring row is its key's until it is freed (a probe may add to it yet) */
                if (state != ALLOC_SLOT_LIVE && state != ALLOC_SLOT_RETIRING)
                        continue;
                key = (struct combined_key) { .tgid = COMBINED_ROW_TGID(word), .space = COMBINED_ROW_SPACE(word),
                                              .stack_id = row->stack_id };
                r = fn(&key, (int64_t)__atomic_load_n(&row->bytes, __ATOMIC_RELAXED),
                       (int64_t)__atomic_load_n(&row->allocs, __ATOMIC_RELAXED), userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}
