/* SPDX-License-Identifier: GPL-2.0-only */
/* A traced process: its probes, its pidfd, its module map, its snapshot history. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "alloc-symbols.h"
#include "discovery.h"
#include "bpf-loader.h"
#include "kernel-target.h"
#include "log.h"
#include "macro.h"
#include "mapping-log.h"
#include "util.h"
#include "snapshot.h"
#include "symbolize.h"
#include "safe-open.h"
#include "targets.h"

static void read_comm(pid_t pid, char comm[17])
{
        char path[64];
        _cleanup_fclose_ FILE *f = NULL;

        snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
        comm[0] = 0;
        f = fopen(path, "re");
        if (!f || !fgets(comm, 17, f))
                return;
        comm[strcspn(comm, "\n")] = 0;
}

#define PF_KTHREAD_FLAG 0x00200000U   /* include/linux/sched.h */

/* Why pid cannot be traced as a process, from /proc/PID/stat: a kernel thread (no memory of its
 * own, no allocator), or a zombie (already gone); NULL when it can. */
static const char *untraceable_reason(pid_t pid)
{
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], buf[1024], state = 0, *p;
        unsigned long flags = 0;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        f = fopen(path, "re");
        if (!f || !fgets(buf, sizeof(buf), f) || !(p = strrchr(buf, ')')))
                return NULL;    /* the attach says what is wrong, if anything */
        /* after the comm: state ppid pgrp session tty_nr tpgid flags */
        if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
                return NULL;
        if (flags & PF_KTHREAD_FLAG)
                return "is a kernel thread: it has no allocator of its own to probe (memleakctl attach --kernel "
                       "--kernel-filter pid=N traces the kernel's allocations made while it runs)";
        if (state == 'Z' || state == 'X')
                return "has exited (its parent has not reaped it yet)";
        return NULL;
}

static int add_uprobe_fd(struct target *t, int fd)
{
        int *n = realloc(t->uprobe_fds, (t->n_uprobe_fds + 1) * sizeof(*n));

        if (!n)
                return -ENOMEM;
        t->uprobe_fds = n;
        t->uprobe_fds[t->n_uprobe_fds++] = fd;
        return 0;
}

/* Closing an uprobe_multi link removes all its probes with one grace period (tens of ms): done
 * in a background thread on detach and exit, here at shutdown or when an attach fails. */
static void close_uprobes(struct target *t)
{
        for (size_t i = 0; i < t->n_uprobe_fds; i++)
                close(t->uprobe_fds[i]);
        free(t->uprobe_fds);
        t->uprobe_fds = NULL;
        t->n_uprobe_fds = 0;
}

static const char *const role_names[] = {
        [OBJECT_ROLE_ALLOCATOR] = "allocator",
        [OBJECT_ROLE_NAMED] = "named",
        [OBJECT_ROLE_OTHER_ALLOCATOR] = "other allocator",
        [OBJECT_ROLE_CXX] = "c++ operators",
        [OBJECT_ROLE_LOADED_LATER] = "loaded after attach",
        [OBJECT_ROLE_TRACEPOINT] = "tracepoint",
};

const char *object_role_to_string(enum object_role r)
{
        return r < ELEMENTSOF(role_names) ? role_names[r] : NULL;
}

/* Mark a file of the target as looked at: 1 if it already was, 0 if marked now, or -ENOMEM. */
static int examined_mark(struct target *t, uint64_t dev, uint64_t ino)
{
        struct examined_file *n;

        for (size_t i = 0; i < t->n_examined; i++)
                if (t->examined[i].dev == dev && t->examined[i].ino == ino)
                        return 1;
        n = realloc(t->examined, (t->n_examined + 1) * sizeof(*n));
        if (!n)
                return -ENOMEM;
        t->examined = n;
        t->examined[t->n_examined++] = (struct examined_file) { .dev = dev, .ino = ino };
        return 0;
}

/* discovery_examine()'s skip: each file is looked at once, ELF or not (a locale archive is not
 * reopened on every tick). */
static bool examined_before(void *userdata, uint64_t dev, uint64_t ino)
{
        return examined_mark(userdata, dev, ino) > 0;
}

/* Kernels without uprobe_multi: one perf-event uprobe link per offset. */
static int attach_program_per_site(const struct target_env *env, struct target *t, const char *fd_path,
                                   const char *path, enum alloc_kind kind, bool is_return,
                                   const uint64_t *offsets, size_t n, char **error)
{
        for (size_t i = 0; i < n; i++) {
                struct bpf_link *link, **nl;
                int r = bpf_loader_attach_uprobe(env->skel, kind, is_return, t->pid, fd_path, offsets[i], &link);

                if (r < 0)
                        return error_set(error, r, "Cannot place a %s at offset 0x%" PRIx64 " of %s for pid %d: %s",
                                         is_return ? "return probe" : "uprobe", offsets[i], path, (int)t->pid,
                                         strerror(-r));
                nl = realloc(t->links, (t->n_links + 1) * sizeof(*nl));
                if (!nl) {
                        bpf_link__destroy(link);
                        return error_set(error, -ENOMEM, "Out of memory");
                }
                t->links = nl;
                t->links[t->n_links++] = link;
        }
        return 0;
}

