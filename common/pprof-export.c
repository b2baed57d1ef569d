/* SPDX-License-Identifier: MIT */
/* A report as a gzip'd pprof profile. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "arena.h"
#include "id-table.h"
#include "json-util.h"
#include "macro.h"
#include "pprof-export.h"
#include "profile.pb-c.h"
#include "reply-fields.h"
#include "report-stacks.h"
#include "util.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

/* A growing array of pointers (the profile's repeated messages and its string table). */
struct ptr_array {
        void **items;
        size_t n, cap;
};

static int ptr_array_push(struct ptr_array *v, void *p)
{
        if (v->n == v->cap) {
                size_t cap = v->cap ? v->cap * 2 : 64;
                void **items = reallocarray(v->items, cap, sizeof(*items));

                if (!items)
                        return -ENOMEM;
                v->items = items;
                v->cap = cap;
        }
        v->items[v->n++] = p;
        return 0;
}

/* A key being put together, bytes after bytes. */
struct key_buf {
        char *data;
        size_t len, cap;
};

static int key_buf_put(struct key_buf *k, const void *p, size_t n)
{
        if (k->len + n > k->cap) {
                size_t cap = MAX(k->cap * 2, k->len + n + 256);
                char *data = realloc(k->data, cap);

                if (!data)
                        return -ENOMEM;
                k->data = data;
                k->cap = cap;
        }
        memcpy(k->data + k->len, p, n);
        k->len += n;
        return 0;
}

/* s and its terminating NUL; a NULL s as one byte 0xff (no string starts with it: it is not UTF-8). */
static int key_buf_put_str(struct key_buf *k, const char *s)
{
        return s ? key_buf_put(k, s, strlen(s) + 1) : key_buf_put(k, "\xff", 1);
}

/* A mapping as it is being built: the addresses seen of it widen it. */
struct mapping_state {
        Mapping *m;
        uint64_t bias;                  /* address - file offset (0 without offsets) */
        bool has_offsets;
        bool any_functions, any_files, any_lines;       /* of its frames: pprof's has_* */
};

struct builder {
        struct arena arena;
        struct id_table strings, functions, locations, mappings;
        struct ptr_array string_table, samples, function_list, location_list, comments;
        struct mapping_state *mapping_states;
        size_t n_mappings, cap_mappings;
        uint64_t program_mapping;       /* that of the first _start seen: the program's own (0: none) */
        const cJSON *report, *targets;
        struct key_buf key;
};

static void builder_done(struct builder *b)
{
        id_table_free(&b->strings);
        id_table_free(&b->functions);
        id_table_free(&b->locations);
        id_table_free(&b->mappings);
        free(b->string_table.items);
        free(b->samples.items);
        free(b->function_list.items);
        free(b->location_list.items);
        free(b->comments.items);
        free(b->mapping_states);
        free(b->key.data);
        arena_free(&b->arena);
}

/* The string table index of s ("" for NULL). -ENOMEM. */
static int64_t string_id(struct builder *b, const char *s)
{
        const char *copy;
        size_t id;
        int r;

        if (!s)
                s = "";
        r = id_table_get_or_add(&b->strings, &b->arena, s, strlen(s), b->string_table.n, &id, &copy);
        if (r == 0)
                r = ptr_array_push(&b->string_table, (void *)copy);
        if (r < 0)
                return r;
        return (int64_t)id;
}

static int64_t string_printf(struct builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int64_t string_printf(struct builder *b, const char *fmt, ...)
{
        _cleanup_free_ char *s = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        return string_id(b, s);
}

static int comment_add(struct builder *b, int64_t id)
{
        if (id < 0)
                return (int)id;
        return ptr_array_push(&b->comments, (void *)(intptr_t)id);
}

static bool streq_ptr(const char *a, const char *b)
{
        return a && b && strcmp(a, b) == 0;
}

static const char *get_str(const cJSON *o, const char *name)
{
        return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, name));
}

static uint64_t get_u64_or(const cJSON *o, const char *name, uint64_t fallback)
{
        uint64_t v;

        return json_get_u64(cJSON_GetObjectItemCaseSensitive(o, name), UINT64_MAX, &v) >= 0 ? v : fallback;
}

