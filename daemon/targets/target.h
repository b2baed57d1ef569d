/* SPDX-License-Identifier: GPL-2.0-only */
/* A traced process, or the kernel: what it is, what probes it, what it maps, what it keeps once it
 * exited. The files of this component each do one part (probes.c, target-files.c, detacher.c,
 * kernel-target.c); this one makes, registers, stops and frees a target. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include "auto-sample.h"
#include "bpf-types.h"
#include "file-id-set.h"
#include "macro.h"
#include "jit-names.h"
#include "module-map.h"
#include "proc-creds.h"
#include "protocol.h"
#include "stack-collect.h"
#include "target-phase.h"

struct memleak_bpf;
struct bpf_link;
struct symbolizer;
struct snapshot_ring;
struct exit_verdicts;
struct kernel_symbols;
struct stack_totals;
struct object_cache;
struct mapping_log;
struct detacher;
struct unwind_cache;
struct slot_set;

/* Why an object's entry points are probed. */
enum object_role {
        OBJECT_ROLE_ALLOCATOR,          /* the allocator serving the process */
        OBJECT_ROLE_NAMED,              /* named with --obj */
        OBJECT_ROLE_OTHER_ALLOCATOR,    /* defines malloc & co too, later in lookup order: probed
                                         * in case something calls it directly */
        OBJECT_ROLE_CXX,                /* defines C++ operator new/delete */
        OBJECT_ROLE_LOADED_LATER,       /* mapped after the attach (dlopen), found on a rescan */
        OBJECT_ROLE_TRACEPOINT,         /* the kernel target's: a kernel tracepoint */
        _OBJECT_ROLE_MAX,
};

const char *target_object_role_to_string(enum object_role r);

struct target_object {
        char *path;             /* as the target sees it */
        unsigned probes;        /* probe sites (addresses) placed in it */
        unsigned forwarded;     /* operators left unprobed: they only call malloc or free, which
                                 * record the call (cxx-forwarders.h) */
        enum object_role role;
        int fd;                 /* the file probed, kept to clear a forked child's breakpoints; -1 */
        uint64_t *offsets;      /* its probed addresses, each once */
        size_t n_offsets;
};

/* A file the target maps or will map, by identity, with the path it sees: names the mappings
 * BPF recorded (which carry no path). */
struct known_file {
        uint64_t dev, ino;
        char *path;
        bool symbols_registered;        /* holds a symbolizer reference, released with the target */
        bool symbols_failed;            /* could not be opened: not tried again */
};

/* Files one target may register for symbolization (a process mapping more gets the rest of its
 * frames unresolved, and cannot crowd the other targets out). */
#define TARGET_FILES_MAX 4096U

/* The files of a target (target-files.c). */
struct target_files {
        struct symbolizer *syms;        /* where they are registered */
        struct known_file *known;
        size_t n_known;
        unsigned untracked;             /* past TARGET_FILES_MAX */
        struct file_id_set examined;    /* looked at for allocator entry points (rescans skip them) */
};

/* A process attached before it execs a program (memleakctl run). */
struct target_exec {
        char *path;                     /* the program, as the process sees it */
        uint64_t dev, ino;              /* that program's file */
        bool seen;                      /* /proc/PID/exe became it, or another than memleakctl's
                                         * (it exec'd on): the process's maps are the program's */
        char held_comm[17];             /* its name while held before the exec (memleakctl's) */
        uint64_t held_dev, held_ino;    /* its /proc/PID/exe then (memleakctl's) */
        struct mapping_log *recording;  /* holds a mapping_log_hold() on it; NULL once released */
};

/* How many of a target's latest children it remembers: a child found running as the target is
 * attached, whose fork event comes a moment later, is counted and followed once. */
#define TARGET_CHILDREN_NOTED 64

/* Its slot of BPF's target_slots, which its probes' cookies carry (taken before they are placed,
 * written when it is registered, cleared and given back when it stops). */
struct target_slot_hold {
        struct slot_set *set;           /* taken from; NULL: none held */
        int fd;                         /* target_slots */
        uint32_t slot;
        uint32_t gen;                   /* the generation of the probes that record it, as BPF's
                                         * entry at slot names it (struct target_slot) */
        uint32_t own_gen;               /* this daemon's probes' (gen, but while it is adopted) */
};