/* One link per program: its sites' offsets. */
static int attach_program(const struct target_env *env, struct target *t, const char *fd_path, const char *path,
                          const struct alloc_sites *sites, enum alloc_kind kind, bool is_return, char **error)
{
        _cleanup_free_ uint64_t *offsets = malloc(MAX(sites->n, (size_t)1) * sizeof(uint64_t));
        const char *first = NULL;
        size_t n = 0;
        int fd, r;

        if (!offsets)
                return error_set(error, -ENOMEM, "Out of memory");
        for (size_t i = 0; i < sites->n; i++) {
                const struct alloc_site *site = &sites->sites[i];

                /* Return probes: every allocating kind, and delete, which frees at its return. */
                if (is_return ? site->kind == ALLOC_KIND_FREE : site->kind != kind)
                        continue;
                offsets[n++] = site->probe_offset;
                first = first ?: site->name;
        }
        if (n == 0)
                return 0;
        if (!bpf_loader_uprobe_multi())
                return attach_program_per_site(env, t, fd_path, path, kind, is_return, offsets, n, error);
        fd = bpf_loader_attach_uprobes(env->skel, kind, is_return, t->pid, fd_path, offsets, n);
        if (fd < 0)
                return error_set(error, fd, "Cannot place %zu %s (%s, ...) in %s for pid %d: %s", n,
                                 is_return ? "return probes" : "uprobes", first, path, (int)t->pid, strerror(-fd));
        r = add_uprobe_fd(t, fd);
        if (r < 0) {
                close(fd);
                return error_set(error, r, "Out of memory");
        }
        return 0;
}

/* Probe every site, for t->pid only: one uprobe_multi link per entry program and one for the
 * returns; list the object. */
static int probe_sites(const struct target_env *env, struct target *t, int fd, const char *path,
                       const struct alloc_sites *sites, enum object_role role, char **error)
{
        struct target_object *no;
        char fd_path[64];
        int r;

        /* The kernel resolves this to the very file we opened, whatever namespace it lives in. */
        snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fd);
        for (int kind = 0; kind < _ALLOC_KIND_MAX; kind++) {
                r = attach_program(env, t, fd_path, path, sites, (enum alloc_kind)kind, false, error);
                if (r < 0)
                        return r;
        }
        r = attach_program(env, t, fd_path, path, sites, ALLOC_KIND_MALLOC, true, error);
        if (r < 0)
                return r;

        no = realloc(t->objects, (t->n_objects + 1) * sizeof(*no));
        if (!no)
                return error_set(error, -ENOMEM, "Out of memory");
        t->objects = no;
        no = &t->objects[t->n_objects];
        *no = (struct target_object) { .path = strdup(path), .probes = sites->n, .role = role,
                                       .fd = fcntl(fd, F_DUPFD_CLOEXEC, 3),
                                       .offsets = malloc(MAX(sites->n, (size_t)1) * sizeof(uint64_t)) };
        t->n_objects++;
        if (!no->path || no->fd < 0 || !no->offsets)
                return error_set(error, -ENOMEM, "Out of memory");
        /* Each probed address once: where a forked child's inherited breakpoints are. */
        for (size_t i = 0; i < sites->n; i++) {
                size_t j;

                for (j = 0; j < no->n_offsets && no->offsets[j] != sites->sites[i].probe_offset; j++)
                        ;
                if (j == no->n_offsets)
                        no->offsets[no->n_offsets++] = sites->sites[i].probe_offset;
        }
        return 0;
}

static const struct module_mapping *find_mapping_of(const struct module_map *mm, uint64_t dev, uint64_t ino)
{
        for (size_t i = 0; i < mm->n; i++)
                if (mm->mappings[i].dev == dev && mm->mappings[i].ino == ino)
                        return &mm->mappings[i];
        return NULL;
}

