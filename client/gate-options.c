/* SPDX-License-Identifier: MIT */
/* The CI gate's options, shared by memleakctl run and leaks. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "gate-options.h"
#include "macro.h"
#include "text-safe.h"

void gate_options_done(struct gate_options *o)
{
        if (!o)
                return;
        o->suppressions = suppressions_free(o->suppressions);
}

/* The whole file, bounded: a suppressions file is small. */
static int read_file(const char *path, char **ret, size_t *ret_size)
{
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -1;
        size_t size = 0, max = SUPPRESSIONS_MAX_BYTES + 1;
        ssize_t n;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        buf = malloc(max);
        if (!buf)
                return -ENOMEM;
        while (size < max) {
                n = read(fd, buf + size, max - size);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                size += (size_t)n;
        }
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

static int load_suppressions(const struct ctl_context *ctx, const char *cmd, struct gate_options *o,
                             const char *path)
{
        _cleanup_free_ char *text = NULL, *error = NULL;
        size_t size = 0;
        int r;

        r = read_file(path, &text, &size);
        if (r < 0) {
                ctl_error(ctx, -r, "%s: cannot read the suppressions file %s: %s", cmd, path, strerror(-r));
                return CTL_EXIT_USAGE;
        }
        r = suppressions_parse(text, size, path, &o->suppressions, &error);
        if (r < 0) {
                ctl_error(ctx, -r, "%s: %s", cmd, error ? error : strerror(-r));
                return CTL_EXIT_USAGE;
        }
        return CTL_EXIT_OK;
}

int gate_options_parse(const struct ctl_context *ctx, const char *cmd, struct gate_options *o, int c,
                       const char *arg)
{
        uint64_t v;

        assert(ctx);
        assert(o);

        switch (c) {
        case GATE_OPT_ERROR_EXITCODE:
                if (ctl_parse_u64(arg, 255, &v) < 0 || v == 0)
                        return ctl_usage_error(ctx, "%s: --error-exitcode must be an exit status between 1 and "
                                               "255, not '%s'", cmd, arg);
                o->error_exitcode = (int)v;
                return CTL_EXIT_OK;
        case GATE_OPT_FAIL_ON:
                if (gate_kinds_parse(arg, &o->fail_on) < 0)
                        return ctl_usage_error(ctx, "%s: --fail-on takes a comma list of lost, growing and "
                                               "outstanding, not '%s'", cmd, arg);
                return CTL_EXIT_OK;
        case GATE_OPT_SUPPRESSIONS:
                if (o->suppressions)
                        return ctl_usage_error(ctx, "%s: give --suppressions once", cmd);
                return load_suppressions(ctx, cmd, o, arg);
        }
        return -1;
}

int gate_options_check(const struct ctl_context *ctx, const char *cmd, const struct gate_options *o,
                       unsigned allowed)
{
        char have[64], may[64];

        assert(ctx);
        assert(o);

        if (o->fail_on && !o->error_exitcode)
                return ctl_usage_error(ctx, "%s: --fail-on says what fails --error-exitcode N: give both", cmd);
        if (o->fail_on & ~allowed)
                return ctl_usage_error(ctx, "%s: --fail-on %s: %s judges only %s", cmd,
                                       gate_kinds_to_string(o->fail_on & ~allowed, have, sizeof(have)), cmd,
                                       gate_kinds_to_string(allowed, may, sizeof(may)));
        return CTL_EXIT_OK;
}

bool gate_options_active(const struct gate_options *o)
{
        return o && (o->error_exitcode || o->suppressions);
}

static const char *plural(uint64_t n, const char *one, const char *more)
{
        return n == 1 ? one : more;
}

static void say_tally(const char *cmd, const char *kind, const struct gate_tally *t, const char *what)
{
        if (t->stacks == 0)
                return;
        fprintf(stderr, "memleakctl: %s: fails on %s: %" PRIu64 " %s %s %" PRIu64 " bytes in %" PRIu64 " %s\n",
                cmd, kind, t->stacks, plural(t->stacks, "stack", "stacks"), what, t->bytes, t->allocs,
                plural(t->allocs, "block", "blocks"));
}

int gate_options_apply(const struct gate_options *o, unsigned default_fail_on, cJSON *report, uint64_t keep,
                       struct gate_result *ret)
{
        unsigned fail_on = !o->error_exitcode ? 0 : o->fail_on ? o->fail_on : default_fail_on;

        assert(o);
        assert(report);
        assert(ret);

        return gate_apply(report, o->suppressions, fail_on, o->error_exitcode, keep, ret);
}

int gate_options_verdict(const char *cmd, const struct gate_options *o, struct gate_result *r)
{
        const cJSON *why;
        char kinds[64];

        assert(cmd);
        assert(o);
        assert(r);

        if (!o->error_exitcode || !r->failed) {
                gate_result_done(r);
                return CTL_EXIT_OK;
        }
        say_tally(cmd, "lost", &r->lost, "holding lost blocks:");
        say_tally(cmd, "growing", &r->growing, "growing, now");
        say_tally(cmd, "outstanding", &r->outstanding, "holding");
        cJSON_ArrayForEach(why, r->undecided) {
                _cleanup_free_ char *safe = text_escape_controls(why->valuestring);

                fprintf(stderr, "memleakctl: %s: cannot decide %s\n", cmd, safe ? safe : why->valuestring);
        }
        fprintf(stderr, "memleakctl: %s: the leak check failed (--fail-on %s): exit status %d (--error-exitcode)\n",
                cmd, gate_kinds_to_string(r->fail_on, kinds, sizeof(kinds)), o->error_exitcode);
        gate_result_done(r);
        return o->error_exitcode;
}
