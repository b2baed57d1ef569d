/* SPDX-License-Identifier: GPL-2.0-only */
/* A process's uprobes: on the objects named with --obj, or on the allocator that serves it (and
 * the other objects defining malloc & co, and C++'s operators), and later on what it dlopens. */
#include <assert.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "alloc-sites.h"
#include "bpf-loader.h"
#include "detacher.h"
#include "discovery.h"
#include "macro.h"
#include "probes.h"
#include "safe-open.h"
#include "target-files.h"
#include "target-pins.h"
#include "target-unwind.h"
#include "util.h"

static int add_multi_fd(struct target *t, int fd)
{
        int *n = realloc(t->links.multi_fds, (t->links.n_multi_fds + 1) * sizeof(*n));

        if (!n)
                return -ENOMEM;
        t->links.multi_fds = n;
        t->links.multi_fds[t->links.n_multi_fds++] = fd;
        (void)target_pins_add(t, fd);  /* a failure is counted (pin_failures) */
        return 0;
}

static int add_link(struct target *t, struct bpf_link *link)
{
        struct bpf_link **n = realloc(t->links.links, (t->links.n_links + 1) * sizeof(*n));

        if (!n)
                return -ENOMEM;
        t->links.links = n;
        t->links.links[t->links.n_links++] = link;
        (void)target_pins_add(t, bpf_link__fd(link));
        return 0;
}

/* Kernels without uprobe_multi: one perf-event uprobe link per offset. */
static int attach_program_per_site(const struct target_env *env, struct target *t, const char *fd_path,
                                   const char *path, enum alloc_kind kind, bool is_return,
                                   const uint64_t *offsets, const uint64_t *cookies, size_t n, char **error)
{
        for (size_t i = 0; i < n; i++) {
                struct bpf_link *link;
                int r = bpf_loader_attach_uprobe(env->skel, kind, is_return, t->pid, fd_path, offsets[i], cookies[i],
                                                 &link);

                if (r < 0)
                        return error_set(error, r, "Cannot place a %s at offset 0x%" PRIx64 " of %s for pid %d: %s",
                                         is_return ? "return probe" : "uprobe", offsets[i], path, (int)t->pid,
                                         strerror(-r));
                r = add_link(t, link);
                if (r < 0) {
                        bpf_link__destroy(link);
                        return error_set(error, r, "Out of memory");
                }
        }
        return 0;
}

/* Whether t's sites of kind take one uprobe session each instead of an entry and a return probe:
 * malloc's and calloc's, which call no other allocator function. Not with --mmap: a session skips
 * the return of an unsampled call and leaves no in-flight state, and the mmap glibc's malloc
 * makes inside would look like the program's own. */
static bool by_session(const struct target_env *env, const struct target *t, enum alloc_kind kind)
{
        return (kind == ALLOC_KIND_MALLOC || kind == ALLOC_KIND_CALLOC) && bpf_loader_uprobe_session(env->skel) &&
               !t->track_mmap;
}

