/* SPDX-License-Identifier: GPL-2.0-only */
/* What survives a restart: the BPF maps and the targets' probe links pinned (bpf/pins,
 * targets/target-pins), the targets listed in the state file (manager-state); at start, the
 * targets an earlier daemon left recording taken back, those that exited meanwhile reaped. */
#include <assert.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bpf-loader.h"
#include "detacher.h"
#include "kernel-target.h"
#include "log.h"
#include "manager.h"
#include "pins.h"
#include "slot-set.h"
#include "snapshot-file.h"
#include "snapshot.h"
#include "state-file.h"
#include "target-pins.h"
#include "target.h"
#include "util.h"

int manager_adopt_pins_open(struct manager *m, const struct bpf_sizes *sizes)
{
        _cleanup_free_ char *links = NULL;
        int r;

        assert(m);
        /* systemd makes it (StateDirectory=); elsewhere, the first start does */
        if (mkdir(m->config.state_directory, 0700) < 0 && errno != EEXIST)
                log_warning_errno(errno, "Cannot create %s, ignoring: a restart will not adopt the targets "
                                  "traced: %m", m->config.state_directory);
        r = pins_open(m->config.bpf_pin_directory, pins_layout(sizes), &m->pins, &m->pins_found);
        if (r < 0) {
                /* tracing goes on; only a restart would lose it */
                log_warning_errno(r, "Cannot use %s for the pinned BPF maps and links (bpf_pin_directory: %s), "
                                  "ignoring: a restart will lose the targets and what they recorded: %m",
                                  m->config.bpf_pin_directory,
                                  r == -EBUSY ? "another memleakd uses it" : "on bpffs?");
                return 0;
        }
        if (m->pins_found == PINS_FOUND_CHANGED)
                log_notice("BPF layout changed: starting clean (the maps and links pinned in %s were made "
                           "by another memleakd, or with other map sizes, and are removed)",
                           m->config.bpf_pin_directory);
        if (asprintf(&links, "%s/%s", m->config.bpf_pin_directory, PINS_LINKS_SUBDIR) < 0)
                return log_error_errno(ENOMEM, "Out of memory");
        m->links_pin_dir = TAKE_PTR(links);
        m->env.links_pin_dir = m->links_pin_dir;
        m->env.pin_gen = now_realtime_usec() ^ ((uint64_t)getpid() << 44);
        return 0;
}

void manager_adopt_layout_changed(struct manager *m)
{
        int r;

        assert(m);
        log_notice("BPF layout changed: starting clean (the pinned maps in %s do not fit this BPF object)",
                   m->config.bpf_pin_directory);
        r = pins_clear(m->pins);
        if (r < 0)
                log_warning_errno(r, "Cannot remove the pins in %s: %m", m->config.bpf_pin_directory);
        m->pins_found = PINS_FOUND_CHANGED;
}

int manager_adopt_loaded(struct manager *m)
{
        int r;

        assert(m);
        if (!m->pins)
                return 0;
        r = pins_write_layout(m->pins);
        if (r < 0)
                return log_error_errno(r, "Cannot record the BPF layout in %s: %m", m->config.bpf_pin_directory);
        return 0;
}

/* Set aside a state file that cannot be used, for whoever wants to look at it. */
static void set_aside(struct manager *m)
{
        _cleanup_free_ char *from = NULL, *to = NULL;

        if (asprintf(&from, "%s/%s", m->config.state_directory, STATE_FILE_NAME) < 0 ||
            asprintf(&to, "%s/%s.corrupt", m->config.state_directory, STATE_FILE_NAME) < 0)
                return (void)log_error_errno(ENOMEM, "Out of memory");
        if (rename(from, to) < 0)
                log_warning_errno(errno, "Cannot rename %s to %s: %m", from, to);
        else
                log_warning("Set aside as %s", to);
}

/* The state file's targets, or none (-ENOENT, corrupt: set aside, another layout). */
static int read_state(struct manager *m, struct state_file *ret)
{
        _cleanup_free_ char *text = NULL, *error = NULL;
        size_t n;
        int r;

        r = state_file_read(m->config.state_directory, STATE_FILE_NAME, STATE_FILE_MAX_BYTES, &text, &n);
        if (r == -ENOENT)
                return r;
        if (r < 0) {
                log_warning_errno(r, "Cannot read %s/%s, adopting no target: %m", m->config.state_directory,
                                  STATE_FILE_NAME);
                if (r == -EFBIG || r == -EBADFD)
                        set_aside(m);
                return r;
        }
        r = state_file_decode(text, n, ret, &error);
        if (r == -EBADMSG) {
                log_warning("The state file %s/%s is corrupt (%s), adopting none of its targets: their probes "
                            "are removed and their blocks forgotten", m->config.state_directory, STATE_FILE_NAME,
                            error ?: "?");
                set_aside(m);
                return r;
        }
        if (r < 0)
                return log_error_errno(ENOMEM, "Out of memory");
        if (ret->layout != m->pins->layout) {
                log_notice("The state file %s/%s was written with another BPF layout: adopting none of its targets",
                           m->config.state_directory, STATE_FILE_NAME);
                state_file_done(ret);
                return -ESTALE;
        }
        return 0;
}

