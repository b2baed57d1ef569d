/* SPDX-License-Identifier: GPL-2.0-only */
/* An exited target encoded: a header, who it was, its counters and sampling, its objects, what it
 * mapped (each file's identity), its frozen rows with their addresses, its ring's sums, a
 * checksum. Little more than 64-bit words and length-prefixed strings. */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "exited-file.h"
#include "macro.h"
#include "snapshot.h"
#include "stack-collect.h"
#include "util.h"

#define EXITED_FILE_MAGIC 0x31544958454d454dULL       /* "MEMEXIT1" */

/* A growing buffer; ok false once out of memory (every later put is dropped). */
struct writer {
        unsigned char *p;
        size_t n, room;
        bool ok;
};

static void put_bytes(struct writer *w, const void *data, size_t n)
{
        if (!w->ok || n == 0)
                return;
        if (w->room - w->n < n) {
                size_t room = MAX(w->room * 2, w->n + n + 4096);
                unsigned char *p = realloc(w->p, room);

                if (!p) {
                        w->ok = false;
                        return;
                }
                w->p = p;
                w->room = room;
        }
        memcpy(w->p + w->n, data, n);
        w->n += n;
}

static void put(struct writer *w, uint64_t v)
{
        put_bytes(w, &v, sizeof(v));
}

/* NULL is written as the empty string (and read back as NULL). */
static void put_string(struct writer *w, const char *s)
{
        size_t n = s ? strlen(s) : 0;

        put(w, n);
        put_bytes(w, s, n);
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
        return fnv1a64(FNV1A64_INIT, p, n);
}

static void put_identity(struct writer *w, const struct target *t)
{
        put(w, (uint64_t)(int64_t)t->pid);
        put_string(w, t->comm);
        put(w, t->attached_usec);
        put(w, t->exited_usec);
        put(w, t->proc_start_time);
        put(w, t->track_mmap);
        put(w, t->follow_forks);
        put(w, t->asked_by_user);
        put(w, t->asker_uid);
        put(w, t->asker_gid);
        put(w, t->creds_read);
        for (size_t i = 0; i < 4; i++) {
                put(w, t->creds.uid[i]);
                put(w, t->creds.gid[i]);
        }
        put(w, t->creds.dumpable);
        put(w, (uint64_t)(int64_t)t->parent_pid);
        put(w, t->watch_is_unit);
        put_string(w, t->watch_name);
        put_string(w, t->exec ? t->exec->path : NULL);
        put_string(w, t->allocator);
        put_string(w, t->allocator_reason);
        put(w, t->filter.sample_bytes);
}

static void put_counts(struct writer *w, const struct target *t)
{
        const struct auto_sample_history *h = &t->auto_sample;
        uint32_t kept = auto_sample_kept(h);

        put(w, _COUNTER_MAX);
        put(w, t->counters.stopped);
        for (size_t c = 0; c < _COUNTER_MAX; c++)
                put(w, t->counters.final[c]);
        put(w, t->children_forked);
        put(w, t->children_followed);
        put(w, t->children_missed);
        put(w, t->children_missed_exited);
        put(w, t->children_cleared);
        put(w, h->sample_bytes_asked);
        put(w, h->blocks_checked);
        put(w, h->dropped_seen);
        put(w, h->bpf_noted);
        put(w, h->n_changes);
        put(w, kept);
        for (uint32_t i = 0; i < kept; i++) {
                put(w, h->changes[i].at_usec);
                put(w, h->changes[i].sample_bytes);
                put(w, h->changes[i].fill_percent);
                put(w, h->changes[i].blocks);
        }
        put(w, (uint64_t)t->unwind.mode);
        put(w, t->unwind.tables);
        put(w, t->unwind.rows);
        put(w, t->unwind.bytes);
        put(w, t->unwind.n_mappings);
        put(w, t->unwind.mappings_dropped);
        put(w, t->code_hold_stats.holds);
        put(w, t->code_hold_stats.held_usec);
        put(w, t->code_hold_stats.longest_usec);
        put(w, t->code_hold_stats.past_limit);
}