static int64_t as_int64(uint64_t v)
{
        return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The report's target of pid (the first, where an exited one and a live one share it). */
static const cJSON *target_of(const struct builder *b, uint64_t pid)
{
        const cJSON *t;

        cJSON_ArrayForEach(t, b->targets)
                if (get_u64_or(t, RF_PID, UINT64_MAX) == pid)
                        return t;
        return NULL;
}

static uint64_t frame_addr(const cJSON *frame)
{
        const char *s = get_str(frame, RF_ADDR);
        char *end;
        uint64_t v;

        if (!s)
                return 0;
        errno = 0;
        v = strtoull(s, &end, 16);
        return errno || end == s || *end ? 0 : v;
}

/* The function named symbol in file. */
static int function_id(struct builder *b, const char *symbol, const char *file, uint64_t *ret)
{
        size_t id;
        int r;

        b->key.len = 0;
        r = key_buf_put_str(&b->key, symbol);
        if (r >= 0)
                r = key_buf_put_str(&b->key, file);
        if (r < 0)
                return r;
        r = id_table_get_or_add(&b->functions, &b->arena, b->key.data, b->key.len, b->function_list.n + 1, &id, NULL);
        if (r < 0)
                return r;
        if (r == 0) {
                Function *f = arena_alloc(&b->arena, sizeof(*f));
                int64_t name = string_id(b, symbol), filename = string_id(b, file);

                if (!f || name < 0 || filename < 0)
                        return -ENOMEM;
                perftools__profiles__function__init(f);
                f->id = id;
                f->name = name;
                f->system_name = name;  /* the report's names are demangled already: no other */
                f->filename = filename;
                r = ptr_array_push(&b->function_list, f);
                if (r < 0)
                        return r;
        }
        *ret = id;
        return 0;
}

/* The mapping of module in pid's address space at bias (address - file offset), widened to addr;
 * 0 for a frame without a module. */
static int mapping_id(struct builder *b, uint64_t pid, const cJSON *frame, uint64_t addr, uint64_t *ret)
{
        const char *module = get_str(frame, RF_MODULE), *build_id = get_str(frame, RF_BUILD_ID);
        uint64_t offset, bias = 0;
        bool has_offset;
        struct mapping_state *s;
        size_t id;
        int r;

        if (!module) {
                *ret = 0;
                return 0;
        }
        has_offset = json_get_u64(cJSON_GetObjectItemCaseSensitive(frame, RF_MODULE_OFFSET), UINT64_MAX, &offset) >= 0 &&
                     offset <= addr;
        if (has_offset)
                bias = addr - offset;
        b->key.len = 0;
        r = key_buf_put(&b->key, &pid, sizeof(pid));
        if (r >= 0)
                r = key_buf_put(&b->key, &bias, sizeof(bias));
        if (r >= 0)
                r = key_buf_put(&b->key, &has_offset, sizeof(has_offset));
        if (r >= 0)
                r = key_buf_put_str(&b->key, module);
        if (r >= 0)     /* an exited target's build and a live one's at the same place are two */
                r = key_buf_put_str(&b->key, build_id);
        if (r < 0)
                return r;
        r = id_table_get_or_add(&b->mappings, &b->arena, b->key.data, b->key.len, b->n_mappings + 1, &id, NULL);
        if (r < 0)
                return r;
        if (r == 0) {
                Mapping *m = arena_alloc(&b->arena, sizeof(*m));
                int64_t filename = string_id(b, module), build = string_id(b, build_id);

                if (!m || filename < 0 || build < 0)
                        return -ENOMEM;
                if (b->n_mappings == b->cap_mappings) {
                        size_t cap = b->cap_mappings ? b->cap_mappings * 2 : 16;
                        struct mapping_state *states = reallocarray(b->mapping_states, cap, sizeof(*states));

                        if (!states)
                                return -ENOMEM;
                        b->mapping_states = states;
                        b->cap_mappings = cap;
                }
                perftools__profiles__mapping__init(m);
                m->id = id;
                m->filename = filename;
                m->build_id = build;    /* "" (0) for none: pprof's own way to say so */
                m->memory_start = addr;
                m->memory_limit = addr + 1;
                b->mapping_states[b->n_mappings++] = (struct mapping_state) {
                        .m = m, .bias = bias, .has_offsets = has_offset,
                };
        }
        s = &b->mapping_states[id - 1];
        s->m->memory_start = MIN(s->m->memory_start, addr);
        s->m->memory_limit = MAX(s->m->memory_limit, addr + 1);
        *ret = id;
        return 0;
}

/* A location that is a name alone (a stack without frames, the stacks past top): no mapping, no
 * address. */
static int pseudo_location_id(struct builder *b, const char *name, uint64_t *ret)
{
        Location *loc;
        Line *line;
        uint64_t fid;
        size_t id;
        int r;

        b->key.len = 0;
        r = key_buf_put(&b->key, "\xfe", 1);
        if (r >= 0)
                r = key_buf_put_str(&b->key, name);
        if (r < 0)
                return r;
        r = id_table_get_or_add(&b->locations, &b->arena, b->key.data, b->key.len, b->location_list.n + 1, &id, NULL);
        if (r < 0)
                return r;
        if (r == 0) {
                r = function_id(b, name, NULL, &fid);
                if (r < 0)
                        return r;
                loc = arena_alloc(&b->arena, sizeof(*loc));
                line = arena_alloc(&b->arena, sizeof(*line));
                if (!loc || !line)
                        return -ENOMEM;
                perftools__profiles__location__init(loc);
                perftools__profiles__line__init(line);
                line->function_id = fid;
                loc->id = id;
                loc->n_line = 1;
                loc->line = arena_alloc(&b->arena, sizeof(*loc->line));
                if (!loc->line)
                        return -ENOMEM;
                loc->line[0] = line;
                r = ptr_array_push(&b->location_list, loc);
                if (r < 0)
                        return r;
        }
        *ret = id;
        return 0;
}

/* The location of count frames of pid's stack from first on, all at addr: the frames inlined
 * there first, then the function that holds the code. Keyed by all it says, so that a pid's
 * exited target and its live one never share a location they name differently. */
static int location_id(struct builder *b, uint64_t pid, const cJSON *first, size_t count, uint64_t addr,
                       uint64_t *ret)
{
        const cJSON *top = first, *f;
        uint64_t mid, line_no;
        Location *loc;
        size_t id, i;
        int r;

        for (i = 1; i < count; i++)
                top = top->next;

        b->key.len = 0;
        r = key_buf_put(&b->key, &pid, sizeof(pid));
        if (r >= 0)
                r = key_buf_put(&b->key, &addr, sizeof(addr));
        for (i = 0, f = first; r >= 0 && i < count; i++, f = f->next) {
                line_no = get_u64_or(f, RF_LINE, 0);
                r = key_buf_put_str(&b->key, get_str(f, RF_SYMBOL));
                if (r >= 0)
                        r = key_buf_put_str(&b->key, get_str(f, RF_FILE));
                if (r >= 0)
                        r = key_buf_put_str(&b->key, get_str(f, RF_MODULE));
                if (r >= 0)
                        r = key_buf_put_str(&b->key, get_str(f, RF_BUILD_ID));
                if (r >= 0)
                        r = key_buf_put(&b->key, &line_no, sizeof(line_no));
        }
        if (r < 0)
                return r;
        r = id_table_get_or_add(&b->locations, &b->arena, b->key.data, b->key.len, b->location_list.n + 1, &id, NULL);
        if (r < 0)
                return r;
        if (r == 1) {
                *ret = id;
                return 0;
        }

        loc = arena_alloc(&b->arena, sizeof(*loc));
        if (!loc)
                return -ENOMEM;
        perftools__profiles__location__init(loc);
        loc->id = id;
        loc->address = addr;
        r = mapping_id(b, pid, top, addr, &mid);
        if (r < 0)
                return r;
        loc->mapping_id = mid;
        loc->line = arena_alloc(&b->arena, sizeof(*loc->line) * count);
        if (!loc->line)
                return -ENOMEM;
        for (i = 0, f = first; i < count; i++, f = f->next) {
                const char *symbol = get_str(f, RF_SYMBOL), *file = get_str(f, RF_FILE);
                struct mapping_state *s = mid ? &b->mapping_states[mid - 1] : NULL;
                uint64_t fid, n;
                Line *line;

                if (s) {
                        s->any_functions |= symbol != NULL;
                        s->any_files |= file != NULL;
                        s->any_lines |= json_get_u64(cJSON_GetObjectItemCaseSensitive(f, RF_LINE), UINT64_MAX, &n) >= 0;
                }
                if (!symbol)            /* unnamed: the address alone, for pprof to name if it can */
                        continue;
                r = function_id(b, symbol, file, &fid);
                if (r < 0)
                        return r;
                line = arena_alloc(&b->arena, sizeof(*line));
                if (!line)
                        return -ENOMEM;
                perftools__profiles__line__init(line);
                line->function_id = fid;
                line->line = as_int64(get_u64_or(f, RF_LINE, 0));
                loc->line[loc->n_line++] = line;
        }
        r = ptr_array_push(&b->location_list, loc);
        if (r < 0)
                return r;
        *ret = id;
        return 0;
}

static int label_str(struct builder *b, Label **labels, size_t *n, const char *key, const char *value)
{
        Label *l = arena_alloc(&b->arena, sizeof(*l));
        int64_t k = string_id(b, key), v = string_id(b, value);

        if (!l || k < 0 || v < 0)
                return -ENOMEM;
        perftools__profiles__label__init(l);
        l->key = k;
        l->str = v;
        labels[(*n)++] = l;
        return 0;
}

#define SAMPLE_LABELS_MAX 5

/* A sample of values (allocs, bytes) at locations, with pid's labels (none for pid UINT64_MAX). */
static int sample_add(struct builder *b, uint64_t *locations, size_t n_locations, uint64_t allocs, uint64_t bytes,
                      uint64_t pid, bool mmap)
{
        Sample *s = arena_alloc(&b->arena, sizeof(*s));
        int r = 0;

        if (!s)
                return -ENOMEM;
        perftools__profiles__sample__init(s);
        s->location_id = locations;
        s->n_location_id = n_locations;
        s->n_value = 2;
        s->value = arena_alloc(&b->arena, 2 * sizeof(*s->value));
        s->label = arena_alloc(&b->arena, SAMPLE_LABELS_MAX * sizeof(*s->label));
        if (!s->value || !s->label)
                return -ENOMEM;
        s->value[0] = as_int64(allocs);
        s->value[1] = as_int64(bytes);
        if (pid != UINT64_MAX) {
                const cJSON *t = target_of(b, pid);
                uint64_t sample_bytes = get_u64_or(t, RF_SAMPLE_BYTES, 0);
                char pid_text[24];

                snprintf(pid_text, sizeof(pid_text), "%" PRIu64, pid);
                r = label_str(b, s->label, &s->n_label, "pid", pid_text);
                if (r >= 0 && get_str(t, RF_COMM))
                        r = label_str(b, s->label, &s->n_label, "comm", get_str(t, RF_COMM));
                if (r >= 0 && get_str(t, RF_UNIT))
                        r = label_str(b, s->label, &s->n_label, "unit", get_str(t, RF_UNIT));
                if (r >= 0)
                        r = label_str(b, s->label, &s->n_label, "kind", mmap ? "mmap" : "heap");
                /* its heap's blocks are sampled, its mappings (mmap) recorded whole */
                if (r >= 0 && sample_bytes > 0 && !mmap) {
                        Label *l = arena_alloc(&b->arena, sizeof(*l));
                        int64_t k = string_id(b, "sample_bytes"), unit = string_id(b, "bytes");

                        if (!l || k < 0 || unit < 0)
                                return -ENOMEM;
                        perftools__profiles__label__init(l);
                        l->key = k;
                        l->num = as_int64(sample_bytes);
                        l->num_unit = unit;
                        s->label[s->n_label++] = l;
                }
                if (r < 0)
                        return r;
        }
        return ptr_array_push(&b->samples, s);
}

static int stack_add(struct builder *b, const cJSON *stack)
{
        const cJSON *frames = cJSON_GetObjectItemCaseSensitive(stack, RF_FRAMES);
        int n_frames = cJSON_IsArray(frames) ? cJSON_GetArraySize(frames) : 0;
        uint64_t pid = get_u64_or(stack, RF_PID, 0), *locations;
        size_t n = 0;
        int r;

        locations = arena_alloc(&b->arena, sizeof(*locations) * (size_t)MAX(n_frames, 1));
        if (!locations)
                return -ENOMEM;
        for (const cJSON *frame = n_frames > 0 ? frames->child : NULL; frame; frame = frame->next) {
                const cJSON *first = frame;
                uint64_t addr = frame_addr(frame);
                size_t count = 1;

                /* the frames inlined at an address, up to the one that holds its code */
                while (frame->next && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(frame, RF_INLINED)) &&
                       frame_addr(frame->next) == addr) {
                        frame = frame->next;
                        count++;
                }
                r = location_id(b, pid, first, count, addr, &locations[n]);
                if (r < 0)
                        return r;
                n++;
                /* the program is where a process starts: its file is the profile's first mapping */
                if (!frame->next && b->program_mapping == 0 && streq_ptr(get_str(frame, RF_SYMBOL), "_start"))
                        b->program_mapping = ((Location *)b->location_list.items[locations[n - 1] - 1])->mapping_id;
        }
        if (n == 0) {
                const char *why = get_str(stack, RF_STACK_ERROR);
                _cleanup_free_ char *name = NULL;

                if (asprintf(&name, "[no stack: %s]", why ? why : "no frames") < 0)
                        return -ENOMEM;
                r = pseudo_location_id(b, name, &locations[n++]);
                if (r < 0)
                        return r;
        }
        return sample_add(b, locations, n, get_u64_or(stack, RF_ALLOCS, 0), get_u64_or(stack, RF_BYTES, 0), pid,
                          cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(stack, RF_MMAP)));
}