/* --obj: exactly these objects, every entry point each defines. */
static int probe_named_objects(const struct target_env *env, struct target *t,
                               const struct target_attach_params *p, char **error)
{
        unsigned families = 0;

        for (size_t i = 0; i < p->n_objs; i++) {
                _cleanup_(alloc_sites_done) struct alloc_sites sites = {};
                _cleanup_close_ int fd = -1;
                struct stat st;
                int r;

                fd = module_open_in_target(t->pid, p->objs[i], 0, 0, 0, 0);
                if (fd == -ENOTREG)
                        return error_set(error, -EINVAL, "%s is not a regular file as pid %d sees it",
                                         p->objs[i], (int)t->pid);
                if (fd < 0)
                        return error_set(error, fd == -ENOENT ? -ENOENT : -EINVAL,
                                         "Cannot open %s as pid %d sees it: %s",
                                         p->objs[i], (int)t->pid, strerror(-fd));
                if (fstat(fd, &st) < 0)
                        return error_set(error, -errno, "Cannot stat %s: %m", p->objs[i]);
                /* before an exec nothing is mapped yet: the probes wait on the file */
                if (!t->exec_path && !find_mapping_of(&t->modules, st.st_dev, st.st_ino))
                        return error_set(error, -EINVAL, "%s is not mapped by pid %d (%s)",
                                         p->objs[i], (int)t->pid, t->comm);
                r = alloc_sites_find(fd, &sites);
                if (r == -ENOEXEC)
                        return error_set(error, -EINVAL, "%s is not an ELF object", p->objs[i]);
                if (r < 0)
                        return error_set(error, r, "Cannot read the symbols of %s: %s", p->objs[i], strerror(-r));
                if (!t->track_mmap)
                        alloc_sites_drop_mmap(&sites);
                if (sites.n == 0)
                        return error_set(error, -EINVAL, "%s defines none of the allocator functions "
                                         "(malloc, free, operator new, ...)", p->objs[i]);
                families |= sites.families;
                r = probe_sites(env, t, fd, p->objs[i], &sites, OBJECT_ROLE_NAMED, error);
                if (r < 0)
                        return r;
        }
        t->objects_named = true;        /* no discovery, now or when libraries come later */
        t->allocator = alloc_family_to_string(alloc_sites_family(&(struct alloc_sites) { .families = families }))
                       ?: "other";
        return asprintf(&t->allocator_reason, "named with --obj") < 0 ? -ENOMEM : 0;
}

/* Without --mmap, the mmap family is left alone. */
static void discovery_drop_mmap(struct discovery *d)
{
        for (size_t i = 0; i < d->n; i++)
                alloc_sites_drop_mmap(&d->objects[i].sites);
}

/* Probe what one examined object offers, in the role it plays (o's sites are trimmed to it). */
static int probe_discovered(const struct target_env *env, struct target *t, struct discovered_object *o,
                            enum object_role role, char **error)
{
        if (role == OBJECT_ROLE_CXX)
                alloc_sites_keep(&o->sites, alloc_kind_is_cxx);
        return probe_sites(env, t, o->fd, o->path, &o->sites, role, error);
}

/* The entry for file (dev, ino) of t, added (with path) if new; NULL past TARGET_FILES_MAX (counted
 * in t->files_untracked) or when out of memory. */
static struct known_file *known_file_get(struct target *t, uint64_t dev, uint64_t ino, const char *path)
{
        struct known_file *n;

        for (size_t i = 0; i < t->n_known_files; i++)
                if (t->known_files[i].dev == dev && t->known_files[i].ino == ino)
                        return &t->known_files[i];
        if (t->n_known_files >= TARGET_FILES_MAX) {
                t->files_untracked++;
                return NULL;
        }
        n = realloc(t->known_files, (t->n_known_files + 1) * sizeof(*n));
        if (!n)
                return NULL;
        t->known_files = n;
        n[t->n_known_files] = (struct known_file) { .dev = dev, .ino = ino, .path = strdup(path) };
        if (!n[t->n_known_files].path)
                return NULL;
        return &n[t->n_known_files++];
}

/* Register file f of t with the symbolizer from fd (whose frames need it even after t exits),
 * holding a reference until t is freed. */
static void known_file_register(const struct target_env *env, struct target *t, struct known_file *f, int fd,
                                const struct symbol_source *src)
{
        int r;

        if (f->symbols_registered || f->symbols_failed)
                return;
        r = symbolizer_add_module(env->syms, f->dev, f->ino, fd, f->path, src);
        if (r >= 0 || r == -ENOEXEC || r == -EFBIG) {
                f->symbols_registered = true;
                return;
        }
        f->symbols_failed = true;
        log_debug_errno(r, "Cannot read symbols of %s, its frames stay unresolved: %m", f->path);
}

