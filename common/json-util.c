/* SPDX-License-Identifier: MIT */
/* cJSON cleanup and typed accessors used on both sides of the wire. */
#include <math.h>
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

cJSON *json_add_string_or_null(cJSON *obj, const char *name, const char *s)
{
        if (!s)
                return cJSON_AddNullToObject(obj, name);
        return cJSON_AddStringToObject(obj, name, s);
}