/* The stacks past top, as one sample of their own. */
static int other_add(struct builder *b)
{
        const cJSON *other = cJSON_GetObjectItemCaseSensitive(b->report, RF_OTHER);
        uint64_t stacks = get_u64_or(other, RF_STACKS, 0), top = get_u64_or(b->report, RF_TOP, 0);
        uint64_t bytes = get_u64_or(other, RF_BYTES, 0), allocs = get_u64_or(other, RF_ALLOCS, 0);
        _cleanup_free_ char *name = NULL;
        uint64_t *location;
        int r;

        if (stacks == 0)
                return 0;
        if (asprintf(&name, "[other: %" PRIu64 " stacks past top %" PRIu64 "]", stacks, top) < 0)
                return -ENOMEM;
        location = arena_alloc(&b->arena, sizeof(*location));
        if (!location)
                return -ENOMEM;
        r = pseudo_location_id(b, name, location);
        if (r < 0)
                return r;
        r = comment_add(b, string_printf(b, "%" PRIu64 " stacks (%" PRIu64 " bytes in %" PRIu64 " allocations) past "
                                         "top %" PRIu64 " are one sample, %s: ask for more with --top", stacks,
                                         bytes, allocs, top, name));
        if (r < 0)
                return r;
        return sample_add(b, location, 1, allocs, bytes, UINT64_MAX, false);
}

