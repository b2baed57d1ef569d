/* SPDX-License-Identifier: GPL-2.0-only */
/* An exited target's record made and read back: the files it mapped told apart from others at
 * the same paths by their build IDs (else inode, size and time of change). */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elf-file.h"
#include "elf-inspect.h"
#include "exited-file.h"
#include "macro.h"
#include "safe-open.h"
#include "target-exited.h"
#include "target-files.h"

/* The identity of the file at path now (in the daemon's view), expected to be (dev, ino) when
 * those are non-zero: ret->known false when it is not there, or is another file. */
static void file_id_read(const char *path, uint64_t dev, uint64_t ino, struct exited_file_id *ret)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        struct elf_inspection info = {};
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        *ret = (struct exited_file_id) {};
        fd = safe_open_regular_as(AT_FDCWD, path, 0, dev, ino, &st);
        if (fd < 0)
                return;
        *ret = (struct exited_file_id) {
                .known = true, .size = (uint64_t)st.st_size,
                .mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
        };
        if (elf_file_open(fd, &elf) >= 0 && elf_inspect(elf, &info) >= 0 && info.build_id_len > 0) {
                memcpy(ret->build_id, info.build_id, info.build_id_len);
                ret->build_id_len = (uint32_t)info.build_id_len;
        }
}

int target_exited_encode(const struct target *t, void **ret, size_t *ret_n)
{
        _cleanup_free_ struct exited_file_id *ids = NULL;

        assert(t);
        ids = calloc(MAX(t->modules.n, (size_t)1), sizeof(*ids));
        if (!ids)
                return -ENOMEM;
        for (size_t i = 0; i < t->modules.n; i++) {
                const struct module_mapping *m = &t->modules.mappings[i];
                size_t k;

                /* read back from a record: what it said then (the file at the path now may be
                 * another build, which its frames are not in) */
                if (t->kept_file_ids && t->n_kept_file_ids == t->modules.n) {
                        ids[i] = t->kept_file_ids[i];
                        continue;
                }
                /* a file mapped several times is looked at once */
                for (k = 0; k < i; k++)
                        if (t->modules.mappings[k].dev == m->dev && t->modules.mappings[k].ino == m->ino)
                                break;
                if (k < i)
                        ids[i] = ids[k];
                else
                        file_id_read(m->path, m->dev, m->ino, &ids[i]);
        }
        return exited_file_encode(t, ids, ret, ret_n);
}

/* Whether the file open on fd (stat st) is the one id names (dev, ino as mapped). */
static bool same_file(int fd, const struct stat *st, uint64_t dev, uint64_t ino, const struct exited_file_id *id)
{
        _cleanup_(elf_endp) Elf *elf = NULL;
        struct elf_inspection info = {};

        if (!id->known)
                return false;
        if (elf_file_open(fd, &elf) < 0 || elf_inspect(elf, &info) < 0)
                return false;
        if (id->build_id_len > 0 || info.build_id_len > 0)
                return info.build_id_len == id->build_id_len &&
                       memcmp(info.build_id, id->build_id, id->build_id_len) == 0;
        return (uint64_t)st->st_dev == dev && (uint64_t)st->st_ino == ino && (uint64_t)st->st_size == id->size &&
               (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec == id->mtime_ns;
}

/* Register the files of t's mappings that are still the ones it mapped, each once, under what
 * they are now (a reinstalled copy of the same build has another inode, and the inode it had may
 * be another file's now): its mappings and forwarders say so. The others' mappings name no file
 * (dev and ino 0: their frames say file and offset, never another file's symbol). Returns how
 * many files were not registered. */
static unsigned register_files(struct target *t, const struct exited_file_id *ids)
{
        size_t n = t->modules.n;
        _cleanup_free_ uint64_t *was = calloc(MAX(2 * n, (size_t)1), sizeof(*was));
        _cleanup_free_ bool *moved = calloc(MAX(t->n_forwarders, (size_t)1), sizeof(*moved));
        unsigned unnamed = 0;

        if (!was || !moved) {
                for (size_t i = 0; i < n; i++)
                        t->modules.mappings[i].dev = t->modules.mappings[i].ino = 0;
                return (unsigned)n;
        }
        for (size_t i = 0; i < n; i++) {
                was[2 * i] = t->modules.mappings[i].dev;
                was[2 * i + 1] = t->modules.mappings[i].ino;
        }
        for (size_t i = 0; i < n; i++) {
                struct module_mapping *m = &t->modules.mappings[i];
                _cleanup_close_ int fd = -EBADF;
                struct stat st;
                size_t j;

                for (j = 0; j < i; j++)
                        if (was[2 * j] == was[2 * i] && was[2 * j + 1] == was[2 * i + 1])
                                break;
                if (j < i) {            /* the same file as an earlier mapping: as it was found */
                        m->dev = t->modules.mappings[j].dev;
                        m->ino = t->modules.mappings[j].ino;
                        continue;
                }
                fd = safe_open_regular(AT_FDCWD, m->path, 0, &st);
                if (fd < 0 || !same_file(fd, &st, was[2 * i], was[2 * i + 1], &ids[i]) ||
                    target_files_register_restored(t, (uint64_t)st.st_dev, (uint64_t)st.st_ino, m->path, fd) < 0) {
                        unnamed++;
                        m->dev = m->ino = 0;
                        continue;
                }
                m->dev = (uint64_t)st.st_dev;
                m->ino = (uint64_t)st.st_ino;
                for (size_t k = 0; k < t->n_forwarders; k++)
                        if (!moved[k] && t->forwarders[k].dev == was[2 * i] && t->forwarders[k].ino == was[2 * i + 1]) {
                                t->forwarders[k].dev = m->dev;
                                t->forwarders[k].ino = m->ino;
                                moved[k] = true;
                        }
        }
        return unnamed;
}

int target_exited_restore(const struct target_env *env, const void *data, size_t n, struct target **ret,
                          unsigned *ret_unnamed)
{
        _cleanup_free_ struct exited_file_id *ids = NULL;
        _cleanup_(target_freep) struct target *t = NULL;
        int r;

        assert(env);
        assert(ret);
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        *t = (struct target) { .pidfd = -1, .files.syms = env->syms, .jit_source = { .root_fd = -EBADF } };
        r = exited_file_decode(data, n, t, &ids);
        if (r < 0)
                return r;
        t->adopted = true;
        t->counters.row = UINT32_MAX;   /* none: its counters are final (zero if its exit could not
                                         * read them) */
        t->counters.stopped = true;
        if (ret_unnamed)
                *ret_unnamed = register_files(t, ids);
        else
                (void)register_files(t, ids);
        t->kept_file_ids = TAKE_PTR(ids);
        t->n_kept_file_ids = t->modules.n;
        *ret = TAKE_PTR(t);
        return 0;
}