/* Its own counters: its row of BPF's counters map (bpf-types.h), which an earlier target may
 * have counted in before: what the row held when it took it is subtracted. Once it stopped, what
 * it counted in all is kept (its report still says). */
struct target_counters {
        uint32_t row;
        bool stopped;                   /* final holds its counters */
        uint64_t base[_COUNTER_MAX];
        uint64_t final[_COUNTER_MAX];
};

/* Its probes' links, destroyed when it stops. */
struct target_links {
        struct bpf_link **links;        /* perf-event uprobes (kernels without uprobe_multi), and
                                         * the kernel target's tracepoints */
        size_t n_links;
        int *multi_fds;                 /* uprobe_multi links: one per (object, program), and
                                         * the kernel target's once adopted, reopened from their pins */
        size_t n_multi_fds;
        int *inherited_fds;             /* an adopted process's links an earlier daemon placed,
                                         * recording it until its own take over (target_take_over()) */
        size_t n_inherited;
        /* each pinned in pin_dir (target-pins.c), so that it outlives the daemon; NULL: not */
        const char *pin_dir;
        uint64_t pin_gen;               /* this daemon's, in the names of its pins */
        size_t n_pinned;                /* named 0..n_pinned-1 */
        unsigned pin_failures;
        bool keep_pins;                 /* the daemon goes and leaves it recording */
};

/* A file whose unwind table a target holds a reference on. */
struct target_unwind_file {
        uint64_t dev, ino;
};

/* How its user stacks are walked (target-unwind.c): by the unwind tables of the files it maps
 * (their CFI; frame pointers where a file has none), or by frame pointers alone. */
struct target_unwind {
        enum memleak_unwind mode;       /* AUTO or DWARF: tables; FP: the kernel's walk */
        struct unwind_cache *cache;     /* where its files' tables are; NULL: not walked by tables */
        int targets_fd;                 /* BPF's unwind_targets and unwind_mappings */
        int mappings_fd;
        bool installed;                 /* its unwind_targets entry is there */
        struct target_unwind_file *files;
        size_t n_files;
        uint32_t n_mappings;            /* in BPF now */
        uint32_t half;                  /* which of its slot's two lists walks read (bpf-types.h) */
        unsigned mappings_dropped;      /* executable mappings past UNWIND_MAPPINGS_MAX */
        uint64_t signature;             /* of the list written last */
        bool stale;                     /* BPF emptied the list at an exec: write it again */
        /* its files' tables as last counted (kept once it stopped: its status still says) */
        size_t tables;
        uint64_t rows, bytes;
};

struct perf_map;
struct exited_file_id;

/* A target by what outlives a daemon: its pid and its process's start time (/proc/PID/stat's). */
struct target_parent_link {
        pid_t pid;                      /* 0: none */
        uint64_t start_time;
};