/* What the values are, said once: the sampled targets' estimates, and the events lost. */
static int comments_add(struct builder *b, Profile *p)
{
        const cJSON *t, *lost = cJSON_GetObjectItemCaseSensitive(b->report, RF_LOST), *c, *suppressed;
        uint64_t min_age = get_u64_or(b->report, RF_MIN_AGE_S, 0), period = UINT64_MAX;
        _cleanup_free_ char *losses = NULL;
        size_t losses_len = 0;
        FILE *f;
        int r;

        r = comment_add(b, min_age > 0 ?
                        string_printf(b, "memleakd: memory allocated and not yet freed, by call stack, of the "
                                      "allocations at least %" PRIu64 " s old", min_age) :
                        string_id(b, "memleakd: memory allocated and not yet freed, by call stack"));
        if (r < 0)
                return r;
        cJSON_ArrayForEach(t, b->targets) {
                uint64_t pid = get_u64_or(t, RF_PID, 0), mean = get_u64_or(t, RF_SAMPLE_BYTES, 0);
                const char *comm = get_str(t, RF_COMM);
                bool auto_sampled = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(t, RF_AUTO_SAMPLE));

                period = period == UINT64_MAX || period == mean ? mean : 0;
                if (mean == 0)
                        continue;
                r = comment_add(b, string_printf(b, "pid %" PRIu64 " (%s) is sampled%s: a sample point every %" PRIu64
                                                 " bytes on average, its heap stacks' values are estimates (the "
                                                 "relative standard error of each is sqrt(%" PRIu64 " / its bytes))",
                                                 pid, comm ? comm : "?",
                                                 auto_sampled ? " (by memleakd, as its allocation table filled)" : "",
                                                 mean, mean));
                if (r < 0)
                        return r;
        }
        /* every target sampled alike (or all exact, 0): that is the profile's period */
        p->period = as_int64(period == UINT64_MAX ? 0 : period);

        /* memleakctl's own --suppressions took stacks out of the report: say how much */
        suppressed = cJSON_GetObjectItemCaseSensitive(b->report, RF_SUPPRESSED);
        if (cJSON_IsObject(suppressed)) {
                const char *file = get_str(suppressed, RF_FILE);

                r = comment_add(b, string_printf(b, "%" PRIu64 " stacks (%" PRIu64 " bytes in %" PRIu64 " allocations) "
                                                 "left out: the suppressions of %s name them",
                                                 get_u64_or(suppressed, RF_STACKS, 0),
                                                 get_u64_or(suppressed, RF_BYTES, 0),
                                                 get_u64_or(suppressed, RF_ALLOCS, 0), file ? file : "?"));
                if (r < 0)
                        return r;
        }

        f = open_memstream(&losses, &losses_len);
        if (!f)
                return -ENOMEM;
        cJSON_ArrayForEach(c, lost) {
                uint64_t v;

                if (c->string && json_get_u64(c, UINT64_MAX, &v) >= 0 && v > 0)
                        fprintf(f, "%s%s %" PRIu64, ftell(f) > 0 ? ", " : "", c->string, v);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        if (losses_len > 0) {
                r = comment_add(b, string_printf(b, "events lost, not in these values (memleakctl status explains "
                                                 "each): %s", losses));
                if (r < 0)
                        return r;
        }
        return 0;
}

