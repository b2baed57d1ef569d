/* SPDX-License-Identifier: MIT */
/* The wire contract between memleakd and memleakctl: commands, fields, limits, error codes.
 *
 * Framing: a stream Unix socket carrying newline-delimited JSON. Each request and each
 * response is one JSON object on one line ("\n"-terminated; cJSON's unformatted output never
 * contains a raw newline). A connection may carry many requests; responses come in order.
 *
 * Protocol versions ("v" in every message):
 *   1  first version: attach, detach, status, report.
 *      Later, with no bump (optional fields; a request without them means what it meant):
 *      "kernel" on attach, detach and report names the kernel target instead of a "pid";
 *      "kernel_pid" and "kernel_comm" on attach filter it by the allocating process;
 *      "exec" on attach: the process is held before it execs that program (memleakctl run);
 *      "reachability_snapshot_only" on report: a live scan only from a snapshot, never stopping
 *      the process for the whole scan (memleakctl leaks by default);
 *      history: each target has the fields every reply's target has (the forks too), each stack
 *      "first_bytes", as a report's do;
 *      "unit" and "cgroup" on attach, detach, report and history: a whole service, every process
 *      in that cgroup now and later (status lists the "watches");
 *      "locations" on report: the report's frames in one table, the stacks refer to it by index
 *      (a full report at any size). Reply fields are named in reply-fields.h.
 * A new command does not bump the version; a changed message does.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#define MEMLEAK_PROTOCOL_VERSION 1

/* Limits the daemon enforces on what a client controls. */
#define MEMLEAK_MAX_REQUEST_BYTES  (64u * 1024u)          /* one request line, newline included */
#define MEMLEAK_MAX_RESPONSE_BYTES (256u * 1024u * 1024u) /* the client refuses larger replies */
#define MEMLEAK_MAX_OBJS           16                     /* --obj per attach */
#define MEMLEAK_MAX_PATH_BYTES     4096
#define MEMLEAK_MAX_TOP            1000000
#define MEMLEAK_MAX_STACK_ID       9007199254740991ULL     /* stack ids are below 2^53 */
#define MEMLEAK_MAX_MIN_AGE_S      (10u * 365u * 24u * 3600u)
#define MEMLEAK_MAX_SIZE_BYTES     (UINT64_C(1) << 48)    /* min_size/max_size: 256 TiB */
#define MEMLEAK_MAX_SAMPLE_BYTES   (UINT64_C(1) << 32)    /* sample_bytes: 4 GiB */
#define MEMLEAK_MAX_ID             UINT32_MAX
#define MEMLEAK_MAX_COMM_BYTES     15                     /* kernel_comm: TASK_COMM_LEN - 1 */
#define MEMLEAK_MAX_UNKNOWN_NAMED  8                      /* unknown request fields named back */
#define MEMLEAK_MAX_UNKNOWN_NAME_BYTES 64
/* cJSON prints numbers with 15 significant digits, so every integer field stays below 10^15. */

#define MEMLEAK_DEFAULT_SOCKET     "/run/memleakd/memleakd.sock"
#define MEMLEAK_SOCKET_ENV         "MEMLEAKD_SOCKET"
#define MEMLEAK_DEFAULT_TOP        10

/* Request and envelope field names (the replies' are reply-fields.h's). */
#define F_VERSION       "v"
#define F_ID            "id"
#define F_CMD           "cmd"
#define F_RESULT_OK     "ok"
#define F_ERROR         "error"
#define F_CODE          "code"
#define F_MESSAGE       "message"
#define F_SOFTWARE      "version"       /* every reply: the memleakd that answered ("0.1.0") */
#define F_WARNINGS      "warnings"      /* a reply: what the daemon ignored in the request */
#define F_PID           "pid"
#define F_OBJS          "objs"
#define F_EXEC          "exec"
#define F_MIN_SIZE      "min_size"
#define F_MAX_SIZE      "max_size"
#define F_TOP           "top"
#define F_MIN_AGE_S     "min_age_s"
#define F_KERNEL        "kernel"
#define F_KERNEL_PID    "kernel_pid"
#define F_KERNEL_COMM   "kernel_comm"
#define F_MMAP          "mmap"
#define F_UNWIND        "unwind"
#define F_STACK_ID      "stack_id"
#define F_VERDICT       "verdict"
#define F_REACHABILITY  "reachability"
#define F_SNAPSHOT_ONLY "reachability_snapshot_only"
#define F_SAMPLE_BYTES  "sample_bytes"
#define F_FOLLOW_FORKS  "follow_forks"
#define F_CHILDREN      "children"
#define F_UNIT          "unit"
#define F_CGROUP        "cgroup"
#define F_LOCATIONS     "locations"

enum memleak_command {
        MEMLEAK_CMD_ATTACH,
        MEMLEAK_CMD_DETACH,
        MEMLEAK_CMD_STATUS,
        MEMLEAK_CMD_REPORT,
        MEMLEAK_CMD_HISTORY,
        MEMLEAK_CMD_METRICS,
        _MEMLEAK_CMD_MAX,
        _MEMLEAK_CMD_INVALID = -1,
};

const char *memleak_command_to_string(enum memleak_command c);

/* How a target's user stacks are walked (attach "unwind"; the config's unwind key). */
enum memleak_unwind {
        MEMLEAK_UNWIND_DEFAULT = 0,     /* not given: the daemon's config decides */
        MEMLEAK_UNWIND_AUTO,            /* the CFI of objects that have it, frame pointers elsewhere */
        MEMLEAK_UNWIND_DWARF,           /* the same, asked for by name */
        MEMLEAK_UNWIND_FP,              /* frame pointers only (the kernel's walk) */
        _MEMLEAK_UNWIND_MAX,
        _MEMLEAK_UNWIND_INVALID = -1,
};

