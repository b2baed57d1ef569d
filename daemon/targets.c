/* SPDX-License-Identifier: GPL-2.0-only */
/* A traced process: its probes, its pidfd, its module map, its snapshot history. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include "alloc-symbols.h"
#include "bpf-loader.h"
#include "kernel-target.h"
#include "log.h"
#include "macro.h"
#include "util.h"
#include "snapshot.h"
#include "symbolize.h"
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

static int add_links(struct target *t, struct bpf_link *links[2], int n)
{
        struct bpf_link **nl = realloc(t->links, (t->n_links + n) * sizeof(*nl));

        if (!nl)
                return -ENOMEM;
        t->links = nl;
        for (int i = 0; i < n; i++)
                t->links[t->n_links++] = links[i];
        return 0;
}

/* Keep only the C++ operators: what discovery takes from objects other than the libc. */
static void keep_cxx_sites(struct alloc_sites *s)
{
        size_t out = 0;

        for (size_t i = 0; i < s->n; i++)
                if (alloc_kind_is_cxx(s->sites[i].kind))
                        s->sites[out++] = s->sites[i];
        s->n = out;
}

/* Probe every allocator entry point that object fd defines (only the C++ operators with
 * cxx_only), for t->pid only. */
static int probe_object(const struct target_env *env, struct target *t, int fd, const char *path,
                        bool cxx_only, char **error)
{
        _cleanup_(alloc_sites_done) struct alloc_sites sites = {};
        struct target_object *no;
        char fd_path[64];
        int r;

        r = alloc_sites_find(fd, &sites);
        if (r == -ENOEXEC)
                return error_set(error, -EINVAL, "%s is not an ELF object", path);
        if (r < 0)
                return error_set(error, r, "Cannot read the symbols of %s: %s", path, strerror(-r));
        if (cxx_only)
                keep_cxx_sites(&sites);
        if (sites.n == 0)
                return error_set(error, -EINVAL, "%s defines none of the allocator functions "
                                 "(malloc, free, ...)", path);

        /* The kernel resolves this to the very file we opened, whatever namespace it lives in. */
        snprintf(fd_path, sizeof(fd_path), "/proc/self/fd/%d", fd);
        for (size_t i = 0; i < sites.n; i++) {
                struct bpf_link *links[2];
                int n = bpf_loader_attach_site(env->skel, sites.sites[i].kind, t->pid, fd_path,
                                               sites.sites[i].file_offset, links);

                if (n < 0)
                        return error_set(error, n, "Cannot place a uprobe on %s in %s for pid %d: %s",
                                         sites.sites[i].name, path, (int)t->pid, strerror(-n));
                r = add_links(t, links, n);
                if (r < 0) {
                        for (int j = 0; j < n; j++)
                                bpf_link__destroy(links[j]);
                        return error_set(error, r, "Out of memory");
                }
        }
        no = realloc(t->objects, (t->n_objects + 1) * sizeof(*no));
        if (!no)
                return error_set(error, -ENOMEM, "Out of memory");
        t->objects = no;
        t->objects[t->n_objects] = (struct target_object) { .path = strdup(path), .probes = sites.n };
        if (!t->objects[t->n_objects].path)
                return error_set(error, -ENOMEM, "Out of memory");
        t->n_objects++;
        return 0;
}

static bool is_libc(const char *path)
{
        const char *base = strrchr(path, '/');

        base = base ? base + 1 : path;
        return strcmp(base, "libc.so.6") == 0 ||
               (strncmp(base, "libc-", 5) == 0 && strstr(base, ".so"));
}

static const struct module_mapping *find_mapping_of(const struct module_map *mm, uint64_t dev, uint64_t ino)
{
        for (size_t i = 0; i < mm->n; i++)
                if (mm->mappings[i].dev == dev && mm->mappings[i].ino == ino)
                        return &mm->mappings[i];
        return NULL;
}

