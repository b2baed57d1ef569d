/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz the reader of the unwind tables memleakd keeps on disk (table_file_decode): a corrupt or
 * truncated file is refused with one of its errors, never read past its end. Each input is
 * read as it is and again with its checksum made right, so the row checks behind the checksum
 * are reached too; a table that is accepted is looked up and written back as the store would. */
#include <errno.h>
#include <string.h>
#include "fuzz-util.h"
#include "macro.h"
#include "table-file.h"

#define FUZZ_MAX_ROWS 4096

static void use_table(const struct unwind_table *t)
{
        struct table_file_header again;
        uint64_t bias;

        FUZZ_CHECK(t->n_rows <= FUZZ_MAX_ROWS);
        FUZZ_CHECK(t->n_segments <= UNWIND_TABLE_SEGMENTS_MAX);
        for (size_t i = 0; i < t->n_rows; i++) {
                const struct unwind_row *row = &t->rows[i], *found;

                FUZZ_CHECK(unwind_table_cfa_rule_to_string(row->cfa_rule));
                (void) unwind_table_reg_rule_to_string(unwind_row_ra_rule(row));
                (void) unwind_table_reg_rule_to_string(unwind_row_rbp_rule(row));
                FUZZ_CHECK(i == 0 || row->start > t->rows[i - 1].start);
                found = unwind_table_find(t, t->base_vaddr + row->start);
                FUZZ_CHECK(!found || found == row);
        }
        (void) unwind_table_find(t, t->base_vaddr - 1);
        (void) unwind_table_find(t, UINT64_MAX);
        for (size_t i = 0; i < t->n_segments; i++)
                (void) unwind_table_mapping_bias(t, 0x400000, t->segments[i].offset, &bias);
        FUZZ_CHECK(table_file_header_make(&(struct table_file_key) {}, t, &again) == 0);
        FUZZ_CHECK(table_file_rows_check(&again, t->rows) == 0);
}

static void decode(const uint8_t *data, size_t size, const struct table_file_key *key)
{
        _cleanup_(unwind_table_done) struct unwind_table t = {};
        int r;

        r = table_file_decode(data, size, key, FUZZ_MAX_ROWS, &t);
        if (r < 0) {
                FUZZ_CHECK(r == -TABLE_FILE_EBADMAGIC || r == -TABLE_FILE_EVERSION || r == -TABLE_FILE_EKEY ||
                           r == -TABLE_FILE_ESIZE || r == -TABLE_FILE_ECHECKSUM || r == -TABLE_FILE_EROWS ||
                           r == -ENOMEM);
                return;
        }
        use_table(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct table_file_header h;
        struct table_file_key key = {};
        _cleanup_free_ uint8_t *fixed = NULL;
        uint64_t sum;

        if (size > sizeof(h) + FUZZ_MAX_ROWS * sizeof(struct unwind_row) + 64)
                return 0;
        if (size >= sizeof(h))
                memcpy(&key, data + offsetof(struct table_file_header, key), sizeof(key));
        decode(data, size, &key);
        if (size < sizeof(h))
                return 0;

        /* the same bytes with the checksum the writer would have put there */
        fixed = malloc(size);
        FUZZ_CHECK(fixed);
        memcpy(fixed, data, size);
        memcpy(&h, fixed, sizeof(h));
        h.checksum = 0;
        sum = table_file_checksum(TABLE_FILE_CHECKSUM_INIT, &h, sizeof(h));
        sum = table_file_checksum(sum, fixed + sizeof(h), size - sizeof(h));
        memcpy(fixed + offsetof(struct table_file_header, checksum), &sum, sizeof(sum));
        decode(fixed, size, &key);
        return 0;
}