/* One link per program: its sites' offsets. */
static int attach_program(const struct target_env *env, struct target *t, const char *fd_path, const char *path,
                          const struct alloc_sites *sites, enum alloc_kind kind, bool is_return, char **error)
{
        _cleanup_free_ uint64_t *offsets = malloc(MAX(sites->n, (size_t)1) * sizeof(uint64_t));
        _cleanup_free_ uint64_t *cookies = malloc(MAX(sites->n, (size_t)1) * sizeof(uint64_t));
        bool session = !is_return && by_session(env, t, kind);
        const char *first = NULL;
        size_t n = 0;
        int fd, r;

        if (!offsets || !cookies)
                return error_set(error, -ENOMEM, "Out of memory");
        for (size_t i = 0; i < sites->n; i++) {
                const struct alloc_site *site = &sites->sites[i];

                if (is_return ? !alloc_kind_has_return_probe(site->kind) || by_session(env, t, site->kind)
                              : site->kind != kind)
                        continue;
                /* the target's slot; an entry's also where its arguments are */
                cookies[n] = MEMLEAK_COOKIE_OF_SLOT(t->slot.slot) | (is_return ? 0 : site->entry_cookie) |
                             (session && kind == ALLOC_KIND_CALLOC ? MEMLEAK_COOKIE_CALLOC : 0);
                offsets[n++] = site->probe_offset;
                first = first ?: site->name;
        }
        if (n == 0)
                return 0;
        if (!bpf_loader_uprobe_multi(env->skel))
                return attach_program_per_site(env, t, fd_path, path, kind, is_return, offsets, cookies, n, error);
        fd = session ? bpf_loader_attach_alloc_sessions(env->skel, t->pid, fd_path, offsets, cookies, n)
                     : bpf_loader_attach_uprobes(env->skel, kind, is_return, t->pid, fd_path, offsets, cookies, n);
        if (fd < 0)
                return error_set(error, fd, "Cannot place %zu %s (%s, ...) in %s for pid %d: %s", n,
                                 session ? "uprobe sessions" : is_return ? "return probes" : "uprobes", first, path,
                                 (int)t->pid, strerror(-fd));
        r = add_multi_fd(t, fd);
        if (r < 0) {
                close(fd);
                return error_set(error, r, "Out of memory");
        }
        return 0;
}

/* List the object probed, with what clearing a forked child's breakpoints needs: the file and
 * each probed address once. */
static int add_object(struct target *t, int fd, const char *path, const struct alloc_sites *sites,
                      unsigned forwarded, enum object_role role)
{
        struct target_object *o = realloc(t->objects, (t->n_objects + 1) * sizeof(*o));

        if (!o)
                return -ENOMEM;
        t->objects = o;
        o = &t->objects[t->n_objects];
        *o = (struct target_object) { .path = strdup(path), .probes = sites->n, .forwarded = forwarded, .role = role,
                                      .fd = fcntl(fd, F_DUPFD_CLOEXEC, 3),
                                      .offsets = malloc(MAX(sites->n, (size_t)1) * sizeof(uint64_t)) };
        t->n_objects++;
        if (!o->path || o->fd < 0 || !o->offsets)
                return -ENOMEM;
        for (size_t i = 0; i < sites->n; i++) {
                size_t j;

                for (j = 0; j < o->n_offsets && o->offsets[j] != sites->sites[i].probe_offset; j++)
                        ;
                if (j == o->n_offsets)
                        o->offsets[o->n_offsets++] = sites->sites[i].probe_offset;
        }
        return 0;
}

/* Operators that only call malloc or free (cxx-forwarders.h) are left out of sites where t's
 * stacks are walked by unwind tables and its allocator was discovered (so is probed): the malloc
 * or free inside records the call, at one trap where probing the operator too takes two, and the
 * walk from malloc's return goes up through the operator's frame by its CFI. Their code is listed
 * in t->forwarders, whose frames a report drops from the top of a stack. With frame pointers
 * only, a walk from inside such an operator (built without them) would skip its caller: they
 * stay probed, as outer calls. How many were left out. */
static int leave_forwarders(struct target *t, int fd, struct alloc_sites *sites, enum object_role role,
                            unsigned *ret)
{
        struct stat st;
        size_t out = 0, n = 0;
        struct file_range *more;

        *ret = 0;
        /* --obj: the malloc they call may be in no object named, and so not probed */
        if (!t->unwind.cache || t->objects_named)
                return 0;
        for (size_t i = 0; i < sites->n; i++)
                n += sites->sites[i].forwards;
        if (n == 0)
                return 0;
        if (fstat(fd, &st) < 0)
                return -errno;
        /* A library mapped after the attach (dlopen) runs at once, and its table is built a moment
         * later: until then a walk from inside its operators would go by frame pointer, skipping
         * their caller. They are left only when the table is there already (another target's). */
        if (role == OBJECT_ROLE_LOADED_LATER && !target_unwind_walks_file(t, st.st_dev, st.st_ino))
                return 0;
        more = realloc(t->forwarders, (t->n_forwarders + n) * sizeof(*more));
        if (!more)
                return -ENOMEM;
        t->forwarders = more;
        for (size_t i = 0; i < sites->n; i++) {
                const struct alloc_site *site = &sites->sites[i];

                if (!site->forwards) {
                        sites->sites[out++] = *site;
                        continue;
                }
                t->forwarders[t->n_forwarders++] = (struct file_range) {
                        .dev = st.st_dev, .ino = st.st_ino,
                        .start = site->file_offset, .end = site->file_offset + site->size,
                };
        }
        sites->n = out;
        *ret = (unsigned)n;
        return 0;
}

