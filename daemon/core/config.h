/* SPDX-License-Identifier: GPL-2.0-only */
/* The daemon's configuration: defaults, and parsing memleakd.conf into one validated struct. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "config-targets.h"
#include "protocol.h"

/* Limits, so the daemon's --help, the shipped memleakd.conf and the parser agree. */
#define CONFIG_SNAPSHOT_INTERVAL_MS_MIN     10u
#define CONFIG_SNAPSHOT_INTERVAL_MS_MAX     3600000u
#define CONFIG_SNAPSHOT_INTERVAL_MS_DEFAULT 1000u
#define CONFIG_RING_DEPTH_MIN               1u
#define CONFIG_RING_DEPTH_MAX               100000u
#define CONFIG_RING_DEPTH_DEFAULT           60u
#define CONFIG_MAX_TARGETS_MIN              1u
#define CONFIG_MAX_TARGETS_MAX              4096u
#define CONFIG_MAX_TARGETS_DEFAULT          64u
#define CONFIG_MAX_ALLOCS_MIN               1024u
#define CONFIG_MAX_ALLOCS_MAX               100000000u
#define CONFIG_MAX_ALLOCS_DEFAULT           1048576u
#define CONFIG_MAP_ENTRIES_MIN              1024u     /* max_stacks, max_combined, max_inflight, max_mmaps */
#define CONFIG_MAP_ENTRIES_MAX              16777216u
#define CONFIG_MAP_ENTRIES_DEFAULT          65536u
/* Stacks and per-stack totals: room for a program with 65,536 distinct leaking stacks and its
 * others (the stack table takes memory only for the stacks it holds). */
#define CONFIG_MAX_STACKS_DEFAULT           131072u
#define CONFIG_MAX_STACK_DEPTH_MIN          1u
#define CONFIG_MAX_STACK_DEPTH_MAX          127u      /* MEMLEAK_MAX_STACK_DEPTH, the kernel's default cap */
#define CONFIG_MAX_STACK_DEPTH_DEFAULT      119u      /* the most whose stack-table entry fits 1 KiB */
#define CONFIG_SYMBOLS_MAX_OPEN_FILES_MIN     16u
#define CONFIG_SYMBOLS_MAX_OPEN_FILES_MAX     65536u
#define CONFIG_SYMBOLS_MAX_OPEN_FILES_DEFAULT 1024u
#define CONFIG_SYMBOLS_MAX_MB_MIN           16u
#define CONFIG_SYMBOLS_MAX_MB_MAX           1048576u
#define CONFIG_SYMBOLS_MAX_MB_DEFAULT       1024u
#define CONFIG_SYMBOLS_MAX_SECTION_MB_MIN   1u
#define CONFIG_SYMBOLS_MAX_SECTION_MB_MAX   1048576u
#define CONFIG_SYMBOLS_MAX_SECTION_MB_DEFAULT 512u
#define CONFIG_EXITED_MAX_MB_MIN            1u
#define CONFIG_EXITED_MAX_MB_MAX            1048576u
#define CONFIG_EXITED_MAX_MB_DEFAULT        64u
#define CONFIG_SOCKET_MODE_DEFAULT          0660u
#define CONFIG_VERDICT_MIN_SNAPSHOTS_MIN    3u
#define CONFIG_VERDICT_MIN_SNAPSHOTS_MAX    1000u
#define CONFIG_VERDICT_NOISE_FACTOR_MAX     100u
#define CONFIG_REACHABILITY_MAX_PAUSE_MS_DEFAULT 200
#define CONFIG_REACHABILITY_MAX_PAUSE_MS_MIN 10
#define CONFIG_REACHABILITY_MAX_PAUSE_MS_MAX 600000
#define CONFIG_REACHABILITY_CONCURRENT_MAX_STOP_MS_DEFAULT 50    /* issue 38: no stop past 50 ms */
#define CONFIG_AUTO_SAMPLE_PERCENT_DEFAULT  80u       /* targets/auto-sample.h */
#define CONFIG_SOCKET_PATH_MAX              107u      /* bytes, so it fits sockaddr_un.sun_path */
#define CONFIG_CACHE_DIRECTORY_DEFAULT      "/var/cache/memleakd"   /* systemd's CacheDirectory=memleakd */
#define CONFIG_STATE_DIRECTORY_DEFAULT      "/var/lib/memleakd"     /* systemd's StateDirectory=memleakd */
#define CONFIG_BPF_PIN_DIRECTORY_DEFAULT    "/sys/fs/bpf/memleakd"
#define CONFIG_CACHE_DIRECTORY_MAX          4095u     /* bytes (PATH_MAX with its NUL) */
#define CONFIG_METRICS_INTERVAL_MS_DEFAULT  15000u
#define CONFIG_METRICS_INTERVAL_MS_MIN      1000u
#define CONFIG_METRICS_INTERVAL_MS_MAX      3600000u
#define CONFIG_EXPORT_INTERVAL_MS_DEFAULT   60000u
#define CONFIG_EXPORT_INTERVAL_MS_MIN       1000u
#define CONFIG_EXPORT_INTERVAL_MS_MAX       86400000u
#define CONFIG_EXPORT_KEEP_DEFAULT          10u
#define CONFIG_EXPORT_KEEP_MAX              100000u
#define CONFIG_UNWIND_CACHE_MAX_MB_MAX      1048576u
#define CONFIG_UNWIND_CACHE_MAX_MB_DEFAULT  256u

