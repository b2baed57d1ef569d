/* SPDX-License-Identifier: MIT */
/* A JSON text parsed with one array's elements kept as their text. */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "json-raw.h"
#include "json-util.h"
#include "macro.h"

static const char *skip_space(const char *p, const char *end)
{
        while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                p++;
        return p;
}

/* p at a '"': past its closing quote; NULL when it has none. */
static const char *skip_string(const char *p, const char *end)
{
        for (p++; p < end; p++) {
                if (*p == '\\') {
                        p++;
                        continue;
                }
                if (*p == '"')
                        return p + 1;
        }
        return NULL;
}

/* p at a value: past it (its bounds only: cJSON checks the rest); NULL when it does not end. */
static const char *skip_value(const char *p, const char *end)
{
        size_t depth = 0;

        if (p >= end)
                return NULL;
        if (*p == '"')
                return skip_string(p, end);
        if (*p != '{' && *p != '[') {
                while (p < end && !strchr(",}] \t\r\n", *p))
                        p++;
                return p;
        }
        while (p < end) {
                if (*p == '"') {
                        p = skip_string(p, end);
                        if (!p)
                                return NULL;
                        continue;
                }
                if (*p == '{' || *p == '[')
                        depth++;
                else if (*p == '}' || *p == ']') {
                        if (--depth == 0)
                                return p + 1;
                }
                p++;
        }
        return NULL;
}

/* The value text[p..end) as cJSON, which must take all of it. */
static int parse_whole(const char *p, const char *end, cJSON **ret)
{
        const char *parsed_end = NULL;
        cJSON *v = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &parsed_end, false);

        if (!v)
                return -EBADMSG;        /* cJSON says nothing of memory: malformed is likelier */
        if (parsed_end != end) {
                cJSON_Delete(v);
                return -EBADMSG;
        }
        *ret = v;
        return 0;
}

/* p at '[': each element a raw item; *ret_end past the ']'. */
static int parse_raw_array(const char *p, const char *end, cJSON **ret, const char **ret_end)
{
        _cleanup_json_ cJSON *arr = cJSON_CreateArray();

        if (!arr)
                return -ENOMEM;
        p = skip_space(p + 1, end);
        if (p < end && *p == ']') {
                *ret_end = p + 1;
                *ret = TAKE_PTR(arr);
                return 0;
        }
        for (;;) {
                const char *e = skip_value(p, end);
                _cleanup_free_ char *text = NULL;
                cJSON *raw;

                if (!e || e == p)
                        return -EBADMSG;
                text = strndup(p, (size_t)(e - p));
                if (!text)
                        return -ENOMEM;
                raw = cJSON_CreateRaw(text);
                if (!raw)
                        return -ENOMEM;
                cJSON_AddItemToArray(arr, raw);
                p = skip_space(e, end);
                if (p < end && *p == ',') {
                        p = skip_space(p + 1, end);
                        continue;
                }
                if (p < end && *p == ']')
                        break;
                return -EBADMSG;
        }
        *ret_end = p + 1;
        *ret = TAKE_PTR(arr);
        return 0;
}

/* p at '{': the object, the value at path (from its level) kept raw; *ret_end past the '}'. */
static int parse_object(const char *p, const char *end, const char *const *path, cJSON **ret, const char **ret_end)
{
        _cleanup_json_ cJSON *obj = cJSON_CreateObject();
        int r;

        if (!obj)
                return -ENOMEM;
        p = skip_space(p + 1, end);
        if (p < end && *p == '}') {
                *ret_end = p + 1;
                *ret = TAKE_PTR(obj);
                return 0;
        }
        for (;;) {
                _cleanup_json_ cJSON *key = NULL, *value = NULL;
                const char *key_end, *value_end;

                if (p >= end || *p != '"')
                        return -EBADMSG;
                key_end = skip_string(p, end);
                if (!key_end)
                        return -EBADMSG;
                r = parse_whole(p, key_end, &key);
                if (r < 0)
                        return r;
                p = skip_space(key_end, end);
                if (p >= end || *p != ':')
                        return -EBADMSG;
                p = skip_space(p + 1, end);
                if (path && path[0] && strcmp(key->valuestring, path[0]) == 0 && p < end &&
                    (path[1] ? *p == '{' : *p == '['))
                        r = path[1] ? parse_object(p, end, path + 1, &value, &value_end) :
                                      parse_raw_array(p, end, &value, &value_end);
                else {
                        value_end = skip_value(p, end);
                        r = value_end ? parse_whole(p, value_end, &value) : -EBADMSG;
                }
                if (r < 0)
                        return r;
                if (!cJSON_AddItemToObject(obj, key->valuestring, value))
                        return -ENOMEM;
                TAKE_PTR(value);
                p = skip_space(value_end, end);
                if (p < end && *p == ',') {
                        p = skip_space(p + 1, end);
                        continue;
                }
                if (p < end && *p == '}')
                        break;
                return -EBADMSG;
        }
        *ret_end = p + 1;
        *ret = TAKE_PTR(obj);
        return 0;
}

int json_parse_raw_array(const char *text, size_t len, const char *const *path, cJSON **ret)
{
        const char *end = text + len, *p, *obj_end;
        cJSON *obj;
        int r;

        assert(text || len == 0);
        assert(ret);

        p = text;
        if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
                p += 3;         /* a UTF-8 byte order mark, which cJSON skips too */
        p = skip_space(p, end);
        if (p >= end || *p != '{')
                return -EBADMSG;
        r = parse_object(p, end, path, &obj, &obj_end);
        if (r < 0)
                return r;
        if (skip_space(obj_end, end) != end) {
                cJSON_Delete(obj);
                return -EBADMSG;
        }
        *ret = obj;
        return 0;
}
