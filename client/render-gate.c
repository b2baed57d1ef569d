/* SPDX-License-Identifier: MIT */
/* What a suppressions file took out of a report, as text. */
#include <errno.h>
#include <inttypes.h>
#include "json-util.h"
#include "render-gate.h"
#include "render.h"
#include "reply-fields.h"

static uint64_t u64_of(const cJSON *obj, const char *name)
{
        uint64_t v;

        return json_get_u64(cJSON_GetObjectItemCaseSensitive(obj, name), UINT64_MAX, &v) < 0 ? 0 : v;
}

int render_suppressed(FILE *f, const cJSON *obj)
{
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(obj, RF_SUPPRESSED), *p;
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, RF_FILE));
        uint64_t stacks = u64_of(s, RF_STACKS), allocs = u64_of(s, RF_ALLOCS);
        bool header = false;

        if (!cJSON_IsObject(s))
                return 0;
        fprintf(f, "\nSuppressed: %" PRIu64 " bytes in %" PRIu64 " block%s by %" PRIu64 " stack%s (%s)\n",
                u64_of(s, RF_BYTES), allocs, allocs == 1 ? "" : "s", stacks, stacks == 1 ? "" : "s",
                file ? file : "?");
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(s, RF_PATTERNS)) {
                const char *pattern = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(p, RF_PATTERN));

                if (u64_of(p, RF_STACKS) == 0)
                        continue;
                if (!header)
                        fprintf(f, "Suppressions used:\n  %6s %8s %10s  %s\n", "stacks", "blocks", "bytes", "pattern");
                header = true;
                fprintf(f, "  %6" PRIu64 " %8" PRIu64 " %10" PRIu64 "  %s (line %" PRIu64 ")\n", u64_of(p, RF_STACKS),
                        u64_of(p, RF_ALLOCS), u64_of(p, RF_BYTES), pattern ? pattern : "?", u64_of(p, RF_LINE));
        }
        return ferror(f) ? -EIO : 0;
}

int render_report_suppressed(FILE *f, const cJSON *report)
{
        int r = render_report(f, report);

        return r < 0 ? r : render_suppressed(f, report);
}

int render_report_with_addresses_suppressed(FILE *f, const cJSON *report)
{
        int r = render_report_with_addresses(f, report);

        return r < 0 ? r : render_suppressed(f, report);
}
