/* SPDX-License-Identifier: MIT */
/* The CI gate's options, shared by memleakctl run and leaks: --error-exitcode N, --fail-on
 * LIST, --suppressions FILE; the file read, the gate applied to a report and its failure said
 * on stderr. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "ctl.h"
#include "gate.h"

/* getopt_long() values of the long-only options. */
#define GATE_OPT_ERROR_EXITCODE 0x1e0
#define GATE_OPT_FAIL_ON        0x1e1
#define GATE_OPT_SUPPRESSIONS   0x1e2

/* The three as struct option lines, for a command's table. */
#define GATE_LONG_OPTIONS                                                               \
        { "error-exitcode", required_argument, NULL, GATE_OPT_ERROR_EXITCODE },         \
        { "fail-on", required_argument, NULL, GATE_OPT_FAIL_ON },                       \
        { "suppressions", required_argument, NULL, GATE_OPT_SUPPRESSIONS }

struct gate_options {
        int error_exitcode;             /* 0: no gate, the command's own exit status */
        unsigned fail_on;               /* 0 without --fail-on: the command's default */
        struct suppressions *suppressions;      /* --suppressions FILE, read and parsed */
};

void gate_options_done(struct gate_options *o);

/* One of the three options into o (--suppressions FILE read and parsed at once: an error names
 * FILE:LINE): CTL_EXIT_OK, CTL_EXIT_USAGE once the error is printed, or -1 when c is none. */
int gate_options_parse(const struct ctl_context *ctx, const char *cmd, struct gate_options *o, int c,
                       const char *arg);

/* Once all options are parsed: --fail-on only with --error-exitcode, and only what the command
 * allows. Returns CTL_EXIT_OK, or CTL_EXIT_USAGE once the error is printed. */
int gate_options_check(const struct ctl_context *ctx, const char *cmd, const struct gate_options *o,
                       unsigned allowed);

/* Whether the report must be asked for with every stack (a gate judges them all, and
 * suppressions are counted over them all). */
bool gate_options_active(const struct gate_options *o);

/* gate_apply() to report with o (without --fail-on, default_fail_on; without --error-exitcode,
 * the suppressions only); keep: the stacks to list (--top). 0, -ENOMEM, -EBADMSG. */
int gate_options_apply(const struct gate_options *o, unsigned default_fail_on, cJSON *report, uint64_t keep,
                       struct gate_result *ret);

/* Once the report is printed: when the gate failed, say why on stderr ("memleakctl: CMD: ...",
 * each reason it could not decide too) and return o->error_exitcode; else CTL_EXIT_OK. r is
 * done with. */
int gate_options_verdict(const char *cmd, const struct gate_options *o, struct gate_result *r);
