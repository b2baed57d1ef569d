/* SPDX-License-Identifier: MIT */
/* The reply contract: the name of every field a reply of memleakd's carries, and which entity
 * (target, stack, frame, counters, verdict, ...) has which, in the order the daemon writes them.
 *
 * The daemon builds its replies with these names and memleakctl reads them with the same ones:
 * no field name is spelled anywhere else (the envelope's and the requests' are in protocol.h).
 * Each REPLY_<ENTITY>(X) lists an entity's fields; its "docs:" line names the sections of
 * docs/protocol.md that document them, which tests/unit/check-protocol-doc.py holds to it: a
 * field added here without a line there fails the unit suite, and so does a field documented
 * there that no entity here has. "docs: -" marks memleakctl's own output, not the wire's.
 * tests/unit/test-reply-json.c checks that the serialisers of a target, a verdict, the
 * counters, a stack and a frame write their entity's fields in this order.
 */
#pragma once

/* For REPLY_<ENTITY>(REPLY_FIELD_NAME): an entity's names as an array's initialisers. */
#define REPLY_FIELD_NAME(name) name,

/* Field names, one per name, whichever entities have it. */
#define RF_ACCEPT_PAUSED            "accept_paused"
#define RF_ADDR                     "addr"
#define RF_ADDRESSES_CUT            "addresses_cut"
#define RF_ALLOCATOR                "allocator"
#define RF_ALLOCATOR_REASON         "allocator_reason"
#define RF_ALLOCS                   "allocs"
#define RF_ALLOCS_FAILED            "allocs_failed"
#define RF_ALLOCS_FILTERED          "allocs_filtered"
#define RF_ALLOCS_MAP_FULL          "allocs_map_full"
#define RF_ALLOCS_UNSAMPLED         "allocs_unsampled"
#define RF_ALLOC_SESSIONS           "alloc_sessions"
#define RF_AT                       "at"
#define RF_ATTACHED                 "attached"
#define RF_ATTACHED_S               "attached_s"
#define RF_AT_EXIT                  "at_exit"
#define RF_AUTO_SAMPLE              "auto_sample"
#define RF_BLIND_SINCE              "blind_since"
#define RF_BLOCKS_AFTER_SNAPSHOT    "blocks_after_snapshot"
#define RF_BLOCKS_BYTES             "blocks_bytes"
#define RF_BLOCKS_FREED             "blocks_freed"
#define RF_BLOCKS_OVERLAPPING       "blocks_overlapping"
#define RF_BLOCKS_UNREADABLE        "blocks_unreadable"
#define RF_BUILD_ID                 "build_id"
#define RF_BUILDING                 "building"
#define RF_BYTES                    "bytes"
#define RF_BYTES_DELTA              "bytes_delta"
#define RF_BYTES_SCANNED            "bytes_scanned"
#define RF_BYTES_UNREADABLE         "bytes_unreadable"
#define RF_CACHE_BYTES              "cache_bytes"
#define RF_CGROUP                   "cgroup"
#define RF_CGROUPS                  "cgroups"
#define RF_CHANGES                  "changes"
#define RF_CHANGES_TOTAL            "changes_total"
#define RF_CHILDREN                 "children"
#define RF_CHILDREN_FOLLOWED        "children_followed"
#define RF_CHILDREN_FORKED          "children_forked"
#define RF_CHILDREN_LEFT            "children_left"
#define RF_CHILDREN_MISSED          "children_missed"
#define RF_CHILDREN_MISSED_EXITED   "children_missed_exited"
#define RF_CLIENTS                  "clients"
#define RF_CLOSED_FOR_LIMITS        "closed_for_limits"
#define RF_COMBINED_MAP_FULL        "combined_map_full"
#define RF_COMM                     "comm"
#define RF_CONNECTIONS              "connections"
#define RF_COPY_REAPED              "copy_reaped"
#define RF_COUNTERS                 "counters"
#define RF_DEFINITELY_LOST          "definitely_lost"
#define RF_DIRECTORY                "directory"
#define RF_DISK_CACHE               "disk_cache"
#define RF_DISTINCT                 "distinct"
#define RF_DROPPED                  "dropped"
#define RF_ERROR                    "error"
#define RF_EVENTS_LOST              "events_lost"
#define RF_EVICTED                  "evicted"
#define RF_EXE                      "exe"
#define RF_EXITED                   "exited"
#define RF_EXPECTED_ERROR           "expected_error"
#define RF_FAILED                   "failed"
#define RF_FILE                     "file"
#define RF_FILES                    "files"
#define RF_FILES_WITHOUT_CFI        "files_without_cfi"
#define RF_FILE_MAPPINGS_LOST       "file_mappings_lost"
#define RF_FIRST_BYTES              "first_bytes"
#define RF_FOLLOW_FORKS             "follow_forks"
#define RF_FORKED_FROM              "forked_from"
#define RF_FORK_EVENTS_LOST         "fork_events_lost"
#define RF_FORWARDED                "forwarded"
#define RF_FRAMES                   "frames"
#define RF_FREED_BY_EXEC            "freed_by_exec"
#define RF_FREES                    "frees"
#define RF_FREES_UNSAMPLED          "frees_unsampled"
#define RF_FREE_UNKNOWN             "free_unknown"
#define RF_GENERATED_AT             "generated_at"
#define RF_GROWING_CACHES           "growing_caches"
#define RF_GROWTH_BYTES_PER_S       "growth_bytes_per_s"
#define RF_HELD                     "held"
#define RF_HELD_AT_NEW_CODE         "held_at_new_code"
#define RF_HELD_MS                  "held_ms"
#define RF_HISTORY                  "history"
#define RF_HITS                     "hits"
#define RF_HOLDS                    "holds"
#define RF_INDIRECTLY_LOST          "indirectly_lost"
#define RF_INFLATED_BYTES           "inflated_bytes"
#define RF_INFLIGHT_STALE           "inflight_stale"
#define RF_INLINED                  "inlined"
#define RF_KERNEL_BYTES             "kernel_bytes"
#define RF_LAST_BYTES               "last_bytes"
#define RF_LAST_MS                  "last_ms"
#define RF_LAST_STOPS               "last_stops"
#define RF_LAST_ROWS                "last_rows"
#define RF_LEAKS                    "leaks"
#define RF_LIMITS                   "limits"
#define RF_LINE                     "line"
#define RF_LOCATIONS                "locations"
#define RF_LONGEST_PAUSE_MS         "longest_pause_ms"
#define RF_LONGEST_MS               "longest_ms"
#define RF_LOST                     "lost"
#define RF_LOST_IN_WINDOW           "lost_in_window"
#define RF_MAPPINGS                 "mappings"
#define RF_MAPPINGS_DROPPED         "mappings_dropped"
#define RF_MAPS                     "maps"
#define RF_MARK_CPU_MS              "mark_cpu_ms"
#define RF_MARK_MS                  "mark_ms"
#define RF_MAX                      "max"
#define RF_MAX_BYTES                "max_bytes"
#define RF_MAX_FILES                "max_files"
#define RF_MAX_MS                   "max_ms"
#define RF_MAX_OPEN                 "max_open"
#define RF_METHOD                   "method"
#define RF_MIN_AGE_S                "min_age_s"
#define RF_MISSED                   "missed"
#define RF_MISSES                   "misses"
#define RF_MMAP                     "mmap"
#define RF_MMAPS_MAP_FULL           "mmaps_map_full"
#define RF_MMAP_RANGES_CUT          "mmap_ranges_cut"
#define RF_MODE                     "mode"
#define RF_MODULE                   "module"
#define RF_MODULE_OFFSET            "module_offset"
#define RF_NESTED_CALLS             "nested_calls"
#define RF_NO_CONCURRENT            "no_concurrent"
#define RF_NO_SNAPSHOT              "no_snapshot"
#define RF_OBJECTS                  "objects"
#define RF_OFFSET                   "offset"
#define RF_OPEN                     "open"
#define RF_OTHER                    "other"
#define RF_OUTSTANDING_ALLOCS       "outstanding_allocs"
#define RF_OUTSTANDING_BYTES        "outstanding_bytes"
#define RF_OUTSTANDING_MMAPS        "outstanding_mmaps"
#define RF_OUTSTANDING_MMAP_BYTES   "outstanding_mmap_bytes"
#define RF_PARTIAL                  "partial"
#define RF_PASSES                   "passes"
#define RF_PAST_LIMIT               "past_limit"
#define RF_PATH                     "path"
#define RF_PAUSED_MS                "paused_ms"
#define RF_PER_STACK_ROWS           "per_stack_rows"
#define RF_PHASE                    "phase"
#define RF_ADOPTED                  "adopted"
#define RF_ERROR_EXITCODE           "error_exitcode"
#define RF_FAIL_ON                  "fail_on"
#define RF_GATE                     "gate"
#define RF_GROWING                  "growing"
#define RF_OUTSTANDING              "outstanding"
#define RF_PATTERN                  "pattern"
#define RF_PATTERNS                 "patterns"
#define RF_PID                      "pid"
#define RF_POINTS                   "points"
#define RF_PROBES                   "probes"
#define RF_PROCESSES                "processes"
#define RF_REACHABILITY             "reachability"
#define RF_REACHABILITY_MAX_PAUSE_MS "reachability_max_pause_ms"
#define RF_REASON                   "reason"
#define RF_RECLAIM                  "reclaim"
#define RF_REFUSED                  "refused"
#define RF_REJECTED                 "rejected"
#define RF_REOPENED                 "reopened"
#define RF_REOPEN_FAILED            "reopen_failed"
#define RF_METRICS                  "metrics"
#define RF_REPORT                   "report"
#define RF_RETURN_WITHOUT_ENTRY     "return_without_entry"
#define RF_RING_DEPTH               "ring_depth"
#define RF_RESTART_PENDING          "restart_pending"
#define RF_ROLE                     "role"
#define RF_ROUNDS                   "rounds"
#define RF_ROOTS_BYTES              "roots_bytes"
#define RF_ROWS                     "rows"
#define RF_ROWS_FREED               "rows_freed"
#define RF_ROWS_REVIVED             "rows_revived"
#define RF_RSS_BYTES                "rss_bytes"
#define RF_SAMPLE_BYTES             "sample_bytes"
#define RF_SCANNED_AT               "scanned_at"
#define RF_SCAN_MIB_PER_S           "scan_mib_per_s"
#define RF_SCAN_MS                  "scan_ms"
#define RF_SHARE                    "share"
#define RF_SINCE                    "since"
#define RF_SNAPSHOTS                "snapshots"
#define RF_SNAPSHOTS_MISSING        "snapshots_missing"
#define RF_SNAPSHOT_COST            "snapshot_cost"
#define RF_SNAPSHOT_INTERVAL_MS     "snapshot_interval_ms"
#define RF_STACKS                   "stacks"
#define RF_STACKS_DELETED           "stacks_deleted"
#define RF_STACKS_HELD              "stacks_held"
#define RF_STACKS_RESTORED          "stacks_restored"
#define RF_STACKS_TRUNCATED         "stacks_truncated"
#define RF_STACK_EFAULT             "stack_efault"
#define RF_STACK_ERROR              "stack_error"
#define RF_STACK_HASH_CLASH         "stack_hash_clash"
#define RF_STACK_ID                 "stack_id"
#define RF_STACK_NO_SCRATCH         "stack_no_scratch"
#define RF_STACK_OTHER              "stack_other"
#define RF_STACK_TABLE_FULL         "stack_table_full"
#define RF_STILL_REACHABLE          "still_reachable"
#define RF_SUPPRESSED               "suppressed"
#define RF_SUSPECTS                 "suspects"
#define RF_SYMBOL                   "symbol"
#define RF_SYMBOLS                  "symbols"
#define RF_T                        "t"
#define RF_TABLES                   "tables"
#define RF_TABLE_BLOCKS             "table_blocks"
#define RF_TABLE_BYTES              "table_bytes"
#define RF_TABLE_PERCENT            "table_percent"
#define RF_TARGET                   "target"
#define RF_TARGETS                  "targets"
#define RF_THREADS                  "threads"
#define RF_THREAD_STATE_UNAVAILABLE "thread_state_unavailable"
#define RF_TIMED_OUT                "timed_out"
#define RF_TOP                      "top"
#define RF_TOTALS                   "totals"
#define RF_TRACED_FROM_START        "traced_from_start"
#define RF_TREND                    "trend"
#define RF_TRUNCATED                "truncated"
#define RF_UNDECIDED                "undecided"
#define RF_UNIT                     "unit"
#define RF_UNWIND                   "unwind"
#define RF_UNWIND_REPEATS           "unwind_repeats"
#define RF_UNWIND_STOPPED           "unwind_stopped"
#define RF_UNWIND_STOP_DEPTH        "unwind_stop_depth"
#define RF_UNWIND_STOP_NO_CFI       "unwind_stop_no_cfi"
#define RF_UNWIND_STOP_NO_TABLE     "unwind_stop_no_table"
#define RF_UNWIND_STOP_UNCOMPUTABLE "unwind_stop_uncomputable"
#define RF_UNWIND_STOP_UNREADABLE   "unwind_stop_unreadable"
#define RF_UNWIND_TABLES            "unwind_tables"
#define RF_UNWIND_WALKS             "unwind_walks"
#define RF_UPROBE_MULTI             "uprobe_multi"
#define RF_UPTIME_S                 "uptime_s"
#define RF_VERDICT                  "verdict"
#define RF_VERDICTS_QUALIFIED       "verdicts_qualified"
#define RF_VERDICT_QUALIFIED        "verdict_qualified"
#define RF_VERSION                  "version"
#define RF_WATCH                    "watch"
#define RF_WATCHES                  "watches"
#define RF_WINDOW_S                 "window_s"
#define RF_WRITE_FAILED             "write_failed"
#define RF_WRITTEN                  "written"
#define RF_WRITTEN_BYTES            "written_bytes"

