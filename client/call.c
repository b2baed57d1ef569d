/* SPDX-License-Identifier: MIT */
/* The scaffold of a memleakctl subcommand that asks memleakd one question. */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include "call.h"
#include "connection.h"
#include "json-util.h"
#include "macro.h"
#include "output-file.h"
#include "render.h"

static void call_args_done(struct call_args *args)
{
        memleak_request_done(&args->req);
        gate_options_done(&args->gate);
}

int call_daemon(const struct ctl_context *ctx, const char *what, const struct memleak_request *req, cJSON **ret_reply)
{
        _cleanup_free_ char *error = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        fd = connection_open(ctx->socket_path);
        if (fd < 0) {
                error = connection_open_error(ctx->socket_path, fd);
                ctl_error(ctx, -fd, "%s", error ?: strerror(-fd));
                return CTL_EXIT_FAILURE;
        }
        r = connection_call(fd, req, CONNECTION_TIMEOUT_MS, ret_reply, &error);
        if (r < 0) {
                const char *message = error ? error : strerror(-r);

                if (ctx->json)
                        ctl_error(ctx, -r, "%s", message);
                else
                        ctl_error(ctx, -r, "%s failed: %s (%s)", what, message, memleak_errno_to_code(r));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

struct view_output {
        const struct ctl_context *ctx;
        const struct call_view *view;
};

static int view_write(FILE *f, void *userdata)
{
        const struct view_output *o = userdata;
        const struct call_view *v = o->view;

        if (o->ctx->json)
                return render_json(f, v->json);
        return v->binary ? v->render(f, v->text) : render_text_safely(f, v->text, v->render);
}

/* Print the view's text with its renderer, or its JSON, to stdout or its file; then make sure it
 * got there. */
static int print_view(const struct ctl_context *ctx, const char *cmd, const struct call_view *v)
{
        struct view_output o = { .ctx = ctx, .view = v };
        int r;

        if (!cJSON_IsObject(v->text)) {
                ctl_error(ctx, EBADMSG, "%s failed: Malformed reply from memleakd (no %s)", cmd, v->what);
                return CTL_EXIT_FAILURE;
        }
        if (v->output)
                r = output_file_write(v->output, view_write, &o);
        else {
                r = view_write(stdout, &o);
                if (r >= 0 && fflush(stdout) != 0)
                        r = -errno;
        }
        if (r == -EBADMSG) {
                ctl_error(ctx, -r, "%s failed: Malformed %s in the reply from memleakd", cmd, v->what);
                return CTL_EXIT_FAILURE;
        }
        if (r < 0) {
                ctl_error(ctx, -r, "%s: cannot write the %s to %s: %s", cmd, v->what, v->output ?: "stdout",
                          strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        if (v->output && !ctx->json)
                fprintf(stderr, "Wrote %s\n", v->output);
        return CTL_EXIT_OK;
}

int call_command_run(const struct call_command *command, struct ctl_context *ctx, int argc, char *argv[])
{
        _cleanup_(call_args_done) struct call_args args = {};
        _cleanup_json_ cJSON *reply = NULL;
        struct call_view view;
        int c, r;

        assert(command);
        assert(ctx);
        assert(argv);

        args.req = command->request;
        optind = 0;
        while ((c = getopt_long(argc, argv, command->short_options, command->long_options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        ctx->json = true;
                        break;
                case 'h':
                        command->help();
                        return CTL_EXIT_OK;
                case '?':
                case ':':
                        return ctl_option_error(ctx, command->name, c, argv);
                default:
                        if (!command->parse_option)
                                return ctl_option_error(ctx, command->name, c, argv);
                        r = command->parse_option(ctx, &args, c, optarg);
                        if (r != CTL_EXIT_OK)
                                return r;
                }
        if (optind < argc)
                return ctl_usage_error(ctx, "%s: unexpected argument '%s'", command->name, argv[optind]);
        if (args.format == CALL_FORMAT_JSON)
                ctx->json = true;
        if (command->check) {
                r = command->check(ctx, &args);
                if (r != CTL_EXIT_OK)
                        return r;
        }

        if (command->instead) {
                r = command->instead(ctx, &args);
                if (r >= 0)
                        return r;
        }

        /* a gate and suppressions see every stack: those past --top are folded after them */
        args.keep = args.req.top;
        if (gate_options_active(&args.gate) && args.req.cmd == MEMLEAK_CMD_REPORT)
                args.req.top = MEMLEAK_MAX_TOP;
        r = call_daemon(ctx, command->name, &args.req, &reply);
        if (r != CTL_EXIT_OK)
                return r;
        command->view(&args, reply, &view);
        r = print_view(ctx, command->name, &view);
        cJSON_Delete(view.owned);
        return r != CTL_EXIT_OK ? r : view.status;
}

cJSON *call_reply_body(cJSON *reply)
{
        assert(reply);

        cJSON_DeleteItemFromObjectCaseSensitive(reply, F_VERSION);
        cJSON_DeleteItemFromObjectCaseSensitive(reply, F_ID);
        cJSON_DeleteItemFromObjectCaseSensitive(reply, F_RESULT_OK);
        cJSON_DeleteItemFromObjectCaseSensitive(reply, F_WARNINGS);    /* printed on stderr */
        return reply;
}