static void put_files(struct writer *w, const struct target *t, const struct exited_file_id *ids)
{
        put(w, t->n_objects);
        for (size_t i = 0; i < t->n_objects; i++) {
                put_string(w, t->objects[i].path);
                put(w, t->objects[i].probes);
                put(w, t->objects[i].forwarded);
                put(w, t->objects[i].role);
        }
        put(w, t->n_forwarders);
        for (size_t i = 0; i < t->n_forwarders; i++) {
                put(w, t->forwarders[i].dev);
                put(w, t->forwarders[i].ino);
                put(w, t->forwarders[i].start);
                put(w, t->forwarders[i].end);
        }
        put(w, t->modules.read_ns);
        put(w, t->modules.n);
        for (size_t i = 0; i < t->modules.n; i++) {
                const struct module_mapping *m = &t->modules.mappings[i];

                put(w, m->start);
                put(w, m->end);
                put(w, m->pgoff);
                put(w, m->dev);
                put(w, m->ino);
                put(w, m->not_code);
                put_string(w, m->path);
                put(w, ids[i].known);
                put(w, ids[i].build_id_len);
                put_bytes(w, ids[i].build_id, ids[i].build_id_len);
                put(w, ids[i].size);
                put(w, (uint64_t)ids[i].mtime_ns);
        }
        put(w, t->modules.n_anon_code);
        for (size_t i = 0; i < t->modules.n_anon_code; i++) {
                put(w, t->modules.anon_code[i].start);
                put(w, t->modules.anon_code[i].end);
        }
}

static void put_rows(struct writer *w, const struct target *t)
{
        const struct stack_rows *rows = t->frozen ? &t->frozen->rows : NULL;

        put(w, rows != NULL);
        put(w, rows ? rows->n : 0);
        for (size_t i = 0; rows && i < rows->n; i++) {
                const struct stack_row *r = &rows->rows[i];

                put(w, r->space);
                put(w, (uint64_t)r->stack_id);
                put(w, r->bytes);
                put(w, r->allocs);
                put(w, r->n_cut);
                put(w, r->n_allocator);
                put(w, r->unwind_stop);
                put(w, r->ips != NULL);
                put(w, r->ips ? r->n_ips : 0);
                for (size_t k = 0; r->ips && k < r->n_ips; k++)
                        put(w, r->ips[k]);
        }
}

static void put_ring(struct writer *w, const struct target *t)
{
        uint32_t count = snapshot_ring_count(t->ring);

        put(w, snapshot_ring_depth(t->ring));
        put(w, count);
        for (uint32_t i = 0; i < count; i++) {
                const struct snapshot *s = snapshot_ring_get(t->ring, i);

                put(w, s->timestamp_usec);
                put(w, s->bytes);
                put(w, s->allocs);
                put(w, s->has_counters);
                for (size_t c = 0; c < _COUNTER_MAX; c++)
                        put(w, s->counters[c]);
        }
}

int exited_file_encode(const struct target *t, const struct exited_file_id *ids, void **ret, size_t *ret_n)
{
        struct writer w = { .ok = true };

        assert(t);
        assert(ids || t->modules.n == 0);
        assert(ret);
        assert(ret_n);
        put(&w, EXITED_FILE_MAGIC);
        put_identity(&w, t);
        put_counts(&w, t);
        put_files(&w, t, ids);
        put_rows(&w, t);
        put_ring(&w, t);
        if (w.ok)
                put(&w, checksum(w.p, w.n));
        if (!w.ok) {
                free(w.p);
                return -ENOMEM;
        }
        *ret = w.p;
        *ret_n = w.n;
        return 0;
}

/* Reads past the end fail (ok false), and every read after them. */
struct reader {
        const unsigned char *p;
        size_t n, at;
        bool ok;
};

static uint64_t get(struct reader *rd)
{
        uint64_t v = 0;

        if (!rd->ok || rd->n - rd->at < sizeof(v)) {
                rd->ok = false;
                return 0;
        }
        memcpy(&v, rd->p + rd->at, sizeof(v));
        rd->at += sizeof(v);
        return v;
}

/* v, if it is at most max; else a failed read. */
static uint64_t get_max(struct reader *rd, uint64_t max)
{
        uint64_t v = get(rd);

        if (v > max)
                rd->ok = false;
        return rd->ok ? v : 0;
}

static bool get_bool(struct reader *rd)
{
        return get_max(rd, 1) != 0;
}

/* A count of elements of at least unit bytes each, which the bytes left must hold. */
static size_t get_count(struct reader *rd, size_t unit)
{
        return (size_t)get_max(rd, rd->ok ? (rd->n - rd->at) / unit : 0);
}

/* A string into *ret (malloc'd; NULL for the empty one): false when cut, too long, or holding a
 * NUL, or without memory (*enomem). */