/* The status reply, beside the envelope.
 * docs: status */
#define REPLY_STATUS(X) \
        X(RF_VERSION) X(RF_UPTIME_S) X(RF_SNAPSHOT_INTERVAL_MS) X(RF_RING_DEPTH) \
        X(RF_REACHABILITY_MAX_PAUSE_MS) X(RF_RESTART_PENDING) X(RF_PROBES) \
        X(RF_SNAPSHOT_COST) X(RF_RECLAIM) X(RF_TARGETS) X(RF_WATCHES) X(RF_COUNTERS) X(RF_LOST) \
        X(RF_LIMITS)

/* One of status "watches" (attach "unit" or "cgroup"; a program memleakd.conf declares by "exe"
 * or "comm"), and the watch in an attach or detach reply.
 * docs: status */
#define REPLY_WATCH(X) \
        X(RF_UNIT) X(RF_CGROUP) X(RF_EXE) X(RF_COMM) X(RF_PATH) X(RF_CGROUPS) X(RF_PROCESSES) X(RF_ATTACHED) X(RF_MISSED) \
        X(RF_FAILED) X(RF_EVENTS_LOST)

/* status "probes": how this kernel lets memleakd probe.
 * docs: status */
#define REPLY_PROBES(X) \
        X(RF_UPROBE_MULTI) X(RF_ALLOC_SESSIONS)