struct memleakd_config {
        uint64_t snapshot_interval_ms;  /* snapshot_interval_ms: 10..3600000, "ms"/"s" suffix allowed */
        uint32_t ring_depth;            /* ring_depth: snapshots kept, 1..100000 */
        uint32_t max_targets;           /* max_targets: processes attached at once, 1..4096 */
        uint32_t max_allocs;            /* max_allocs: outstanding-allocation map entries */
        uint32_t max_stacks;            /* max_stacks: stack-table entries */
        uint32_t max_combined;          /* max_combined: per-stack totals entries */
        uint32_t max_inflight;          /* max_inflight: no longer used (a thread's call state lives
                                         * in task storage); accepted so older files still load */
        uint32_t max_mmaps;             /* max_mmaps: anonymous mappings tracked with --mmap */
        uint32_t max_stack_depth;       /* max_stack_depth: frames kept per stack, 1..127 */
        char *socket_path;              /* socket_path: absolute, at most 107 bytes */
        uint32_t socket_mode;           /* socket_mode: octal, <= 0777 */
        char *socket_group;             /* socket_group: a group name, NULL for root's group */
        char *admin_group;              /* admin_group: members may do what root may (NULL: none) */
        uint64_t min_size;              /* default_min_size: bytes, K/M/G suffix allowed, 0 = none */
        uint64_t max_size;              /* default_max_size: bytes, K/M/G suffix allowed, 0 = none */
        uint64_t sample_bytes;          /* sample_bytes: the attach default, 0 = every allocation */
        uint32_t symbols_max_open_files;/* symbols_max_open_files: files open for symbolization at once */
        uint32_t symbols_max_mb;        /* symbols_max_mb: inflated debug info held, MiB */
        uint32_t symbols_max_section_mb;/* symbols_max_section_mb: one debug section inflated, MiB */
        uint32_t exited_max_mb;         /* exited_max_mb: what the reports of exited targets keep, MiB */
        enum memleak_unwind unwind;     /* unwind: auto, dwarf or fp (protocol.h) */
        /* the leak verdicts (daemon/report/leak-verdict.h) */
        uint32_t verdict_min_snapshots; /* verdict_min_snapshots: points a verdict needs, 3..1000 */
        uint32_t verdict_noise_factor;  /* verdict_noise_factor: growth against scatter, 1..100 */
        uint64_t verdict_flat_bytes;    /* verdict_flat_bytes: a flat range, bytes, K/M/G allowed */
        uint32_t verdict_flat_percent;  /* verdict_flat_percent: or this share of the level, 0..100 */
        uint32_t reachability_max_pause_ms; /* reachability_max_pause_ms: longest a live scan
                                             * that could take no snapshot stops a process
                                             * (report --reachability); run's exit: 5 s at least */
        uint32_t reachability_concurrent_max_stop_ms; /* reachability_concurrent_max_stop_ms: the
                                                       * longest one stop of a concurrent scan */
        uint32_t reachability_concurrent; /* reachability_concurrent: 1 (default) a live scan reads
                                           * the process while it runs, stopping it only briefly
                                           * (reach/write-tracker.h); 0: a snapshot first */
        uint32_t auto_sample_percent;   /* auto_sample_percent: how full a target's share of the
                                         * allocation table turns it to sampling, 0..100, 0 = never */
        char *cache_directory;          /* cache_directory: absolute; what memleakd keeps across runs
                                         * (unwind tables), under it */
        uint32_t unwind_cache_max_mb;   /* unwind_cache_max_mb: the unwind tables kept on disk, MiB;
                                         * 0: none kept */
        char *state_directory;          /* state_directory: absolute; the targets adopted again
                                         * after a restart are listed there */
        char *bpf_pin_directory;        /* bpf_pin_directory: absolute, on bpffs; the maps and
                                         * probe links kept across a restart */
        char *metrics_textfile;         /* metrics_textfile: absolute; the Prometheus metrics
                                         * written there (node_exporter's textfile collector); NULL: not */
        uint64_t metrics_interval_ms;   /* metrics_interval_ms: between two writes of it */
        char *export_dir;               /* export_dir: absolute; each live target's pprof profile
                                         * written there; NULL: not */
        uint64_t export_interval_ms;    /* export_interval_ms: between two exports */
        uint32_t export_keep;           /* export_keep: a pid's profiles kept there */
        struct config_targets targets;  /* the [target] sections of every file, in order */
};

