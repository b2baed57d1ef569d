/* SPDX-License-Identifier: GPL-2.0-only */
/* A set of files by identity (device, inode). */
#include <assert.h>
#include <errno.h>
#include "file-id-set.h"

/* The table maps a key to a non-NULL pointer: members map to this. */
static char member;

int file_id_set_add(struct file_id_set *s, uint64_t dev, uint64_t ino)
{
        int r;

        assert(s);
        if (pair_table_get(&s->table, dev, ino))
                return 0;
        r = pair_table_put(&s->table, dev, ino, &member);
        return r < 0 ? r : 1;
}

bool file_id_set_contains(const struct file_id_set *s, uint64_t dev, uint64_t ino)
{
        assert(s);
        return pair_table_get(&s->table, dev, ino) != NULL;
}

size_t file_id_set_size(const struct file_id_set *s)
{
        assert(s);
        return s->table.n_used;
}

int file_id_set_merge(struct file_id_set *to, const struct file_id_set *from)
{
        assert(to);
        assert(from);
        return pair_table_merge(&to->table, &from->table);
}

void file_id_set_done(struct file_id_set *s)
{
        assert(s);
        pair_table_done(&s->table, NULL);
}