/* status "snapshot_cost".
 * docs: status */
#define REPLY_SNAPSHOT_COST(X) \
        X(RF_LAST_MS) X(RF_MAX_MS) X(RF_LAST_ROWS)

/* status "reclaim".
 * docs: status */
#define REPLY_RECLAIM(X) \
        X(RF_PASSES) X(RF_ROWS_FREED) X(RF_ROWS_REVIVED) X(RF_STACKS_DELETED) \
        X(RF_STACKS_RESTORED) X(RF_STACKS_HELD)

/* status "limits".
 * docs: status */
#define REPLY_LIMITS(X) \
        X(RF_EXITED) X(RF_SYMBOLS) X(RF_UNWIND_TABLES) X(RF_TABLES) X(RF_MAPS) X(RF_CLIENTS)

/* limits "exited": the reports of exited targets.
 * docs: status */
#define REPLY_LIMITS_EXITED(X) \
        X(RF_BYTES) X(RF_MAX_BYTES) X(RF_DROPPED)

/* limits "symbols".
 * docs: status */
#define REPLY_LIMITS_SYMBOLS(X) \
        X(RF_FILES) X(RF_DISTINCT) X(RF_OPEN) X(RF_MAX_OPEN) X(RF_INFLATED_BYTES) \
        X(RF_CACHE_BYTES) X(RF_MAX_BYTES) X(RF_CLOSED_FOR_LIMITS) X(RF_REOPENED) \
        X(RF_REOPEN_FAILED) X(RF_REFUSED)

