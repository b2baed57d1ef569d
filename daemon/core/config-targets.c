/* SPDX-License-Identifier: GPL-2.0-only */
/* [target] sections: parsed and checked, one at a time as the files are read (config.c). */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "config-targets.h"
#include "config.h"
#include "macro.h"
#include "util.h"

#define streq(a, b) (strcmp((a), (b)) == 0)
#define streq_ptr(a, b) ((a) == (b) || ((a) && (b) && streq((a), (b))))

#define TARGET_VALUE_MAX 4095u          /* a path's bytes (PATH_MAX with its NUL) */
#define UNIT_NAME_MAX 255u              /* systemd's UNIT_NAME_MAX */
#define COMM_MAX 15u                    /* the kernel's TASK_COMM_LEN, its NUL aside */

static const char *const match_names[] = {
        [CONFIG_TARGET_NONE] = "none",
        [CONFIG_TARGET_UNIT] = "unit",
        [CONFIG_TARGET_CGROUP] = "cgroup",
        [CONFIG_TARGET_EXE] = "exe",
        [CONFIG_TARGET_COMM] = "comm",
};

const char *config_targets_match_name(enum config_target_match m)
{
        return (size_t)m < ELEMENTSOF(match_names) ? match_names[m] : "none";
}

static void target_done(struct config_target *t)
{
        free(t->value);
        free(t->where);
        for (unsigned i = 0; i < t->n_objs; i++)
                free(t->objs[i]);
        *t = (struct config_target) {};
}

void config_targets_done(struct config_targets *ts)
{
        if (!ts)
                return;
        for (size_t i = 0; i < ts->n; i++)
                target_done(&ts->v[i]);
        free(ts->v);
        *ts = (struct config_targets) {};
}

