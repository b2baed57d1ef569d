/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz the CFI row builder (unwind_table_build): the input is an ELF file whose .eh_frame and
 * .debug_frame become rows. Whatever the file says, the build ends within its limits with a
 * table whose rows are sorted and distinct, or with one of its errors; a table it builds is
 * written and read back through the on-disk format unchanged. */
#include <errno.h>
#include <string.h>
#include "fuzz-util.h"
#include "macro.h"
#include "table-file.h"
#include "unwind-table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(unwind_table_done) struct unwind_table t = {}, back = {};
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ uint8_t *file = NULL;
        struct unwind_table_limits limits = {
                /* small, so a hostile input costs a fuzz run little: the limits are what is tested */
                .max_rows = 1u << 16,
                .max_replayed_bytes = 1u << 22,
                .max_inflated_bytes = 1u << 22,
        };
        struct table_file_header h;
        struct table_file_key key;
        int r;

        if (size > 1u << 20)
                return 0;
        fd = fuzz_memfd(data, size);
        r = unwind_table_build(fd, &limits, &t);
        if (r < 0) {
                FUZZ_CHECK(r == -EFBIG || r == -ENOEXEC || r == -EPROTONOSUPPORT || r == -ENOMEM);
                return 0;
        }
        FUZZ_CHECK(t.n_rows <= limits.max_rows);
        FUZZ_CHECK(t.n_segments <= UNWIND_TABLE_SEGMENTS_MAX);
        for (size_t i = 1; i < t.n_rows; i++) {
                FUZZ_CHECK(t.rows[i].start > t.rows[i - 1].start);
                FUZZ_CHECK(memcmp((const uint8_t *) &t.rows[i] + sizeof(t.rows[i].start),
                                  (const uint8_t *) &t.rows[i - 1] + sizeof(t.rows[i].start),
                                  sizeof(t.rows[i]) - sizeof(t.rows[i].start)) != 0);
        }
        for (size_t i = 0; i < t.n_rows; i++)
                FUZZ_CHECK(unwind_table_cfa_rule_to_string(t.rows[i].cfa_rule));

        /* through the store's format and back */
        table_file_key_from_identity(1, 2, size, 3, 4, &key);
        FUZZ_CHECK(table_file_header_make(&key, &t, &h) == 0);
        file = malloc(sizeof(h) + t.n_rows * sizeof(struct unwind_row));
        FUZZ_CHECK(file);
        memcpy(file, &h, sizeof(h));
        if (t.n_rows > 0)
                memcpy(file + sizeof(h), t.rows, t.n_rows * sizeof(struct unwind_row));
        FUZZ_CHECK(table_file_decode(file, sizeof(h) + t.n_rows * sizeof(struct unwind_row), &key,
                                     limits.max_rows, &back) == 0);
        FUZZ_CHECK(back.n_rows == t.n_rows && back.base_vaddr == t.base_vaddr);
        FUZZ_CHECK(t.n_rows == 0 || memcmp(back.rows, t.rows, t.n_rows * sizeof(struct unwind_row)) == 0);
        return 0;
}