/* t's snapshot ring as the earlier daemon left it, its history continued; a file that cannot be
 * read is set aside (the history starts again). */
static void load_ring(struct manager *m, struct target *t)
{
        _cleanup_free_ char *name = NULL, *data = NULL, *from = NULL, *to = NULL;
        size_t n;
        int r;

        r = manager_state_ring_name(t->pid, t->proc_start_time, &name);
        if (r >= 0)
                r = state_file_read(m->config.state_directory, name, STATE_FILE_RING_MAX_BYTES, &data, &n);
        if (r == -ENOENT)
                return;
        if (r >= 0)
                r = snapshot_file_decode(data, n, t->ring);
        if (r >= 0)
                return;
        log_warning_errno(r, "Cannot take back the snapshot ring of pid %d from %s/%s, set aside: its history "
                          "starts again: %m", (int)t->pid, m->config.state_directory, name ?: "?");
        if (name && asprintf(&from, "%s/%s", m->config.state_directory, name) >= 0 &&
            asprintf(&to, "%s.corrupt", from) >= 0)
                (void)rename(from, to);
}

/* An adopted target t (its settings set) among the manager's, recording, its ring read back. */
static void take_back(struct manager *m, struct target *t)
{
        int r = manager_add_target(m, t);

        if (r < 0) {
                log_warning_errno(r, "Cannot adopt pid %d (%s): %m", (int)t->pid, t->comm);
                (void)target_stop(&m->env, t, false);
                target_free(t);
                m->adopt_failed++;
                return;
        }
        (void)manager_target_phase(t, TARGET_PHASE_RECORDING);
        load_ring(m, t);
        m->adopted++;
        if (t->kernel)
                log_info("Adopted the kernel target: traced since before this start, its %zu pinned links kept, "
                         "slot %" PRIu32, t->links.n_multi_fds, t->slot.slot);
        else
                log_info("Adopted pid %d (%s): traced since before this start, slot %" PRIu32 ", its %zu pinned "
                         "links recording it until this memleakd's own probes (placed: %zu links) have its "
                         "unwind tables", (int)t->pid, t->comm, t->slot.slot, t->links.n_inherited,
                         t->links.n_multi_fds + t->links.n_links);
}

void manager_adopt_take_over(struct manager *m, struct target *t)
{
        int r;

        assert(m);
        assert(t);
        if (!target_inherits_probes(t))
                return;
        r = target_take_over(&m->env, t);
        if (r > 0)
                log_info("Pid %d (%s) is recorded by this memleakd's probes from now on, the earlier one's "
                         "removed: the libraries it loads from here on are walked too", (int)t->pid, t->comm);
        else if (r < 0)
                log_warning_errno(r, "Cannot move pid %d (%s) to this memleakd's probes, ignoring: the earlier "
                                  "one's record it still, and stop its walks at a library it loads from here on "
                                  "(no_table): %m", (int)t->pid, t->comm);
}

/* The kernel target: its pins do not outlive a boot, nor does it exit. */
static void adopt_kernel(struct manager *m, const struct state_target *st)
{
        _cleanup_free_ char *error = NULL;
        struct target_adoption a = { .slot = st->slot, .attached_usec = st->attached_usec };
        struct target *t;
        int r;

        memcpy(a.counters_base, st->counters_base, sizeof(a.counters_base));
        r = kernel_target_adopt(&m->env, st->ring_depth, &a, &t, &error);
        if (r < 0) {
                log_warning_errno(r, "Cannot adopt the kernel target, its probes removed and its blocks forgotten: %s",
                                  error ?: strerror(-r));
                m->adopt_failed++;
                return;
        }
        t->asked_by_user = st->asked_by_user;
        t->asker_uid = (uid_t)st->asker_uid;
        t->asker_gid = (gid_t)st->asker_gid;
        take_back(m, t);
}

static void adopt_one(struct manager *m, const struct state_target *st)
{
        _cleanup_free_ char *error = NULL;
        struct target_adoption a = { .slot = st->slot, .attached_usec = st->attached_usec };
        struct target_attach_params p = {
                .pid = st->pid, .objs = st->objs, .n_objs = st->n_objs, .ring_depth = st->ring_depth,
                .track_mmap = st->track_mmap, .unwind = st->unwind, .adopt = &a,
        };
        struct target *t;
        uint64_t now;
        int r;

        if (st->kernel) {
                adopt_kernel(m, st);
                return;
        }
        r = manager_state_start_time(st->pid, &now);
        if (r < 0 || now != st->start_time) {
                log_info("pid %d exited while memleakd was down%s: reaped (its probes removed, its blocks "
                         "forgotten)", (int)st->pid, r >= 0 ? " (its pid is another process's now)" : "");
                m->adopt_reaped++;
                return;
        }
        memcpy(a.counters_base, st->counters_base, sizeof(a.counters_base));
        r = target_attach(&m->env, &p, &t, &error);
        if (r < 0) {
                log_warning_errno(r, "Cannot adopt pid %d, its probes removed and its blocks forgotten: %s",
                                  (int)st->pid, error ?: strerror(-r));
                m->adopt_failed++;
                return;
        }
        t->proc_start_time = st->start_time;
        t->follow_forks = st->follow_forks;
        t->asked_by_user = st->asked_by_user;
        t->asker_uid = (uid_t)st->asker_uid;
        t->asker_gid = (gid_t)st->asker_gid;
        t->objects_named = st->n_objs > 0;
        t->parent_pid = st->forked_from;
        t->parent_link = (struct target_parent_link) { st->parent_pid, st->parent_start_time };
        take_back(m, t);
}