/* Register every file t maps now with the symbolizer (each once). */
static void register_mapped_files(const struct target_env *env, struct target *t)
{
        bool warned = t->files_untracked > 0;

        for (size_t i = 0; i < t->modules.n; i++) {
                const struct module_mapping *m = &t->modules.mappings[i];
                struct known_file *f = known_file_get(t, m->dev, m->ino, m->path);
                _cleanup_close_ int fd = -EBADF;

                if (!f) {
                        if (!warned && t->files_untracked > 0)
                                log_warning("pid %d (%s) maps more than %u files: the frames of the others stay "
                                            "unresolved", (int)t->pid, t->comm, TARGET_FILES_MAX);
                        warned = warned || t->files_untracked > 0;
                        continue;
                }
                if (f->symbols_registered || f->symbols_failed)
                        continue;
                fd = module_open_in_target(t->pid, m->path, m->dev, m->ino, m->start, m->end);
                if (fd < 0) {
                        f->symbols_failed = true;       /* a device, gone: not tried on every tick */
                        log_debug_errno(fd, "Cannot open %s mapped by pid %d, its frames stay unresolved: %m",
                                        m->path, (int)t->pid);
                        continue;
                }
                known_file_register(env, t, f, fd, &(struct symbol_source) {
                        .pid = t->pid, .path = m->path, .start = m->start, .end = m->end });
        }
}

/* The files a program about to run will map: known by identity, so the mappings BPF records
 * name them, and registered for symbolization now, while they are open. */
static int remember_planned_files(const struct target_env *env, struct target *t, const struct discovery *d)
{
        for (size_t i = 0; i < d->n; i++) {
                const struct discovered_object *o = &d->objects[i];
                struct known_file *f;

                if (o->is_executable) {
                        t->exec_dev = o->dev;
                        t->exec_ino = o->ino;
                }
                f = known_file_get(t, o->dev, o->ino, o->path);
                if (!f)
                        return -ENOMEM;
                known_file_register(env, t, f, o->fd, &(struct symbol_source) { .pid = t->pid, .path = o->path });
        }
        return 0;
}

/* Discovery: the allocator that serves the process (the first object defining malloc in the
 * loader's lookup order: a static allocator in the executable, an LD_PRELOAD or linked tcmalloc,
 * jemalloc or mimalloc, else glibc) gets every entry point probed. Other objects defining malloc
 * & co get theirs too: a call counts once however many are probed (only the outermost allocator
 * call of a thread is recorded), so a direct call into one is not missed. C++ operator new/delete
 * are probed wherever defined (libstdc++, a program with its own), as outer calls, so `new`
 * counts once and its stack is taken where the caller's own frame is intact. */
static int probe_discovered_allocators(const struct target_env *env, struct target *t, char **error)
{
        _cleanup_(discovery_done) struct discovery d = {};
        _cleanup_(allocator_choice_done) struct allocator_choice choice = {};
        int r;

        if (t->exec_path) {
                r = discovery_plan_exec(t->pid, t->exec_path, &d, error);
                if (r < 0)
                        return r;
                r = remember_planned_files(env, t, &d);
                if (r < 0)
                        return error_set(error, r, "Out of memory");
        } else {
                r = discovery_examine(t->pid, &t->modules, examined_before, t, &d);
                if (r < 0)
                        return error_set(error, r, "Cannot examine the objects pid %d maps: %s", (int)t->pid, strerror(-r));
        }
        if (!t->track_mmap)
                discovery_drop_mmap(&d);
        r = discovery_choose(t->pid, &d, &choice);
        if (r == -ENOENT)
                return error_set(error, -ENOENT, "pid %d (%s) maps no object defining malloc (a stripped "
                                 "static binary?); name the object that holds its allocator with --obj",
                                 (int)t->pid, t->comm);
        if (r < 0)
                return error_set(error, r, "Cannot choose the allocator of pid %d: %s", (int)t->pid, strerror(-r));

        /* The allocator first: the attach reply lists it first. */
        r = probe_discovered(env, t, &d.objects[choice.object], OBJECT_ROLE_ALLOCATOR, error);
        if (r < 0)
                return r;
        for (size_t i = 0; i < d.n; i++) {
                struct discovered_object *o = &d.objects[i];

                if (i != choice.object && o->sites.n > 0) {
                        r = probe_discovered(env, t, o, alloc_sites_has_c_api(&o->sites) ?
                                             OBJECT_ROLE_OTHER_ALLOCATOR : OBJECT_ROLE_CXX, error);
                        if (r < 0)
                                return r;
                }
                /* planned objects (run) were not seen by examined_before() */
                r = examined_mark(t, o->dev, o->ino);
                if (r < 0)
                        return error_set(error, r, "Out of memory");
        }
        t->allocator = choice.allocator;
        t->allocator_reason = TAKE_PTR(choice.reason);
        return 0;
}