/* Probe every site (but forwarding operators, see above), for t->pid only: one uprobe_multi link
 * per entry program and one for the returns; list the object. */
static int probe_sites(const struct target_env *env, struct target *t, int fd, const char *path,
                       struct alloc_sites *sites, enum object_role role, char **error)
{
        unsigned forwarded;
        char fd_path[64];
        int r;

        r = leave_forwarders(t, fd, sites, role, &forwarded);
        if (r < 0)
                return error_set(error, r, "Cannot read %s: %s", path, strerror(-r));

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
        r = add_object(t, fd, path, sites, forwarded, role);
        return r < 0 ? error_set(error, r, "Out of memory") : 0;
}

static bool maps_file(const struct module_map *mm, uint64_t dev, uint64_t ino)
{
        for (size_t i = 0; i < mm->n; i++)
                if (mm->mappings[i].dev == dev && mm->mappings[i].ino == ino)
                        return true;
        return false;
}

int probes_attach_named(const struct target_env *env, struct target *t, char *const *objs, size_t n_objs,
                        char **error)
{
        unsigned families = 0;

        assert(env);
        assert(t);
        assert(error);
        t->objects_named = true;        /* no discovery, now or when libraries come later */
        for (size_t i = 0; i < n_objs; i++) {
                _cleanup_(alloc_sites_done) struct alloc_sites sites = {};
                _cleanup_close_ int fd = -1;
                struct stat st;
                int r;

                fd = module_map_open_file(t->pid, objs[i], 0, 0, 0, 0);
                if (fd == -ENOTREG)
                        return error_set(error, -EINVAL, "%s is not a regular file as pid %d sees it",
                                         objs[i], (int)t->pid);
                if (fd < 0)
                        return error_set(error, fd == -ENOENT ? -ENOENT : -EINVAL,
                                         "Cannot open %s as pid %d sees it: %s", objs[i], (int)t->pid, strerror(-fd));
                if (fstat(fd, &st) < 0)
                        return error_set(error, -errno, "Cannot stat %s: %m", objs[i]);
                /* before an exec nothing is mapped yet: the probes wait on the file */
                if (!t->exec && !maps_file(&t->modules, st.st_dev, st.st_ino))
                        return error_set(error, -EINVAL, "%s is not mapped by pid %d (%s)", objs[i], (int)t->pid,
                                         t->comm);
                r = alloc_sites_find(fd, &sites);
                if (r == -ENOEXEC)
                        return error_set(error, -EINVAL, "%s is not an ELF object", objs[i]);
                if (r < 0)
                        return error_set(error, r, "Cannot read the symbols of %s: %s", objs[i], strerror(-r));
                if (!t->track_mmap)
                        alloc_sites_drop_mmap(&sites);
                if (sites.n == 0)
                        return error_set(error, -EINVAL, "%s defines none of the allocator functions "
                                         "(malloc, free, operator new, ...)", objs[i]);
                families |= sites.families;
                r = probe_sites(env, t, fd, objs[i], &sites, OBJECT_ROLE_NAMED, error);
                if (r < 0)
                        return r;
        }
        t->allocator = alloc_sites_family_to_string(alloc_sites_family(&(struct alloc_sites) { .families = families }))
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
                alloc_sites_keep(&o->sites, alloc_sites_kind_is_cxx);
        return probe_sites(env, t, o->fd, o->path, &o->sites, role, error);
}

/* discovery_examine()'s skip: each file is looked at once, ELF or not (a locale archive is not
 * reopened on every tick). */
static bool examined_before(void *userdata, uint64_t dev, uint64_t ino)
{
        return file_id_set_add(userdata, dev, ino) == 0;
}