static bool get_string(struct reader *rd, char **ret, bool *enomem)
{
        size_t n = (size_t)get_max(rd, EXITED_FILE_PATH_MAX);
        char *s;

        *ret = NULL;
        if (!rd->ok || rd->n - rd->at < n || memchr(rd->p + rd->at, 0, n)) {
                rd->ok = false;
                return false;
        }
        if (n == 0)
                return true;
        s = strndup((const char *)rd->p + rd->at, n);
        if (!s) {
                *enomem = true;
                rd->ok = false;
                return false;
        }
        rd->at += n;
        *ret = s;
        return true;
}

/* Its allocator as target.h names them (a constant string), NULL if none. */
static const char *allocator_named(const char *name)
{
        static const char *const known[] = {
                "glibc", "tcmalloc", "jemalloc", "mimalloc", "musl", "kernel", "other",
        };

        if (!name)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(known); i++)
                if (strcmp(known[i], name) == 0)
                        return known[i];
        return "other";
}

static void get_identity(struct reader *rd, struct target *t, bool *enomem)
{
        _cleanup_free_ char *comm = NULL, *exec = NULL, *allocator = NULL;

        t->pid = (pid_t)(int64_t)get(rd);
        if (rd->ok && (t->pid <= 0))
                rd->ok = false;
        if (get_string(rd, &comm, enomem) && comm && strlen(comm) >= sizeof(t->comm))
                rd->ok = false;
        if (comm && rd->ok)
                strcpy(t->comm, comm);
        t->attached_usec = get(rd);
        t->exited_usec = get(rd);
        t->proc_start_time = get(rd);
        t->track_mmap = get_bool(rd);
        t->follow_forks = get_bool(rd);
        t->asked_by_user = get_bool(rd);
        t->asker_uid = (uid_t)get_max(rd, UINT32_MAX);
        t->asker_gid = (gid_t)get_max(rd, UINT32_MAX);
        t->creds_read = get_bool(rd);
        for (size_t i = 0; i < 4; i++) {
                t->creds.uid[i] = (uid_t)get_max(rd, UINT32_MAX);
                t->creds.gid[i] = (gid_t)get_max(rd, UINT32_MAX);
        }
        t->creds.dumpable = get_bool(rd);
        t->parent_pid = (pid_t)get_max(rd, INT32_MAX);
        t->watch_is_unit = get_bool(rd);
        (void)get_string(rd, &t->watch_name, enomem);
        if (get_string(rd, &exec, enomem) && exec) {
                t->exec = calloc(1, sizeof(*t->exec));
                if (!t->exec) {
                        *enomem = true;
                        rd->ok = false;
                        return;
                }
                t->exec->path = TAKE_PTR(exec);
                t->exec->seen = true;
        }
        if (get_string(rd, &allocator, enomem))
                t->allocator = allocator_named(allocator);
        (void)get_string(rd, &t->allocator_reason, enomem);
        t->filter.sample_bytes = get(rd);
}

static void get_counts(struct reader *rd, struct target *t)
{
        struct auto_sample_history *h = &t->auto_sample;
        uint32_t kept;

        if (get(rd) != _COUNTER_MAX)
                rd->ok = false;         /* counters of another version */
        t->counters.stopped = get_bool(rd);
        for (size_t c = 0; c < _COUNTER_MAX; c++)
                t->counters.final[c] = get(rd);
        t->children_forked = get(rd);
        t->children_followed = get(rd);
        t->children_missed = get(rd);
        t->children_missed_exited = get(rd);
        t->children_cleared = get(rd);
        h->sample_bytes_asked = get(rd);
        h->blocks_checked = get(rd);
        h->dropped_seen = get(rd);
        h->bpf_noted = (uint32_t)get_max(rd, UINT32_MAX);
        h->n_changes = (uint32_t)get_max(rd, UINT32_MAX);
        kept = (uint32_t)get_max(rd, MIN((uint64_t)h->n_changes, (uint64_t)AUTO_SAMPLE_CHANGES_MAX));
        if (rd->ok && kept != MIN(h->n_changes, AUTO_SAMPLE_CHANGES_MAX))
                rd->ok = false;
        for (uint32_t i = 0; i < kept; i++) {
                h->changes[i].at_usec = get(rd);
                h->changes[i].sample_bytes = get(rd);
                h->changes[i].fill_percent = (uint32_t)get_max(rd, UINT32_MAX);
                h->changes[i].blocks = get(rd);
        }
        t->unwind.mode = (enum memleak_unwind)get_max(rd, _MEMLEAK_UNWIND_MAX - 1);
        t->unwind.tables = (size_t)get(rd);
        t->unwind.rows = get(rd);
        t->unwind.bytes = get(rd);
        t->unwind.n_mappings = (uint32_t)get_max(rd, UINT32_MAX);
        t->unwind.mappings_dropped = (unsigned)get_max(rd, UINT32_MAX);
        t->code_hold_stats.holds = get(rd);
        t->code_hold_stats.held_usec = get(rd);
        t->code_hold_stats.longest_usec = get(rd);
        t->code_hold_stats.past_limit = get(rd);
}

