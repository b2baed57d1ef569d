/* SPDX-License-Identifier: GPL-2.0-only */
/* An unwind table's file in the table store: its name, header, checksum and checks. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "table-file.h"

int table_file_key_from_build_id(const uint8_t *build_id, size_t len, uint64_t size, struct table_file_key *ret)
{
        assert(ret);
        if (!build_id || len == 0 || len > TABLE_FILE_KEY_BUILD_ID_MAX)
                return -EINVAL;
        *ret = (struct table_file_key) { .kind = TABLE_FILE_KEY_BUILD_ID, .build_id_len = (uint32_t)len, .size = size };
        memcpy(ret->build_id, build_id, len);
        return 0;
}

void table_file_key_from_identity(uint64_t dev, uint64_t ino, uint64_t size, int64_t mtime_ns, int64_t ctime_ns,
                             struct table_file_key *ret)
{
        assert(ret);
        *ret = (struct table_file_key) {
                .kind = TABLE_FILE_KEY_IDENTITY, .size = size, .dev = dev, .ino = ino,
                .mtime_ns = mtime_ns, .ctime_ns = ctime_ns,
        };
}

int table_file_key_name(const struct table_file_key *k, char *buf, size_t size)
{
        static const char hex[] = "0123456789abcdef";
        char id[2 * TABLE_FILE_KEY_BUILD_ID_MAX + 1];
        int n;

        assert(k);
        assert(buf);
        switch (k->kind) {
        case TABLE_FILE_KEY_BUILD_ID:
                if (k->build_id_len == 0 || k->build_id_len > TABLE_FILE_KEY_BUILD_ID_MAX)
                        return -EINVAL;
                for (uint32_t i = 0; i < k->build_id_len; i++) {
                        id[2 * i] = hex[k->build_id[i] >> 4];
                        id[2 * i + 1] = hex[k->build_id[i] & 15];
                }
                id[2 * k->build_id_len] = '\0';
                n = snprintf(buf, size, "b-%s-%" PRIu64 ".unwind", id, k->size);
                break;
        case TABLE_FILE_KEY_IDENTITY:
                /* times as unsigned: a name has no '-' inside a number */
                n = snprintf(buf, size, "i-%" PRIx64 "-%" PRIu64 "-%" PRIu64 "-%" PRIx64 "-%" PRIx64 ".unwind",
                             k->dev, k->ino, k->size, (uint64_t)k->mtime_ns, (uint64_t)k->ctime_ns);
                break;
        default:
                return -EINVAL;
        }
        if (n < 0 || (size_t)n >= size)
                return -ENAMETOOLONG;
        return 0;
}

bool table_file_name_is_table(const char *name)
{
        static const char suffix[] = ".unwind";
        size_t n = strlen(name);

        if (n <= 2 + sizeof(suffix) - 1 || (name[0] != 'b' && name[0] != 'i') || name[1] != '-')
                return false;
        if (strcmp(name + n - (sizeof(suffix) - 1), suffix) != 0)
                return false;
        for (size_t i = 2; i < n - (sizeof(suffix) - 1); i++)
                if (!strchr("0123456789abcdef-", name[i]))
                        return false;
        return true;
}

uint64_t table_file_checksum(uint64_t h, const void *data, size_t size)
{
        const uint8_t *p = data;
        size_t i = 0;

        for (; i + 8 <= size; i += 8) {
                uint64_t w;

                memcpy(&w, p + i, 8);
                h = (h ^ w) * 0x100000001b3ull;
        }
        for (; i < size; i++)
                h = (h ^ p[i]) * 0x100000001b3ull;
        return h;
}

static uint64_t checksum_of(const struct table_file_header *h, const struct unwind_row *rows)
{
        struct table_file_header z = *h;
        uint64_t sum;

        z.checksum = 0;
        sum = table_file_checksum(TABLE_FILE_CHECKSUM_INIT, &z, sizeof(z));
        return table_file_checksum(sum, rows, h->n_rows * sizeof(struct unwind_row));
}

