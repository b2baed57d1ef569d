/* SPDX-License-Identifier: MIT */
/* cJSON cleanup and typed accessors used on both sides of the wire. */
#include <math.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json-util.h"

int json_get_u64(const cJSON *item, uint64_t max, uint64_t *ret)
{
        double d;

        if (!cJSON_IsNumber(item))
                return -EINVAL;
        d = item->valuedouble;
        if (!isfinite(d) || d < 0 || d != floor(d) || d > 9007199254740992.0 || (uint64_t)d > max)
                return -EINVAL;
        *ret = (uint64_t)d;
        return 0;
}

cJSON *json_add_u64(cJSON *obj, const char *name, uint64_t v)
{
        return cJSON_AddNumberToObject(obj, name, (double)v);
}

cJSON *json_add_u64_digits(cJSON *obj, const char *name, uint64_t v)
{
        char digits[24];

        snprintf(digits, sizeof(digits), "%" PRIu64, v);
        return cJSON_AddRawToObject(obj, name, digits);
}

int json_integers_exact(cJSON *item)
{
        for (; item; item = item->next) {
                if (cJSON_IsNumber(item) && item->valuedouble >= 1e15 && item->valuedouble <= 9007199254740992.0 &&
                    item->valuedouble == floor(item->valuedouble)) {
                        char digits[24], *copy;

                        snprintf(digits, sizeof(digits), "%" PRIu64, (uint64_t)item->valuedouble);
                        copy = strdup(digits);
                        if (!copy)
                                return -ENOMEM;
                        item->type = (item->type & ~0xFF) | cJSON_Raw;
                        item->valuestring = copy;
                }
                if (item->child && json_integers_exact(item->child) < 0)
                        return -ENOMEM;
        }
        return 0;
}

cJSON *json_add_string_or_null(cJSON *obj, const char *name, const char *s)
{
        if (!s)
                return cJSON_AddNullToObject(obj, name);
        return cJSON_AddStringToObject(obj, name, s);
}
