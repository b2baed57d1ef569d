/* SPDX-License-Identifier: GPL-2.0-only */
/* A traced process, or the kernel: made, attached, registered, stopped and freed here. */
#include <assert.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "bpf-loader.h"
#include "counters.h"
#include "detacher.h"
#include "discovery.h"
#include "exit-verdicts.h"
#include "kernel-symbols.h"
#include "macro.h"
#include "mapping-log.h"
#include "probes.h"
#include "proc-exe.h"
#include "proc-status.h"
#include "slot-set.h"
#include "target-blocks.h"
#include "snapshot.h"
#include "target-unwind.h"
#include "string-table.h"
#include "target-files.h"
#include "target-pins.h"
#include "perf-map.h"
#include "target.h"
#include "util.h"

/* The kernel target's pid in the maps (kernel-target.h names it for the rest). */
#define KERNEL_PID ((pid_t)MEMLEAK_KERNEL_TGID)

static const char *const target_object_role_table[_OBJECT_ROLE_MAX] = {
        [OBJECT_ROLE_ALLOCATOR] = "allocator",
        [OBJECT_ROLE_NAMED] = "named",
        [OBJECT_ROLE_OTHER_ALLOCATOR] = "other allocator",
        [OBJECT_ROLE_CXX] = "c++ operators",
        [OBJECT_ROLE_LOADED_LATER] = "loaded after attach",
        [OBJECT_ROLE_TRACEPOINT] = "tracepoint",
};

DEFINE_STRING_TABLE_LOOKUP_TO_STRING(target_object_role, enum object_role);

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

/* Whether pidfd's process has not exited: signal 0 is refused (EPERM) to one of another user
 * without CAP_KILL, which memleakd does not keep, but only to a process that is there. */