/* A number of bytes, optionally with suffix K, M or G: 0, -EINVAL or -ERANGE. */
int config_parse_size(const char *s, uint64_t *ret);

/* Whether the key named name (a known one) takes effect at a reload; false for an unknown one. */
bool config_key_reloadable(const char *name);

/* A reload: apply to c every key of fresh that takes effect at run time (the [target] sections
 * too: the manager watches the new ones and lets the withdrawn ones go); the keys that differ
 * but take effect only when memleakd starts (map sizes, the socket, the cache) keep c's values,
 * and *ret_restart (if not NULL) gets their names joined by ", " (NULL when none). 0 or -ENOMEM
 * (c may then hold some of fresh's values: all valid). */
int config_reload(struct memleakd_config *c, const struct memleakd_config *fresh, char **ret_restart);

/* Fill *c with the defaults. Returns 0, or -ENOMEM (then *c holds no allocations). */
int config_init_defaults(struct memleakd_config *c);

/* Free the strings; accepts a zeroed struct. */
void config_done(struct memleakd_config *c);

/* A copy of src with its own strings. Returns 0 or -ENOMEM (*ret untouched). */
int config_copy(const struct memleakd_config *src, struct memleakd_config *ret);

/* Parse the file at path into *c, which holds defaults or earlier values. Values take effect
 * only if the whole file is valid; on failure *c is unchanged. Returns 0, -EINVAL for a content
 * error, the -errno of opening or reading the file, or -ENOMEM. On failure, if error is not
 * NULL, *error is set to a malloc'd message naming the file, and for content errors the line and
 * key: "/etc/memleakd/memleakd.conf:7: unknown key 'snapshot_intervall_ms'" (NULL only if even
 * that message could not be allocated). */
int config_parse_file(const char *path, struct memleakd_config *c, char **error);