/* limits "unwind_tables".
 * docs: status */
#define REPLY_LIMITS_UNWIND_TABLES(X) \
        X(RF_FILES) X(RF_MAX_FILES) X(RF_ROWS) X(RF_BYTES) X(RF_FILES_WITHOUT_CFI) X(RF_FAILED) \
        X(RF_BUILDING) X(RF_DISK_CACHE)

/* unwind_tables "disk_cache".
 * docs: status */
#define REPLY_DISK_CACHE(X) \
        X(RF_DIRECTORY) X(RF_FILES) X(RF_BYTES) X(RF_MAX_BYTES) X(RF_HITS) X(RF_MISSES) \
        X(RF_REJECTED) X(RF_WRITTEN) X(RF_WRITE_FAILED) X(RF_EVICTED)

/* limits "tables": how full BPF's tables are.
 * docs: status */
#define REPLY_LIMITS_TABLES(X) \
        X(RF_ALLOCS) X(RF_STACKS) X(RF_PER_STACK_ROWS)

/* one of limits "tables".
 * docs: status */
#define REPLY_BUDGET(X) \
        X(RF_HELD) X(RF_MAX) X(RF_SHARE)

/* limits "maps".
 * docs: status */
#define REPLY_LIMITS_MAPS(X) \
        X(RF_KERNEL_BYTES) X(RF_MAX_BYTES)

