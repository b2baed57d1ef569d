/* SPDX-License-Identifier: MIT */
/* Text a traced process controls, made safe: valid UTF-8, and nothing a terminal acts on. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text-safe.h"

/* The length of the valid UTF-8 sequence at s (1..4) and its code point, or 0 when invalid. */
static size_t utf8_decode(const unsigned char *s, uint32_t *ret)
{
        uint32_t cp;
        size_t len;

        if (s[0] < 0x80) {
                *ret = s[0];
                return 1;
        }
        if (s[0] >= 0xc2 && s[0] <= 0xdf) {
                len = 2;
                cp = s[0] & 0x1f;
        } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                len = 3;
                cp = s[0] & 0x0f;
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                len = 4;
                cp = s[0] & 0x07;
        } else
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;       /* also stops at the NUL */
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret = cp;
        return len;
}

bool utf8_valid(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        uint32_t cp;

        while (*p) {
                size_t len = utf8_decode(p, &cp);

                if (len == 0)
                        return false;
                p += len;
        }
        return true;
}

char *utf8_repair(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        char *out = malloc(strlen(s) * 3 + 1), *o = out;  /* each bad byte becomes 3 */
        uint32_t cp;

        if (!out)
                return NULL;
        while (*p) {
                size_t len = utf8_decode(p, &cp);

                if (len == 0) {
                        memcpy(o, "\xef\xbf\xbd", 3);   /* U+FFFD */
                        o += 3;
                        p++;
                        continue;
                }
                memcpy(o, p, len);
                o += len;
                p += len;
        }
        *o = '\0';
        return out;
}

static bool is_bidi_control(uint32_t cp)
{
        return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
               cp == 0x200e || cp == 0x200f || cp == 0x061c;
}

char *text_escape_controls(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        char *out = malloc(strlen(s) * 6 + 1), *o = out;   /* \u202E: 6 bytes for 3 */
        uint32_t cp;

        if (!out)
                return NULL;
        while (*p) {
                size_t len = utf8_decode(p, &cp);

                if (len == 0) {
                        o += sprintf(o, "\\x%02x", *p);   /* not UTF-8 after all: spelled out too */
                        p++;
                } else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) {
                        o += sprintf(o, "\\x%02x", (unsigned)cp);
                        p += len;
                } else if (is_bidi_control(cp)) {
                        o += sprintf(o, "\\u%04X", (unsigned)cp);
                        p += len;
                } else if (cp == '\\') {
                        *o++ = '\\';
                        *o++ = '\\';
                        p++;
                } else {
                        memcpy(o, p, len);
                        o += len;
                        p += len;
                }
        }
        *o = '\0';
        return out;
}

bool utf8_needs_repair(const char *s)
{
        return !utf8_valid(s);
}

bool text_has_controls(const char *s)
{
        const unsigned char *p = (const unsigned char *)s;
        uint32_t cp;

        while (*p) {
                size_t len = utf8_decode(p, &cp);

                if (len == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0) || is_bidi_control(cp) ||
                    cp == '\\')
                        return true;
                p += len;
        }
        return false;
}

static int replace(char **slot, bool (*needs)(const char *s), char *(*fn)(const char *s), bool cjson_owned)
{
        char *n;

        if (!*slot || !needs(*slot))
                return 0;
        n = fn(*slot);
        if (!n)
                return -ENOMEM;
        if (cjson_owned) {
                /* the tree's strings are freed with cJSON's allocator */
                char *c = cJSON_malloc(strlen(n) + 1);

                if (!c) {
                        free(n);
                        return -ENOMEM;
                }
                strcpy(c, n);
                free(n);
                n = c;
        }
        cJSON_free(*slot);
        *slot = n;
        return 0;
}

int json_strings_map(cJSON *item, bool (*needs)(const char *s), char *(*fn)(const char *s))
{
        int r;

        if (!item)
                return 0;
        if (item->string && !(item->type & cJSON_StringIsConst)) {
                r = replace(&item->string, needs, fn, true);
                if (r < 0)
                        return r;
        }
        if (cJSON_IsString(item) && !(item->type & cJSON_IsReference)) {
                r = replace(&item->valuestring, needs, fn, true);
                if (r < 0)
                        return r;
        }
        for (cJSON *child = item->child; child; child = child->next) {
                r = json_strings_map(child, needs, fn);
                if (r < 0)
                        return r;
        }
        return 0;
}
