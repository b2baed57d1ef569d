/* SPDX-License-Identifier: MIT */
/* The scaffold of a memleakctl subcommand that asks memleakd one question: parse the command's
 * options, check them, connect, send, receive, check the reply, print it as text or JSON. A
 * command file holds only what is its own: its options, its help, its request, its view. */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <cjson/cJSON.h>
#include "ctl.h"
#include "gate-options.h"
#include "protocol.h"

/* What a command writes: report --format. */
enum call_format {
        CALL_FORMAT_TEXT,
        CALL_FORMAT_JSON,               /* as --json: errors as JSON too */
        CALL_FORMAT_FOLDED,             /* folded stacks, for flame graphs */
        CALL_FORMAT_PPROF,              /* a gzip'd pprof profile: bytes, not text */
        CALL_FORMAT_HTML,               /* report: the page memleakctl html writes */
};

/* What the command line asked for. */
struct call_args {
        struct memleak_request req;     /* sent as it is; its strings are freed after */
        bool show_addresses;            /* report: print each frame's raw address too */
        enum call_format format;        /* CALL_FORMAT_JSON turns on ctx->json once parsed */
        const char *output;             /* --output FILE: written there instead of to stdout */
        bool top_given;                 /* report: --top was given (pprof takes every stack without it) */
        bool folded_allocs;             /* report --format folded --value allocs: counts, not bytes */
        bool value_given;               /* report: --value was given */
        struct gate_options gate;       /* leaks, report: --error-exitcode, --fail-on, --suppressions */
        uint64_t keep;                  /* with a gate: the stacks to list (--top); all are asked for */
};

/* What a command prints of the reply. */
struct call_view {
        const char *what;                               /* named in errors: "target", "report" */
        const cJSON *text;                              /* printed through render */
        const cJSON *json;                              /* printed with --json */
        int (*render)(FILE *f, const cJSON *obj);
        bool binary;                                    /* render writes bytes: as they are, never to a terminal */
        const char *output;                             /* written to this file, whole or not at all; NULL: stdout */
        cJSON *owned;                                   /* freed once printed (text made for it) */
        int status;                     /* the exit status once it is printed (a gate's) */
};

struct call_command {
        const char *name;
        /* getopt_long()'s: "+:" first, and 'j' (--json) and 'h' (--help), which the scaffold handles */
        const char *short_options;
        const struct option *long_options;
        void (*help)(void);
        struct memleak_request request;                 /* the request before any option */
        /* One option (not -j, -h, nor one getopt_long() refused) into args: returns CTL_EXIT_OK,
         * or an exit status once the error is printed. NULL: the command has no options of its own. */
        int (*parse_option)(const struct ctl_context *ctx, struct call_args *args, int c, const char *arg);
        /* The options together, once all are parsed; the same returns. NULL: nothing to check. */
        int (*check)(const struct ctl_context *ctx, const struct call_args *args);
        /* What to print of a reply memleakd accepted (reply may be trimmed to do so). */
        void (*view)(const struct call_args *args, cJSON *reply, struct call_view *ret);
        /* What the command does instead of its one question when args ask for it: returns -1 to
         * ask the question, else its exit status. NULL: always the question. */
        int (*instead)(struct ctl_context *ctx, const struct call_args *args);
};

/* Send req to memleakd for the command named what; on failure say why (once, "what failed: ...")
 * and return the exit status (CTL_EXIT_OK with the reply in *ret_reply). */
int call_daemon(const struct ctl_context *ctx, const char *what, const struct memleak_request *req,
                cJSON **ret_reply);

/* Run command on its own argv (argv[0] is its name); returns an exit status. */
int call_command_run(const struct call_command *command, struct ctl_context *ctx, int argc, char *argv[]);

/* The reply less its envelope (v, id, ok), in place: what --json prints for attach, detach and status. */
cJSON *call_reply_body(cJSON *reply);