/* Discovery: the allocator that serves the process (the first object defining malloc in the
 * loader's lookup order: a static allocator in the executable, an LD_PRELOAD or linked tcmalloc,
 * jemalloc or mimalloc, else glibc) gets every entry point probed. Other objects defining malloc
 * & co get theirs too: a call counts once however many are probed (only the outermost allocator
 * call of a thread is recorded), so a direct call into one is not missed. C++ operator new/delete
 * are probed wherever defined (libstdc++, a program with its own), as outer calls, so `new`
 * counts once and its stack is taken where the caller's own frame is intact. */
int probes_attach_discovered(const struct target_env *env, struct target *t, char **error)
{
        _cleanup_(discovery_done) struct discovery d = {};
        _cleanup_(allocator_choice_done) struct allocator_choice choice = {};
        int r;

        assert(env);
        assert(t);
        assert(error);
        if (t->exec) {
                r = discovery_plan_exec(t->pid, t->exec->path, &d, error);
                if (r < 0)
                        return r;
                r = target_files_remember_planned(env, t, &d);
                if (r < 0)
                        return error_set(error, r, "Out of memory");
        } else {
                r = discovery_examine(env->objects, t->pid, &t->modules, examined_before, &t->files.examined, &d);
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
                r = file_id_set_add(&t->files.examined, o->dev, o->ino);
                if (r < 0)
                        return error_set(error, r, "Out of memory");
        }
        t->allocator = choice.allocator;
        t->allocator_reason = TAKE_PTR(choice.reason);
        return 0;
}

struct probes_rescan {
        struct object_cache *objects;   /* the daemon's (env->objects), shared */
        pid_t pid;
        bool track_mmap;
        struct module_map modules;      /* a copy of the target's */
        struct file_id_set examined;    /* what it looked at before, then what this one did too */
        struct discovery found;
        int error;
};

/* Whether t maps a file its rescans have not looked at yet. */
static bool maps_unexamined(const struct target *t)
{
        for (size_t i = 0; i < t->modules.n; i++)
                if (!file_id_set_contains(&t->files.examined, t->modules.mappings[i].dev, t->modules.mappings[i].ino))
                        return true;
        return false;
}

int probes_rescan_new(const struct target_env *env, const struct target *t, struct probes_rescan **ret)
{
        struct probes_rescan *r;
        int k;

        assert(t);
        assert(ret);
        *ret = NULL;
        if (target_phase_exited(t->phase) || t->kernel || t->objects_named)
                return 0;       /* the kernel maps no files; --obj said what to probe */
        if (!maps_unexamined(t))
                return 0;       /* most ticks: no job for the worker */
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->objects = env->objects;
        r->pid = t->pid;
        r->track_mmap = t->track_mmap;
        k = module_map_copy(&r->modules, &t->modules);
        if (k >= 0)
                k = file_id_set_merge(&r->examined, &t->files.examined);
        if (k < 0) {
                probes_rescan_free(r);
                return k;
        }
        *ret = r;
        return 0;
}

struct probes_rescan *probes_rescan_free(struct probes_rescan *r)
{
        if (!r)
                return NULL;
        module_map_done(&r->modules);
        file_id_set_done(&r->examined);
        discovery_done(&r->found);
        free(r);
        return NULL;
}

pid_t probes_rescan_pid(const struct probes_rescan *r)
{
        assert(r);
        return r->pid;
}

void probes_rescan_run(void *rescan)
{
        struct probes_rescan *r = rescan;

        r->error = discovery_examine(r->objects, r->pid, &r->modules, examined_before, &r->examined, &r->found);
        if (r->error >= 0 && !r->track_mmap)
                discovery_drop_mmap(&r->found);
}

void probes_rescanned_free(struct rescanned_object *o, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(o[i].path);
                free(o[i].error);
        }
        free(o);
}

int probes_rescan_finish(const struct target_env *env, struct target *t, struct probes_rescan *r,
                         struct rescanned_object **ret, size_t *ret_n)
{
        struct rescanned_object *out = NULL;
        size_t n = 0;
        int k;