static int value_type(struct builder *b, const char *type, const char *unit, ValueType **ret)
{
        ValueType *v = arena_alloc(&b->arena, sizeof(*v));
        int64_t t = string_id(b, type), u = string_id(b, unit);

        if (!v || t < 0 || u < 0)
                return -ENOMEM;
        perftools__profiles__value_type__init(v);
        v->type = t;
        v->unit = u;
        *ret = v;
        return 0;
}

int pprof_export_encode(const cJSON *report, uint8_t **ret, size_t *ret_size)
{
        _cleanup_(builder_done) struct builder b = { .report = report };
        _cleanup_(report_stacks_done) struct report_stacks rs = {};
        const cJSON *item, *t, *generated_at = cJSON_GetObjectItemCaseSensitive(report, RF_GENERATED_AT);
        Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
        ValueType *types[2];
        uint64_t attached_s = 0;
        uint8_t *out;
        int64_t inuse_space;
        int r;

        assert(ret);
        assert(ret_size);

        r = report_stacks_init(&rs, report);
        if (r < 0)
                return r;
        b.targets = cJSON_GetObjectItemCaseSensitive(report, RF_TARGETS);
        if (string_id(&b, "") != 0)             /* string_table[0] is "" */
                return -ENOMEM;
        r = value_type(&b, "inuse_objects", "count", &types[0]);
        if (r >= 0)
                r = value_type(&b, "inuse_space", "bytes", &types[1]);
        if (r >= 0)
                r = value_type(&b, "space", "bytes", &p.period_type);
        if (r < 0)
                return r;
        inuse_space = types[1]->type;

        cJSON_ArrayForEach(item, rs.stacks) {
                _cleanup_json_ cJSON *stack = NULL;

                r = report_stacks_open(&rs, item, NULL, NULL, &stack);
                if (r >= 0)
                        r = stack_add(&b, stack);
                if (r < 0)
                        return r;
        }
        r = other_add(&b);
        if (r >= 0)
                r = comments_add(&b, &p);
        if (r < 0)
                return r;
        for (size_t i = 0; i < b.n_mappings; i++) {
                struct mapping_state *s = &b.mapping_states[i];

                /* its file offsets where the report gave them (module_offset), else none */
                s->m->file_offset = s->has_offsets ? s->m->memory_start - s->bias : 0;
                /* as pprof's own symbolizer sets them: the mapping was symbolized (so pprof does not
                 * do it again, over memleakd's names), some of its frames to files and lines */
                s->m->has_functions = s->any_functions;
                s->m->has_filenames = s->any_files;
                s->m->has_line_numbers = s->any_lines;
                /* lines come from debug information, which names the inlined frames too */
                s->m->has_inline_frames = s->m->has_line_numbers;
        }

        cJSON_ArrayForEach(t, b.targets)
                attached_s = MAX(attached_s, get_u64_or(t, RF_ATTACHED_S, 0));
        if (cJSON_IsNumber(generated_at) && generated_at->valuedouble > 0 && generated_at->valuedouble < 9e9)
                p.time_nanos = (int64_t)(generated_at->valuedouble * 1e9);
        p.duration_nanos = as_int64(MIN(attached_s, (uint64_t)INT64_MAX / 1000000000) * 1000000000);
        p.n_sample_type = 2;
        p.sample_type = types;
        p.default_sample_type = inuse_space;
        p.n_sample = b.samples.n;
        p.sample = (Sample **)b.samples.items;
        p.n_location = b.location_list.n;
        p.location = (Location **)b.location_list.items;
        p.n_function = b.function_list.n;
        p.function = (Function **)b.function_list.items;
        p.n_string_table = b.string_table.n;
        p.string_table = (char **)b.string_table.items;
        p.n_comment = b.comments.n;
        p.comment = arena_alloc(&b.arena, sizeof(*p.comment) * MAX(b.comments.n, (size_t)1));
        p.mapping = arena_alloc(&b.arena, sizeof(*p.mapping) * MAX(b.n_mappings, (size_t)1));
        if (!p.comment || !p.mapping)
                return -ENOMEM;
        for (size_t i = 0; i < b.comments.n; i++)
                p.comment[i] = (int64_t)(intptr_t)b.comments.items[i];
        /* pprof names the profile for mapping[0] ("File: leaky"): the program's, where known */
        for (size_t i = 0; i < b.n_mappings; i++)
                p.mapping[i] = b.mapping_states[i].m;
        if (b.program_mapping > 1) {
                p.mapping[0] = b.mapping_states[b.program_mapping - 1].m;
                p.mapping[b.program_mapping - 1] = b.mapping_states[0].m;
        }
        p.n_mapping = b.n_mappings;

        *ret_size = perftools__profiles__profile__get_packed_size(&p);
        out = malloc(MAX(*ret_size, (size_t)1));
        if (!out)
                return -ENOMEM;
        if (perftools__profiles__profile__pack(&p, out) != *ret_size) {
                free(out);
                return -EIO;
        }
        *ret = out;
        return 0;
}

