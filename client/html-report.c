/* SPDX-License-Identifier: MIT */
/* memleakd's report as one self-contained HTML page. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "html-report.h"
#include "html-report.html.h"
#include "json-util.h"
#include "macro.h"
#include "reply-fields.h"

#define DATA_MARK "@MEMLEAKD_DATA@"

/* Keep only the points of series whose "t" is in kept (both in time order, as memleakd sends them). */
static void series_keep(cJSON *series, const double *kept, size_t n_kept)
{
        cJSON *p = series ? series->child : NULL;
        size_t k = 0;

        while (p) {
                cJSON *next = p->next, *t = cJSON_GetObjectItemCaseSensitive(p, RF_T);

                while (k < n_kept && cJSON_IsNumber(t) && kept[k] < t->valuedouble)
                        k++;
                if (!cJSON_IsNumber(t) || k == n_kept || kept[k] != t->valuedouble)
                        cJSON_Delete(cJSON_DetachItemViaPointer(series, p));
                p = next;
        }
}

/* A ring deeper than HTML_HISTORY_POINTS_MAX snapshots (ring_depth goes to 100,000) is drawn and
 * compared at that many, evenly spread, the oldest and the newest among them: the page stays a few
 * MB at most. Each target's "snapshots" still says how many the ring held. */
static int history_thin(cJSON *history)
{
        cJSON *target;

        cJSON_ArrayForEach(target, cJSON_GetObjectItemCaseSensitive(history, RF_TARGETS)) {
                cJSON *totals = cJSON_GetObjectItemCaseSensitive(target, RF_TOTALS), *stack, *p;
                _cleanup_free_ double *kept = NULL;
                size_t n = (size_t)cJSON_GetArraySize(totals), i = 0, j = 0;

                if (n <= HTML_HISTORY_POINTS_MAX)
                        continue;
                kept = calloc(HTML_HISTORY_POINTS_MAX, sizeof(*kept));
                if (!kept)
                        return -ENOMEM;
                cJSON_ArrayForEach(p, totals) {
                        cJSON *t = cJSON_GetObjectItemCaseSensitive(p, RF_T);

                        /* point j of the kept ones is the one at (n - 1) * j / (max - 1) */
                        if (j < HTML_HISTORY_POINTS_MAX && i == (n - 1) * j / (HTML_HISTORY_POINTS_MAX - 1)) {
                                if (!cJSON_IsNumber(t))
                                        return -EBADMSG;
                                kept[j++] = t->valuedouble;
                        }
                        i++;
                }
                series_keep(totals, kept, j);
                cJSON_ArrayForEach(stack, cJSON_GetObjectItemCaseSensitive(target, RF_STACKS))
                        series_keep(cJSON_GetObjectItemCaseSensitive(stack, RF_POINTS), kept, j);
        }
        return 0;
}

/* json inside a <script> element: '<', '>' and '&' as JSON's \u escapes (they occur only inside
 * strings), so no "</script>" or "<!--" in a name ends or changes the element. */
static void put_script_json(FILE *f, const char *json)
{
        for (; *json; json++)
                switch (*json) {
                case '<': fputs("\\u003c", f); break;
                case '>': fputs("\\u003e", f); break;
                case '&': fputs("\\u0026", f); break;
                default: fputc(*json, f);
                }
}

int html_report_write(FILE *f, const cJSON *report, const cJSON *history)
{
        const char *mark = strstr(html_template, DATA_MARK);
        _cleanup_free_ char *json = NULL;
        cJSON *data;
        int r;

        if (!cJSON_IsObject(report) || !mark)
                return -EBADMSG;
        /* copies: ids (stack_id) printed as the digits memleakd sent; cJSON's own printing takes
         * 5600849664053121 and 5600849664053120 for one number and prints the second */
        data = cJSON_CreateObject();
        if (!data || !cJSON_AddItemToObject(data, RF_REPORT, cJSON_Duplicate(report, true)) ||
            (cJSON_IsObject(history) && !cJSON_AddItemToObject(data, RF_HISTORY, cJSON_Duplicate(history, true)))) {
                cJSON_Delete(data);
                return -ENOMEM;
        }
        r = history_thin(cJSON_GetObjectItemCaseSensitive(data, RF_HISTORY));
        if (r >= 0 && json_integers_exact(data) < 0)
                r = -ENOMEM;
        if (r < 0) {
                cJSON_Delete(data);
                return r;
        }
        json = cJSON_PrintUnformatted(data);
        cJSON_Delete(data);
        if (!json)
                return -ENOMEM;
        fwrite(html_template, 1, (size_t)(mark - html_template), f);
        put_script_json(f, json);
        fputs(mark + strlen(DATA_MARK), f);
        return ferror(f) ? -EIO : 0;
}