/* limits "clients".
 * docs: status */
#define REPLY_LIMITS_CLIENTS(X) \
        X(RF_CONNECTIONS) X(RF_REFUSED) X(RF_TIMED_OUT) X(RF_ACCEPT_PAUSED)

/* A target, in every reply that names one (report/target-json.c).
 * docs: attach status report history */
#define REPLY_TARGET(X) \
        X(RF_PID) X(RF_COMM) X(RF_OUTSTANDING_BYTES) X(RF_OUTSTANDING_ALLOCS) \
        X(RF_OUTSTANDING_MMAP_BYTES) X(RF_OUTSTANDING_MMAPS) X(RF_EXITED) X(RF_MMAP) \
        X(RF_SNAPSHOTS) X(RF_SAMPLE_BYTES) X(RF_AUTO_SAMPLE) X(RF_ATTACHED_S) X(RF_ALLOCATOR) \
        X(RF_ALLOCATOR_REASON) X(RF_CHILDREN_FORKED) X(RF_FOLLOW_FORKS) X(RF_CHILDREN_FOLLOWED) \
        X(RF_CHILDREN_MISSED) X(RF_CHILDREN_MISSED_EXITED) X(RF_FORKED_FROM) X(RF_UNIT) X(RF_CGROUP)

/* A target in status, attach and detach replies, after target-json.c's fields.
 * docs: attach status */
#define REPLY_TARGET_STATUS(X) \
        X(RF_PHASE) X(RF_ADOPTED) X(RF_OBJECTS) X(RF_UNWIND) X(RF_COUNTERS) X(RF_LOST)