        assert(env);
        assert(t);
        assert(r);
        assert(ret);
        assert(ret_n);
        *ret = NULL;
        *ret_n = 0;
        if (r->error < 0)
                return r->error;
        k = file_id_set_merge(&t->files.examined, &r->examined);
        if (k < 0)
                return k;
        out = calloc(MAX(r->found.n, (size_t)1), sizeof(*out));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < r->found.n; i++) {
                struct discovered_object *o = &r->found.objects[i];
                char *error = NULL;

                if (o->sites.n == 0)
                        continue;
                k = probe_discovered(env, t, o, OBJECT_ROLE_LOADED_LATER, &error);
                out[n++] = (struct rescanned_object) {
                        .path = strdup(o->path), .probes = k < 0 ? 0 : o->sites.n,
                        .forwarded = k < 0 ? 0 : t->objects[t->n_objects - 1].forwarded,
                        .error = k < 0 ? (error ?: strdup(strerror(-k))) : NULL,
                };
                if (k >= 0)
                        free(error);
        }
        *ret = out;
        *ret_n = n;
        return 0;
}

/* t's links forgotten: where they are pinned stays. */
static void links_reset(struct target *t)
{
        struct target_links kept = { .pin_dir = t->links.pin_dir, .pin_gen = t->links.pin_gen,
                                     .pin_failures = t->links.pin_failures, .keep_pins = t->links.keep_pins };

        t->links = kept;
}

void probes_destroy_links(struct target *t)
{
        assert(t);
        target_pins_remove(t);  /* before they are closed: a pin would keep a link */
        for (size_t i = 0; i < t->links.n_inherited; i++)
                close(t->links.inherited_fds[i]);
        free(t->links.inherited_fds);
        for (size_t i = 0; i < t->links.n_multi_fds; i++)
                close(t->links.multi_fds[i]);
        for (size_t i = 0; i < t->links.n_links; i++)
                bpf_link__destroy(t->links.links[i]);
        free(t->links.multi_fds);
        free(t->links.links);
        links_reset(t);
}

void probes_links_to_work(struct target *t, struct detach_work *w)
{
        assert(t);
        assert(w);
        target_pins_remove(t);
        if (t->links.n_inherited > 0) {
                /* the earlier daemon's links among its own (their pins went at the adoption) */
                int *all = realloc(t->links.multi_fds,
                                   (t->links.n_multi_fds + t->links.n_inherited) * sizeof(*all));

                if (all) {
                        memcpy(all + t->links.n_multi_fds, t->links.inherited_fds,
                               t->links.n_inherited * sizeof(*all));
                        t->links.multi_fds = all;
                        t->links.n_multi_fds += t->links.n_inherited;
                } else {
                        for (size_t i = 0; i < t->links.n_inherited; i++)
                                close(t->links.inherited_fds[i]);       /* out of memory: here */
                }
                free(t->links.inherited_fds);
        }
        w->links = t->links.links;
        w->n_links = t->links.n_links;
        w->multi_fds = t->links.multi_fds;
        w->n_multi_fds = t->links.n_multi_fds;
        links_reset(t);
}

int probes_sweep_work(const struct target *t, struct detach_work *w)
{
        assert(t);
        assert(w);
        w->sweeps = calloc(MAX(t->n_objects, (size_t)1), sizeof(*w->sweeps));
        if (!w->sweeps)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_objects; i++) {
                const struct target_object *o = &t->objects[i];
                struct sweep_object *s = &w->sweeps[w->n_sweeps];

                if (o->fd < 0 || o->n_offsets == 0)
                        continue;
                s->offsets = malloc(o->n_offsets * sizeof(*s->offsets));
                s->fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 3);
                if (!s->offsets || s->fd < 0) {
                        free(s->offsets);
                        if (s->fd >= 0)
                                close(s->fd);
                        return -ENOMEM;         /* the caller frees what is in w */
                }
                memcpy(s->offsets, o->offsets, o->n_offsets * sizeof(*s->offsets));
                s->n_offsets = o->n_offsets;
                w->n_sweeps++;
        }
        return 0;
}
