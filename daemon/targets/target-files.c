/* SPDX-License-Identifier: GPL-2.0-only */
/* The files a target maps (or will map): its module map kept current, each file registered for
 * symbolization once, within TARGET_FILES_MAX. */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "macro.h"
#include "mapping-log.h"
#include "module-overlay.h"
#include "proc-exe.h"
#include "symbolizer.h"
#include "target-files.h"
#include "target-unwind.h"
#include "util.h"

/* The entry for file (dev, ino), added (with path) if new; NULL past TARGET_FILES_MAX (counted in
 * untracked) or when out of memory. */
static struct known_file *known_file_get(struct target_files *f, uint64_t dev, uint64_t ino, const char *path)
{
        struct known_file *n;

        for (size_t i = 0; i < f->n_known; i++)
                if (f->known[i].dev == dev && f->known[i].ino == ino)
                        return &f->known[i];
        if (f->n_known >= TARGET_FILES_MAX) {
                f->untracked++;
                return NULL;
        }
        n = realloc(f->known, (f->n_known + 1) * sizeof(*n));
        if (!n)
                return NULL;
        f->known = n;
        n[f->n_known] = (struct known_file) { .dev = dev, .ino = ino, .path = strdup(path) };
        if (!n[f->n_known].path)
                return NULL;
        return &n[f->n_known++];
}

/* Register file k with the symbolizer from fd (its frames need it even after the target exits),
 * holding a reference until the target is freed. */
static void known_file_register(struct target_files *f, struct known_file *k, int fd,
                                const struct symbol_source *src)
{
        int r;

        if (k->symbols_registered || k->symbols_failed)
                return;
        r = symbolizer_add_module(f->syms, k->dev, k->ino, fd, k->path, src);
        k->symbols_registered = r >= 0 || r == -ENOEXEC || r == -EFBIG;
        k->symbols_failed = !k->symbols_registered;
}

/* Register every file t maps now (each once). */
static void register_mapped(struct target *t)
{
        for (size_t i = 0; i < t->modules.n; i++) {
                const struct module_mapping *m = &t->modules.mappings[i];
                struct known_file *k = known_file_get(&t->files, m->dev, m->ino, m->path);
                _cleanup_close_ int fd = -EBADF;

                if (!k || k->symbols_registered || k->symbols_failed)
                        continue;
                fd = module_map_open_file(t->pid, m->path, m->dev, m->ino, m->start, m->end);
                if (fd < 0) {
                        k->symbols_failed = true;       /* a device, gone: not tried on every tick */
                        continue;
                }
                known_file_register(&t->files, k, fd, &(struct symbol_source) {
                        .pid = t->pid, .path = m->path, .start = m->start, .end = m->end });
        }
}

void target_files_adopt_exit_maps(struct target *t, struct module_map *mm, const int *fds)
{
        assert(t);
        assert(mm);
        assert(fds || mm->n == 0);
        for (size_t i = 0; i < mm->n; i++) {
                const struct module_mapping *m = &mm->mappings[i];
                struct known_file *k;

                if (fds[i] < 0)
                        continue;
                k = known_file_get(&t->files, m->dev, m->ino, m->path);
                if (!k || k->symbols_registered || k->symbols_failed)
                        continue;
                known_file_register(&t->files, k, fds[i], &(struct symbol_source) {
                        .pid = t->pid, .path = m->path, .start = m->start, .end = m->end });
        }
        module_map_done(&t->modules);
        t->modules = *mm;
        *mm = (struct module_map) {};
}

int target_files_register_restored(struct target *t, uint64_t dev, uint64_t ino, const char *path, int fd)
{
        struct known_file *k;

        assert(t);
        assert(path);
        k = known_file_get(&t->files, dev, ino, path);
        if (!k)
                return -ENOMEM;
        known_file_register(&t->files, k, fd, &(struct symbol_source) { .pid = getpid(), .path = path });
        return k->symbols_registered ? 0 : -EIO;
}