/* A target in a report, after target-json.c's fields.
 * docs: report */
#define REPLY_TARGET_REPORT(X) \
        X(RF_RSS_BYTES) X(RF_TREND) X(RF_REACHABILITY) X(RF_COUNTERS) X(RF_LOST) \
        X(RF_VERDICTS_QUALIFIED) X(RF_BLIND_SINCE) X(RF_LOST_IN_WINDOW)

/* A target in a history reply, after target-json.c's fields.
 * docs: history */
#define REPLY_TARGET_HISTORY(X) \
        X(RF_TOTALS) X(RF_VERDICTS_QUALIFIED) X(RF_BLIND_SINCE) X(RF_LOST_IN_WINDOW) \
        X(RF_STACKS)

/* A target's "objects".
 * docs: attach */
#define REPLY_OBJECT(X) \
        X(RF_PATH) X(RF_PROBES) X(RF_FORWARDED) X(RF_ROLE)

/* A target's "unwind": how its stacks are walked.
 * docs: status */
#define REPLY_UNWIND(X) \
        X(RF_MODE) X(RF_TABLES) X(RF_ROWS) X(RF_TABLE_BYTES) X(RF_MAPPINGS) \
        X(RF_MAPPINGS_DROPPED) X(RF_HELD_AT_NEW_CODE)

/* unwind "held_at_new_code": how often and how long (memleakctl run) it was held at new code
 * until its tables were in.
 * docs: status */
#define REPLY_HELD_AT_NEW_CODE(X) \
        X(RF_HOLDS) X(RF_HELD_MS) X(RF_LONGEST_MS) X(RF_PAST_LIMIT)

/* A target's "auto_sample".
 * docs: attach */
#define REPLY_AUTO_SAMPLE(X) \
        X(RF_SINCE) X(RF_TABLE_PERCENT) X(RF_SAMPLE_BYTES) X(RF_CHANGES_TOTAL) X(RF_CHANGES)

/* One of auto_sample "changes".
 * docs: attach */
#define REPLY_AUTO_SAMPLE_CHANGE(X) \
        X(RF_AT) X(RF_SAMPLE_BYTES) X(RF_TABLE_PERCENT) X(RF_TABLE_BLOCKS)

/* The attach reply, beside the envelope.
 * docs: attach */
#define REPLY_ATTACH(X) \
        X(RF_TARGET) X(RF_WATCH) X(RF_TARGETS)

/* The detach reply, beside the envelope.
 * docs: detach */
#define REPLY_DETACH(X) \
        X(RF_TARGET) X(RF_CHILDREN) X(RF_CHILDREN_LEFT) X(RF_WATCH) X(RF_TARGETS)

/* The history reply, beside the envelope, and its "history".
 * docs: history */
#define REPLY_HISTORY(X) \
        X(RF_HISTORY) X(RF_TARGETS)

/* One of a history target's "stacks".
 * docs: history */
#define REPLY_HISTORY_STACK(X) \
        X(RF_STACK_ID) X(RF_VERDICT) X(RF_SNAPSHOTS_MISSING) X(RF_GROWTH_BYTES_PER_S) \
        X(RF_FIRST_BYTES) X(RF_VERDICT_QUALIFIED) X(RF_POINTS)

/* One of "totals" or "points": a snapshot.
 * docs: history */
#define REPLY_POINT(X) \
        X(RF_T) X(RF_BYTES) X(RF_ALLOCS)

/* The metrics reply, beside the envelope: the metrics in Prometheus' text format.
 * docs: metrics */
#define REPLY_METRICS(X) \
        X(RF_METRICS)

/* The report reply, beside the envelope, and its "report".
 * docs: report */
#define REPLY_REPORT(X) \
        X(RF_REPORT) X(RF_GENERATED_AT) X(RF_MIN_AGE_S) X(RF_TOP) X(RF_TARGETS) X(RF_LOCATIONS) \
        X(RF_STACKS) X(RF_OTHER) X(RF_LOST)

