/* SPDX-License-Identifier: GPL-2.0-only */
/* Parse memleakd.conf ("key = value" lines) into struct memleakd_config, validated whole. */
#include "config.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "protocol.h"

#define CONFIG_SECTION "memleakd"
#define streq(a, b) (strcmp((a), (b)) == 0)
#define GROUP_NAME_MAX 256u     /* LOGIN_NAME_MAX */

enum key_type {
        KEY_U32,                /* plain integer in [min, max] */
        KEY_INTERVAL_MS,        /* integer milliseconds, or with suffix "ms" or "s", in [min, max] */
        KEY_SIZE,               /* integer bytes, or with suffix K, M or G (1024-based) */
        KEY_SOCKET_PATH,        /* absolute path that fits sockaddr_un */
        KEY_MODE,               /* octal file mode <= 0777 */
        KEY_GROUP,              /* group name; empty means root's group */
        KEY_UNWIND,             /* "auto", "dwarf" or "fp" */
        KEY_DIRECTORY,          /* absolute directory path */
        KEY_FILE,               /* absolute path of a file or directory (no trailing '/');
                                 * empty: none */
};

struct config_key {
        const char *name;
        enum key_type type;
        size_t offset;
        uint64_t min, max;
        bool restart;           /* takes effect only when memleakd starts (map sizes, the socket) */
};