struct target {
        pid_t pid;
        char comm[17];
        /* its credentials when attached, and after each exec: who else but an admin may see it
         * once it exited (core/manager-access); creds_read false: not known (the kernel's) */
        struct proc_creds creds;
        bool creds_read;
        /* who asked for it (a followed child: as its parent was), when not root or an admin
         * (asked_by_user): one that execs a program its asker could not ptrace (set-user-ID) is
         * let go */
        bool asked_by_user;
        uid_t asker_uid;
        gid_t asker_gid;
        enum target_phase phase;        /* changed by its owner only (manager_target_phase()) */
        uint64_t attached_usec;         /* CLOCK_REALTIME */
        uint64_t exited_usec;
        const char *allocator;          /* "glibc", "tcmalloc", "jemalloc", "mimalloc", "musl", "kernel", "other" */
        char *allocator_reason;
        struct target_object *objects;
        size_t n_objects;
        struct file_range *forwarders;  /* the code of those operators: their frames, on top of
                                         * the stack of the malloc they called, are not shown */
        size_t n_forwarders;
        struct target_links links;
        struct target_slot_hold slot;
        struct target_counters counters;
        int pidfd;                      /* -1 for the kernel, which does not exit */
        struct target_config filter;
        struct auto_sample_history auto_sample; /* memleakd sampled it (its share of the
                                                 * allocation table filled): when, at what mean */
        bool track_mmap;                /* --mmap: anonymous mappings are probed too */
        bool objects_named;             /* --obj: only those objects are probed */
        struct module_map modules;
        struct exited_file_id *kept_file_ids;   /* read back from its kept report (exited-file.h):
                                                 * what identified each of modules' files when it
                                                 * exited, one per mapping (malloc'd); NULL */
        size_t n_kept_file_ids;                 /* modules.n then */
        struct target_files files;
        struct target_unwind unwind;
        struct snapshot_ring *ring;
        struct frozen_target *frozen;   /* set once exited */
        struct exit_verdicts *verdicts; /* its heap stacks' verdicts at its exit (once exited;
                                         * NULL: none kept) */
        bool verdicts_keeping;          /* exited: its verdicts are being made on the worker, its
                                         * ring keeps its rows until they are in */
        struct perf_map *perf_map;      /* its JIT code's names, taken at its exit if it was held
                                         * there (memleakctl run), or read once it exited; NULL */
        struct jit_names_source jit_source;     /* where its perf map is, for once it exited */
        struct target_exec *exec;       /* attached before it execs a program; NULL otherwise */
        struct kernel_symbols *kernel;  /* the kernel target's symbols; NULL for a process */
        bool rescanning;                /* a rescan of its files is under way (on the worker) */
        bool adopted;                   /* taken back from an earlier daemon at this one's start */
        uint64_t proc_start_time;       /* /proc/PID/stat's, once read (the state file's); 0 */
        int register_errno;             /* why its registration failed, in phase failed (its
                                         * message below): the */
        char *register_error;           /* attach's answer, the target removed */
        uint32_t probe_epoch;           /* raised when its probes are forgotten (target_reprobe()): a
                                         * rescan started before does not apply */
        bool children_pending;          /* forked: its children's breakpoints to clear */
        uint64_t children_forked;       /* processes it forked while traced */
        uint64_t children_followed;     /* of those, attached as targets of their own */
        uint64_t children_missed;       /* of those, not followed (follow_forks): gone, max_targets, errors */
        uint64_t children_missed_exited;        /* of the missed, gone before they could be attached */
        uint64_t children_cleared;      /* times they were */
        pid_t children_noted[TARGET_CHILDREN_NOTED];    /* its latest children counted (a fork
                                                         * event, or found running): not twice */
        unsigned children_noted_next;
        bool follow_forks;              /* the processes it forks are attached too, and theirs */
        uint64_t parent_id;             /* the target whose fork it was followed from; 0: attached
                                         * itself */
        pid_t parent_pid;               /* that target's pid; 0 */
        struct target_parent_link parent_link;  /* the target parent_id names, by what outlives
                                                 * this daemon (in its kept report, the state
                                                 * file), which links it again after a restart */
        uint32_t watch_id;              /* the cgroup watch (attach "unit" or "cgroup") it was
                                         * found in, or its parent was; 0: none */
        char *watch_name;               /* that watch's unit or cgroup (owned); NULL */
        bool watch_is_unit;             /* watch_name names a unit */
        uint64_t maps_followed_until_usec;      /* CLOCK_MONOTONIC: its maps are read every few
                                                 * milliseconds until then (it execs or just did:
                                                 * target_follow_maps()); 0 */
        uint64_t exe_dev, exe_ino;      /* the program it ran when its maps were read at attach */
        /* its owner's */
        uint64_t id;                    /* unique in the daemon's life (a pid is not) */
        bool exited_saved;              /* exited: its report is in the state directory */
        sd_event_source *exit_source;
        void *owner;
        struct exit_hold *exit_hold;    /* memleakctl run: held at its exit for a reachability scan */
        void *exit_scan;                /* that scan (or why there is none) encoded by reach/reach-file,
                                         * kept with its report across a restart (malloc'd); NULL */
        size_t exit_scan_bytes;
        unsigned code_held;             /* and at execs and new code (as many), until their tables
                                         * are in (exit_hold_tables_ready()); a followed child of
                                         * it too */
        uint64_t code_held_since_usec;  /* CLOCK_MONOTONIC: the first of those not answered yet */
        struct {
                uint64_t holds;         /* answered */
                uint64_t held_usec;     /* how long it had holds not answered, in all */
                uint64_t longest_usec;
                uint64_t past_limit;    /* answered after its tracer let it go (CODE_HOLD_MAX_USEC) */
        } code_hold_stats;
};