int target_files_remember_planned(const struct target_env *env, struct target *t, const struct discovery *d)
{
        assert(t);
        assert(d);
        for (size_t i = 0; i < d->n; i++) {
                const struct discovered_object *o = &d->objects[i];
                struct known_file *k;

                if (o->is_executable) {
                        t->exec->dev = o->dev;
                        t->exec->ino = o->ino;
                }
                k = known_file_get(&t->files, o->dev, o->ino, o->path);
                if (!k)
                        return -ENOMEM;
                known_file_register(&t->files, k, o->fd, &(struct symbol_source) { .pid = t->pid, .path = o->path });
                /* its unwind table ready before the program runs: only its mappings remain to learn */
                (void)target_unwind_hold_file(t, o->dev, o->ino, o->fd);
        }
        return 0;
}

/* Whether the process runs the program it was attached to exec, or one that program exec'd in
 * turn (sh -c 'exec prog'), or was attached as it ran: whether its maps are its own, not those of
 * memleakctl's child holding it. */
static bool runs_its_program(struct target *t)
{
        struct stat st;

        if (!t->exec || t->exec->seen)
                return true;
        if (proc_exe_stat(t->pid, &st) < 0)
                return false;
        if (((uint64_t)st.st_dev != t->exec->dev || (uint64_t)st.st_ino != t->exec->ino) &&
            (t->exec->held_ino == 0 ||
             ((uint64_t)st.st_dev == t->exec->held_dev && (uint64_t)st.st_ino == t->exec->held_ino)))
                return false;   /* still held (or what held it is not known) */
        t->exec->seen = true;
        target_follow_maps(t, TARGET_MAPS_FOLLOW_AFTER_EXEC_USEC);
        return true;
}

/* module_path_fn: the path t sees for a file it maps or was planned to map. */
static const char *known_path(void *userdata, uint64_t dev, uint64_t ino)
{
        const struct target *t = userdata;

        for (size_t i = 0; i < t->files.n_known; i++)
                if (t->files.known[i].dev == dev && t->files.known[i].ino == ino)
                        return t->files.known[i].path;
        for (size_t i = 0; i < t->modules.n; i++)
                if (t->modules.mappings[i].dev == dev && t->modules.mappings[i].ino == ino)
                        return t->modules.mappings[i].path;
        return NULL;
}

int target_files_refresh(const struct target_env *env, struct target *t, bool process_gone)
{
        _cleanup_free_ struct recorded_mapping *recorded = NULL;
        size_t n = 0;
        int r;

        assert(env);
        assert(t);
        if (target_phase_exited(t->phase) || t->kernel)
                return 0;       /* the kernel maps no files */
        if (!process_gone && runs_its_program(t)) {
                r = module_map_refresh(&t->modules, t->pid);
                if (r >= 0)
                        register_mapped(t);
                else if (r != -ENOENT && r != -ESRCH)
                        return r;
        }
        r = mapping_log_read(env->mappings, t->pid, &recorded, &n);
        if (r < 0)
                return r;
        n = module_overlay_latest(recorded, n);
        r = module_overlay_apply(&t->modules, recorded, n, known_path, t);
        if (r >= 0 && !process_gone)
                (void)target_unwind_refresh(t);         /* a failure leaves the last list walked */
        return r;
}

void target_files_done(struct target_files *f)
{
        assert(f);
        for (size_t i = 0; i < f->n_known; i++) {
                if (f->known[i].symbols_registered)
                        symbolizer_release_module(f->syms, f->known[i].dev, f->known[i].ino);
                free(f->known[i].path);
        }
        free(f->known);
        file_id_set_done(&f->examined);
        *f = (struct target_files) {};
}

uint64_t target_files_bytes(const struct target_files *f)
{
        uint64_t bytes = f->n_known * sizeof(*f->known) + file_id_set_size(&f->examined) * 24;

        assert(f);
        for (size_t i = 0; i < f->n_known; i++)
                bytes += strlen(f->known[i].path) + 1;
        return bytes;
}