int config_targets_begin(struct config_targets *ts, const char *where)
{
        struct config_target *v;

        assert(ts);
        assert(where);
        if (ts->n >= CONFIG_TARGETS_MAX)
                return -E2BIG;
        v = reallocarray(ts->v, ts->n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        ts->v = v;
        v[ts->n] = (struct config_target) {};
        v[ts->n].where = strdup(where);
        if (!v[ts->n].where)
                return -ENOMEM;
        ts->n++;
        return 0;
}

static bool unit_name_valid(const char *s)
{
        const char *dot = strrchr(s, '.');
        size_t n = strlen(s);

        if (n == 0 || n > UNIT_NAME_MAX || !dot || dot == s)
                return false;
        if (!streq(dot, ".service") && !streq(dot, ".scope") && !streq(dot, ".slice"))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.\\@-", s[i]))
                        return false;
        return true;
}

/* A cgroup's path: absolute (in the cgroup2 tree) or relative to it, no "." or ".." component. */
static bool cgroup_path_valid(const char *s)
{
        size_t n = strlen(s);
        const char *p = s;

        if (n == 0 || n > TARGET_VALUE_MAX)
                return false;
        while (*p) {
                size_t len;

                p += strspn(p, "/");
                len = strcspn(p, "/");
                if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p += len;
        }
        return true;
}

static bool absolute_path_valid(const char *s)
{
        size_t n = strlen(s);

        return n >= 2 && s[0] == '/' && n <= TARGET_VALUE_MAX;
}

static bool comm_valid(const char *s)
{
        size_t n = strlen(s);

        return n >= 1 && n <= COMM_MAX && !strchr(s, '/');
}

static int parse_bool(const char *s, bool *ret)
{
        if (streq(s, "yes") || streq(s, "true") || streq(s, "on") || streq(s, "1"))
                *ret = true;
        else if (streq(s, "no") || streq(s, "false") || streq(s, "off") || streq(s, "0"))
                *ret = false;
        else
                return -EINVAL;
        return 0;
}

static int set_match(struct config_target *t, enum config_target_match m, const char *value, const char **expected)
{
        static const char *const what[] = {
                [CONFIG_TARGET_UNIT] = "a unit's name ending in .service, .scope or .slice",
                [CONFIG_TARGET_CGROUP] = "a cgroup v2 directory's path, in the cgroup2 tree or relative to it",
                [CONFIG_TARGET_EXE] = "an executable's absolute path",
                [CONFIG_TARGET_COMM] = "a process name of 1 to 15 bytes, without '/'",
        };
        bool valid;
        char *s;

        if (t->match != CONFIG_TARGET_NONE)
                return -EEXIST;
        switch (m) {
        case CONFIG_TARGET_UNIT:
                valid = unit_name_valid(value);
                break;
        case CONFIG_TARGET_CGROUP:
                valid = cgroup_path_valid(value);
                break;
        case CONFIG_TARGET_EXE:
                valid = absolute_path_valid(value);
                break;
        case CONFIG_TARGET_COMM:
                valid = comm_valid(value);
                break;
        default:
                valid = false;
        }
        if (!valid) {
                *expected = what[m];
                return -EINVAL;
        }
        s = strdup(value);
        if (!s)
                return -ENOMEM;
        t->match = m;
        t->value = s;
        return 0;
}

static int set_objs(struct config_target *t, const char *value, const char **expected)
{
        _cleanup_free_ char *copy = strdup(value);
        char *objs[MEMLEAK_MAX_OBJS] = {}, *p, *save = NULL;
        unsigned n = 0;

        *expected = "absolute paths of shared objects or programs, separated by spaces (16 at most)";
        if (!copy)
                return -ENOMEM;
        for (p = strtok_r(copy, " \t", &save); p; p = strtok_r(NULL, " \t", &save)) {
                if (n >= MEMLEAK_MAX_OBJS || !absolute_path_valid(p))
                        goto invalid;
                objs[n] = strdup(p);
                if (!objs[n]) {
                        for (unsigned i = 0; i < n; i++)
                                free(objs[i]);
                        return -ENOMEM;
                }
                n++;
        }
        if (n == 0)
                goto invalid;
        for (unsigned i = 0; i < t->n_objs; i++)
                free(t->objs[i]);
        memcpy(t->objs, objs, sizeof(objs));
        t->n_objs = n;
        return 0;
invalid:
        for (unsigned i = 0; i < n; i++)
                free(objs[i]);
        return -EINVAL;
}

static int set_size(uint64_t *field, const char *value, uint64_t max, const char **expected)
{
        uint64_t v;

        *expected = max == MEMLEAK_MAX_SAMPLE_BYTES ? "a number of bytes up to 4G, optionally with suffix K, M or G" :
                                                      "a number of bytes, optionally with suffix K, M or G";
        if (config_parse_size(value, &v) < 0 || v > max)
                return -EINVAL;
        *field = v;
        return 0;
}

int config_targets_set(struct config_targets *ts, const char *key, const char *value, const char **expected)
{
        struct config_target *t;
        enum memleak_unwind u;

        assert(ts);
        assert(ts->n > 0);
        assert(key);
        assert(value);
        assert(expected);
        t = &ts->v[ts->n - 1];
        for (enum config_target_match m = CONFIG_TARGET_UNIT; m <= CONFIG_TARGET_COMM; m++)
                if (streq(key, match_names[m]))
                        return set_match(t, m, value, expected);
        if (streq(key, "objs"))
                return set_objs(t, value, expected);
        if (streq(key, "min_size"))
                return set_size(&t->min_size, value, MEMLEAK_MAX_SIZE_BYTES, expected);
        if (streq(key, "max_size"))
                return set_size(&t->max_size, value, MEMLEAK_MAX_SIZE_BYTES, expected);
        if (streq(key, "sample_bytes"))
                return set_size(&t->sample_bytes, value, MEMLEAK_MAX_SAMPLE_BYTES, expected);
        if (streq(key, "unwind")) {
                u = memleak_unwind_from_string(value);
                *expected = "auto, dwarf or fp";
                if (u <= MEMLEAK_UNWIND_DEFAULT)
                        return -EINVAL;
                t->unwind = u;
                return 0;
        }
        *expected = "yes or no";
        if (streq(key, "mmap"))
                return parse_bool(value, &t->mmap);
        *expected = NULL;
        return -ENOENT;
}

bool config_targets_same(const struct config_target *a, const struct config_target *b)
{
        assert(a);
        assert(b);
        if (a->match != b->match || !streq_ptr(a->value, b->value) || a->n_objs != b->n_objs ||
            a->min_size != b->min_size || a->max_size != b->max_size || a->sample_bytes != b->sample_bytes ||
            a->unwind != b->unwind || a->mmap != b->mmap)
                return false;
        for (unsigned i = 0; i < a->n_objs; i++)
                if (!streq(a->objs[i], b->objs[i]))
                        return false;
        return true;
}

int config_targets_end_last(struct config_targets *ts, const char **why)
{
        const struct config_target *t;

        assert(ts);
        assert(why);
        if (ts->n == 0)
                return 0;
        t = &ts->v[ts->n - 1];
        if (t->match == CONFIG_TARGET_NONE) {
                *why = "a [target] section names what it matches: unit, cgroup, exe or comm";
                return -EINVAL;
        }
        if (t->min_size > 0 && t->max_size > 0 && t->min_size > t->max_size) {
                *why = "its min_size is greater than its max_size";
                return -EINVAL;
        }
        /* one matching the same before it (in this file or an earlier one) is replaced, as a
         * later file's key wins: it takes that one's place */
        for (size_t i = 0; i + 1 < ts->n; i++)
                if (ts->v[i].match == t->match && streq(ts->v[i].value, t->value)) {
                        target_done(&ts->v[i]);
                        ts->v[i] = ts->v[ts->n - 1];
                        ts->n--;
                        break;
                }
        return 0;
}

int config_targets_copy(const struct config_targets *src, struct config_targets *ret)
{
        _cleanup_(config_targets_done) struct config_targets c = {};

        assert(src);
        assert(ret);
        for (size_t i = 0; i < src->n; i++) {
                const struct config_target *s = &src->v[i];
                struct config_target *t;
                int r;

                r = config_targets_begin(&c, s->where);
                if (r < 0)
                        return r;
                t = &c.v[c.n - 1];
                *t = (struct config_target) {
                        .match = s->match, .where = t->where, .n_objs = 0, .min_size = s->min_size,
                        .max_size = s->max_size, .sample_bytes = s->sample_bytes, .unwind = s->unwind,
                        .mmap = s->mmap,
                };
                if (s->value && !(t->value = strdup(s->value)))
                        return -ENOMEM;
                for (unsigned k = 0; k < s->n_objs; k++) {
                        t->objs[k] = strdup(s->objs[k]);
                        if (!t->objs[k])
                                return -ENOMEM;
                        t->n_objs++;
                }
        }
        *ret = c;
        c = (struct config_targets) {};
        return 0;
}

char *config_targets_format(const struct config_targets *ts)
{
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;

        assert(ts);
        f = open_memstream(&text, &size);
        if (!f)
                return NULL;
        for (size_t i = 0; i < ts->n; i++) {
                const struct config_target *t = &ts->v[i];

                fprintf(f, "[" CONFIG_TARGET_SECTION "]\n%s = %s\n", match_names[t->match], t->value);
                if (t->n_objs > 0) {
                        fputs("objs =", f);
                        for (unsigned k = 0; k < t->n_objs; k++)
                                fprintf(f, " %s", t->objs[k]);
                        fputc('\n', f);
                }
                fprintf(f, "min_size = %" PRIu64 "\nmax_size = %" PRIu64 "\nsample_bytes = %" PRIu64 "\nmmap = %s\n",
                        t->min_size, t->max_size, t->sample_bytes, t->mmap ? "yes" : "no");
                if (t->unwind != MEMLEAK_UNWIND_DEFAULT)
                        fprintf(f, "unwind = %s\n", memleak_unwind_to_string(t->unwind));
        }
        if (fclose(f) != 0)
                return NULL;
        return TAKE_PTR(text);
}
