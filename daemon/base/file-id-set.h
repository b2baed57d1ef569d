/* SPDX-License-Identifier: GPL-2.0-only */
/* A set of files by identity (device, inode): the files a target's rescans already looked at. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pair-table.h"

struct file_id_set {
        struct pair_table table;
};

/* 1 when added, 0 when it was there, -ENOMEM. */
int file_id_set_add(struct file_id_set *s, uint64_t dev, uint64_t ino);
bool file_id_set_contains(const struct file_id_set *s, uint64_t dev, uint64_t ino);
size_t file_id_set_size(const struct file_id_set *s);
/* Every member of from added to to; -ENOMEM. */
int file_id_set_merge(struct file_id_set *to, const struct file_id_set *from);
void file_id_set_done(struct file_id_set *s);