static const struct config_key config_keys[] = {
        { "snapshot_interval_ms", KEY_INTERVAL_MS, offsetof(struct memleakd_config, snapshot_interval_ms),
          CONFIG_SNAPSHOT_INTERVAL_MS_MIN, CONFIG_SNAPSHOT_INTERVAL_MS_MAX, false },
        { "ring_depth",   KEY_U32, offsetof(struct memleakd_config, ring_depth),
          CONFIG_RING_DEPTH_MIN, CONFIG_RING_DEPTH_MAX, false },
        { "max_targets",  KEY_U32, offsetof(struct memleakd_config, max_targets),
          CONFIG_MAX_TARGETS_MIN, CONFIG_MAX_TARGETS_MAX, true },
        { "max_allocs",   KEY_U32, offsetof(struct memleakd_config, max_allocs),
          CONFIG_MAX_ALLOCS_MIN, CONFIG_MAX_ALLOCS_MAX, true },
        { "max_stacks",   KEY_U32, offsetof(struct memleakd_config, max_stacks),
          CONFIG_MAP_ENTRIES_MIN, CONFIG_MAP_ENTRIES_MAX, true },
        { "max_combined", KEY_U32, offsetof(struct memleakd_config, max_combined),
          CONFIG_MAP_ENTRIES_MIN, CONFIG_MAP_ENTRIES_MAX, true },
        { "max_inflight", KEY_U32, offsetof(struct memleakd_config, max_inflight),
          CONFIG_MAP_ENTRIES_MIN, CONFIG_MAP_ENTRIES_MAX, true },
        { "max_mmaps",    KEY_U32, offsetof(struct memleakd_config, max_mmaps),
          CONFIG_MAP_ENTRIES_MIN, CONFIG_MAP_ENTRIES_MAX, true },
        { "max_stack_depth", KEY_U32, offsetof(struct memleakd_config, max_stack_depth),
          CONFIG_MAX_STACK_DEPTH_MIN, CONFIG_MAX_STACK_DEPTH_MAX, true },
        { "socket_path",  KEY_SOCKET_PATH, offsetof(struct memleakd_config, socket_path), 0, 0, true },
        { "socket_mode",  KEY_MODE, offsetof(struct memleakd_config, socket_mode), 0, 0777, true },
        { "socket_group", KEY_GROUP, offsetof(struct memleakd_config, socket_group), 0, 0, true },
        { "admin_group",  KEY_GROUP, offsetof(struct memleakd_config, admin_group), 0, 0, true },
        { "default_min_size", KEY_SIZE, offsetof(struct memleakd_config, min_size), 0, UINT64_MAX, false },
        { "default_max_size", KEY_SIZE, offsetof(struct memleakd_config, max_size), 0, UINT64_MAX, false },
        { "sample_bytes", KEY_SIZE, offsetof(struct memleakd_config, sample_bytes), 0, MEMLEAK_MAX_SAMPLE_BYTES, false },
        { "symbols_max_open_files", KEY_U32, offsetof(struct memleakd_config, symbols_max_open_files),
          CONFIG_SYMBOLS_MAX_OPEN_FILES_MIN, CONFIG_SYMBOLS_MAX_OPEN_FILES_MAX, false },
        { "symbols_max_mb", KEY_U32, offsetof(struct memleakd_config, symbols_max_mb),
          CONFIG_SYMBOLS_MAX_MB_MIN, CONFIG_SYMBOLS_MAX_MB_MAX, false },
        { "symbols_max_section_mb", KEY_U32, offsetof(struct memleakd_config, symbols_max_section_mb),
          CONFIG_SYMBOLS_MAX_SECTION_MB_MIN, CONFIG_SYMBOLS_MAX_SECTION_MB_MAX, false },
        { "exited_max_mb", KEY_U32, offsetof(struct memleakd_config, exited_max_mb),
          CONFIG_EXITED_MAX_MB_MIN, CONFIG_EXITED_MAX_MB_MAX, false },
        { "unwind", KEY_UNWIND, offsetof(struct memleakd_config, unwind), 0, 0, false },
        { "verdict_min_snapshots", KEY_U32, offsetof(struct memleakd_config, verdict_min_snapshots),
          CONFIG_VERDICT_MIN_SNAPSHOTS_MIN, CONFIG_VERDICT_MIN_SNAPSHOTS_MAX, false },
        { "verdict_noise_factor", KEY_U32, offsetof(struct memleakd_config, verdict_noise_factor),
          1, CONFIG_VERDICT_NOISE_FACTOR_MAX, false },
        { "verdict_flat_bytes", KEY_SIZE, offsetof(struct memleakd_config, verdict_flat_bytes), 0, UINT64_MAX, false },
        { "verdict_flat_percent", KEY_U32, offsetof(struct memleakd_config, verdict_flat_percent), 0, 100, false },
        { "auto_sample_percent", KEY_U32, offsetof(struct memleakd_config, auto_sample_percent), 0, 100, false },
        { "reachability_max_pause_ms", KEY_U32, offsetof(struct memleakd_config, reachability_max_pause_ms),
          CONFIG_REACHABILITY_MAX_PAUSE_MS_MIN, CONFIG_REACHABILITY_MAX_PAUSE_MS_MAX, false },
        { "reachability_concurrent_max_stop_ms", KEY_U32,
          offsetof(struct memleakd_config, reachability_concurrent_max_stop_ms),
          CONFIG_REACHABILITY_MAX_PAUSE_MS_MIN, CONFIG_REACHABILITY_MAX_PAUSE_MS_MAX, false },
        { "reachability_concurrent", KEY_U32, offsetof(struct memleakd_config, reachability_concurrent), 0, 1, false },
        { "cache_directory", KEY_DIRECTORY, offsetof(struct memleakd_config, cache_directory), 0, 0, true },
        { "unwind_cache_max_mb", KEY_U32, offsetof(struct memleakd_config, unwind_cache_max_mb),
          0, CONFIG_UNWIND_CACHE_MAX_MB_MAX, true },
        { "state_directory", KEY_DIRECTORY, offsetof(struct memleakd_config, state_directory), 0, 0, true },
        { "bpf_pin_directory", KEY_DIRECTORY, offsetof(struct memleakd_config, bpf_pin_directory), 0, 0, true },
        { "metrics_textfile", KEY_FILE, offsetof(struct memleakd_config, metrics_textfile), 0, 0, true },
        { "metrics_interval_ms", KEY_INTERVAL_MS, offsetof(struct memleakd_config, metrics_interval_ms),
          CONFIG_METRICS_INTERVAL_MS_MIN, CONFIG_METRICS_INTERVAL_MS_MAX, false },
        { "export_dir", KEY_FILE, offsetof(struct memleakd_config, export_dir), 0, 0, true },
        { "export_interval_ms", KEY_INTERVAL_MS, offsetof(struct memleakd_config, export_interval_ms),
          CONFIG_EXPORT_INTERVAL_MS_MIN, CONFIG_EXPORT_INTERVAL_MS_MAX, false },
        { "export_keep", KEY_U32, offsetof(struct memleakd_config, export_keep), 1, CONFIG_EXPORT_KEEP_MAX, false },
};

