/* SPDX-License-Identifier: GPL-2.0-only */
/* Fill in per-stack rows' frames from the stack table: a look-up a row, or the table read whole
 * (its BPF iterator, else batch look-ups) with each stack given to the rows of its id. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include "stack-rows.h"

struct memleak_bpf;

/* A copy of n frames into *ret (at least one element allocated), *ret_n = n. 0 or -ENOMEM. */
int stack_frames_copy(const uint64_t *ips, size_t n, uint64_t **ret, size_t *ret_n);

/* Fill in each row's frames (ips, n_ips, unwind_stop) from the stack table: by one look-up a row
 * for a few rows (or few against the stacks held: a whole read copies every stack), else the
 * table read whole, through its iterator where the kernel loaded one, else by batch look-ups.
 * A row whose stack is gone keeps no frames. 0 or -errno. */
int stack_frames_fill(struct stack_rows *r, struct memleak_bpf *skel);