int target_rescan(const struct target_env *env, struct target *t)
{
        _cleanup_(discovery_done) struct discovery d = {};
        int r, probed = 0;

        if (t->exited || t->pid == MEMLEAK_KERNEL_TGID || t->objects_named)
                return 0;       /* the kernel target maps no files; --obj said what to probe */
        r = discovery_examine(t->pid, &t->modules, examined_before, t, &d);
        if (r < 0)
                return r;
        if (!t->track_mmap)
                discovery_drop_mmap(&d);
        for (size_t i = 0; i < d.n; i++) {
                struct discovered_object *o = &d.objects[i];
                _cleanup_free_ char *error = NULL;

                if (o->sites.n == 0)
                        continue;
                r = probe_discovered(env, t, o, OBJECT_ROLE_LOADED_LATER, &error);
                if (r < 0) {
                        log_warning("pid %d mapped %s after the attach; cannot probe it: %s", (int)t->pid,
                                    o->path, error ? error : strerror(-r));
                        continue;
                }
                log_info("pid %d mapped %s after the attach: probed %zu allocator entry points in it",
                         (int)t->pid, o->path, o->sites.n);
                probed++;
        }
        return probed;
}

static void destroy_links(struct target *t)
{
        close_uprobes(t);
        for (size_t i = 0; i < t->n_links; i++)
                bpf_link__destroy(t->links[i]);
        free(t->links);
        t->links = NULL;
        t->n_links = 0;
}

/* An object whose inherited breakpoints go (bpf_loader_clear_inherited_uprobes). */
struct sweep_object {
        int fd;                 /* the object file, owned */
        uint64_t *offsets;      /* owned */
        size_t n_offsets;
};

/* Work for a background thread: links to destroy, or objects to sweep (or both). */
struct link_batch {
        pid_t pid;
        struct bpf_link **links;
        size_t n;
        int *fds;               /* uprobe_multi links */
        size_t n_fds;
        struct sweep_object *sweeps;
        size_t n_sweeps;
};

/* Pids whose links are still being destroyed in the background. */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pending_done = PTHREAD_COND_INITIALIZER;
static unsigned pending_count[1024];    /* by pid % 1024: a collision only waits a little longer */

static void *destroy_link_batch(void *userdata)
{
        struct link_batch *b = userdata;

        for (size_t i = 0; i < b->n_sweeps; i++) {
                char fd_path[64];

                snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", b->sweeps[i].fd);
                (void)bpf_loader_clear_inherited_uprobes(b->pid, fd_path, b->sweeps[i].offsets,
                                                         b->sweeps[i].n_offsets);
                close(b->sweeps[i].fd);
                free(b->sweeps[i].offsets);
        }
        free(b->sweeps);
        for (size_t i = 0; i < b->n; i++)
                bpf_link__destroy(b->links[i]);
        for (size_t i = 0; i < b->n_fds; i++)
                close(b->fds[i]);
        pthread_mutex_lock(&pending_lock);
        pending_count[b->pid % ELEMENTSOF(pending_count)]--;
        pthread_cond_broadcast(&pending_done);
        pthread_mutex_unlock(&pending_lock);
        free(b->links);
        free(b->fds);
        free(b);
        return NULL;
}

void target_wait_background_detaches(void)
{
        pthread_mutex_lock(&pending_lock);
        for (size_t i = 0; i < ELEMENTSOF(pending_count); i++)
                while (pending_count[i] > 0)
                        pthread_cond_wait(&pending_done, &pending_lock);
        pthread_mutex_unlock(&pending_lock);
}

/* A new attach to a pid whose old probes are still going waits for them: two sets of probes on
 * one process must never be live at once. Rare (re-attach within a second or two of a detach). */
static void wait_for_pending_detach(pid_t pid)
{
        pthread_mutex_lock(&pending_lock);
        while (pending_count[pid % ELEMENTSOF(pending_count)] > 0)
                pthread_cond_wait(&pending_done, &pending_lock);
        pthread_mutex_unlock(&pending_lock);
}

/* Links per background thread: each uprobe unregistration waits for its own SRCU grace period,
 * so threads working side by side overlap those waits. */
#define LINKS_PER_THREAD 8U

static int start_batch(struct link_batch *batch)
{
        struct link_batch *b = malloc(sizeof(*b));
        pid_t pid = batch->pid;
        pthread_attr_t attr;
        pthread_t thread;
        int r;

        if (!b)
                return -ENOMEM;
        *b = *batch;
        pthread_mutex_lock(&pending_lock);
        pending_count[pid % ELEMENTSOF(pending_count)]++;
        pthread_mutex_unlock(&pending_lock);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = pthread_create(&thread, &attr, destroy_link_batch, b);
        pthread_attr_destroy(&attr);
        if (r != 0) {
                pthread_mutex_lock(&pending_lock);
                pending_count[pid % ELEMENTSOF(pending_count)]--;
                pthread_mutex_unlock(&pending_lock);
                free(b);
                return -r;
        }
        return 0;
}