/* report "other": the stacks past top.
 * docs: report */
#define REPLY_REPORT_OTHER(X) \
        X(RF_STACKS) X(RF_BYTES) X(RF_ALLOCS)

/* report "lost", beside the loss counters.
 * docs: report */
#define REPLY_REPORT_LOST(X) \
        X(RF_STACKS_TRUNCATED)

/* A report target's "trend".
 * docs: report */
#define REPLY_TREND(X) \
        X(RF_WINDOW_S) X(RF_BYTES_DELTA)

/* One of a report's "stacks".
 * docs: report */
#define REPLY_STACK(X) \
        X(RF_PID) X(RF_MMAP) X(RF_STACK_ID) X(RF_BYTES) X(RF_ALLOCS) X(RF_EXPECTED_ERROR) \
        X(RF_STACK_ERROR) X(RF_TRUNCATED) X(RF_ADDRESSES_CUT) X(RF_FRAMES) X(RF_LOCATIONS) X(RF_UNWIND_STOPPED) \
        X(RF_VERDICT) X(RF_SNAPSHOTS_MISSING) X(RF_GROWTH_BYTES_PER_S) X(RF_FIRST_BYTES) \
        X(RF_VERDICT_QUALIFIED) X(RF_REACHABILITY)

/* A stack's verdict, in a report or a history (report/verdict-json.c).
 * docs: report history */
#define REPLY_VERDICT(X) \
        X(RF_VERDICT) X(RF_SNAPSHOTS_MISSING) X(RF_GROWTH_BYTES_PER_S) X(RF_FIRST_BYTES) \
        X(RF_VERDICT_QUALIFIED)

/* One of a stack's "frames".
 * docs: report */
#define REPLY_FRAME(X) \
        X(RF_ADDR) X(RF_SYMBOL) X(RF_OFFSET) X(RF_INLINED) X(RF_MODULE) X(RF_MODULE_OFFSET) \
        X(RF_BUILD_ID) X(RF_FILE) X(RF_LINE)

/* A stack's "unwind_stopped".
 * docs: report */
#define REPLY_UNWIND_STOPPED(X) \
        X(RF_REASON) X(RF_MODULE) X(RF_MODULE_OFFSET)

/* A report target's "reachability": the scan.
 * docs: reachability */
#define REPLY_REACH_TARGET(X) \
        X(RF_ERROR) X(RF_METHOD) X(RF_NO_CONCURRENT) X(RF_NO_SNAPSHOT) X(RF_PARTIAL) X(RF_COPY_REAPED) \
        X(RF_AT_EXIT) X(RF_ROUNDS) X(RF_WRITTEN_BYTES) X(RF_TRACED_FROM_START) X(RF_SCANNED_AT) \
        X(RF_PAUSED_MS) X(RF_LONGEST_PAUSE_MS) X(RF_LAST_STOPS) X(RF_SCAN_MS) X(RF_THREADS) \
        X(RF_ROOTS_BYTES) X(RF_BYTES_SCANNED) X(RF_BYTES_UNREADABLE) X(RF_BLOCKS_UNREADABLE) \
        X(RF_BLOCKS_OVERLAPPING) X(RF_BLOCKS_AFTER_SNAPSHOT) X(RF_BLOCKS_FREED) \
        X(RF_BLOCKS_BYTES) X(RF_MARK_MS) X(RF_MARK_CPU_MS) X(RF_SCAN_MIB_PER_S) \
        X(RF_DEFINITELY_LOST) X(RF_INDIRECTLY_LOST) X(RF_UNDECIDED) X(RF_STILL_REACHABLE)

/* A stack's "reachability": its blocks by class.
 * docs: reachability */
#define REPLY_REACH_CLASSES(X) \
        X(RF_DEFINITELY_LOST) X(RF_INDIRECTLY_LOST) X(RF_UNDECIDED) X(RF_STILL_REACHABLE)

/* One class of a "reachability".
 * docs: reachability */
#define REPLY_REACH_TALLY(X) \
        X(RF_BYTES) X(RF_ALLOCS)