/* How long a target's maps are followed closely (target_follow_maps()) after it execs (its loader
 * is done by then), and while memleakctl run holds it before its exec (a run that never execs). */
#define TARGET_MAPS_FOLLOW_AFTER_EXEC_USEC (2ULL * 1000 * 1000)
#define TARGET_MAPS_FOLLOW_BEFORE_EXEC_USEC (30ULL * 1000 * 1000)

/* Everything attach, detach and the rest need from the daemon. */
struct target_env {
        struct memleak_bpf *skel;
        struct symbolizer *syms;
        struct map_limits limits;
        struct mapping_log *mappings;
        struct detacher *detacher;
        struct unwind_cache *unwind;
        struct slot_set *target_slots;  /* of BPF's target_slots (max_targets) */
        struct object_cache *objects;   /* what examining each object file found */
        struct stack_totals *totals;    /* the loop's reader of the per-stack totals, kept mapped:
                                         * an exited target's are read through it */
        const char *links_pin_dir;      /* where targets' links are pinned (bpffs); NULL: nowhere */
        uint64_t pin_gen;               /* this daemon's, unique, in its pins' names */
};

/* A target an earlier daemon traced, taken back: its slot (BPF's entry there still names it),
 * what its counters' row held when that daemon attached it, when it did. */
struct target_adoption {
        uint32_t slot;
        uint64_t counters_base[_COUNTER_MAX];
        uint64_t attached_usec;
};

struct target_attach_params {
        pid_t pid;
        char *const *objs;
        size_t n_objs;
        struct target_config filter;
        uint32_t ring_depth;
        bool track_mmap;
        const char *exec;               /* attach before the process execs this program (an
                                         * absolute path as it sees it); NULL: it runs already */
        enum memleak_unwind unwind;     /* how its stacks are walked (not DEFAULT) */
        bool record_at_once;            /* a running process recorded from its probes on, before
                                         * its tables are built (a followed child, which memleakctl
                                         * run holds until then: exact counts first) */
        const struct target_adoption *adopt;    /* take it back: probed as an attach does, its
                                                 * earlier probes (pinned) recording it at once
                                                 * until target_take_over(); NULL: a new attach */
};

/* The one constructor: a target for pid (a process: with its pidfd; KERNEL_TARGET_PID: the
 * kernel) with its snapshot ring, in phase probing, not probing yet. */
int target_new(const struct target_env *env, pid_t pid, const struct target_config *filter, uint32_t ring_depth,
               struct target **ret, char **error);

/* A target taken back from an earlier daemon (adopt): pid's, at adopt's slot, its settings read
 * back from BPF's entry there (which must name pid), in phase probing; its links are the caller's
 * to take back (target_pins_adopt()), then target_register(). */
int target_new_adopted(const struct target_env *env, pid_t pid, uint32_t ring_depth,
                       const struct target_adoption *adopt, struct target **ret, char **error);

/* Whether t, adopted, is still recorded by the probes an earlier daemon placed. */
bool target_inherits_probes(const struct target *t);
/* t adopted, once its unwind tables are in: its own probes record it from here on (its slot
 * names their generation, a whole entry written at once: a call is recorded by the probes of one
 * daemon or the other), and the earlier daemon's are removed (in the background). Then the
 * libraries it loads are walked as a new target's are (those probes walked only what their
 * daemon had tables for). 1 when it took over, 0 when there was nothing to take over (or the
 * tables are not in yet), -errno (the earlier probes record it still). */
int target_take_over(const struct target_env *env, struct target *t);

/* Attach to a process (before it execs p->exec, if set): find what to probe, probe it, start
 * recording: returns 0 when it records. A running process starts recording only once its unwind
 * tables are built (returns 1: its owner calls target_register() then): until then its stacks
 * would be walked by frame pointers, cut short in code built without them, and a walk from inside
 * a C++ operator left to the malloc it calls (probes.c) would skip its caller; with
 * p->record_at_once only the latter waits. On failure returns -errno and a malloc'd message for
 * the client in *error. */
