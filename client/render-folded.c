/* SPDX-License-Identifier: MIT */
/* A report as folded stacks, for flame graph tools. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include "json-util.h"
#include "render-folded.h"
#include "reply-fields.h"
#include "report-stacks.h"
#include "util.h"

/* s with ';' (the frame separator) and control characters (a line break would split the stack)
 * as '_'. */
static void put_name(FILE *f, const char *s)
{
        for (; *s; s++)
                fputc(*s == ';' || (unsigned char)*s < 0x20 || *s == 0x7f ? '_' : *s, f);
}

static void put_frame(FILE *f, const cJSON *frame)
{
        const char *symbol = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(frame, RF_SYMBOL));
        const char *module = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(frame, RF_MODULE));
        const char *addr = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(frame, RF_ADDR));
        uint64_t offset;

        if (symbol) {
                put_name(f, symbol);
        } else if (module) {
                put_name(f, path_base_name(module));
                if (json_get_u64(cJSON_GetObjectItemCaseSensitive(frame, RF_MODULE_OFFSET), UINT64_MAX, &offset) >= 0)
                        fprintf(f, "+0x%" PRIx64, offset);
        } else {
                put_name(f, addr ? addr : "??");
        }
}

/* The stack's process, as its root frame: "comm (pid N)", the kernel's "[kernel]". */
static void put_process(FILE *f, const cJSON *report, const cJSON *stack)
{
        const cJSON *targets = cJSON_GetObjectItemCaseSensitive(report, RF_TARGETS), *t;
        uint64_t pid = 0, tpid;

        (void)json_get_u64(cJSON_GetObjectItemCaseSensitive(stack, RF_PID), UINT64_MAX, &pid);
        if (pid == 0) {
                fputs("[kernel]", f);
                return;
        }
        cJSON_ArrayForEach(t, targets)
                if (json_get_u64(cJSON_GetObjectItemCaseSensitive(t, RF_PID), UINT64_MAX, &tpid) >= 0 && tpid == pid &&
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, RF_COMM))) {
                        put_name(f, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, RF_COMM)));
                        break;
                }
        fprintf(f, " (pid %" PRIu64 ")", pid);
}

/* What --top left out, as a comment line (it ends in no number: a tool that does not know
 * comments skips it as a malformed line rather than count it). */
static void put_left_out(FILE *f, const cJSON *report, size_t listed)
{
        const cJSON *other = cJSON_GetObjectItemCaseSensitive(report, RF_OTHER);
        uint64_t stacks = 0, bytes = 0, allocs = 0;

        if (json_get_u64(cJSON_GetObjectItemCaseSensitive(other, RF_STACKS), UINT64_MAX, &stacks) < 0 || stacks == 0)
                return;
        (void)json_get_u64(cJSON_GetObjectItemCaseSensitive(other, RF_BYTES), UINT64_MAX, &bytes);
        (void)json_get_u64(cJSON_GetObjectItemCaseSensitive(other, RF_ALLOCS), UINT64_MAX, &allocs);
        fprintf(f, "# memleakctl report: the %zu largest stacks; %" PRIu64 " more (%" PRIu64 " bytes in %" PRIu64
                " allocations) left out: --top for them\n", listed, stacks, bytes, allocs);
}

static int folded(FILE *f, const cJSON *report, const char *value)
{
        _cleanup_(report_stacks_done) struct report_stacks rs = {};
        const cJSON *item;

        if (report_stacks_init(&rs, report) < 0)
                return -EBADMSG;
        put_left_out(f, report, (size_t)cJSON_GetArraySize(rs.stacks));
        cJSON_ArrayForEach(item, rs.stacks) {
                _cleanup_json_ cJSON *stack = NULL;
                const cJSON *frames;
                uint64_t v = 0;
                /* one stack at a time (put_name() makes its names safe) */
                int r = report_stacks_open(&rs, item, NULL, NULL, &stack);

                if (r < 0)
                        return r;
                frames = cJSON_GetObjectItemCaseSensitive(stack, RF_FRAMES);

                (void)json_get_u64(cJSON_GetObjectItemCaseSensitive(stack, value), UINT64_MAX, &v);
                put_process(f, report, stack);
                for (int i = cJSON_GetArraySize(frames) - 1; i >= 0; i--) {
                        fputc(';', f);
                        put_frame(f, cJSON_GetArrayItem(frames, i));
                }
                fprintf(f, " %" PRIu64 "\n", v);
        }
        return ferror(f) ? -EIO : 0;
}

int render_folded(FILE *f, const cJSON *report)
{
        return folded(f, report, RF_BYTES);
}

int render_folded_allocs(FILE *f, const cJSON *report)
{
        return folded(f, report, RF_ALLOCS);
}
