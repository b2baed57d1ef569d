/* SPDX-License-Identifier: MIT */
/* html-page-fixture FIXTURE.json PAGE.html: memleakctl html's page for a fixture's "report" and
 * "history" (built for html-page-check.js, which runs the page's script). */
#include <stdio.h>
#include <stdlib.h>

#include "html-report.h"
#include "json-util.h"
#include "macro.h"

int main(int argc, char *argv[])
{
        _cleanup_fclose_ FILE *in = NULL;
        _cleanup_json_ cJSON *fixture = NULL;
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *out;

        if (argc != 3 || !(in = fopen(argv[1], "re")) || getdelim(&text, &size, '\0', in) < 0 ||
            !(fixture = cJSON_Parse(text))) {
                fprintf(stderr, "usage: html-page-fixture FIXTURE.json PAGE.html (a readable JSON fixture)\n");
                return 1;
        }
        out = fopen(argv[2], "we");
        if (!out || html_report_write(out, cJSON_GetObjectItem(fixture, "report"),
                                      cJSON_GetObjectItem(fixture, "history")) < 0 || fclose(out) != 0) {
                fprintf(stderr, "cannot write %s\n", argv[2]);
                return 1;
        }
        return 0;
}