static int probe_named_objects(const struct target_env *env, struct target *t,
                               const struct target_attach_params *p, char **error)
{
        for (size_t i = 0; i < p->n_objs; i++) {
                _cleanup_close_ int fd = -1;
                struct stat st;
                int r;

                fd = module_open_in_target(t->pid, p->objs[i], 0, 0, 0, 0);
                if (fd < 0)
                        return error_set(error, fd == -ENOENT ? -ENOENT : -EINVAL,
                                         "Cannot open %s as pid %d sees it: %s",
                                         p->objs[i], (int)t->pid, strerror(-fd));
                if (fstat(fd, &st) < 0)
                        return error_set(error, -errno, "Cannot stat %s: %m", p->objs[i]);
                if (!find_mapping_of(&t->modules, st.st_dev, st.st_ino))
                        return error_set(error, -EINVAL, "%s is not mapped by pid %d (%s)",
                                         p->objs[i], (int)t->pid, t->comm);
                r = probe_object(env, t, fd, p->objs[i], false, error);
                if (r < 0)
                        return r;
        }
        t->allocator = "objects";
        return asprintf(&t->allocator_reason, "named with --obj") < 0 ? -ENOMEM : 0;
}

static int probe_libc(const struct target_env *env, struct target *t, char **error)
{
        for (size_t i = 0; i < t->modules.n; i++) {
                const struct module_mapping *m = &t->modules.mappings[i];
                _cleanup_close_ int fd = -1;
                int r;

                if (!is_libc(m->path))
                        continue;
                fd = module_open_in_target(t->pid, m->path, m->dev, m->ino, m->start, m->end);
                if (fd < 0)
                        return error_set(error, fd, "Cannot open %s mapped by pid %d: %s",
                                         m->path, (int)t->pid, strerror(-fd));
                r = probe_object(env, t, fd, m->path, false, error);
                if (r < 0)
                        return r;
                t->allocator = "glibc";
                return asprintf(&t->allocator_reason, "%s is mapped by the process", m->path) < 0 ? -ENOMEM : 0;
        }
        return error_set(error, -ENOENT, "pid %d (%s) maps no libc; name the object that holds its "
                         "allocator with --obj", (int)t->pid, t->comm);
}

static bool object_probed(const struct target *t, uint64_t dev, uint64_t ino, size_t before)
{
        for (size_t i = 0; i < before; i++)
                if (t->modules.mappings[i].dev == dev && t->modules.mappings[i].ino == ino)
                        return true;
        return false;
}

/* C++ operator new/delete wherever they are defined: libstdc++, a program linking it statically
 * or defining its own. They are probed as outer calls, so `new` counts once (not again in the
 * malloc it calls) and its stack is taken where the caller's own frame is intact. */
static int probe_cxx_operators(const struct target_env *env, struct target *t, char **error)
{
        for (size_t i = 0; i < t->modules.n; i++) {
                const struct module_mapping *m = &t->modules.mappings[i];
                _cleanup_(alloc_sites_done) struct alloc_sites sites = {};
                _cleanup_close_ int fd = -1;
                bool has_cxx = false;
                int r;

                if (is_libc(m->path) || object_probed(t, m->dev, m->ino, i))
                        continue;       /* the libc has none; one look per file */
                fd = module_open_in_target(t->pid, m->path, m->dev, m->ino, m->start, m->end);
                if (fd < 0 || alloc_sites_find(fd, &sites) < 0)
                        continue;       /* not ELF, or gone: nothing to probe there */
                for (size_t j = 0; j < sites.n; j++)
                        has_cxx = has_cxx || alloc_kind_is_cxx(sites.sites[j].kind);
                if (!has_cxx)
                        continue;
                r = probe_object(env, t, fd, m->path, true, error);
                if (r < 0)
                        return r;
        }
        return 0;
}

static void destroy_links(struct target *t)
{
        for (size_t i = 0; i < t->n_links; i++)
                bpf_link__destroy(t->links[i]);
        free(t->links);
        t->links = NULL;
        t->n_links = 0;
}

struct link_batch {
        pid_t pid;
        struct bpf_link **links;
        size_t n;
};

/* Pids whose links are still being destroyed in the background. */
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pending_done = PTHREAD_COND_INITIALIZER;
static unsigned pending_count[1024];    /* by pid % 1024: a collision only waits a little longer */

