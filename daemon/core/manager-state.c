/* SPDX-License-Identifier: GPL-2.0-only */
/* The state a restart adopts, kept up to date: which targets are left recording when the daemon
 * goes (listed in the state file, written when that list changes), and the pin of the exec
 * tracepoint's link. Reads the targets' list only; the adoption at start is manager-adopt.c. */
#include <assert.h>
#include <dirent.h>
#include <inttypes.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "log.h"
#include "manager.h"
#include "snapshot-file.h"
#include "snapshot.h"
#include "state-file.h"
#include "target-pins.h"
#include "target.h"

#define EXEC_FORGET_PIN "x"

/* The process's start time, or -errno (-ESRCH: no such process). */
int manager_state_start_time(pid_t pid, uint64_t *ret)
{
        _cleanup_fclose_ FILE *f = NULL;
        char path[64], line[4096];

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? -ESRCH : -errno;
        if (!fgets(line, sizeof(line), f))
                return -ESRCH;  /* gone as it was read */
        return state_file_parse_start_time(line, ret);
}

bool manager_state_keeps(const struct manager *m, const struct target *t)
{
        assert(m);
        assert(t);
        return m->pins && t->phase == TARGET_PHASE_RECORDING && t->links.n_pinned > 0 &&
               (t->kernel || (t->pidfd >= 0 && !(t->exec && !t->exec->seen)));
}

/* t as the state file says it; ret->objs (the objects --obj named) allocated, their paths t's. */
static int state_target_of(struct target *t, struct state_target *ret)
{
        char **objs = NULL;
        size_t n = 0;
        int r;

        if (!t->kernel && t->proc_start_time == 0) {
                r = manager_state_start_time(t->pid, &t->proc_start_time);
                if (r < 0)
                        return r;
        }
        if (t->objects_named) {
                objs = calloc(MAX(t->n_objects, (size_t)1), sizeof(*objs));
                if (!objs)
                        return -ENOMEM;
                for (size_t i = 0; i < t->n_objects; i++)
                        if (t->objects[i].role == OBJECT_ROLE_NAMED)
                                objs[n++] = t->objects[i].path;
        }
        *ret = (struct state_target) {
                .kernel = t->kernel != NULL, .pid = t->pid, .start_time = t->proc_start_time, .slot = t->slot.slot,
                .ring_depth = snapshot_ring_depth(t->ring), .unwind = t->unwind.mode, .track_mmap = t->track_mmap,
                .follow_forks = t->follow_forks, .asked_by_user = t->asked_by_user,
                .asker_uid = (uint32_t)t->asker_uid, .asker_gid = (uint32_t)t->asker_gid,
                .attached_usec = t->attached_usec,
                .objs = objs, .n_objs = n,
        };
        ret->forked_from = t->parent_pid;
        ret->parent_pid = t->parent_link.pid;
        ret->parent_start_time = t->parent_link.start_time;
        memcpy(ret->counters_base, t->counters.base, sizeof(ret->counters_base));
        return 0;
}

void manager_state_save(struct manager *m)
{
        _cleanup_free_ struct state_target *targets = NULL;
        _cleanup_free_ char *text = NULL;
        struct state_file s = {};
        int r;

        assert(m);
        if (!m->pins)
                return;
        targets = calloc(MAX(m->n_targets, (size_t)1), sizeof(*targets));
        if (!targets)
                return (void)log_error_errno(ENOMEM, "Out of memory");
        for (size_t i = 0; i < m->n_targets; i++)
                if (manager_state_keeps(m, m->targets[i]) && state_target_of(m->targets[i], &targets[s.n_targets]) >= 0)
                        s.n_targets++;
        s.targets = targets;
        s.layout = m->pins->layout;
        text = state_file_encode(&s);
        for (size_t i = 0; i < s.n_targets; i++)
                free(targets[i].objs);  /* the array: its paths are the targets' */
        if (!text)
                return (void)log_error_errno(ENOMEM, "Out of memory");
        if (m->state_written && strcmp(m->state_written, text) == 0)
                return;
        r = state_file_write(m->config.state_directory, STATE_FILE_NAME, text);
        if (r < 0) {
                m->state_write_failures++;
                log_warning_errno(r, "Cannot write %s/%s, ignoring: a restart would not adopt the targets "
                                  "traced now: %m", m->config.state_directory, STATE_FILE_NAME);
                return;
        }
        free(m->state_written);
        m->state_written = TAKE_PTR(text);
}