int pprof_export_gzip(const uint8_t *data, size_t size, uint8_t **ret, size_t *ret_size)
{
        z_stream z = {};
        _cleanup_free_ uint8_t *out = NULL;
        size_t cap;
        int r;

        /* windowBits 15 + 16: a gzip header and trailer around the deflate stream */
        if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
                return -ENOMEM;
        cap = deflateBound(&z, size);
        /* one deflate() call: zlib counts its buffers in 32 bits */
        if (size > UINT32_MAX || cap > UINT32_MAX) {
                deflateEnd(&z);
                return -EFBIG;
        }
        out = malloc(cap);
        if (!out) {
                deflateEnd(&z);
                return -ENOMEM;
        }
        z.next_in = (Bytef *)data;
        z.avail_in = (uInt)size;
        z.next_out = out;
        z.avail_out = (uInt)cap;
        r = deflate(&z, Z_FINISH);
        deflateEnd(&z);
        if (r != Z_STREAM_END)
                return -EIO;
        *ret_size = cap - z.avail_out;
        *ret = TAKE_PTR(out);
        return 0;
}

int pprof_export_write(FILE *f, const cJSON *report)
{
        _cleanup_free_ uint8_t *profile = NULL, *gz = NULL;
        size_t size, gz_size;
        int r;

        r = pprof_export_encode(report, &profile, &size);
        if (r < 0)
                return r;
        r = pprof_export_gzip(profile, size, &gz, &gz_size);
        if (r < 0)
                return r;
        if (fwrite(gz, 1, gz_size, f) != gz_size || ferror(f))
                return -EIO;
        return 0;
}
