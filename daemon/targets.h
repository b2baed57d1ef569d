/* SPDX-License-Identifier: GPL-2.0-only */
/* A traced process: its probes, its pidfd, its module map, its snapshot history. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>
#include "bpf-types.h"
#include "module-map.h"
#include "stack-collect.h"

struct memleak_bpf;
struct bpf_link;
struct symbolizer;
struct snapshot_ring;
struct kernel_symbols;

/* Why an object's entry points are probed. */
enum object_role {
        OBJECT_ROLE_ALLOCATOR,          /* the allocator serving the process */
        OBJECT_ROLE_NAMED,              /* named with --obj */
        OBJECT_ROLE_OTHER_ALLOCATOR,    /* defines malloc & co too, later in lookup order: probed
                                         * in case something calls it directly */
        OBJECT_ROLE_CXX,                /* defines C++ operator new/delete */
        OBJECT_ROLE_LOADED_LATER,       /* mapped after the attach (dlopen), found on a rescan */
        OBJECT_ROLE_TRACEPOINT,         /* the kernel target's: a kernel tracepoint */
};

const char *object_role_to_string(enum object_role r);

struct target_object {
        char *path;             /* as the target sees it */
        unsigned probes;        /* probe sites (addresses) placed in it */
        enum object_role role;
        int fd;                 /* the file probed, kept to clear a forked child's breakpoints; -1 */
        uint64_t *offsets;      /* its probed addresses, each once */
        size_t n_offsets;
};

/* A file of the target looked at for allocator entry points, so rescans skip it. */
struct examined_file {
        uint64_t dev, ino;
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

struct target {
        pid_t pid;
        char comm[17];
        bool exited;
        uint64_t attached_usec;         /* CLOCK_REALTIME */
        uint64_t exited_usec;
        const char *allocator;          /* "glibc", "tcmalloc", "jemalloc", "mimalloc", "other" */
        char *allocator_reason;
        struct target_object *objects;
        size_t n_objects;
        struct bpf_link **links;        /* the kernel target's tracepoints */
        size_t n_links;
        int *uprobe_fds;                /* uprobe_multi links: one per (object, program) */
        size_t n_uprobe_fds;
        struct examined_file *examined;
        size_t n_examined;
        int pidfd;
        sd_event_source *exit_source;
        struct target_config filter;
        bool track_mmap;                /* --mmap: anonymous mappings are probed too */
        bool objects_named;             /* --obj: only those objects are probed */
        struct module_map modules;
        struct snapshot_ring *ring;
        struct frozen_target *frozen;   /* set once exited */
        struct kernel_symbols *kernel;  /* the kernel target's symbols; NULL for a process */
        char *exec_path;                /* attached before it execs this program (memleakctl run) */
        uint64_t exec_dev, exec_ino;    /* that program's file */
        bool exec_seen;                 /* /proc/PID/exe became that program: its maps are the program's */
        bool records_mappings;          /* holds mapping_log_hold() */
        struct known_file *known_files;
        size_t n_known_files;
        unsigned files_untracked;       /* past TARGET_FILES_MAX */
        bool children_pending;          /* forked: its children's breakpoints to clear */
        uint64_t children_cleared;      /* times they were */
        struct symbolizer *syms;        /* where its files are registered */
        void *owner;                    /* the manager holding it, for event callbacks */
};

struct target_attach_params {
        pid_t pid;
        char *const *objs;
        size_t n_objs;
        struct target_config filter;
        uint32_t ring_depth;
        bool track_mmap;
};

/* attach before exec: p->pid is held before it execs exec (an absolute path as it sees it), by
 * the client that forked it. The probes go on the files the program will map, found the way the
 * dynamic loader will find them (uprobes live on the inode: they fire once the file is mapped). */
struct target_exec_params {
        struct target_attach_params attach;
        const char *exec;
};

/* Everything attach/detach need from the daemon. */
struct target_env {
        struct memleak_bpf *skel;
        struct symbolizer *syms;
        struct map_limits limits;
};

/* Attach: on failure returns -errno and a malloc'd message for the client in *error. */
int target_attach(const struct target_env *env, const struct target_attach_params *p,
                  struct target **ret, char **error);

/* Attach to a process about to exec a program (struct target_exec_params); like target_attach. */
int target_attach_exec(const struct target_env *env, const struct target_exec_params *p,
                       struct target **ret, char **error);

/* Bring the target's module map up to date: /proc/PID/maps while it runs (once it runs the
 * program it was attached to exec), then the file mappings BPF recorded as it made them, which
 * are all there is once it has exited (process_gone). */
void target_refresh_modules(const struct target_env *env, struct target *t, bool process_gone);

/* Enter t in the targets map, which BPF checks on every probe hit: recording starts here. For
 * the attach functions, the kernel target's included. */
int target_register(const struct target_env *env, struct target *t, char **error);

/* Look for files the target mapped since the attach or the last rescan (dlopen) and probe the
 * allocator entry points they define (not for a target attached with --obj, whose objects were
 * named). Returns how many objects got probes, or -errno. */
int target_rescan(const struct target_env *env, struct target *t);

/* Stop tracing: BPF stops recording it, links go (in a background thread with background, so
 * the caller does not wait for the kernel), its map entries are purged. With freeze, its
 * outstanding allocations are copied first (the target exited: keep its last report). */
void target_stop(const struct target_env *env, struct target *t, bool freeze, bool background);

/* t forked: remove the breakpoints of its probes from its children, which are not traced (in a
 * background thread: it takes a grace period). */
int target_clear_inherited_probes(struct target *t);

/* Wait until the links handed to background threads are all gone (at shutdown). */
void target_wait_background_detaches(void);

/* The memory t holds (what an exited target's report keeps), roughly. */
uint64_t target_memory_bytes(const struct target *t);

struct target *target_free(struct target *t);