/* What BPF still has of processes no target is: each slot's entry emptied, each pid's entries,
 * stacks and mappings purged (in the background), the targets hash left with ours only. */
static void forget_others(struct manager *m)
{
        int slots_fd = bpf_loader_target_slots_fd(m->env.skel), targets_fd = bpf_loader_targets_fd(m->env.skel);
        __u32 key, next, *prev = NULL;

        for (uint32_t s = 0; s < m->config.max_targets; s++) {
                struct target_slot e = {};
                struct detach_work w = { .purge = true };

                if (slot_set_is_taken(&m->target_slots, s) || bpf_map_lookup_elem(slots_fd, &s, &e) < 0 || e.tgid == 0)
                        continue;
                (void)bpf_map_update_elem(slots_fd, &s, &(struct target_slot) {}, BPF_ANY);
                w.pid = (pid_t)e.tgid;
                if (!manager_find_target(m, w.pid))
                        (void)detacher_submit(m->env.detacher, &w);
        }
        while (bpf_map_get_next_key(targets_fd, prev, &next) >= 0) {
                key = next;
                prev = &key;
                if (!manager_find_target(m, (pid_t)key)) {
                        struct detach_work w = { .pid = (pid_t)key, .purge = true };

                        (void)bpf_map_delete_elem(targets_fd, &key);
                        (void)detacher_submit(m->env.detacher, &w);
                        prev = NULL;    /* deleted: start over */
                }
        }
}

int manager_adopt(struct manager *m)
{
        _cleanup_(state_file_done) struct state_file s = {};
        _cleanup_free_ struct target **exited = NULL;
        size_t n_exited;
        int r;

        assert(m);
        if (!m->pins)
                return 0;
        /* first: they exited before the targets adopted now were attached (a pid reused) */
        n_exited = manager_exited_load(m, &exited);
        for (size_t i = 0; i < n_exited; i++)
                manager_add_exited_target(m, exited[i]);
        r = m->pins_found == PINS_FOUND_SAME ? read_state(m, &s) : -ENOENT;
        if (r >= 0)
                for (size_t i = 0; i < s.n_targets; i++)
                        adopt_one(m, &s.targets[i]);
        if (m->pins_found == PINS_FOUND_SAME)
                forget_others(m);
        /* those whose tables are in already (else: once they are, manager_unwind_tables_loaded()) */
        for (size_t i = 0; i < m->n_targets; i++)
                manager_adopt_take_over(m, m->targets[i]);
        /* the links no target took back (its process gone, or not listed), and the old exec watch
         * (ours is pinned by now if a target was adopted) */
        r = target_pins_sweep(m->links_pin_dir, m->env.pin_gen);
        if (r > 0)
                log_info("Removed %d pinned links no target took back (their processes exited or were not listed)", r);
        manager_link_followed(m);
        if (m->pins_found == PINS_FOUND_SAME && (m->adopted || m->adopt_reaped || m->adopt_failed))
                log_info("Adopted %u targets of the earlier memleakd; %u reaped (exited meanwhile), %u failed",
                         m->adopted, m->adopt_reaped, m->adopt_failed);
        manager_state_save(m);
        return 0;
}

void manager_adopt_done(struct manager *m)
{
        assert(m);
        m->pins = pins_free(m->pins);
        free(m->links_pin_dir);
        m->links_pin_dir = NULL;
        free(m->state_written);
        m->state_written = NULL;
}

int manager_adopt_forget(const struct memleakd_config *c)
{
        _cleanup_free_ char *path = NULL;
        int r;

        assert(c);
        r = pins_forget(c->bpf_pin_directory);
        if (r < 0)
                return log_error_errno(r, "Cannot remove the pins in %s: %m", c->bpf_pin_directory);
        if (asprintf(&path, "%s/%s", c->state_directory, STATE_FILE_NAME) < 0)
                return log_error_errno(ENOMEM, "Out of memory");
        if (unlink(path) < 0 && errno != ENOENT)
                return log_error_errno(errno, "Cannot remove %s: %m", path);
        free(path);
        if (asprintf(&path, "%s/%s", c->state_directory, STATE_FILE_WATCHES_NAME) < 0)
                return log_error_errno(ENOMEM, "Out of memory");
        if (unlink(path) < 0 && errno != ENOENT)
                return log_error_errno(errno, "Cannot remove %s: %m", path);
        manager_exited_forget_all(c->state_directory);
        log_info("Removed the pinned BPF maps and links in %s and the state in %s: the next start is clean",
                 c->bpf_pin_directory, c->state_directory);
        return 0;
}