static int start_link_batch(pid_t pid, struct bpf_link **links, size_t n, int *fds, size_t n_fds)
{
        return start_batch(&(struct link_batch) { .pid = pid, .links = links, .n = n, .fds = fds, .n_fds = n_fds });
}

int target_clear_inherited_probes(struct target *t)
{
        struct link_batch b = { .pid = t->pid };
        int r;

        if (t->exited || t->n_objects == 0)
                return 0;
        b.sweeps = calloc(t->n_objects, sizeof(*b.sweeps));
        if (!b.sweeps)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_objects; i++) {
                const struct target_object *o = &t->objects[i];
                struct sweep_object *w = &b.sweeps[b.n_sweeps];

                if (o->fd < 0 || o->n_offsets == 0)
                        continue;
                w->offsets = malloc(o->n_offsets * sizeof(*w->offsets));
                w->fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 3);
                if (!w->offsets || w->fd < 0) {
                        r = -ENOMEM;
                        free(w->offsets);
                        if (w->fd >= 0)
                                close(w->fd);
                        goto fail;
                }
                memcpy(w->offsets, o->offsets, o->n_offsets * sizeof(*w->offsets));
                w->n_offsets = o->n_offsets;
                b.n_sweeps++;
        }
        r = start_batch(&b);
        if (r >= 0) {
                t->children_cleared++;
                return 0;
        }
fail:
        for (size_t i = 0; i < b.n_sweeps; i++) {
                close(b.sweeps[i].fd);
                free(b.sweeps[i].offsets);
        }
        free(b.sweeps);
        return r;
}

/* Unregistering a uprobe waits for a grace period (~0.1 s each): a target's hundred links take
 * many seconds, which the event loop must not spend. BPF already ignores the target (its entry in
 * the targets map is gone), so the links go in the background, a few per thread. */
static void destroy_links_in_background(struct target *t)
{
        size_t done = 0;

        /* Each uprobe_multi link's release waits for a grace period too (~45 ms here). */
        if (t->n_uprobe_fds > 0 && start_link_batch(t->pid, NULL, 0, t->uprobe_fds, t->n_uprobe_fds) == 0) {
                t->uprobe_fds = NULL;
                t->n_uprobe_fds = 0;
        }
        close_uprobes(t);       /* what the thread did not take */
        while (done < t->n_links) {
                size_t n = MIN(t->n_links - done, (size_t)LINKS_PER_THREAD);
                struct bpf_link **batch = malloc(n * sizeof(*batch));

                if (!batch)
                        break;          /* the rest the slow way, below */
                memcpy(batch, t->links + done, n * sizeof(*batch));
                if (start_link_batch(t->pid, batch, n, NULL, 0) < 0) {
                        free(batch);
                        break;
                }
                done += n;
        }
        for (size_t i = done; i < t->n_links; i++)
                bpf_link__destroy(t->links[i]);
        free(t->links);
        t->links = NULL;
        t->n_links = 0;
}

int target_register(const struct target_env *env, struct target *t, char **error)
{
        if (bpf_map_update_elem(bpf_loader_targets_fd(env->skel), &(__u32){ t->pid }, &t->filter, BPF_NOEXIST) < 0) {
                if (errno == E2BIG)
                        return error_set(error, -ENOSPC, "Too many targets");
                if (t->pid == KERNEL_TARGET_PID)
                        return error_set(error, -errno, "Cannot register the kernel target: %m");
                return error_set(error, -errno, "Cannot register pid %d: %m", (int)t->pid);
        }
        t->attached_usec = now_realtime_usec();
        return 0;
}

/* A target for process p->pid with its pidfd and snapshot ring, once the links of an earlier
 * target with that pid are gone. */
static int target_new(const struct target_env *env, const struct target_attach_params *p, struct target **ret,
                      char **error)
{
        struct target *t = calloc(1, sizeof(*t));
        int r;

        if (!t)
                return error_set(error, -ENOMEM, "Out of memory");
        t->pid = p->pid;
        t->syms = env->syms;
        t->filter = p->filter;
        t->track_mmap = p->track_mmap;
        wait_for_pending_detach(p->pid);
        t->pidfd = syscall(SYS_pidfd_open, p->pid, 0);
        if (t->pidfd < 0) {
                r = errno == ESRCH ? error_set(error, -ESRCH, "No process with pid %d", (int)p->pid)
                                   : error_set(error, -errno, "Cannot open pid %d: %m", (int)p->pid);
                target_free(t);
                return r;
        }
        r = snapshot_ring_new(p->ring_depth, &t->ring);
        if (r < 0) {
                target_free(t);
                return error_set(error, r, "Out of memory");
        }
        *ret = t;
        return 0;
}