static void get_objects(struct reader *rd, struct target *t, bool *enomem)
{
        size_t n = get_count(rd, 4 * sizeof(uint64_t));

        if (!rd->ok || n == 0)
                return;
        t->objects = calloc(n, sizeof(*t->objects));
        if (!t->objects) {
                *enomem = true;
                rd->ok = false;
                return;
        }
        for (size_t i = 0; i < n && rd->ok; i++) {
                struct target_object *o = &t->objects[t->n_objects++];

                o->fd = -1;
                if (!get_string(rd, &o->path, enomem) || !o->path)
                        rd->ok = false;
                o->probes = (unsigned)get_max(rd, UINT32_MAX);
                o->forwarded = (unsigned)get_max(rd, UINT32_MAX);
                o->role = (enum object_role)get_max(rd, _OBJECT_ROLE_MAX - 1);
        }
}

static void get_forwarders(struct reader *rd, struct target *t, bool *enomem)
{
        size_t n = get_count(rd, 4 * sizeof(uint64_t));

        if (!rd->ok || n == 0)
                return;
        t->forwarders = calloc(n, sizeof(*t->forwarders));
        if (!t->forwarders) {
                *enomem = true;
                rd->ok = false;
                return;
        }
        for (size_t i = 0; i < n; i++)
                t->forwarders[i] = (struct file_range) { .dev = get(rd), .ino = get(rd), .start = get(rd), .end = get(rd) };
        t->n_forwarders = n;
}

static void get_modules(struct reader *rd, struct target *t, struct exited_file_id **ret_ids, bool *enomem)
{
        struct module_map *mm = &t->modules;
        struct exited_file_id *ids = NULL;
        size_t n, n_anon;

        mm->read_ns = get(rd);
        n = get_count(rd, 11 * sizeof(uint64_t));
        if (!rd->ok)
                return;
        mm->mappings = calloc(MAX(n, (size_t)1), sizeof(*mm->mappings));
        ids = calloc(MAX(n, (size_t)1), sizeof(*ids));
        *ret_ids = ids;
        if (!mm->mappings || !ids) {
                *enomem = true;
                rd->ok = false;
                return;
        }
        for (size_t i = 0; i < n && rd->ok; i++) {
                struct module_mapping *m = &mm->mappings[mm->n++];

                m->start = get(rd);
                m->end = get(rd);
                m->pgoff = get(rd);
                m->dev = get(rd);
                m->ino = get(rd);
                m->not_code = get_bool(rd);
                if (!get_string(rd, &m->path, enomem) || !m->path)
                        rd->ok = false;
                if (rd->ok && (m->end <= m->start || (i > 0 && m->start < mm->mappings[i - 1].start)))
                        rd->ok = false;         /* module_map_find() needs them in address order */
                ids[i].known = get_bool(rd);
                ids[i].build_id_len = (uint32_t)get_max(rd, ELF_BUILD_ID_MAX);
                if (rd->ok && rd->n - rd->at >= ids[i].build_id_len) {
                        memcpy(ids[i].build_id, rd->p + rd->at, ids[i].build_id_len);
                        rd->at += ids[i].build_id_len;
                } else
                        rd->ok = false;
                ids[i].size = get(rd);
                ids[i].mtime_ns = (int64_t)get(rd);
        }
        n_anon = get_count(rd, 2 * sizeof(uint64_t));
        if (!rd->ok || n_anon == 0)
                return;
        mm->anon_code = calloc(n_anon, sizeof(*mm->anon_code));
        if (!mm->anon_code) {
                *enomem = true;
                rd->ok = false;
                return;
        }
        for (size_t i = 0; i < n_anon; i++)
                mm->anon_code[i] = (struct address_range) { .start = get(rd), .end = get(rd) };
        mm->n_anon_code = n_anon;
}

