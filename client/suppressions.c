/* SPDX-License-Identifier: MIT */
/* LeakSanitizer's suppressions: the file's lines parsed, patterns matched against frames. */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "macro.h"
#include "reply-fields.h"
#include "suppressions.h"

#define SUPPRESSION_TYPE "leak:"

struct suppressions *suppressions_free(struct suppressions *s)
{
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n; i++)
                free(s->items[i].pattern);
        free(s->items);
        free(s->path);
        free(s);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(struct suppressions *, suppressions_free);

static bool is_blank(char c)
{
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

__attribute__((format(printf, 3, 4)))
static int fail(int error, char **ret_error, const char *fmt, ...)
{
        _cleanup_free_ char *why = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&why, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (ret_error)
                *ret_error = TAKE_PTR(why);
        return error;
}

int suppressions_parse(const char *text, size_t size, const char *path, struct suppressions **ret,
                       char **ret_error)
{
        _cleanup_(suppressions_freep) struct suppressions *s = NULL;
        const char *p = text, *end = text + size;
        unsigned line = 0;

        assert(text || size == 0);
        assert(path);
        assert(ret);

        if (size > SUPPRESSIONS_MAX_BYTES)
                return fail(-EFBIG, ret_error, "%s: larger than %u bytes", path, SUPPRESSIONS_MAX_BYTES);
        if (size > 0 && memchr(text, '\0', size))
                return fail(-EINVAL, ret_error, "%s: a NUL byte: not a text file", path);
        s = calloc(1, sizeof(*s));
        if (!s || !(s->path = strdup(path)))
                return -ENOMEM;
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t)(end - p)), *b, *e;
                struct suppression *items;
                size_t len;

                if (!eol)
                        eol = end;
                line++;
                for (b = p, e = eol; b < e && is_blank(*b); b++)
                        ;
                while (e > b && is_blank(e[-1]))
                        e--;
                p = eol < end ? eol + 1 : end;
                if (b == e || *b == '#')
                        continue;
                len = strlen(SUPPRESSION_TYPE);
                if ((size_t)(e - b) < len || memcmp(b, SUPPRESSION_TYPE, len) != 0) {
                        const char *colon = memchr(b, ':', (size_t)(e - b));

                        if (colon)
                                return fail(-EINVAL, ret_error, "%s:%u: '%.*s' suppressions are not "
                                            "memleakd's: only leak:PATTERN lines are", path, line,
                                            (int)MIN(colon - b, 64), b);
                        return fail(-EINVAL, ret_error, "%s:%u: not a suppression: expected "
                                    "leak:PATTERN, a # comment or a blank line", path, line);
                }
                for (b += len; b < e && is_blank(*b); b++)
                        ;
                if (b == e)
                        return fail(-EINVAL, ret_error, "%s:%u: leak: without a pattern (it would "
                                    "suppress every stack: write leak:* for that)", path, line);
                if ((size_t)(e - b) > SUPPRESSIONS_MAX_PATTERN)
                        return fail(-EFBIG, ret_error, "%s:%u: a pattern longer than %u bytes", path,
                                    line, SUPPRESSIONS_MAX_PATTERN);
                if (s->n >= SUPPRESSIONS_MAX_PATTERNS)
                        return fail(-EFBIG, ret_error, "%s:%u: more than %u suppressions", path, line,
                                    SUPPRESSIONS_MAX_PATTERNS);
                items = reallocarray(s->items, s->n + 1, sizeof(*items));
                if (!items)
                        return -ENOMEM;
                s->items = items;
                s->items[s->n] = (struct suppression) { .line = line };
                s->items[s->n].pattern = strndup(b, (size_t)(e - b));
                if (!s->items[s->n].pattern)
                        return -ENOMEM;
                s->n++;
        }
        *ret = TAKE_PTR(s);
        return 0;
}

/* Glob match of s against t[0, n), '*' matching any run: the classic backtracking walk, which
 * returns to the last '*' and lets it take one more character. */
static bool glob_match(const char *t, size_t n, const char *s)
{
        size_t i = 0, star = SIZE_MAX;
        const char *resume = NULL;

        for (;;) {
                if (i < n && t[i] == '*') {
                        star = i++;
                        resume = s;
                        continue;
                }
                if (*s && i < n && t[i] == *s) {
                        i++;
                        s++;
                        continue;
                }
                if (!*s && i == n)
                        return true;
                if (star == SIZE_MAX || !*resume)
                        return false;
                i = star + 1;
                s = ++resume;
        }
}

bool suppressions_pattern_match(const char *pattern, const char *s)
{
        _cleanup_free_ char *t = NULL;
        size_t n;
        bool start, finish;

        assert(pattern);

        if (!s || !*s)
                return false;
        start = pattern[0] == '^';
        if (start)
                pattern++;
        n = strlen(pattern);
        finish = n > 0 && pattern[n - 1] == '$';
        if (finish)
                n--;
        /* Unanchored ends match anywhere: as if the pattern had a '*' there. */
        t = malloc(n + 3);
        if (!t)
                return false;
        n = (size_t)sprintf(t, "%s%.*s%s", start ? "" : "*", (int)n, pattern, finish ? "" : "*");
        return glob_match(t, n, s);
}

static const char *basename_of(const char *path)
{
        const char *slash = path ? strrchr(path, '/') : NULL;

        return slash ? slash + 1 : path;
}

static const char *string_of(const cJSON *frame, const char *name)
{
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(frame, name);

        return cJSON_IsString(v) ? v->valuestring : NULL;
}

ssize_t suppressions_match_frames(const struct suppressions *s, const cJSON *frames)
{
        const cJSON *frame;

        if (!s || !cJSON_IsArray(frames))
                return -1;
        cJSON_ArrayForEach(frame, frames) {
                const char *module = string_of(frame, RF_MODULE), *file = string_of(frame, RF_FILE);
                const char *names[] = {
                        module, basename_of(module), string_of(frame, RF_SYMBOL), file, basename_of(file),
                };

                for (size_t k = 0; k < ELEMENTSOF(names); k++) {
                        /* a file name that is its whole path was tried already */
                        if (!names[k] || ((k == 1 || k == 4) && names[k] == names[k - 1]))
                                continue;
                        for (size_t i = 0; i < s->n; i++)
                                if (suppressions_pattern_match(s->items[i].pattern, names[k]))
                                        return (ssize_t)i;
                }
        }
        return -1;
}