int target_attach(const struct target_env *env, const struct target_attach_params *p,
                  struct target **ret, char **error);

/* Where BPF raises a target's mean itself, should its share of the allocation table fill before
 * the daemon's next check (struct target_config's limit_*): at blocks held in the table (0:
 * never) to sample_bytes if it is exact, or four times its mean if more (at least sample_bytes),
 * then again each time it passes half the room left to share. */
struct target_limit {
        uint64_t blocks;
        uint64_t sample_bytes;
        uint64_t share;
};

/* Sample t's heap at a mean of c->sample_bytes from now on (its share of the allocation table
 * fills), in BPF and in t->filter, with BPF's next limit l (NULL: as it was) in the same write,
 * and remember the change c: 0 or -errno. Blocks recorded before keep their weight. */
int target_set_sample_bytes(const struct target_env *env, struct target *t, const struct auto_sample_change *c,
                            const struct target_limit *l);

/* Have BPF raise t's mean itself at l; the daemon notes each raise as a change
 * (target_set_sample_bytes) when it sees it (struct target_fill). Written to BPF only when
 * changed: 1 when written, 0 when unchanged, or -errno. */
int target_set_limit(const struct target_env *env, struct target *t, const struct target_limit *l);

/* Enter t in the targets map, which BPF checks on every probe hit: recording starts here. A
 * running process's maps are read again then: it may have exec'd since the attach read them
 * (BPF records its exec from here on, not before), and then they are followed closely a while. */
int target_register(const struct target_env *env, struct target *t, char **error);
/* Whether child is among t's latest children noted; noted if not. */
bool target_note_child(struct target *t, pid_t child);
/* Have t's maps read every few milliseconds for usec from now (its owner's timer reads them:
 * manager_follow_new_programs()); an earlier deadline is extended, a later one kept. */
void target_follow_maps(struct target *t, uint64_t usec);

/* Stop tracing: BPF stops recording it; its links, its map entries and its stacks go in the
 * background (the detacher: a new attach to the pid waits for them). With freeze, its per-stack
 * totals are kept first (it exited: its last report). Returns the freeze's -errno, if any. */
int target_stop(const struct target_env *env, struct target *t, bool freeze);

/* The process exec'd a program named comm (BPF's exec event, taken in the exec itself: right
 * even when it was reaped before /proc could be read, and heard after its exit): its name. */
void target_name_after_exec(struct target *t, const char comm[MEMLEAK_COMM_LEN]);

/* What t counted (its own row of the BPF counters, or what it counted in all once it stopped) in
 * ret[_COUNTER_MAX]. -errno when the map cannot be read. */
int target_counters_read(const struct target_env *env, const struct target *t, uint64_t ret[_COUNTER_MAX]);

/* t's name as the process has it now (it may have exec'd another program, or renamed itself);
 * the last one known when it cannot be read. */
void target_refresh_comm(struct target *t);

/* t exec'd from a thread other than its leader: the kernel's links of its probes name the old
 * leader, gone, and no longer break in the new image. Its probes are forgotten (their links
 * destroyed in the background) with the files looked at for them, and the next rescan probes
 * what the new image maps, as libraries loaded after the attach are. With --obj the objects are
 * not probed again (-ENOTRECOVERABLE: say so, it needs a new attach). */
int target_reprobe(const struct target_env *env, struct target *t);

/* t forked: remove the breakpoints of its probes from its children, which are not traced (in the
 * background: it takes a grace period). */
int target_clear_inherited_probes(const struct target_env *env, struct target *t);

/* The memory t holds (what an exited target's report keeps), roughly. */
uint64_t target_memory_bytes(const struct target *t);

/* The daemon goes and leaves t recording: its links stay pinned, its BPF entries stay, its slot
 * is given back here only. For the next daemon to adopt it (target_attach() with adopt). */
void target_abandon(struct target *t);

struct target *target_free(struct target *t);
/* t belongs to the watch (attach "unit" or "cgroup") from belongs to, if any: 0, or -ENOMEM. */
int target_inherit_watch(struct target *t, const struct target *from);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct target *, target_free)