int config_init_defaults(struct memleakd_config *c)
{
        char *socket_path = strdup(MEMLEAK_DEFAULT_SOCKET);
        char *cache_directory = strdup(CONFIG_CACHE_DIRECTORY_DEFAULT);
        char *state_directory = strdup(CONFIG_STATE_DIRECTORY_DEFAULT);
        char *bpf_pin_directory = strdup(CONFIG_BPF_PIN_DIRECTORY_DEFAULT);

        assert(c);
        if (!socket_path || !cache_directory || !state_directory || !bpf_pin_directory) {
                free(socket_path);
                free(cache_directory);
                free(state_directory);
                free(bpf_pin_directory);
                return -ENOMEM;
        }

        *c = (struct memleakd_config) {
                .snapshot_interval_ms = CONFIG_SNAPSHOT_INTERVAL_MS_DEFAULT,
                .metrics_interval_ms = CONFIG_METRICS_INTERVAL_MS_DEFAULT,
                .export_interval_ms = CONFIG_EXPORT_INTERVAL_MS_DEFAULT,
                .export_keep = CONFIG_EXPORT_KEEP_DEFAULT,
                .ring_depth = CONFIG_RING_DEPTH_DEFAULT,
                .max_targets = CONFIG_MAX_TARGETS_DEFAULT,
                .max_allocs = CONFIG_MAX_ALLOCS_DEFAULT,
                .max_stacks = CONFIG_MAX_STACKS_DEFAULT,
                .max_combined = CONFIG_MAX_STACKS_DEFAULT,
                .max_inflight = CONFIG_MAP_ENTRIES_DEFAULT,
                .max_mmaps = CONFIG_MAP_ENTRIES_DEFAULT,
                .max_stack_depth = CONFIG_MAX_STACK_DEPTH_DEFAULT,
                .socket_path = socket_path,
                .socket_mode = CONFIG_SOCKET_MODE_DEFAULT,
                .socket_group = NULL,
                .min_size = 0,
                .max_size = 0,
                .symbols_max_open_files = CONFIG_SYMBOLS_MAX_OPEN_FILES_DEFAULT,
                .symbols_max_mb = CONFIG_SYMBOLS_MAX_MB_DEFAULT,
                .symbols_max_section_mb = CONFIG_SYMBOLS_MAX_SECTION_MB_DEFAULT,
                .exited_max_mb = CONFIG_EXITED_MAX_MB_DEFAULT,
                .unwind = MEMLEAK_UNWIND_AUTO,
                /* LEAK_VERDICT_THRESHOLDS_DEFAULT's */
                .verdict_min_snapshots = 6,
                .verdict_noise_factor = 2,
                .verdict_flat_bytes = 64,
                .verdict_flat_percent = 1,
                .reachability_max_pause_ms = CONFIG_REACHABILITY_MAX_PAUSE_MS_DEFAULT,
                .reachability_concurrent_max_stop_ms = CONFIG_REACHABILITY_CONCURRENT_MAX_STOP_MS_DEFAULT,
                .reachability_concurrent = 1,
                .auto_sample_percent = CONFIG_AUTO_SAMPLE_PERCENT_DEFAULT,
                .cache_directory = cache_directory,
                .state_directory = state_directory,
                .bpf_pin_directory = bpf_pin_directory,
                .unwind_cache_max_mb = CONFIG_UNWIND_CACHE_MAX_MB_DEFAULT,
        };
        return 0;
}

