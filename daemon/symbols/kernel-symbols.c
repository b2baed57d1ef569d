/* SPDX-License-Identifier: GPL-2.0-only */
/* The running kernel's symbols, shared, reloaded when a frame names code newer than the table. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elf-inspect.h"
#include "kernel-symbols.h"
#include "macro.h"
#include "util.h"

struct kernel_symbols {
        unsigned refs;
        pthread_mutex_t lock;
        char *path;
        struct kallsyms *table;         /* NULL until the file could be read */
        struct kallsyms *previous;      /* the table before the last reload: frames resolved just
                                         * before it may still point into it */
        uint64_t loaded_usec;           /* CLOCK_MONOTONIC of the last attempt */
        int error;
        char build_id[ELF_BUILD_ID_HEX_MAX];    /* the running kernel's, as hex ("": unknown) */
};

/* The notes the kernel image carries (its build ID among them): a few hundred bytes. */
#define KERNEL_NOTES_PATH "/sys/kernel/notes"
#define KERNEL_NOTES_MAX 4096

/* The running kernel's GNU build ID, as hex into k->build_id; left "" where it cannot be read
 * (no sysfs, a kernel built without the note). It does not change until a reboot. */
static void read_build_id(struct kernel_symbols *k)
{
        _cleanup_close_ int fd = open(KERNEL_NOTES_PATH, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        uint8_t notes[KERNEL_NOTES_MAX], id[ELF_BUILD_ID_MAX];
        size_t n = 0, len = 0;
        ssize_t r;

        if (fd < 0)
                return;
        while (n < sizeof(notes) && (r = read(fd, notes + n, sizeof(notes) - n)) != 0) {
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                n += (size_t)r;
        }
        if (elf_inspect_notes_build_id(notes, n, id, &len) == 0)
                elf_inspect_build_id_hex(id, len, k->build_id);
}

static void load(struct kernel_symbols *k)
{
        struct kallsyms *fresh = NULL;

        k->loaded_usec = now_monotonic_usec();
        k->error = kallsyms_parse_file(k->path, &fresh);
        if (k->error < 0)
                return;
        kallsyms_free(k->previous);
        k->previous = k->table;
        k->table = fresh;
}

int kernel_symbols_new(const char *path, struct kernel_symbols **ret)
{
        struct kernel_symbols *k = calloc(1, sizeof(*k));

        assert(path);
        assert(ret);
        if (!k)
                return -ENOMEM;
        k->path = strdup(path);
        if (!k->path) {
                free(k);
                return -ENOMEM;
        }
        k->refs = 1;
        pthread_mutex_init(&k->lock, NULL);
        read_build_id(k);
        load(k);
        if (k->error == -ENOMEM) {
                kernel_symbols_unref(k);
                return -ENOMEM;
        }
        *ret = k;
        return 0;
}

struct kernel_symbols *kernel_symbols_ref(struct kernel_symbols *k)
{
        if (k)
                __atomic_add_fetch(&k->refs, 1, __ATOMIC_RELAXED);
        return k;
}

struct kernel_symbols *kernel_symbols_unref(struct kernel_symbols *k)
{
        if (!k || __atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) > 0)
                return NULL;
        kallsyms_free(k->table);
        kallsyms_free(k->previous);
        pthread_mutex_destroy(&k->lock);
        free(k->path);
        free(k);
        return NULL;
}

int kernel_symbols_error(struct kernel_symbols *k)
{
        int r;

        assert(k);
        pthread_mutex_lock(&k->lock);
        r = k->error;
        pthread_mutex_unlock(&k->lock);
        return r;
}

int kernel_symbols_resolve(struct kernel_symbols *k, uint64_t addr, struct kallsyms_info *ret)
{
        int r;

        assert(k);
        assert(ret);
        pthread_mutex_lock(&k->lock);
        r = kallsyms_resolve(k->table, addr, true, ret);
        /* A module or BPF program newer than the table, or no table yet. */
        if (r < 0 && now_monotonic_usec() - k->loaded_usec >= KERNEL_SYMBOLS_REFRESH_USEC) {
                load(k);
                r = kallsyms_resolve(k->table, addr, true, ret);
        }
        pthread_mutex_unlock(&k->lock);
        return r;
}

const char *kernel_symbols_build_id(struct kernel_symbols *k)
{
        return k && k->build_id[0] ? k->build_id : NULL;
}