int table_file_header_make(const struct table_file_key *k, const struct unwind_table *t, struct table_file_header *ret)
{
        struct table_file_header h;

        assert(k);
        assert(t);
        assert(ret);
        if (t->n_segments > UNWIND_TABLE_SEGMENTS_MAX)
                return -EFBIG;
        h = (struct table_file_header) {
                .version = TABLE_FILE_VERSION,
                .header_bytes = sizeof(struct table_file_header),
                .key = *k,
                .base_vaddr = t->base_vaddr,
                .n_segments = (uint32_t)t->n_segments,
                .row_bytes = sizeof(struct unwind_row),
                .n_rows = t->n_rows,
        };
        memcpy(h.magic, TABLE_FILE_MAGIC, sizeof(h.magic));
        for (size_t i = 0; i < t->n_segments; i++)
                h.segments[i] = (struct table_file_segment) {
                        .vaddr = t->segments[i].vaddr, .offset = t->segments[i].offset, .size = t->segments[i].size,
                };
        h.checksum = checksum_of(&h, t->rows);
        *ret = h;
        return 0;
}

int table_file_header_check(const struct table_file_header *h, const struct table_file_key *key, size_t max_rows,
                            uint64_t file_bytes)
{
        assert(h);
        assert(key);
        if (file_bytes < sizeof(*h) || memcmp(h->magic, TABLE_FILE_MAGIC, sizeof(h->magic)) != 0)
                return -TABLE_FILE_EBADMAGIC;
        if (h->version != TABLE_FILE_VERSION || h->header_bytes != sizeof(*h) ||
            h->row_bytes != sizeof(struct unwind_row))
                return -TABLE_FILE_EVERSION;
        if (memcmp(&h->key, key, sizeof(*key)) != 0)
                return -TABLE_FILE_EKEY;
        if (h->n_segments > UNWIND_TABLE_SEGMENTS_MAX)
                return -TABLE_FILE_EROWS;
        if (h->n_rows > max_rows || file_bytes - sizeof(*h) != h->n_rows * sizeof(struct unwind_row))
                return -TABLE_FILE_ESIZE;
        return 0;
}

int table_file_rows_check(const struct table_file_header *h, const struct unwind_row *rows)
{
        assert(h);
        if (checksum_of(h, rows) != h->checksum)
                return -TABLE_FILE_ECHECKSUM;
        for (uint64_t i = 0; i < h->n_rows; i++) {
                if (rows[i].cfa_rule >= _UNWIND_CFA_RULE_MAX)
                        return -TABLE_FILE_EROWS;
                if (i > 0 && rows[i].start <= rows[i - 1].start)
                        return -TABLE_FILE_EROWS;
        }
        return 0;
}

void table_file_to_table(const struct table_file_header *h, struct unwind_row *rows, struct unwind_table *ret)
{
        assert(h);
        assert(ret);
        *ret = (struct unwind_table) {
                .base_vaddr = h->base_vaddr,
                .n_segments = h->n_segments,
                .rows = rows,
                .n_rows = h->n_rows,
                .stats = {
                        .rows = h->n_rows,
                        .bytes = h->n_rows * sizeof(struct unwind_row),
                },
        };
        for (uint32_t i = 0; i < h->n_segments; i++)
                ret->segments[i] = (struct unwind_table_segment) {
                        .vaddr = h->segments[i].vaddr, .offset = h->segments[i].offset, .size = h->segments[i].size,
                };
}

int table_file_decode(const void *data, size_t size, const struct table_file_key *key, size_t max_rows,
                      struct unwind_table *ret)
{
        struct table_file_header h;
        struct unwind_row *rows;
        int r;

        assert(data || size == 0);
        assert(ret);
        if (size < sizeof(h))
                return -TABLE_FILE_EBADMAGIC;
        memcpy(&h, data, sizeof(h));
        r = table_file_header_check(&h, key, max_rows, size);
        if (r < 0)
                return r;
        rows = malloc(h.n_rows > 0 ? h.n_rows * sizeof(*rows) : 1);
        if (!rows)
                return -ENOMEM;
        memcpy(rows, (const uint8_t *)data + sizeof(h), h.n_rows * sizeof(*rows));
        r = table_file_rows_check(&h, rows);
        if (r < 0) {
                free(rows);
                return r;
        }
        table_file_to_table(&h, rows, ret);
        return 0;
}