/* An attach that failed: whatever it had placed goes, and the client gets a message. */
static int target_attach_failed(struct target *t, int r, char **error)
{
        if (!*error)
                error_set(error, r, "%s", strerror(-r));
        target_free(t);
        return r;
}

int target_attach(const struct target_env *env, const struct target_attach_params *p,
                  struct target **ret, char **error)
{
        struct target *t;
        const char *why;
        int r;

        *error = NULL;
        r = target_new(env, p, &t, error);
        if (r < 0)
                return r;
        read_comm(p->pid, t->comm);
        why = untraceable_reason(p->pid);
        if (why)
                return target_attach_failed(t, error_set(error, -EINVAL, "pid %d (%s) %s", (int)p->pid, t->comm,
                                                         why), error);
        r = module_map_refresh(&t->modules, p->pid);
        if (r < 0)
                return target_attach_failed(t, error_set(error, r == -ENOENT ? -ESRCH : r,
                                                         "Cannot read the mappings of pid %d: %s",
                                                         (int)p->pid, strerror(-r)), error);
        register_mapped_files(env, t);
        if (p->n_objs > 0)
                r = probe_named_objects(env, t, p, error);
        else
                r = probe_discovered_allocators(env, t, error);
        if (r >= 0)
                r = target_register(env, t, error);     /* from here on BPF records this process */
        if (r < 0)
                return target_attach_failed(t, r, error);
        *ret = t;
        return 0;
}

static void release_mapping_log(struct target *t)
{
        if (t->records_mappings)
                mapping_log_release();
        t->records_mappings = false;
}

void target_stop(const struct target_env *env, struct target *t, bool freeze, bool background)
{
        int r;

        bpf_map_delete_elem(bpf_loader_targets_fd(env->skel), &(__u32){ t->pid });
        if (background)
                destroy_links_in_background(t);
        else
                destroy_links(t);
        if (freeze) {
                uint64_t totals[_COUNTER_MAX];
                /* Once the per-stack totals map overflowed, it misses stacks: sum the allocations. */
                bool overflowed = bpf_loader_read_counters(env->skel, totals) < 0 ||
                                  totals[COUNTER_LOST_COMBINED_MAP_FULL] > 0;

                r = stack_collect_freeze(env->skel, &env->limits, t->pid, overflowed, &t->frozen);
                if (r < 0)
                        log_warning_errno(r, "Cannot keep the last report of pid %d: %m", (int)t->pid);
        }
        stack_collect_purge(env->skel, &env->limits, t->pid);
        mapping_log_purge(env->skel, t->pid);
        release_mapping_log(t);
        t->exit_source = sd_event_source_disable_unref(t->exit_source);
        closep(&t->pidfd);
        t->pidfd = -1;
}

uint64_t target_memory_bytes(const struct target *t)
{
        uint64_t bytes = sizeof(*t) + t->n_objects * sizeof(*t->objects) + t->n_examined * sizeof(*t->examined) +
                         t->modules.n * sizeof(*t->modules.mappings) + t->n_known_files * sizeof(*t->known_files) +
                         snapshot_ring_bytes(t->ring);

        if (t->frozen)
                bytes += t->frozen->bytes;
        for (size_t i = 0; i < t->modules.n; i++)
                bytes += strlen(t->modules.mappings[i].path) + 1;
        for (size_t i = 0; i < t->n_known_files; i++)
                bytes += strlen(t->known_files[i].path) + 1;
        for (size_t i = 0; i < t->n_objects; i++)
                bytes += strlen(t->objects[i].path) + 1;
        return bytes;
}

struct target *target_free(struct target *t)
{
        if (!t)
                return NULL;
        destroy_links(t);
        sd_event_source_disable_unref(t->exit_source);
        closep(&t->pidfd);
        for (size_t i = 0; i < t->n_objects; i++) {
                free(t->objects[i].path);
                free(t->objects[i].offsets);
                if (t->objects[i].fd >= 0)
                        close(t->objects[i].fd);
        }
        free(t->objects);
        free(t->examined);
        free(t->allocator_reason);
        module_map_done(&t->modules);
        snapshot_ring_free(t->ring);
        frozen_target_free(t->frozen);
        kernel_symbols_free(t->kernel);
        release_mapping_log(t);
        free(t->exec_path);
        for (size_t i = 0; i < t->n_known_files; i++) {
                if (t->known_files[i].symbols_registered)
                        symbolizer_release_module(t->syms, t->known_files[i].dev, t->known_files[i].ino);
                free(t->known_files[i].path);
        }
        free(t->known_files);
        free(t);
        return NULL;
}