static bool process_alive(int pidfd)
{
        return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

void target_refresh_comm(struct target *t)
{
        char comm[sizeof(t->comm)];

        assert(t);
        if (target_phase_exited(t->phase) || t->kernel)
                return;
        read_comm(t->pid, comm);
        /* memleakctl run's child keeps its program's name until it execs (it, or another) */
        if (t->exec && !t->exec->seen && strcmp(comm, t->exec->held_comm) == 0)
                return;
        /* read before asking the pidfd: if the process is still there after, the name was its own,
         * not that of another process reusing its pid */
        if (comm[0] && t->pidfd >= 0 && process_alive(t->pidfd))
                memcpy(t->comm, comm, sizeof(comm));
}

void target_name_after_exec(struct target *t, const char comm[MEMLEAK_COMM_LEN])
{
        size_t n;

        assert(t);
        assert(comm);
        n = strnlen(comm, MEMLEAK_COMM_LEN);
        if (t->kernel || n == 0 || n >= sizeof(t->comm))
                return;
        memcpy(t->comm, comm, n);
        t->comm[n] = 0;
}

/* What /proc/PID/exe is while memleakctl holds pid before its exec: any other file means it exec'd. */
static void held_exe(pid_t pid, struct target_exec *e)
{
        struct stat st;

        if (proc_exe_stat(pid, &st) == 0) {
                e->held_dev = (uint64_t)st.st_dev;
                e->held_ino = (uint64_t)st.st_ino;
        }
}

static void comm_from_path(const char *path, char comm[17])
{
        const char *slash = strrchr(path, '/');

        /* what the kernel sets at exec: the file name, cut to TASK_COMM_LEN - 1 */
        snprintf(comm, 16, "%s", slash ? slash + 1 : path);
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

/* Why pid cannot be opened as a process: not one, but a thread of one (a tid from top -H or
 * /proc/PID/task), or memleakd itself, whose map reads and replies would record themselves. */
static int refuse_pid(pid_t pid, char **error)
{
        int tgid;

        if (pid == getpid())
                return error_set(error, -EINVAL, "pid %d is memleakd itself: its own allocations are not traced",
                                 (int)pid);
        /* a thread's /proc/TID is there, though no directory lists it */
        if (proc_status_int(pid, "Tgid:", &tgid) == 0 && tgid != pid)
                return error_set(error, -EINVAL, "pid %d is a thread of process %d: attach that pid (it traces "
                                 "all of its threads)", (int)pid, (int)tgid);
        return 0;
}

static int new_target(const struct target_env *env, pid_t pid, const struct target_config *filter,
                      uint32_t ring_depth, const struct target_adoption *adopt, struct target **ret, char **error)
{
        struct target *t = calloc(1, sizeof(*t));
        int r;

        assert(env);
        assert(filter);
        assert(ret);
        assert(error);
        if (!t)
                return error_set(error, -ENOMEM, "Out of memory");
        *t = (struct target) { .pid = pid, .filter = *filter, .pidfd = -1, .files.syms = env->syms,
                               .jit_source = { .root_fd = -EBADF } };
        if (pid != KERNEL_PID) {
                r = refuse_pid(pid, error);
                if (r < 0) {
                        target_free(t);
                        return r;
                }
                /* The kernel does not exit; a process's exit is noticed through its pidfd. */
                t->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
                if (t->pidfd < 0) {
                        r = errno == ESRCH ? error_set(error, -ESRCH, "No process with pid %d", (int)pid)
                                           : error_set(error, -errno, "Cannot open pid %d: %m", (int)pid);
                        target_free(t);
                        return r;
                }
        }
        r = snapshot_ring_new(ring_depth, &t->ring);
        if (r < 0) {
                target_free(t);
                return error_set(error, r, "Out of memory");
        }
        if (adopt) {
                t->slot.slot = adopt->slot;
                r = slot_set_take_at(env->target_slots, adopt->slot);
        } else
                r = slot_set_take(env->target_slots, &t->slot.slot);
        if (r < 0) {
                target_free(t);
                return adopt ? error_set(error, r, "Slot %u is not free", adopt->slot)
                             : error_set(error, -ENOSPC, "Too many targets");
        }
        t->slot.set = env->target_slots;
        t->slot.gen = t->slot.own_gen = bpf_loader_probe_gen(env->skel);
        t->links = (struct target_links) { .pin_dir = env->links_pin_dir, .pin_gen = env->pin_gen };
        t->slot.fd = bpf_loader_target_slots_fd(env->skel);
        /* its events counted in its row from its registration: what another counted there before
         * is not its own */
        t->counters.row = counters_row_of(env->skel, t->slot.slot, pid == KERNEL_PID);
        t->filter.counter_row = t->counters.row;
        if (adopt) {
                memcpy(t->counters.base, adopt->counters_base, sizeof(t->counters.base));
                *ret = t;
                return 0;
        }
        r = counters_read_row(env->skel, t->counters.row, t->counters.base);
        if (r < 0) {
                target_free(t);
                return error_set(error, r, "Cannot read the BPF counters: %s", strerror(-r));
        }
        *ret = t;
        return 0;
}

int target_new(const struct target_env *env, pid_t pid, const struct target_config *filter, uint32_t ring_depth,
               struct target **ret, char **error)
{
        return new_target(env, pid, filter, ring_depth, NULL, ret, error);
}

/* An adopted target's settings are those BPF has at its slot (its sampling, the time it was
 * registered at), which must still name its process. */
static int adopt_settings(const struct target_env *env, struct target *t, char **error)
{
        struct target_slot old;

        if (bpf_map_lookup_elem(t->slot.fd, &t->slot.slot, &old) < 0)
                return error_set(error, -errno, "Cannot read slot %u: %m", t->slot.slot);
        if (old.tgid != (__u32)t->pid || old.cfg.registered_ns == 0)   /* (an empty slot's tgid is 0) */
                return error_set(error, -ESTALE, "Slot %u names pid %u, not %d", t->slot.slot, old.tgid, (int)t->pid);
        t->filter = old.cfg;
        t->slot.gen = old.gen;  /* its earlier probes', until target_take_over() */
        (void)env;
        return 0;
}

int target_new_adopted(const struct target_env *env, pid_t pid, uint32_t ring_depth,
                       const struct target_adoption *adopt, struct target **ret, char **error)
{
        struct target *t;
        int r;

        assert(adopt);
        r = new_target(env, pid, &(struct target_config) {}, ring_depth, adopt, &t, error);
        if (r < 0)
                return r;
        t->adopted = true;
        t->attached_usec = adopt->attached_usec;
        r = adopt_settings(env, t, error);
        if (r < 0) {
                target_free(t);
                return r;
        }
        *ret = t;
        return 0;
}

int target_counters_read(const struct target_env *env, const struct target *t, uint64_t ret[_COUNTER_MAX])
{
        int r;

        assert(env);
        assert(t);
        if (t->counters.stopped) {
                memcpy(ret, t->counters.final, sizeof(t->counters.final));
                return 0;
        }
        r = counters_read_row(env->skel, t->counters.row, ret);
        if (r < 0)
                return r;
        counters_subtract(ret, t->counters.base);
        return 0;
}

/* Its slot emptied in BPF (a program still running for it, or for a target that had the slot
 * before, finds no target there) and given back. */
static void release_slot(struct target *t)
{
        struct target_slot empty = {};

        if (!t->slot.set)
                return;
        (void)bpf_map_update_elem(t->slot.fd, &t->slot.slot, &empty, BPF_ANY);
        slot_set_give_back(t->slot.set, t->slot.slot);
        t->slot.set = NULL;
}

/* Its maps read again, once it is recorded: if it exec'd since the attach read them, they are
 * another program's, which its loader may still be mapping. */
static void reread_maps(const struct target_env *env, struct target *t)
{
        struct stat st;

        (void)target_files_refresh(env, t, false);
        if (proc_exe_stat(t->pid, &st) == 0 && ((uint64_t)st.st_dev != t->exe_dev || (uint64_t)st.st_ino != t->exe_ino))
                target_follow_maps(t, TARGET_MAPS_FOLLOW_AFTER_EXEC_USEC);
}

int target_register(const struct target_env *env, struct target *t, char **error)
{
        int r;

        assert(env);
        assert(t);
        assert(error);
        if (!t->adopted)
                t->filter.registered_ns = now_monotonic_usec() * 1000;
        if (!t->kernel && !t->adopted) {
                /* its count of table blocks starts from none (an earlier target had the slot) */
                t->filter.slot = t->slot.slot;
                r = target_blocks_reset(env->skel, t->slot.slot);
                if (r < 0) {
                        r = error_set(error, r, "Cannot register pid %d: %s", (int)t->pid, strerror(-r));
                        release_slot(t);
                        return r;
                }
                /* Its mapping list with every table loaded so far, before its first allocation
                 * is walked: the list BPF has may be the one written at the attach, while its
                 * tables were all building (each file pending: a walk stops at its first frame,
                 * no_table). A failure leaves that list, whose walks say where they stopped. */
                (void)target_unwind_refresh(t);
        }
        /* its probes' programs find it at its slot; the tracepoints' by its pid */
        r = bpf_map_update_elem(t->slot.fd, &t->slot.slot,
                                &(struct target_slot) { .tgid = (__u32)t->pid, .gen = t->slot.gen, .cfg = t->filter },
                                BPF_ANY);
        if (r >= 0)
                r = bpf_map_update_elem(bpf_loader_targets_fd(env->skel), &(__u32){ t->pid }, &t->filter,
                                        t->adopted ? BPF_ANY : BPF_NOEXIST);
        if (r < 0) {
                r = errno == E2BIG ? error_set(error, -ENOSPC, "Too many targets")
                                   : error_set(error, -errno, "Cannot register %s %d: %m",
                                               t->kernel ? "the kernel target, pid" : "pid", (int)t->pid);
                release_slot(t);
                return r;
        }
        if (!t->adopted)
                t->attached_usec = now_realtime_usec();
        else
                (void)target_unwind_refresh(t);
        if (!t->kernel && !t->exec)
                reread_maps(env, t);
        return 0;
}

bool target_inherits_probes(const struct target *t)
{
        assert(t);
        return t->links.n_inherited > 0;
}

/* BPF's entry at t's slot names this daemon's probes: they record t from here on. */
static int move_to_own_probes(struct target *t)
{
        struct target_slot e;

        /* its entry as BPF has it (BPF raises a mean in place), but for the generation */
        if (bpf_map_lookup_elem(t->slot.fd, &t->slot.slot, &e) < 0)
                return -errno;
        if (e.tgid != (__u32)t->pid)
                return -ESTALE;
        e.gen = t->slot.own_gen;
        if (bpf_map_update_elem(t->slot.fd, &t->slot.slot, &e, BPF_EXIST) < 0)
                return -errno;
        t->slot.gen = e.gen;
        return 0;
}

int target_take_over(const struct target_env *env, struct target *t)
{
        struct detach_work w = { .pid = t->pid };
        int r;

        assert(env);
        assert(t);
        if (t->links.n_inherited == 0 || target_unwind_pending(t))
                return 0;
        r = move_to_own_probes(t);
        if (r < 0)
                return r;
        /* A call entered before its own probes were placed and returning now is counted
         * (inflight_stale at the thread's next call): the earlier probes record no more. */
        w.multi_fds = TAKE_PTR(t->links.inherited_fds);
        w.n_multi_fds = t->links.n_inherited;
        t->links.n_inherited = 0;
        (void)detacher_submit(env->detacher, &w);
        return 1;
}

/* t's settings cfg where its probes' programs read them (at its slot) and the tracepoints' (by
 * its pid), each a whole value written at once: a program sees the old settings or the new. */
static int write_config(const struct target_env *env, struct target *t, const struct target_config *cfg)
{
        if (bpf_map_update_elem(t->slot.fd, &t->slot.slot,
                                &(struct target_slot) { .tgid = (__u32)t->pid, .gen = t->slot.gen, .cfg = *cfg },
                                BPF_EXIST) < 0 ||
            bpf_map_update_elem(bpf_loader_targets_fd(env->skel), &(__u32){ t->pid }, cfg, BPF_EXIST) < 0)
                return -errno;
        t->filter = *cfg;
        return 0;
}

static bool settable(const struct target *t)
{
        return !t->kernel && !target_phase_exited(t->phase) && t->phase != TARGET_PHASE_AWAITING_TABLES && t->slot.set;
}

static void config_set_limit(struct target_config *cfg, const struct target_limit *l)
{
        cfg->limit_blocks = l->blocks;
        cfg->limit_sample_bytes = l->sample_bytes;
        cfg->limit_share = l->share;
}

int target_set_sample_bytes(const struct target_env *env, struct target *t, const struct auto_sample_change *c,
                            const struct target_limit *l)
{
        uint64_t before;
        struct target_config cfg;
        int r;

        assert(env);
        assert(t);
        assert(c);
        if (!settable(t))
                return -EINVAL;
        before = t->filter.sample_bytes;
        cfg = t->filter;
        cfg.sample_bytes = c->sample_bytes;
        if (l)
                config_set_limit(&cfg, l);
        r = write_config(env, t, &cfg);
        if (r < 0)
                return r;
        if (t->auto_sample.n_changes == 0)
                t->auto_sample.sample_bytes_asked = before;
        auto_sample_note(&t->auto_sample, c);
        return 0;
}

int target_set_limit(const struct target_env *env, struct target *t, const struct target_limit *l)
{
        struct target_config cfg;
        int r;

        assert(env);
        assert(t);
        assert(l);
        if (!settable(t))
                return -EINVAL;
        if (t->filter.limit_blocks == l->blocks && t->filter.limit_sample_bytes == l->sample_bytes &&
            t->filter.limit_share == l->share)
                return 0;
        cfg = t->filter;
        config_set_limit(&cfg, l);
        r = write_config(env, t, &cfg);
        return r < 0 ? r : 1;
}

bool target_note_child(struct target *t, pid_t child)
{
        assert(t);
        for (size_t i = 0; i < ELEMENTSOF(t->children_noted); i++)
                if (t->children_noted[i] == child)
                        return true;
        t->children_noted[t->children_noted_next++ % ELEMENTSOF(t->children_noted)] = child;
        return false;
}

void target_follow_maps(struct target *t, uint64_t usec)
{
        uint64_t until = now_monotonic_usec() + usec;

        assert(t);
        if (until > t->maps_followed_until_usec)
                t->maps_followed_until_usec = until;
}

/* A process attached before it execs: its module map starts empty (what the held process maps now
 * is not the program's); BPF records the mappings the program makes. */
static int attach_before_exec(const struct target_env *env, struct target *t, const struct target_attach_params *p,
                              char **error)
{
        int r;

        t->exec = calloc(1, sizeof(*t->exec));
        if (!t->exec || !(t->exec->path = strdup(p->exec)))
                return error_set(error, -ENOMEM, "Out of memory");
        comm_from_path(p->exec, t->comm);
        read_comm(t->pid, t->exec->held_comm);
        held_exe(t->pid, t->exec);
        if (p->n_objs > 0) {
                _cleanup_(discovery_done) struct discovery d = {};

                /* With --obj the program's files are still planned: to name the mappings BPF
                 * records, and to refuse a program that cannot run. */
                r = discovery_plan_exec(t->pid, t->exec->path, &d, error);
                if (r >= 0 && (r = target_files_remember_planned(env, t, &d)) < 0)
                        return error_set(error, r, "Out of memory");
                if (r >= 0)
                        r = probes_attach_named(env, t, p->objs, p->n_objs, error);
        } else
                r = probes_attach_discovered(env, t, error);
        if (r < 0)
                return r;
        mapping_log_purge(env->mappings, t->pid);
        r = mapping_log_hold(env->mappings);
        if (r < 0)
                return error_set(error, r, "Cannot record the mappings pid %d will make: %s", (int)t->pid, strerror(-r));
        t->exec->recording = env->mappings;
        target_follow_maps(t, TARGET_MAPS_FOLLOW_BEFORE_EXEC_USEC);
        /* walked by tables from its first allocation: what it maps is found by its vmas until
         * its maps are read */
        (void)target_unwind_refresh(t);
        return 0;
}

/* A process that runs already: what it maps now says what to probe. */
static int attach_running(const struct target_env *env, struct target *t, const struct target_attach_params *p,
                          char **error)
{
        const char *why;
        struct stat st;
        int r;

        read_comm(t->pid, t->comm);
        if (proc_exe_stat(t->pid, &st) == 0) {
                t->exe_dev = (uint64_t)st.st_dev;
                t->exe_ino = (uint64_t)st.st_ino;
        }
        why = untraceable_reason(t->pid);
        if (why)
                return error_set(error, -EINVAL, "pid %d (%s) %s", (int)t->pid, t->comm, why);
        why = discovery_foreign_process(t->pid);
        if (why)
                return error_set(error, -EINVAL, "pid %d (%s) runs %s: memleakd traces x86-64 programs only",
                                 (int)t->pid, t->comm, why);
        r = module_map_refresh(&t->modules, t->pid);
        if (r < 0)
                return error_set(error, r == -ENOENT ? -ESRCH : r, "Cannot read the mappings of pid %d: %s",
                                 (int)t->pid, strerror(-r));
        (void)target_files_refresh(env, t, false);      /* registers its files for symbols */
        if (p->n_objs > 0)
                return probes_attach_named(env, t, p->objs, p->n_objs, error);
        return probes_attach_discovered(env, t, error);
}

int target_attach(const struct target_env *env, const struct target_attach_params *p,
                  struct target **ret, char **error)
{
        struct target *t;
        bool deferred = false;
        int r;

        assert(env);
        assert(p);
        assert(ret);
        assert(error);
        *error = NULL;
        r = p->adopt ? target_new_adopted(env, p->pid, p->ring_depth, p->adopt, &t, error)
                     : new_target(env, p->pid, &p->filter, p->ring_depth, NULL, &t, error);
        if (r < 0)
                return r;
        /* a JIT runtime's perf map stays when it exits; its root, reached through /proc now, not */
        (void)jit_names_source_open(p->pid, &t->jit_source);
        t->track_mmap = p->track_mmap;
        target_unwind_init(env, t, p->unwind);
        r = p->exec ? attach_before_exec(env, t, p, error) : attach_running(env, t, p, error);
        if (r >= 0 && p->adopt) {
                r = target_pins_inherit(t);
                if (r == 0)
                        r = error_set(error, -ENOLINK, "No pinned link of slot %u is left", t->slot.slot);
                else if (r < 0)
                        error_set(error, r, "Cannot reopen the pinned links of slot %u: %s", t->slot.slot,
                                  strerror(-r));
                else
                        r = target_register(env, t, error);     /* recorded all along: at once */
        } else if (r >= 0 && !p->exec && (t->n_forwarders > 0 || !p->record_at_once) && target_unwind_pending(t)) {
                deferred = true;
                t->attached_usec = now_realtime_usec();
        } else if (r >= 0)
                r = target_register(env, t, error);     /* from here on BPF records this process */
        if (r < 0) {
                struct detach_work w = { .pid = t->pid };

                if (!*error)
                        error_set(error, r, "%s", strerror(-r));
                /* the probes placed before the failure: each removal waits for a grace period
                 * (tens of milliseconds, a hundred under load), not on the caller's loop */
                probes_links_to_work(t, &w);
                if (w.n_links > 0 || w.n_multi_fds > 0)
                        (void)detacher_submit(env->detacher, &w);
                target_free(t);
                return r;
        }
        *ret = t;
        return deferred;
}

/* The recording of its mappings, once its module map is final (or it never ran). */
static void release_recording(struct target *t)
{
        if (t->exec && t->exec->recording) {
                mapping_log_release(t->exec->recording);
                t->exec->recording = NULL;
        }
}

int target_stop(const struct target_env *env, struct target *t, bool freeze)
{
        struct detach_work w = { .pid = t->pid, .purge = true };
        int r = 0;

        assert(env);
        assert(t);
        /* from here on BPF records nothing more of it (its unwind entry goes below, while nothing
         * else can take the slot) */
        (void)bpf_map_delete_elem(bpf_loader_targets_fd(env->skel), &(__u32){ t->pid });
        release_slot(t);
        /* what it counted, kept: its row is the next target's of the slot */
        if (!t->counters.stopped && target_counters_read(env, t, t->counters.final) >= 0)
                t->counters.stopped = true;
        if (freeze) {
                /* Once the per-stack totals map had no room for one of its stacks, it misses
                 * stacks: sum the allocations. */
                bool overflowed = !t->counters.stopped || t->counters.final[COUNTER_LOST_COMBINED_MAP_FULL] > 0;

                r = stack_collect_freeze(env->skel, &env->limits, env->totals, t->pid, overflowed, &t->frozen);
        }
        target_unwind_done(&t->unwind, t->slot.slot);         /* its stacks are no longer walked */
        probes_links_to_work(t, &w);
        (void)detacher_submit(env->detacher, &w);
        release_recording(t);
        t->exit_source = sd_event_source_disable_unref(t->exit_source);
        closep(&t->pidfd);
        t->pidfd = -1;
        return r;
}

int target_clear_inherited_probes(const struct target_env *env, struct target *t)
{
        struct detach_work w = { .pid = t->pid };
        int r;

        assert(env);
        assert(t);
        if (target_phase_exited(t->phase) || t->n_objects == 0)
                return 0;
        r = probes_sweep_work(t, &w);
        if (r < 0) {
                detacher_work_done(&w);
                return r;
        }
        t->children_cleared++;
        return detacher_submit(env->detacher, &w);
}

uint64_t target_memory_bytes(const struct target *t)
{
        uint64_t bytes = sizeof(*t) + t->n_objects * sizeof(*t->objects) + t->modules.n * sizeof(*t->modules.mappings) +
                         t->modules.n_anon_code * sizeof(*t->modules.anon_code) + perf_map_bytes(t->perf_map) +
                         target_files_bytes(&t->files) + snapshot_ring_bytes(t->ring) + t->exit_scan_bytes;

        assert(t);
        if (t->frozen)
                bytes += t->frozen->bytes;
        bytes += exit_verdicts_bytes(t->verdicts);
        for (size_t i = 0; i < t->modules.n; i++)
                bytes += strlen(t->modules.mappings[i].path) + 1;
        for (size_t i = 0; i < t->n_objects; i++)
                bytes += strlen(t->objects[i].path) + 1;
        return bytes;
}

static void objects_free(struct target *t)
{
        for (size_t i = 0; i < t->n_objects; i++) {
                free(t->objects[i].path);
                free(t->objects[i].offsets);
                if (t->objects[i].fd >= 0)
                        close(t->objects[i].fd);
        }
        free(t->objects);
        t->objects = NULL;
        t->n_objects = 0;
        free(t->forwarders);
        t->forwarders = NULL;
        t->n_forwarders = 0;
}

int target_reprobe(const struct target_env *env, struct target *t)
{
        struct detach_work w = { .pid = t->pid };

        assert(env);
        assert(t);
        if (target_phase_exited(t->phase) || t->kernel)
                return 0;
        probes_links_to_work(t, &w);
        (void)detacher_submit(env->detacher, &w);
        objects_free(t);
        t->probe_epoch++;
        t->rescanning = false;
        if (t->objects_named)
                return -ENOTRECOVERABLE;
        file_id_set_done(&t->files.examined);   /* looked at again by the next rescan */
        return 0;
}

int target_inherit_watch(struct target *t, const struct target *from)
{
        char *name;

        assert(t);
        assert(from);
        t->watch_id = from->watch_id;   /* a declared program's watch has no name to report */
        if (!from->watch_name)
                return 0;
        name = strdup(from->watch_name);
        if (!name)
                return -ENOMEM;
        free(t->watch_name);
        t->watch_name = name;
        t->watch_is_unit = from->watch_is_unit;
        return 0;
}

void target_abandon(struct target *t)
{
        assert(t);
        t->links.keep_pins = true;
        /* The links left recording are its own, which are pinned; failing that, the earlier
         * daemon's, pinned again (their pins went at the adoption). */
        if (t->links.n_inherited > 0 && move_to_own_probes(t) < 0)
                for (size_t i = 0; i < t->links.n_inherited; i++)
                        (void)target_pins_add(t, t->links.inherited_fds[i]);
        probes_destroy_links(t);
        /* the kept programs walk its stacks by the list they have */
        t->unwind.installed = false;
        if (t->slot.set) {
                slot_set_give_back(t->slot.set, t->slot.slot);
                t->slot.set = NULL;
        }
        t->exit_source = sd_event_source_disable_unref(t->exit_source);
}

struct target *target_free(struct target *t)
{
        if (!t)
                return NULL;
        probes_destroy_links(t);        /* those a stop did not hand to the detacher */
        sd_event_source_disable_unref(t->exit_source);
        closep(&t->pidfd);
        objects_free(t);
        free(t->allocator_reason);
        free(t->register_error);
        free(t->watch_name);
        module_map_done(&t->modules);
        free(t->kept_file_ids);
        jit_names_source_done(&t->jit_source);
        perf_map_unref(t->perf_map);
        free(t->exit_scan);
        target_unwind_done(&t->unwind, t->slot.slot);
        release_slot(t);
        target_files_done(&t->files);
        snapshot_ring_free(t->ring);
        stack_collect_free_frozen(t->frozen);
        exit_verdicts_free(t->verdicts);
        kernel_symbols_unref(t->kernel);
        if (t->exec) {
                release_recording(t);
                free(t->exec->path);
                free(t->exec);
        }
        free(t);
        return NULL;
}