/* The leak verdicts a report may be filtered by: "growing", "plateau", "churn", "pending" (the
 * daemon's enum leak_verdict has the same values). */
enum memleak_verdict {
        MEMLEAK_VERDICT_PENDING = 0,
        MEMLEAK_VERDICT_GROWING,
        MEMLEAK_VERDICT_PLATEAU,
        MEMLEAK_VERDICT_CHURN,
        _MEMLEAK_VERDICT_MAX,
        _MEMLEAK_VERDICT_INVALID = -1,
};

const char *memleak_verdict_to_string(enum memleak_verdict v);
enum memleak_verdict memleak_verdict_from_string(const char *s);

/* "auto", "dwarf", "fp" (NULL for the default); the inverse refuses "default". */
const char *memleak_unwind_to_string(enum memleak_unwind u);
enum memleak_unwind memleak_unwind_from_string(const char *s);
enum memleak_command memleak_command_from_string(const char *s);

/* A decoded, validated request. Strings are owned by the request. */
struct memleak_request {
        uint64_t id;
        enum memleak_command cmd;
        bool has_pid;
        int32_t pid;
        char *objs[MEMLEAK_MAX_OBJS];
        unsigned n_objs;
        char *exec;                     /* attach: the program pid is about to exec (absolute path) */
        uint64_t min_size;              /* 0: none */
        uint64_t max_size;              /* 0: none */
        uint64_t sample_bytes;          /* attach: sample every ~N bytes; 0: the config's default */
        uint64_t top;                   /* report: stacks listed before "other" */
        uint64_t min_age_s;             /* report: only allocations at least this old */
        bool kernel;                    /* attach, detach, report: the kernel target, not a pid */
        int32_t kernel_pid;             /* attach --kernel: only this process's allocations; 0: any */
        char kernel_comm[MEMLEAK_MAX_COMM_BYTES + 1];   /* attach --kernel: only this comm; "": any */
        bool mmap;                      /* attach: track anonymous mappings too */
        enum memleak_unwind unwind;     /* attach: how its stacks are walked */
        bool has_stack_id;
        uint64_t stack_id;              /* history: only this stack */
        int verdict;                    /* report: 1 + the enum memleak_verdict of the only
                                         * stacks to list; 0: every stack */
        bool reachability;              /* report: scan the live target's memory first; attach
                                         * (with exec): hold the program at its exit to scan it */
        bool snapshot_only;             /* report, with reachability: only from a snapshot (no
                                         * stopped scan where none can be taken) */
        bool follow_forks;              /* attach: attach the processes it forks too, and theirs */
        bool children;                  /* report, history (with pid): the processes followed from
                                         * it too */
        char *unit;                     /* attach, detach, report, history: every process of that
                                         * unit's cgroup (NAME.service, .scope, .slice) */
        char *cgroup;                   /* the same, for a cgroup v2 directory (absolute, or
                                         * relative to the cgroup2 mount) */
        bool locations;                 /* report: each distinct frame once, in the report's
                                         * "locations", each stack a list of indices into it */
        /* Fields this version does not know (a newer client's): ignored, named in the reply's
         * warnings; the first few names kept, each cut to MEMLEAK_MAX_UNKNOWN_NAME_BYTES. */
        char *unknown[MEMLEAK_MAX_UNKNOWN_NAMED];
        unsigned n_unknown;             /* kept in unknown[] */
        unsigned n_unknown_total;       /* all of them */
};

void memleak_request_done(struct memleak_request *req);

/* Validate in order: size, framing, version, command known, fields typed and in range.
 * On failure returns a negative errno and sets *error_message to a static string; *ret_id
 * carries the request id when one could be read (0 otherwise) so the error reply matches. */
int memleak_request_parse(const char *line, size_t len, struct memleak_request *ret,
                          uint64_t *ret_id, const char **error_message);

/* The warnings a reply to req carries ({"warnings": [...]}'s array: the unknown fields it
 * ignored), or NULL when there are none (or no memory for them). */
cJSON *memleak_request_warnings(const struct memleak_request *req);

/* Encode a request (client side): the inverse of memleak_request_parse. */
cJSON *memleak_request_to_json(const struct memleak_request *req);

/* Response skeletons: {"v":1,"version":"0.1.0","id":ID,"ok":true} and the error form. */
cJSON *memleak_response_new_ok(uint64_t id);
cJSON *memleak_response_new_error(uint64_t id, int error, const char *message);

/* "ESRCH" for ESRCH (either sign), ...; "EIO" for anything unnamed. The inverse returns a
 * positive errno, EIO for an unknown or NULL code. */
const char *memleak_errno_to_code(int error);
int memleak_errno_from_code(const char *code);

/* Serialize one message as a framed line (JSON + "\n"); NULL on allocation failure. */
char *memleak_frame_encode(const cJSON *msg, size_t *ret_len);

/* Length of the first complete frame in buf (up to and including its "\n"); 0 when none yet. */
size_t memleak_frame_find_end(const char *buf, size_t len);

/* Check a reply against its request (chrony client.c): version, id, "ok".
 * Returns 0 when ok; -errno from the daemon's error code otherwise, with *error_message
 * pointing into the reply (or to a static string for a malformed reply). */
int memleak_response_check(const cJSON *reply, uint64_t expected_id, const char **error_message);