static void comm_from_path(const char *path, char comm[17])
{
        const char *slash = strrchr(path, '/');

        /* what the kernel sets at exec: the file name, cut to TASK_COMM_LEN - 1 */
        snprintf(comm, 16, "%s", slash ? slash + 1 : path);
}

/* With --obj, the program's files are still planned: to know them when BPF records their
 * mappings, and to refuse a program that cannot run. */
static int plan_exec_files(const struct target_env *env, struct target *t, char **error)
{
        _cleanup_(discovery_done) struct discovery d = {};
        int r;

        r = discovery_plan_exec(t->pid, t->exec_path, &d, error);
        if (r < 0)
                return r;
        r = remember_planned_files(env, t, &d);
        return r < 0 ? error_set(error, r, "Out of memory") : 0;
}

int target_attach_exec(const struct target_env *env, const struct target_exec_params *p,
                       struct target **ret, char **error)
{
        const struct target_attach_params *a = &p->attach;
        struct target *t;
        int r;

        *error = NULL;
        r = target_new(env, a, &t, error);
        if (r < 0)
                return r;
        t->exec_path = strdup(p->exec);
        if (!t->exec_path)
                return target_attach_failed(t, error_set(error, -ENOMEM, "Out of memory"), error);
        comm_from_path(p->exec, t->comm);
        /* The module map starts empty: what the held process maps now is not the program's. */
        if (a->n_objs > 0) {
                r = plan_exec_files(env, t, error);
                if (r >= 0)
                        r = probe_named_objects(env, t, a, error);
        } else
                r = probe_discovered_allocators(env, t, error);
        if (r < 0)
                goto fail;
        mapping_log_purge(env->skel, a->pid);
        r = mapping_log_hold(env->skel);
        if (r < 0) {
                r = error_set(error, r, "Cannot record the mappings pid %d will make: %s", (int)a->pid, strerror(-r));
                goto fail;
        }
        t->records_mappings = true;
        /* From here on BPF records this process, and the files it maps. */
        r = target_register(env, t, error);
        if (r < 0)
                goto fail;
        *ret = t;
        return 0;
fail:
        return target_attach_failed(t, r, error);
}

/* Whether the process runs the program it was attached to exec (or was attached as it ran). */
static bool runs_its_program(struct target *t)
{
        char exe[64];
        struct stat st;

        if (!t->exec_path || t->exec_seen)
                return true;
        snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)t->pid);
        if (stat(exe, &st) < 0 || (uint64_t)st.st_dev != t->exec_dev || (uint64_t)st.st_ino != t->exec_ino)
                return false;
        t->exec_seen = true;
        return true;
}

static const char *known_path(void *userdata, uint64_t dev, uint64_t ino)
{
        const struct target *t = userdata;

        for (size_t i = 0; i < t->n_known_files; i++)
                if (t->known_files[i].dev == dev && t->known_files[i].ino == ino)
                        return t->known_files[i].path;
        for (size_t i = 0; i < t->modules.n; i++)
                if (t->modules.mappings[i].dev == dev && t->modules.mappings[i].ino == ino)
                        return t->modules.mappings[i].path;
        return NULL;
}

void target_refresh_modules(const struct target_env *env, struct target *t, bool process_gone)
{
        _cleanup_free_ struct recorded_mapping *recorded = NULL;
        size_t n = 0;
        int r;

        if (t->exited || t->pid == MEMLEAK_KERNEL_TGID)
                return;
        if (!process_gone && runs_its_program(t)) {
                r = module_map_refresh(&t->modules, t->pid);
                if (r < 0 && r != -ENOENT && r != -ESRCH)
                        log_debug_errno(r, "Cannot refresh the mappings of pid %d: %m", (int)t->pid);
                if (r >= 0)
                        register_mapped_files(env, t);
        }
        r = mapping_log_read(env->skel, t->pid, &recorded, &n);
        if (r < 0) {
                log_debug_errno(r, "Cannot read the recorded mappings of pid %d: %m", (int)t->pid);
                return;
        }
        if (process_gone && mapping_log_lost(env->skel) > 0)
                log_warning("%" PRIu64 " file mappings did not fit in the BPF map that records them; "
                            "frames of pid %d (%s) in those files may stay unresolved",
                            mapping_log_lost(env->skel), (int)t->pid, t->comm);
        n = recorded_mappings_latest(recorded, n);
        r = module_map_overlay(&t->modules, recorded, n, known_path, t);
        if (r < 0)
                log_debug_errno(r, "Cannot update the mappings of pid %d: %m", (int)t->pid);
}
