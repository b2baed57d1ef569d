/* SPDX-License-Identifier: GPL-2.0-only */
/* An exited target kept across a restart: its record made (exited-file.h's encoding, with the
 * identity of each file it mapped, read from the file at its path now), and an exited target made
 * again from one, its files registered for symbols when they are still the files it mapped. */
#pragma once

#include <stddef.h>
#include "target.h"

/* t's record (t exited): *ret (malloc'd) and *ret_n. The identity of its files is read from them
 * now, or, for a target read back from a record, the one that record kept (t->kept_file_ids).
 * -ENOMEM. */
int target_exited_encode(const struct target *t, void **ret, size_t *ret_n);

/* An exited target from a record (n bytes): *ret, in phase exited, adopted, holding no process,
 * no slot and no probe. A file at a mapping's path that is not the one it mapped then (another
 * build ID; without one, another inode, size or time of change) is not registered: frames there
 * are named by file and offset only (*ret_unnamed counts those files); one that is (a reinstalled
 * copy of the same build too) is registered as the file it is now. -EBADMSG for a record
 * this encoding did not write whole; -ENOMEM. Its files' identities as the record kept them are
 * (*ret)->kept_file_ids: the build ID of each file its frames are in, whatever is at its path now. */
int target_exited_restore(const struct target_env *env, const void *data, size_t n, struct target **ret,
                          unsigned *ret_unnamed);