void config_done(struct memleakd_config *c)
{
        if (!c)
                return;
        free(c->socket_path);
        c->socket_path = NULL;
        free(c->socket_group);
        c->socket_group = NULL;
        free(c->admin_group);
        c->admin_group = NULL;
        free(c->cache_directory);
        c->cache_directory = NULL;
        config_targets_done(&c->targets);
        free(c->state_directory);
        c->state_directory = NULL;
        free(c->bpf_pin_directory);
        c->bpf_pin_directory = NULL;
        free(c->metrics_textfile);
        c->metrics_textfile = NULL;
        free(c->export_dir);
        c->export_dir = NULL;
}

__attribute__((format(printf, 3, 4)))
static int set_error(char **error, int r, const char *fmt, ...)
{
        va_list ap;
        char *msg;

        if (!error)
                return r;
        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        free(*error);
        *error = msg;
        return r;
}

/* Leading decimal digits of s into *ret; *suffix points after them. -EINVAL if there are none,
 * -ERANGE if they overflow. No sign, no leading space: strtoull would accept both. */
static int parse_digits(const char *s, uint64_t *ret, const char **suffix)
{
        uint64_t v = 0;
        const char *p;

        for (p = s; *p >= '0' && *p <= '9'; p++) {
                unsigned d = (unsigned)(*p - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -ERANGE;
                v = v * 10 + d;
        }
        if (p == s)
                return -EINVAL;
        *ret = v;
        *suffix = p;
        return 0;
}

static int parse_u64_range(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
        const char *suffix;
        uint64_t v;
        int r;

        r = parse_digits(s, &v, &suffix);
        if (r < 0)
                return r;
        if (*suffix != '\0' || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_interval_ms(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
        const char *suffix;
        uint64_t v;
        int r;

        r = parse_digits(s, &v, &suffix);
        if (r < 0)
                return r;
        if (streq(suffix, "s")) {
                if (v > UINT64_MAX / 1000)
                        return -ERANGE;
                v *= 1000;
        } else if (!streq(suffix, "") && !streq(suffix, "ms"))
                return -EINVAL;
        if (v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

int config_parse_size(const char *s, uint64_t *ret)
{
        const char *suffix;
        unsigned shift;
        uint64_t v;
        int r;

        r = parse_digits(s, &v, &suffix);
        if (r < 0)
                return r;
        if (streq(suffix, ""))
                shift = 0;
        else if (streq(suffix, "K") || streq(suffix, "k"))
                shift = 10;
        else if (streq(suffix, "M") || streq(suffix, "m"))
                shift = 20;
        else if (streq(suffix, "G") || streq(suffix, "g"))
                shift = 30;
        else
                return -EINVAL;
        if (v > (UINT64_MAX >> shift))
                return -ERANGE;
        *ret = v << shift;
        return 0;
}

static int parse_mode(const char *s, uint32_t *ret)
{
        uint32_t v = 0;
        const char *p;

        if (*s == '\0')
                return -EINVAL;
        for (p = s; *p; p++) {
                if (*p < '0' || *p > '7')
                        return -EINVAL;
                v = v * 8 + (uint32_t)(*p - '0');
                if (v > 0777)
                        return -EINVAL;
        }
        *ret = v;
        return 0;
}

static bool socket_path_valid(const char *s)
{
        size_t n = strlen(s);

        /* Absolute, names a file (no trailing slash), and fits sun_path with its NUL. */
        return n >= 2 && s[0] == '/' && s[n - 1] != '/' && n <= CONFIG_SOCKET_PATH_MAX;
}

static bool directory_valid(const char *s)
{
        size_t n = strlen(s);

        return n >= 1 && s[0] == '/' && n <= CONFIG_CACHE_DIRECTORY_MAX;
}

static bool group_name_valid(const char *s)
{
        size_t n = strlen(s);

        /* The portable user/group name set (POSIX, shadow's useradd): no digits-only names, so
         * nothing is mistaken for a GID. */
        if (n == 0 || n > GROUP_NAME_MAX)
                return false;
        if (!isalpha((unsigned char)s[0]) && s[0] != '_')
                return false;
        for (size_t i = 1; i < n; i++)
                if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
                        return false;
        return true;
}

/* What a valid value looks like, for the error message. */
static char *key_expected(const struct config_key *k)
{
        char *s = NULL;
        int n = -1;

        switch (k->type) {
        case KEY_U32:
                n = asprintf(&s, "an integer from %" PRIu64 " to %" PRIu64, k->min, k->max);
                break;
        case KEY_INTERVAL_MS:
                n = asprintf(&s, "milliseconds from %" PRIu64 " to %" PRIu64
                             ", optionally with suffix 'ms' or 's' (e.g. 1000, 250ms, 5s)",
                             k->min, k->max);
                break;
        case KEY_SIZE:
                n = asprintf(&s, "a number of bytes, optionally with suffix K, M or G (e.g. 4096, 64K)");
                break;
        case KEY_SOCKET_PATH:
                n = asprintf(&s, "an absolute file path of at most %u bytes", CONFIG_SOCKET_PATH_MAX);
                break;
        case KEY_MODE:
                n = asprintf(&s, "an octal mode from 0 to 0777 (e.g. 0660)");
                break;
        case KEY_GROUP:
                n = asprintf(&s, "a group name (letters, digits, '_', '.', '-', not starting with a digit or '-')");
                break;
        case KEY_UNWIND:
                n = asprintf(&s, "auto, dwarf or fp");
                break;
        case KEY_DIRECTORY:
                n = asprintf(&s, "an absolute directory path of at most %u bytes", CONFIG_CACHE_DIRECTORY_MAX);
                break;
        case KEY_FILE:
                n = asprintf(&s, "an absolute path of at most %u bytes, or nothing", CONFIG_CACHE_DIRECTORY_MAX);
                break;
        }
        return n < 0 ? NULL : s;
}

/* *field (a string key's) set to a copy of value, NULL for none. -ENOMEM. */
static int set_string(void *field, const char *value)
{
        char *s = NULL;

        if (value && !(s = strdup(value)))
                return -ENOMEM;
        free(*(char **)field);
        *(char **)field = s;
        return 0;
}

/* Store value into the field k names. -EINVAL if value is not valid for k, -ENOMEM. */
static int key_apply(const struct config_key *k, const char *value, struct memleakd_config *c)
{
        void *field = (char *)c + k->offset;
        uint64_t v;
        uint32_t mode;
        int r;

        switch (k->type) {
        case KEY_U32:
                r = parse_u64_range(value, k->min, k->max, &v);
                if (r < 0)
                        return -EINVAL;
                *(uint32_t *)field = (uint32_t)v;
                return 0;
        case KEY_INTERVAL_MS:
                r = parse_interval_ms(value, k->min, k->max, &v);
                if (r < 0)
                        return -EINVAL;
                *(uint64_t *)field = v;
                return 0;
        case KEY_SIZE:
                r = config_parse_size(value, &v);
                if (r < 0)
                        return -EINVAL;
                *(uint64_t *)field = v;
                return 0;
        case KEY_UNWIND: {
                enum memleak_unwind u = memleak_unwind_from_string(value);

                if (u <= MEMLEAK_UNWIND_DEFAULT)
                        return -EINVAL;
                *(enum memleak_unwind *)field = u;
                return 0;
        }
        case KEY_MODE:
                r = parse_mode(value, &mode);
                if (r < 0)
                        return -EINVAL;
                *(uint32_t *)field = mode;
                return 0;
        case KEY_SOCKET_PATH:
        case KEY_DIRECTORY:
                if (k->type == KEY_SOCKET_PATH ? !socket_path_valid(value) : !directory_valid(value))
                        return -EINVAL;
                return set_string(field, value);
        case KEY_FILE:
                /* empty: none */
                if (*value != '\0' && (!directory_valid(value) || value[strlen(value) - 1] == '/'))
                        return -EINVAL;
                return set_string(field, *value != '\0' ? value : NULL);
        case KEY_GROUP:
                /* Empty means root's group, the default. */
                if (*value != '\0' && !group_name_valid(value))
                        return -EINVAL;
                return set_string(field, *value != '\0' ? value : NULL);
        }
        return -EINVAL;
}

static const struct config_key *key_find(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(config_keys); i++)
                if (streq(config_keys[i].name, name))
                        return &config_keys[i];
        return NULL;
}

static char *strip(char *s)
{
        char *e;

        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
                s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
                e--;
        *e = '\0';
        return s;
}

/* Where a file's lines go: the daemon's keys, or the latest [target] section's. */
enum section {
        SECTION_MEMLEAKD,
        SECTION_TARGET,
};

/* The [target] section just ended (at another header or the file's end) checked. */
static int target_section_end(const char *path, struct memleakd_config *c, enum section section, char **error)
{
        const char *why = NULL;

        if (section != SECTION_TARGET || config_targets_end_last(&c->targets, &why) >= 0)
                return 0;
        return set_error(error, -EINVAL, "%s: [" CONFIG_TARGET_SECTION "] at %s: %s", path,
                         c->targets.v[c->targets.n - 1].where, why);
}

static int parse_header(const char *path, unsigned line_no, const char *line, struct memleakd_config *c,
                        enum section *section, char **error)
{
        _cleanup_free_ char *where = NULL;
        size_t n = strlen(line);
        int r;

        if (n < 2 || line[n - 1] != ']')
                return set_error(error, -EINVAL, "%s:%u: invalid section header '%s'", path, line_no, line);
        r = target_section_end(path, c, *section, error);
        if (r < 0)
                return r;
        if (n - 2 == strlen(CONFIG_SECTION) && strncmp(line + 1, CONFIG_SECTION, n - 2) == 0) {
                *section = SECTION_MEMLEAKD;
                return 0;
        }
        if (n - 2 != strlen(CONFIG_TARGET_SECTION) || strncmp(line + 1, CONFIG_TARGET_SECTION, n - 2) != 0)
                return set_error(error, -EINVAL, "%s:%u: unknown section '%s': only [" CONFIG_SECTION "] and ["
                                 CONFIG_TARGET_SECTION "] are allowed", path, line_no, line);
        if (asprintf(&where, "%s:%u", path, line_no) < 0)
                return set_error(error, -ENOMEM, "%s:%u: out of memory", path, line_no);
        r = config_targets_begin(&c->targets, where);
        if (r == -E2BIG)
                return set_error(error, r, "%s:%u: more than %u [" CONFIG_TARGET_SECTION "] sections", path, line_no,
                                 CONFIG_TARGETS_MAX);
        if (r < 0)
                return set_error(error, r, "%s:%u: out of memory", path, line_no);
        *section = SECTION_TARGET;
        return 0;
}

static int parse_target_line(const char *path, unsigned line_no, const char *key, const char *value,
                             struct memleakd_config *c, char **error)
{
        const char *expected = NULL;
        int r;

        r = config_targets_set(&c->targets, key, value, &expected);
        if (r == -ENOENT)
                return set_error(error, -EINVAL, "%s:%u: unknown key '%s' in [" CONFIG_TARGET_SECTION "] (unit, "
                                 "cgroup, exe, comm, objs, min_size, max_size, sample_bytes, unwind, mmap)", path, line_no, key);
        if (r == -EEXIST)
                return set_error(error, -EINVAL, "%s:%u: '%s': a [" CONFIG_TARGET_SECTION "] section matches by "
                                 "one of unit, cgroup, exe or comm, and says it once", path, line_no, key);
        if (r == -ENOMEM)
                return set_error(error, r, "%s:%u: out of memory", path, line_no);
        if (r < 0)
                return set_error(error, r, "%s:%u: invalid value '%s' for '%s': expected %s", path, line_no,
                                 value, key, expected ?: "a valid value");
        return 0;
}

/* One line, already stripped and not a comment. *min_line and *max_line record where the size
 * keys were set, for the min <= max check. */
static int parse_line(const char *path, unsigned line_no, char *line, struct memleakd_config *c,
                      enum section *section, unsigned *min_line, unsigned *max_line, char **error)
{
        const struct config_key *k;
        char *eq, *key, *value;
        int r;

        if (line[0] == '[')
                return parse_header(path, line_no, line, c, section, error);

        eq = strchr(line, '=');
        if (!eq)
                return set_error(error, -EINVAL, "%s:%u: expected 'key = value', got '%s'",
                                 path, line_no, line);
        *eq = '\0';
        key = strip(line);
        value = strip(eq + 1);
        if (*key == '\0')
                return set_error(error, -EINVAL, "%s:%u: missing key before '=' (value '%s')",
                                 path, line_no, value);

        if (*section == SECTION_TARGET)
                return parse_target_line(path, line_no, key, value, c, error);
        k = key_find(key);
        if (!k)
                return set_error(error, -EINVAL, "%s:%u: unknown key '%s'", path, line_no, key);

        r = key_apply(k, value, c);
        if (r == -ENOMEM)
                return set_error(error, r, "%s:%u: out of memory", path, line_no);
        if (r < 0) {
                _cleanup_free_ char *expected = key_expected(k);
                return set_error(error, r, "%s:%u: invalid value '%s' for '%s': expected %s",
                                 path, line_no, value, k->name, expected ?: "a valid value");
        }

        if (k->offset == offsetof(struct memleakd_config, min_size))
                *min_line = line_no;
        else if (k->offset == offsetof(struct memleakd_config, max_size))
                *max_line = line_no;
        return 0;
}

int config_copy(const struct memleakd_config *src, struct memleakd_config *ret)
{
        struct memleakd_config t = *src;

        t.socket_path = NULL;
        t.socket_group = NULL;
        t.admin_group = NULL;
        t.cache_directory = NULL;
        t.targets = (struct config_targets) {};
        t.state_directory = NULL;
        t.bpf_pin_directory = NULL;
        if (config_targets_copy(&src->targets, &t.targets) < 0 ||
            (src->socket_path && !(t.socket_path = strdup(src->socket_path))) ||
            (src->socket_group && !(t.socket_group = strdup(src->socket_group))) ||
            (src->admin_group && !(t.admin_group = strdup(src->admin_group))) ||
            (src->cache_directory && !(t.cache_directory = strdup(src->cache_directory))) ||
            (src->state_directory && !(t.state_directory = strdup(src->state_directory))) ||
            (src->bpf_pin_directory && !(t.bpf_pin_directory = strdup(src->bpf_pin_directory)))) {
                config_done(&t);
                return -ENOMEM;
        }
        *ret = t;
        return 0;
}

int config_parse_file(const char *path, struct memleakd_config *c, char **error)
{
        _cleanup_(config_done) struct memleakd_config t = {};
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *buf = NULL;
        unsigned line_no = 0, min_line = 0, max_line = 0;
        enum section section = SECTION_MEMLEAKD;
        size_t size = 0;
        ssize_t n;
        int r;

        assert(path);
        assert(c);
        f = fopen(path, "re");
        if (!f) {
                r = -errno;
                return set_error(error, r, "%s: %s", path, strerror(-r));
        }

        /* Parse into a copy: *c changes only if the whole file is valid. */
        r = config_copy(c, &t);
        if (r < 0)
                return set_error(error, r, "%s: out of memory", path);

        errno = 0;
        while ((n = getline(&buf, &size, f)) >= 0) {
                char *line = buf;

                line_no++;
                if (strlen(buf) != (size_t)n)
                        return set_error(error, -EINVAL, "%s:%u: line contains a NUL byte", path, line_no);
                if (line_no == 1 && strncmp(line, "\xef\xbb\xbf", 3) == 0)
                        line += 3;      /* UTF-8 byte order mark */
                line = strip(line);
                if (line[0] == '\0' || line[0] == '#' || line[0] == ';')
                        continue;

                r = parse_line(path, line_no, line, &t, &section, &min_line, &max_line, error);
                if (r < 0)
                        return r;
        }
        if (ferror(f)) {
                r = errno > 0 ? -errno : -EIO;
                return set_error(error, r, "%s: %s", path, strerror(-r));
        }
        r = target_section_end(path, &t, section, error);
        if (r < 0)
                return r;

        if (t.min_size > 0 && t.max_size > 0 && t.min_size > t.max_size) {
                unsigned at = MAX(min_line, max_line);

                if (at > 0)
                        return set_error(error, -EINVAL,
                                         "%s:%u: 'default_min_size' (%" PRIu64 ") is greater than "
                                         "'default_max_size' (%" PRIu64 ")",
                                         path, at, t.min_size, t.max_size);
                return set_error(error, -EINVAL,
                                 "%s: 'default_min_size' (%" PRIu64 ") is greater than "
                                 "'default_max_size' (%" PRIu64 ")", path, t.min_size, t.max_size);
        }

        config_done(c);
        *c = t;
        t = (struct memleakd_config) {};
        return 0;
}

/* Whether the field k names holds the same in a and b. */
static bool key_same(const struct config_key *k, const struct memleakd_config *a, const struct memleakd_config *b)
{
        const void *x = (const char *)a + k->offset, *y = (const char *)b + k->offset;

        switch (k->type) {
        case KEY_U32:
        case KEY_MODE:
                return *(const uint32_t *)x == *(const uint32_t *)y;
        case KEY_INTERVAL_MS:
        case KEY_SIZE:
                return *(const uint64_t *)x == *(const uint64_t *)y;
        case KEY_UNWIND:
                return *(const enum memleak_unwind *)x == *(const enum memleak_unwind *)y;
        case KEY_SOCKET_PATH:
        case KEY_DIRECTORY:
        case KEY_FILE:
        case KEY_GROUP: {
                const char *s = *(char *const *)x, *t = *(char *const *)y;

                return s == t || (s && t && streq(s, t));
        }
        }
        return false;
}

/* Copy the field k names from src to dst: a number (restart keys, the strings among them, are
 * never copied). */
static void key_copy(const struct config_key *k, struct memleakd_config *dst, const struct memleakd_config *src)
{
        void *x = (char *)dst + k->offset;
        const void *y = (const char *)src + k->offset;

        switch (k->type) {
        case KEY_U32:
        case KEY_MODE:
                *(uint32_t *)x = *(const uint32_t *)y;
                return;
        case KEY_INTERVAL_MS:
        case KEY_SIZE:
                *(uint64_t *)x = *(const uint64_t *)y;
                return;
        case KEY_UNWIND:
                *(enum memleak_unwind *)x = *(const enum memleak_unwind *)y;
                return;
        case KEY_SOCKET_PATH:
        case KEY_DIRECTORY:
        case KEY_FILE:
        case KEY_GROUP:
                assert(!"a string key applied at run time");
                return;
        }
}

static bool targets_same(const struct config_targets *a, const struct config_targets *b)
{
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!config_targets_same(&a->v[i], &b->v[i]))
                        return false;
        return true;
}

bool config_key_reloadable(const char *name)
{
        const struct config_key *k = key_find(name);

        return k && !k->restart;
}

int config_reload(struct memleakd_config *c, const struct memleakd_config *fresh, char **ret_restart)
{
        _cleanup_free_ char *restart = NULL;

        assert(c);
        assert(fresh);
        for (size_t i = 0; i < ELEMENTSOF(config_keys); i++) {
                const struct config_key *k = &config_keys[i];
                char *joined;

                if (key_same(k, c, fresh))
                        continue;
                if (!k->restart) {
                        key_copy(k, c, fresh);
                        continue;
                }
                if (asprintf(&joined, "%s%s%s", restart ?: "", restart ? ", " : "", k->name) < 0)
                        return -ENOMEM;
                free(restart);
                restart = joined;
        }
        if (!targets_same(&c->targets, &fresh->targets)) {
                struct config_targets copy;
                int r = config_targets_copy(&fresh->targets, &copy);

                if (r < 0)
                        return r;
                config_targets_done(&c->targets);
                c->targets = copy;
        }
        if (ret_restart)
                *ret_restart = TAKE_PTR(restart);
        return 0;
}