/* "counters" (the daemon's, a target's): the events counted.
 * docs: status */
#define REPLY_COUNTERS(X) \
        X(RF_ALLOCS) X(RF_FREES) X(RF_ALLOCS_FILTERED) X(RF_ALLOCS_FAILED) X(RF_NESTED_CALLS) \
        X(RF_UNWIND_WALKS) X(RF_UNWIND_STOP_DEPTH) X(RF_UNWIND_STOP_NO_CFI) \
        X(RF_UNWIND_STOP_UNCOMPUTABLE) X(RF_UNWIND_STOP_UNREADABLE) X(RF_UNWIND_STOP_NO_TABLE) \
        X(RF_ALLOCS_UNSAMPLED) X(RF_FREES_UNSAMPLED) X(RF_UNWIND_REPEATS) X(RF_FREED_BY_EXEC)

/* "lost" (the daemon's, a target's, a report's) and a report target's "lost_in_window".
 * docs: status */
#define REPLY_LOST(X) \
        X(RF_ALLOCS_MAP_FULL) X(RF_COMBINED_MAP_FULL) X(RF_THREAD_STATE_UNAVAILABLE) \
        X(RF_STACK_EFAULT) X(RF_STACK_TABLE_FULL) X(RF_STACK_HASH_CLASH) X(RF_STACK_NO_SCRATCH) \
        X(RF_STACK_OTHER) X(RF_RETURN_WITHOUT_ENTRY) X(RF_FREE_UNKNOWN) X(RF_INFLIGHT_STALE) \
        X(RF_MMAPS_MAP_FULL) X(RF_MMAP_RANGES_CUT) X(RF_FILE_MAPPINGS_LOST) \
        X(RF_FORK_EVENTS_LOST)

/* memleakctl's own: leaks --json, built from a report (docs/usage.md).
 * docs: - */
#define REPLY_LEAKS(X) \
        X(RF_LEAKS) X(RF_SUSPECTS) X(RF_GROWING_CACHES) X(RF_TARGETS)

/* memleakctl's own: one of leaks "suspects" or "growing_caches", a report's stack in the order leaks prints its fields, with last_bytes (its bytes).
 * docs: - */
#define REPLY_SUSPECT(X) \
        X(RF_PID) X(RF_STACK_ID) X(RF_VERDICT) X(RF_VERDICT_QUALIFIED) X(RF_BYTES) X(RF_ALLOCS) \
        X(RF_EXPECTED_ERROR) X(RF_GROWTH_BYTES_PER_S) X(RF_FIRST_BYTES) X(RF_LAST_BYTES) \
        X(RF_REACHABILITY) X(RF_FRAMES)

/* memleakctl's own: run, leaks and report with --suppressions: what the file suppressed
 * (docs/usage.md "In CI").
 * docs: - */
#define REPLY_SUPPRESSED(X) \
        X(RF_SUPPRESSED) X(RF_FILE) X(RF_STACKS) X(RF_ALLOCS) X(RF_BYTES) X(RF_PATTERNS)

/* memleakctl's own: one of "suppressed" "patterns", a line of the file and what it suppressed.
 * docs: - */
#define REPLY_SUPPRESSION(X) \
        X(RF_PATTERN) X(RF_LINE) X(RF_STACKS) X(RF_ALLOCS) X(RF_BYTES)

/* memleakctl's own: run and leaks with --error-exitcode: the gate's verdict, and for each verdict
 * it fails on ("lost", "growing", "outstanding") the stacks that failed it.
 * docs: - */
#define REPLY_GATE(X) \
        X(RF_GATE) X(RF_FAIL_ON) X(RF_ERROR_EXITCODE) X(RF_FAILED) X(RF_LOST) X(RF_GROWING) \
        X(RF_OUTSTANDING) X(RF_UNDECIDED)

/* memleakctl's own: the data an html page carries.
 * docs: - */
#define REPLY_HTML_DATA(X) \
        X(RF_REPORT) X(RF_HISTORY)