void manager_state_exec_forget(struct manager *m, bool attached)
{
        int r;

        assert(m);
        if (!m->pins)
                return;
        if (!attached) {
                target_pins_unpin_named(m->links_pin_dir, m->env.pin_gen, EXEC_FORGET_PIN);
                return;
        }
        r = target_pins_pin_named(m->links_pin_dir, m->env.pin_gen, EXEC_FORGET_PIN, bpf_link__fd(m->exec_forget));
        if (r < 0 && r != -EEXIST)
                log_warning_errno(r, "Cannot pin the exec tracepoint's link, ignoring: while memleakd is down, a "
                                  "traced process that execs keeps its old image's blocks: %m");
}


int manager_state_ring_name(pid_t pid, uint64_t start_time, char **ret)
{
        return asprintf(ret, STATE_FILE_RING_PREFIX "%d-%" PRIu64 STATE_FILE_RING_SUFFIX, (int)pid, start_time) < 0
                       ? -ENOMEM : 0;
}

/* Whether name is the ring file of a target kept now. */
static bool ring_kept(struct manager *m, const char *name)
{
        for (size_t i = 0; i < m->n_targets; i++) {
                _cleanup_free_ char *mine = NULL;
                struct target *t = m->targets[i];

                if (manager_state_keeps(m, t) && (t->proc_start_time || t->kernel) &&
                    manager_state_ring_name(t->pid, t->proc_start_time, &mine) >= 0 && strcmp(mine, name) == 0)
                        return true;
        }
        return false;
}

/* The ring files of targets no longer kept (detached, exited) removed. */
static void remove_stale_rings(struct manager *m)
{
        size_t pl = strlen(STATE_FILE_RING_PREFIX), sl = strlen(STATE_FILE_RING_SUFFIX);
        struct dirent *de;
        DIR *d = opendir(m->config.state_directory);

        if (!d)
                return;
        while ((de = readdir(d))) {
                size_t n = strlen(de->d_name);

                if (n > pl + sl && strncmp(de->d_name, STATE_FILE_RING_PREFIX, pl) == 0 &&
                    strcmp(de->d_name + n - sl, STATE_FILE_RING_SUFFIX) == 0 && !ring_kept(m, de->d_name))
                        (void)unlinkat(dirfd(d), de->d_name, 0);
        }
        closedir(d);
}

void manager_state_save_rings(struct manager *m)
{
        assert(m);
        if (!m->pins)
                return;
        for (size_t i = 0; i < m->n_targets; i++) {
                _cleanup_free_ char *name = NULL;
                _cleanup_free_ void *data = NULL;
                struct target *t = m->targets[i];
                size_t n;
                int r;

                if (!manager_state_keeps(m, t) || !(t->proc_start_time || t->kernel))
                        continue;
                r = manager_state_ring_name(t->pid, t->proc_start_time, &name);
                if (r >= 0)
                        r = snapshot_file_encode(t->ring, &data, &n);
                /* not fsync'd: rewritten at every tick, it must outlive a daemon, not a machine */
                if (r >= 0)
                        r = state_file_write_bytes(m->config.state_directory, name, data, n, false);
                if (r < 0) {
                        m->state_write_failures++;
                        if (!m->ring_write_warned)
                                log_warning_errno(r, "Cannot write the snapshot ring of pid %d under %s, ignoring "
                                                  "(said once): a restart would start its history again: %m",
                                                  (int)t->pid, m->config.state_directory);
                        m->ring_write_warned = true;
                }
        }
        remove_stale_rings(m);
}
