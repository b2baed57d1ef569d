/* SPDX-License-Identifier: GPL-2.0-only */
/* Fuzz memleakctl's reply readers: whatever JSON comes back over the socket, each renderer
 * (text, top, folded, HTML, the pprof profile) prints it or refuses it with -EBADMSG, never
 * crashes or leaks, read whole or as memleakctl reads it (its report's stacks kept as text). The
 * input is a reply's object; each renderer gets it and each of its members (a reply nests its
 * report, status or history one level down). */
#include <errno.h>
#include <string.h>
#include "fuzz-util.h"
#include "html-report.h"
#include "json-raw.h"
#include "json-util.h"
#include "pprof-export.h"
#include "render-folded.h"
#include "render.h"

static FILE *sink;

static void render_one(int (*render)(FILE *f, const cJSON *obj), const cJSON *obj)
{
        int r;

        r = render(sink, obj);
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM || r == -EIO);
        r = render_text_safely(sink, obj, render);
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM || r == -EIO);
}

static void render_all(const cJSON *obj)
{
        int r;

        render_one(render_attach, obj);
        render_one(render_detach, obj);
        render_one(render_status, obj);
        render_one(render_report, obj);
        render_one(render_report_with_addresses, obj);
        render_one(render_leaks, obj);
        render_one(render_history, obj);
        render_one(render_folded, obj);
        render_one(render_json, obj);
        (void) render_top(sink, obj, RENDER_TOP_BY_GROWTH, 20, 1);
        (void) render_top(sink, obj, RENDER_TOP_BY_BYTES, 3, 0);
        (void) render_top(sink, obj, RENDER_TOP_BY_COUNT, 1000, 2);
        r = pprof_export_write(sink, obj);
        FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM || r == -EIO);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_json_ cJSON *root = NULL;
        _cleanup_free_ char *text = NULL;
        const cJSON *item;

        if (size > 256 * 1024)
                return 0;
        if (!sink) {
                sink = fopen("/dev/null", "we");
                FUZZ_CHECK(sink);
        }
        text = strndup((const char *) data, size);
        FUZZ_CHECK(text);
        /* as memleakctl reads a reply: each stack of its report kept as text until it is read
         * (json-raw.h); a JSON object is always read so, and its renderers take it */
        static const char *const report_stacks[] = { "report", "stacks", NULL }, *const stacks[] = { "stacks", NULL };
        for (size_t i = 0; i < 2; i++) {
                _cleanup_json_ cJSON *kept = NULL, *parsed = cJSON_ParseWithOpts(text, NULL, true);
                int r = json_parse_raw_array(text, strlen(text), i == 0 ? report_stacks : stacks, &kept);

                FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
                FUZZ_CHECK(!cJSON_IsObject(parsed) || r == 0 || r == -ENOMEM);
                if (r == 0) {
                        render_all(kept);
                        cJSON_ArrayForEach(item, kept)
                                render_all(item);
                }
        }
        root = cJSON_Parse(text);
        if (!root)
                return 0;
        render_all(root);
        cJSON_ArrayForEach(item, root)
                render_all(item);
        (void) html_report_write(sink, cJSON_GetObjectItemCaseSensitive(root, "report"),
                                 cJSON_GetObjectItemCaseSensitive(root, "history"));
        (void) html_report_write(sink, root, NULL);
        return 0;
}