static void *destroy_link_batch(void *userdata)
{
        struct link_batch *b = userdata;

        for (size_t i = 0; i < b->n; i++)
                bpf_link__destroy(b->links[i]);
        pthread_mutex_lock(&pending_lock);
        pending_count[b->pid % ELEMENTSOF(pending_count)]--;
        pthread_cond_broadcast(&pending_done);
        pthread_mutex_unlock(&pending_lock);
        free(b->links);
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

/* Unregistering a uprobe waits for an RCU grace period (~0.1 s each): a target's twenty take
 * seconds, which the event loop must not spend. BPF already ignores the target (its entry in the
 * targets map is gone), so the links can go in the background. */
static void destroy_links_in_background(struct target *t)
{
        struct link_batch *b;
        pthread_attr_t attr;
        pthread_t thread;
        int r;

        if (t->n_links == 0)
                return;
        b = malloc(sizeof(*b));
        if (!b) {
                destroy_links(t);
                return;
        }
        *b = (struct link_batch) { .pid = t->pid, .links = t->links, .n = t->n_links };
        pthread_mutex_lock(&pending_lock);
        pending_count[t->pid % ELEMENTSOF(pending_count)]++;
        pthread_mutex_unlock(&pending_lock);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = pthread_create(&thread, &attr, destroy_link_batch, b);
        pthread_attr_destroy(&attr);
        if (r != 0) {
                pthread_mutex_lock(&pending_lock);
                pending_count[t->pid % ELEMENTSOF(pending_count)]--;
                pthread_mutex_unlock(&pending_lock);
                free(b);
                destroy_links(t);       /* the slow way, but done */
                return;
        }
        t->links = NULL;
        t->n_links = 0;
}

int target_attach(const struct target_env *env, const struct target_attach_params *p,
                  struct target **ret, char **error)
{
        struct target *t;
        int r;

        *error = NULL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return error_set(error, -ENOMEM, "Out of memory");
        t->pid = p->pid;
        t->filter = p->filter;
        wait_for_pending_detach(p->pid);
        t->pidfd = syscall(SYS_pidfd_open, p->pid, 0);
        if (t->pidfd < 0) {
                r = errno == ESRCH ? error_set(error, -ESRCH, "No process with pid %d", (int)p->pid)
                                   : error_set(error, -errno, "Cannot open pid %d: %m", (int)p->pid);
                goto fail;
        }
        read_comm(p->pid, t->comm);
        r = module_map_refresh(&t->modules, p->pid, env->syms);
        if (r < 0) {
                r = error_set(error, r == -ENOENT ? -ESRCH : r, "Cannot read the mappings of pid %d: %s",
                              (int)p->pid, strerror(-r));
                goto fail;
        }
        r = snapshot_ring_new(p->ring_depth, &t->ring);
        if (r < 0) {
                r = error_set(error, r, "Out of memory");
                goto fail;
        }
        if (p->n_objs > 0)
                r = probe_named_objects(env, t, p, error);
        else {
                r = probe_libc(env, t, error);
                if (r >= 0)
                        r = probe_cxx_operators(env, t, error);
        }
        if (r < 0)
                goto fail;
        /* From here on BPF records this process. */
        if (bpf_map_update_elem(bpf_loader_targets_fd(env->skel), &(__u32){ p->pid }, &t->filter, BPF_NOEXIST) < 0) {
                r = errno == E2BIG ? error_set(error, -ENOSPC, "Too many targets") :
                                     error_set(error, -errno, "Cannot register pid %d: %m", (int)p->pid);
                goto fail;
        }
        t->attached_usec = now_realtime_usec();
        *ret = t;
        return 0;
fail:
        if (!*error)
                error_set(error, r, "%s", strerror(-r));
        target_free(t);
        return r;
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
                r = stack_collect_freeze(env->skel, &env->limits, t->pid, &t->frozen);
                if (r < 0)
                        log_warning_errno(r, "Cannot keep the last report of pid %d: %m", (int)t->pid);
        }
        stack_collect_purge(env->skel, &env->limits, t->pid);
        t->exit_source = sd_event_source_disable_unref(t->exit_source);
        closep(&t->pidfd);
        t->pidfd = -1;
}

struct target *target_free(struct target *t)
{
        if (!t)
                return NULL;
        destroy_links(t);
        sd_event_source_disable_unref(t->exit_source);
        closep(&t->pidfd);
        for (size_t i = 0; i < t->n_objects; i++)
                free(t->objects[i].path);
        free(t->objects);
        free(t->allocator_reason);
        module_map_done(&t->modules);
        snapshot_ring_free(t->ring);
        frozen_target_free(t->frozen);
        kernel_symbols_free(t->kernel);
        free(t);
        return NULL;
}