static void get_rows(struct reader *rd, struct target *t, bool *enomem)
{
        struct frozen_target *f;
        bool has = get_bool(rd);
        size_t n = get_count(rd, 9 * sizeof(uint64_t));

        if (!rd->ok || !has)
                return;
        f = t->frozen = calloc(1, sizeof(*f));
        if (f)
                f->rows.rows = calloc(MAX(n, (size_t)1), sizeof(*f->rows.rows));
        if (!f || !f->rows.rows) {
                *enomem = true;
                rd->ok = false;
                return;
        }
        f->bytes = sizeof(*f) + n * sizeof(*f->rows.rows);
        for (size_t i = 0; i < n && rd->ok; i++) {
                struct stack_row *r = &f->rows.rows[f->rows.n++];
                bool has_ips;
                size_t n_ips;

                r->pid = t->pid;
                r->space = (uint32_t)get_max(rd, UINT32_MAX);
                r->stack_id = (int64_t)get(rd);
                r->bytes = get(rd);
                r->allocs = get(rd);
                r->n_cut = (size_t)get(rd);
                r->n_allocator = (size_t)get(rd);
                r->unwind_stop = (uint32_t)get_max(rd, UINT32_MAX);
                has_ips = get_bool(rd);
                n_ips = get_count(rd, sizeof(uint64_t));
                if (!rd->ok || !has_ips) {
                        rd->ok = rd->ok && n_ips == 0;
                        continue;
                }
                r->ips = calloc(MAX(n_ips, (size_t)1), sizeof(*r->ips));
                if (!r->ips) {
                        *enomem = true;
                        rd->ok = false;
                        return;
                }
                for (size_t k = 0; k < n_ips; k++)
                        r->ips[k] = get(rd);
                r->n_ips = n_ips;
                f->bytes += n_ips * sizeof(uint64_t);
        }
}

static void get_ring(struct reader *rd, struct target *t, bool *enomem)
{
        uint32_t depth = (uint32_t)get_max(rd, EXITED_FILE_RING_DEPTH_MAX);
        size_t count = get_count(rd, (4 + _COUNTER_MAX) * sizeof(uint64_t));

        if (rd->ok && (depth == 0 || count > depth))
                rd->ok = false;
        if (!rd->ok)
                return;
        /* it takes no more snapshots: room for those it has, no more than its bytes can say */
        if (snapshot_ring_new(MAX((uint32_t)count, 1U), &t->ring) < 0) {
                *enomem = true;
                rd->ok = false;
                return;
        }
        for (size_t i = 0; i < count && rd->ok; i++) {
                uint64_t ts = get(rd), bytes = get(rd), allocs = get(rd), counters[_COUNTER_MAX];
                bool has = get_bool(rd);

                for (size_t c = 0; c < _COUNTER_MAX; c++)
                        counters[c] = get(rd);
                snapshot_ring_push_sums(t->ring, ts, bytes, allocs);
                if (has)
                        snapshot_ring_set_counters(t->ring, counters);
        }
}

int exited_file_decode(const void *data, size_t n, struct target *t, struct exited_file_id **ret_ids)
{
        struct reader rd = { .p = data, .n = n >= sizeof(uint64_t) ? n - sizeof(uint64_t) : 0, .ok = true };
        _cleanup_free_ struct exited_file_id *ids = NULL;
        bool enomem = false;
        uint64_t sum;

        assert(data || n == 0);
        assert(t);
        assert(ret_ids);
        if (n < 2 * sizeof(uint64_t))
                return -EBADMSG;
        memcpy(&sum, (const unsigned char *)data + n - sizeof(sum), sizeof(sum));
        if (sum != checksum(data, n - sizeof(sum)) || get(&rd) != EXITED_FILE_MAGIC)
                return -EBADMSG;
        get_identity(&rd, t, &enomem);
        get_counts(&rd, t);
        get_objects(&rd, t, &enomem);
        get_forwarders(&rd, t, &enomem);
        get_modules(&rd, t, &ids, &enomem);
        get_rows(&rd, t, &enomem);
        get_ring(&rd, t, &enomem);
        if (enomem)
                return -ENOMEM;
        if (!rd.ok || rd.at != rd.n || !t->ring)
                return -EBADMSG;
        t->phase = TARGET_PHASE_EXITED;
        *ret_ids = TAKE_PTR(ids);
        return 0;
}
