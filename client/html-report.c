/* SPDX-License-Identifier: MIT */
/* memleakd's report as one self-contained HTML page. */
#include <errno.h>
#include <string.h>
#include "html-report.h"
#include "html-report.html.h"
#include "json-util.h"
#include "macro.h"
#include "reply-fields.h"

#define DATA_MARK "@MEMLEAKD_DATA@"

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

        if (!cJSON_IsObject(report) || !mark)
                return -EBADMSG;
        /* copies: ids (stack_id) printed as the digits memleakd sent; cJSON's own printing takes
         * 5600849664053121 and 5600849664053120 for one number and prints the second */
        data = cJSON_CreateObject();
        if (!data || !cJSON_AddItemToObject(data, RF_REPORT, cJSON_Duplicate(report, true)) ||
            (cJSON_IsObject(history) && !cJSON_AddItemToObject(data, RF_HISTORY, cJSON_Duplicate(history, true))) ||
            json_integers_exact(data) < 0) {
                cJSON_Delete(data);
                return -ENOMEM;
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
