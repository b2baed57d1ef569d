/* SPDX-License-Identifier: GPL-2.0-only */
/* An exited target encoded: a header, who it was, its counters and sampling, its objects, what it
 * mapped (each file's identity), its frozen rows with their addresses, its ring's sums, the names
 * of the JIT code its rows are in, its scan at exit, a checksum. Little more than 64-bit words
 * and length-prefixed strings (word-buf.h). */
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "exit-verdicts.h"
#include "exited-file.h"
#include "macro.h"
#include "snapshot.h"
#include "stack-collect.h"
#include "perf-map.h"
#include "util.h"
#include "word-buf.h"

/* "MEMEXIT3": 3 added its stacks' verdicts at its exit (at the end); "MEMEXIT2" added its JIT
 * code's names, the link to the target it was followed from and its scan at exit, and is read as
 * a record without verdicts. A file of another version is refused as one this encoding did not
 * write. */
#define EXITED_FILE_MAGIC 0x33544958454d454dULL
#define EXITED_FILE_MAGIC_2 0x32544958454d454dULL

static uint64_t checksum(const unsigned char *p, size_t n)
{
        return fnv1a64(FNV1A64_INIT, p, n);
}

static void put_identity(struct word_buf_writer *w, const struct target *t)
{
        word_buf_put(w, (uint64_t)(int64_t)t->pid);
        word_buf_put_string(w, t->comm);
        word_buf_put(w, t->attached_usec);
        word_buf_put(w, t->exited_usec);
        word_buf_put(w, t->proc_start_time);
        word_buf_put(w, t->track_mmap);
        word_buf_put(w, t->follow_forks);
        word_buf_put(w, t->asked_by_user);
        word_buf_put(w, t->asker_uid);
        word_buf_put(w, t->asker_gid);
        word_buf_put(w, t->creds_read);
        for (size_t i = 0; i < 4; i++) {
                word_buf_put(w, t->creds.uid[i]);
                word_buf_put(w, t->creds.gid[i]);
        }
        word_buf_put(w, t->creds.dumpable);
        word_buf_put(w, (uint64_t)(int64_t)t->parent_pid);
        word_buf_put(w, (uint64_t)(int64_t)t->parent_link.pid);
        word_buf_put(w, t->parent_link.start_time);
        word_buf_put(w, t->watch_is_unit);
        word_buf_put_string(w, t->watch_name);
        word_buf_put_string(w, t->exec ? t->exec->path : NULL);
        word_buf_put_string(w, t->allocator);
        word_buf_put_string(w, t->allocator_reason);
        word_buf_put(w, t->filter.sample_bytes);
}

static void put_counts(struct word_buf_writer *w, const struct target *t)
{
        const struct auto_sample_history *h = &t->auto_sample;
        uint32_t kept = auto_sample_kept(h);

        word_buf_put(w, _COUNTER_MAX);
        word_buf_put(w, t->counters.stopped);
        for (size_t c = 0; c < _COUNTER_MAX; c++)
                word_buf_put(w, t->counters.final[c]);
        word_buf_put(w, t->children_forked);
        word_buf_put(w, t->children_followed);
        word_buf_put(w, t->children_missed);
        word_buf_put(w, t->children_missed_exited);
        word_buf_put(w, t->children_cleared);
        word_buf_put(w, h->sample_bytes_asked);
        word_buf_put(w, h->blocks_checked);
        word_buf_put(w, h->dropped_seen);
        word_buf_put(w, h->bpf_noted);
        word_buf_put(w, h->n_changes);
        word_buf_put(w, kept);
        for (uint32_t i = 0; i < kept; i++) {
                word_buf_put(w, h->changes[i].at_usec);
                word_buf_put(w, h->changes[i].sample_bytes);
                word_buf_put(w, h->changes[i].fill_percent);
                word_buf_put(w, h->changes[i].blocks);
        }
        word_buf_put(w, (uint64_t)t->unwind.mode);
        word_buf_put(w, t->unwind.tables);
        word_buf_put(w, t->unwind.rows);
        word_buf_put(w, t->unwind.bytes);
        word_buf_put(w, t->unwind.n_mappings);
        word_buf_put(w, t->unwind.mappings_dropped);
        word_buf_put(w, t->code_hold_stats.holds);
        word_buf_put(w, t->code_hold_stats.held_usec);
        word_buf_put(w, t->code_hold_stats.longest_usec);
        word_buf_put(w, t->code_hold_stats.past_limit);
}

static void put_files(struct word_buf_writer *w, const struct target *t, const struct exited_file_id *ids)
{
        word_buf_put(w, t->n_objects);
        for (size_t i = 0; i < t->n_objects; i++) {
                word_buf_put_string(w, t->objects[i].path);
                word_buf_put(w, t->objects[i].probes);
                word_buf_put(w, t->objects[i].forwarded);
                word_buf_put(w, t->objects[i].role);
        }
        word_buf_put(w, t->n_forwarders);
        for (size_t i = 0; i < t->n_forwarders; i++) {
                word_buf_put(w, t->forwarders[i].dev);
                word_buf_put(w, t->forwarders[i].ino);
                word_buf_put(w, t->forwarders[i].start);
                word_buf_put(w, t->forwarders[i].end);
        }
        word_buf_put(w, t->modules.read_ns);
        word_buf_put(w, t->modules.n);
        for (size_t i = 0; i < t->modules.n; i++) {
                const struct module_mapping *m = &t->modules.mappings[i];

                word_buf_put(w, m->start);
                word_buf_put(w, m->end);
                word_buf_put(w, m->pgoff);
                word_buf_put(w, m->dev);
                word_buf_put(w, m->ino);
                word_buf_put(w, m->not_code);
                word_buf_put_string(w, m->path);
                word_buf_put(w, ids[i].known);
                word_buf_put(w, ids[i].build_id_len);
                word_buf_put_bytes(w, ids[i].build_id, ids[i].build_id_len);
                word_buf_put(w, ids[i].size);
                word_buf_put(w, (uint64_t)ids[i].mtime_ns);
        }
        word_buf_put(w, t->modules.n_anon_code);
        for (size_t i = 0; i < t->modules.n_anon_code; i++) {
                word_buf_put(w, t->modules.anon_code[i].start);
                word_buf_put(w, t->modules.anon_code[i].end);
        }
}

static void put_rows(struct word_buf_writer *w, const struct target *t)
{
        const struct stack_rows *rows = t->frozen ? &t->frozen->rows : NULL;

        word_buf_put(w, rows != NULL);
        word_buf_put(w, rows ? rows->n : 0);
        for (size_t i = 0; rows && i < rows->n; i++) {
                const struct stack_row *r = &rows->rows[i];

                word_buf_put(w, r->space);
                word_buf_put(w, (uint64_t)r->stack_id);
                word_buf_put(w, r->bytes);
                word_buf_put(w, r->allocs);
                word_buf_put(w, r->n_cut);
                word_buf_put(w, r->n_allocator);
                word_buf_put(w, r->unwind_stop);
                word_buf_put(w, r->ips != NULL);
                word_buf_put(w, r->ips ? r->n_ips : 0);
                for (size_t k = 0; r->ips && k < r->n_ips; k++)
                        word_buf_put(w, r->ips[k]);
        }
}

static void put_ring(struct word_buf_writer *w, const struct target *t)
{
        uint32_t count = snapshot_ring_count(t->ring);

        word_buf_put(w, snapshot_ring_depth(t->ring));
        word_buf_put(w, count);
        for (uint32_t i = 0; i < count; i++) {
                const struct snapshot *s = snapshot_ring_get(t->ring, i);

                word_buf_put(w, s->timestamp_usec);
                word_buf_put(w, s->bytes);
                word_buf_put(w, s->allocs);
                word_buf_put(w, s->has_counters);
                for (size_t c = 0; c < _COUNTER_MAX; c++)
                        word_buf_put(w, s->counters[c]);
        }
}

/* The addresses a report looks up in its JIT code's names: each return address's call (report-job.c
 * looks for addr - 1), of every frozen row. -ENOMEM. */
static int frame_addresses(const struct target *t, uint64_t **ret, size_t *ret_n)
{
        const struct stack_rows *rows = t->frozen ? &t->frozen->rows : NULL;
        uint64_t *addrs;
        size_t n = 0, k = 0;

        for (size_t i = 0; rows && i < rows->n; i++)
                n += rows->rows[i].ips ? rows->rows[i].n_ips : 0;
        addrs = malloc(MAX(n, (size_t)1) * sizeof(*addrs));
        if (!addrs)
                return -ENOMEM;
        for (size_t i = 0; rows && i < rows->n; i++)
                for (size_t j = 0; rows->rows[i].ips && j < rows->rows[i].n_ips; j++)
                        if (rows->rows[i].ips[j] > 0)
                                addrs[k++] = rows->rows[i].ips[j] - 1;
        *ret = addrs;
        *ret_n = k;
        return 0;
}

/* Of its perf map, the entries that name its frozen rows' frames (not the whole map: a runtime may
 * have written millions of lines), in the order it wrote them. */
static int put_jit_names(struct word_buf_writer *w, const struct target *t)
{
        _cleanup_free_ struct perf_map_entry *entries = NULL;
        _cleanup_free_ uint64_t *addrs = NULL;
        size_t n_addrs = 0, n = 0;
        int r;

        if (t->perf_map) {
                r = frame_addresses(t, &addrs, &n_addrs);
                if (r >= 0)
                        r = perf_map_entries_at(t->perf_map, addrs, n_addrs, &entries, &n);
                if (r < 0)
                        return r;
        }
        word_buf_put(w, n);
        for (size_t i = 0; i < n; i++) {
                word_buf_put(w, entries[i].start);
                word_buf_put(w, entries[i].end);
                word_buf_put_string(w, entries[i].name);
        }
        return 0;
}

static void put_exit_scan(struct word_buf_writer *w, const struct target *t)
{
        word_buf_put(w, t->exit_scan ? t->exit_scan_bytes : 0);
        if (t->exit_scan)
                word_buf_put_bytes(w, t->exit_scan, t->exit_scan_bytes);
}

static uint64_t double_bits(double d)
{
        uint64_t v;

        memcpy(&v, &d, sizeof(v));
        return v;
}

/* Whether any verdicts were kept (none for a target that had no heap stack, or whose verdicts
 * could not be made), then each. */
static void put_verdicts(struct word_buf_writer *w, const struct target *t)
{
        const struct exit_verdicts *v = t->verdicts;

        word_buf_put(w, v != NULL);
        word_buf_put(w, v ? v->n : 0);
        for (size_t i = 0; v && i < v->n; i++) {
                const struct exit_verdict *k = &v->items[i];

                word_buf_put(w, (uint64_t)k->stack_id);
                word_buf_put(w, k->verdict);
                word_buf_put(w, k->points_missing);
                word_buf_put(w, double_bits(k->slope_bytes_per_s));
                word_buf_put(w, double_bits(k->fit_r2));
                word_buf_put(w, double_bits(k->recent_growth_bytes));
                word_buf_put(w, double_bits(k->first_bytes));
                word_buf_put(w, double_bits(k->last_bytes));
        }
}

int exited_file_encode(const struct target *t, const struct exited_file_id *ids, void **ret, size_t *ret_n)
{
        struct word_buf_writer w = { .ok = true };
        int r;

        assert(t);
        assert(ids || t->modules.n == 0);
        assert(ret);
        assert(ret_n);
        word_buf_put(&w, EXITED_FILE_MAGIC);
        put_identity(&w, t);
        put_counts(&w, t);
        put_files(&w, t, ids);
        put_rows(&w, t);
        put_ring(&w, t);
        r = put_jit_names(&w, t);
        put_exit_scan(&w, t);
        put_verdicts(&w, t);
        if (w.ok)
                word_buf_put(&w, checksum(w.p, w.n));
        if (r < 0 || !w.ok) {
                free(w.p);
                return -ENOMEM;
        }
        *ret = w.p;
        *ret_n = w.n;
        return 0;
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

static void get_identity(struct word_buf_reader *rd, struct target *t)
{
        _cleanup_free_ char *comm = NULL, *exec = NULL, *allocator = NULL;

        t->pid = (pid_t)(int64_t)word_buf_get(rd);
        if (rd->ok && (t->pid <= 0))
                rd->ok = false;
        if (word_buf_get_string(rd, EXITED_FILE_PATH_MAX, &comm) && comm && strlen(comm) >= sizeof(t->comm))
                rd->ok = false;
        if (comm && rd->ok)
                strcpy(t->comm, comm);
        t->attached_usec = word_buf_get(rd);
        t->exited_usec = word_buf_get(rd);
        t->proc_start_time = word_buf_get(rd);
        t->track_mmap = word_buf_get_bool(rd);
        t->follow_forks = word_buf_get_bool(rd);
        t->asked_by_user = word_buf_get_bool(rd);
        t->asker_uid = (uid_t)word_buf_get_max(rd, UINT32_MAX);
        t->asker_gid = (gid_t)word_buf_get_max(rd, UINT32_MAX);
        t->creds_read = word_buf_get_bool(rd);
        for (size_t i = 0; i < 4; i++) {
                t->creds.uid[i] = (uid_t)word_buf_get_max(rd, UINT32_MAX);
                t->creds.gid[i] = (gid_t)word_buf_get_max(rd, UINT32_MAX);
        }
        t->creds.dumpable = word_buf_get_bool(rd);
        t->parent_pid = (pid_t)word_buf_get_max(rd, INT32_MAX);
        t->parent_link.pid = (pid_t)word_buf_get_max(rd, INT32_MAX);
        t->parent_link.start_time = word_buf_get(rd);
        t->watch_is_unit = word_buf_get_bool(rd);
        (void)word_buf_get_string(rd, EXITED_FILE_PATH_MAX, &t->watch_name);
        if (word_buf_get_string(rd, EXITED_FILE_PATH_MAX, &exec) && exec) {
                t->exec = calloc(1, sizeof(*t->exec));
                if (!t->exec) {
                        rd->enomem = true;
                        rd->ok = false;
                        return;
                }
                t->exec->path = TAKE_PTR(exec);
                t->exec->seen = true;
        }
        if (word_buf_get_string(rd, EXITED_FILE_PATH_MAX, &allocator))
                t->allocator = allocator_named(allocator);
        (void)word_buf_get_string(rd, EXITED_FILE_PATH_MAX, &t->allocator_reason);
        t->filter.sample_bytes = word_buf_get(rd);
}

static void get_counts(struct word_buf_reader *rd, struct target *t)
{
        struct auto_sample_history *h = &t->auto_sample;
        uint32_t kept;

        if (word_buf_get(rd) != _COUNTER_MAX)
                rd->ok = false;         /* counters of another version */
        t->counters.stopped = word_buf_get_bool(rd);
        for (size_t c = 0; c < _COUNTER_MAX; c++)
                t->counters.final[c] = word_buf_get(rd);
        t->children_forked = word_buf_get(rd);
        t->children_followed = word_buf_get(rd);
        t->children_missed = word_buf_get(rd);
        t->children_missed_exited = word_buf_get(rd);
        t->children_cleared = word_buf_get(rd);
        h->sample_bytes_asked = word_buf_get(rd);
        h->blocks_checked = word_buf_get(rd);
        h->dropped_seen = word_buf_get(rd);
        h->bpf_noted = (uint32_t)word_buf_get_max(rd, UINT32_MAX);
        h->n_changes = (uint32_t)word_buf_get_max(rd, UINT32_MAX);
        kept = (uint32_t)word_buf_get_max(rd, MIN((uint64_t)h->n_changes, (uint64_t)AUTO_SAMPLE_CHANGES_MAX));
        if (rd->ok && kept != MIN(h->n_changes, AUTO_SAMPLE_CHANGES_MAX))
                rd->ok = false;
        for (uint32_t i = 0; i < kept; i++) {
                h->changes[i].at_usec = word_buf_get(rd);
                h->changes[i].sample_bytes = word_buf_get(rd);
                h->changes[i].fill_percent = (uint32_t)word_buf_get_max(rd, UINT32_MAX);
                h->changes[i].blocks = word_buf_get(rd);
        }
        t->unwind.mode = (enum memleak_unwind)word_buf_get_max(rd, _MEMLEAK_UNWIND_MAX - 1);
        t->unwind.tables = (size_t)word_buf_get(rd);
        t->unwind.rows = word_buf_get(rd);
        t->unwind.bytes = word_buf_get(rd);
        t->unwind.n_mappings = (uint32_t)word_buf_get_max(rd, UINT32_MAX);
        t->unwind.mappings_dropped = (unsigned)word_buf_get_max(rd, UINT32_MAX);
        t->code_hold_stats.holds = word_buf_get(rd);
        t->code_hold_stats.held_usec = word_buf_get(rd);
        t->code_hold_stats.longest_usec = word_buf_get(rd);
        t->code_hold_stats.past_limit = word_buf_get(rd);
}

static void get_objects(struct word_buf_reader *rd, struct target *t)
{
        size_t n = word_buf_get_array(rd, 4 * sizeof(uint64_t), sizeof(*t->objects), (void **)&t->objects);

        for (size_t i = 0; i < n && rd->ok; i++) {
                struct target_object *o = &t->objects[t->n_objects++];

                o->fd = -1;
                if (!word_buf_get_string(rd, EXITED_FILE_PATH_MAX, &o->path) || !o->path)
                        rd->ok = false;
                o->probes = (unsigned)word_buf_get_max(rd, UINT32_MAX);
                o->forwarded = (unsigned)word_buf_get_max(rd, UINT32_MAX);
                o->role = (enum object_role)word_buf_get_max(rd, _OBJECT_ROLE_MAX - 1);
        }
}

static void get_forwarders(struct word_buf_reader *rd, struct target *t)
{
        size_t n = word_buf_get_array(rd, 4 * sizeof(uint64_t), sizeof(*t->forwarders), (void **)&t->forwarders);

        for (size_t i = 0; i < n; i++)
                t->forwarders[i] = (struct file_range) {
                        .dev = word_buf_get(rd), .ino = word_buf_get(rd), .start = word_buf_get(rd), .end = word_buf_get(rd),
                };
        t->n_forwarders = n;
}

static void get_modules(struct word_buf_reader *rd, struct target *t, struct exited_file_id **ret_ids)
{
        struct module_map *mm = &t->modules;
        struct exited_file_id *ids = NULL;
        size_t n, n_anon;

        mm->read_ns = word_buf_get(rd);
        n = word_buf_get_array(rd, 11 * sizeof(uint64_t), sizeof(*mm->mappings), (void **)&mm->mappings);
        if (!rd->ok)
                return;
        ids = calloc(MAX(n, (size_t)1), sizeof(*ids));
        *ret_ids = ids;
        if (!ids) {
                rd->enomem = true;
                rd->ok = false;
                return;
        }
        for (size_t i = 0; i < n && rd->ok; i++) {
                struct module_mapping *m = &mm->mappings[mm->n++];

                m->start = word_buf_get(rd);
                m->end = word_buf_get(rd);
                m->pgoff = word_buf_get(rd);
                m->dev = word_buf_get(rd);
                m->ino = word_buf_get(rd);
                m->not_code = word_buf_get_bool(rd);
                if (!word_buf_get_string(rd, EXITED_FILE_PATH_MAX, &m->path) || !m->path)
                        rd->ok = false;
                if (rd->ok && (m->end <= m->start || (i > 0 && m->start < mm->mappings[i - 1].start)))
                        rd->ok = false;         /* module_map_find() needs them in address order */
                ids[i].known = word_buf_get_bool(rd);
                ids[i].build_id_len = (uint32_t)word_buf_get_max(rd, ELF_BUILD_ID_MAX);
                (void)word_buf_get_bytes(rd, ids[i].build_id, ids[i].build_id_len);
                ids[i].size = word_buf_get(rd);
                ids[i].mtime_ns = (int64_t)word_buf_get(rd);
        }
        n_anon = word_buf_get_array(rd, 2 * sizeof(uint64_t), sizeof(*mm->anon_code), (void **)&mm->anon_code);
        for (size_t i = 0; i < n_anon; i++)
                mm->anon_code[i] = (struct address_range) { .start = word_buf_get(rd), .end = word_buf_get(rd) };
        mm->n_anon_code = n_anon;
}

static void get_rows(struct word_buf_reader *rd, struct target *t)
{
        struct frozen_target *f;
        bool has = word_buf_get_bool(rd);
        size_t n;

        if (!has) {
                (void)word_buf_get_count(rd, 9 * sizeof(uint64_t));
                return;
        }
        f = t->frozen = calloc(1, sizeof(*f));
        if (!f) {
                rd->enomem = true;
                rd->ok = false;
                return;
        }
        n = word_buf_get_array(rd, 9 * sizeof(uint64_t), sizeof(*f->rows.rows), (void **)&f->rows.rows);
        f->bytes = sizeof(*f) + n * sizeof(*f->rows.rows);
        for (size_t i = 0; i < n && rd->ok; i++) {
                struct stack_row *r = &f->rows.rows[f->rows.n++];
                bool has_ips;
                size_t n_ips;

                r->pid = t->pid;
                r->space = (uint32_t)word_buf_get_max(rd, UINT32_MAX);
                r->stack_id = (int64_t)word_buf_get(rd);
                r->bytes = word_buf_get(rd);
                r->allocs = word_buf_get(rd);
                r->n_cut = (size_t)word_buf_get(rd);
                r->n_allocator = (size_t)word_buf_get(rd);
                r->unwind_stop = (uint32_t)word_buf_get_max(rd, UINT32_MAX);
                has_ips = word_buf_get_bool(rd);
                if (!has_ips) {
                        (void)word_buf_get_max(rd, 0);  /* no addresses: a count of 0 */
                        continue;
                }
                n_ips = word_buf_get_array(rd, sizeof(uint64_t), sizeof(*r->ips), (void **)&r->ips);
                for (size_t k = 0; k < n_ips; k++)
                        r->ips[k] = word_buf_get(rd);
                r->n_ips = n_ips;
                f->bytes += n_ips * sizeof(uint64_t);
        }
}

static void get_ring(struct word_buf_reader *rd, struct target *t)
{
        uint32_t depth = (uint32_t)word_buf_get_max(rd, EXITED_FILE_RING_DEPTH_MAX);
        size_t count = word_buf_get_count(rd, (4 + _COUNTER_MAX) * sizeof(uint64_t));

        if (rd->ok && (depth == 0 || count > depth))
                rd->ok = false;
        if (!rd->ok)
                return;
        /* it takes no more snapshots: room for those it has, no more than its bytes can say */
        if (snapshot_ring_new(MAX((uint32_t)count, 1U), &t->ring) < 0) {
                rd->enomem = true;
                rd->ok = false;
                return;
        }
        for (size_t i = 0; i < count && rd->ok; i++) {
                uint64_t ts = word_buf_get(rd), bytes = word_buf_get(rd), allocs = word_buf_get(rd), counters[_COUNTER_MAX];
                bool has = word_buf_get_bool(rd);

                for (size_t c = 0; c < _COUNTER_MAX; c++)
                        counters[c] = word_buf_get(rd);
                snapshot_ring_push_sums(t->ring, ts, bytes, allocs);
                if (has)
                        snapshot_ring_set_counters(t->ring, counters);
        }
}

static void get_jit_names(struct word_buf_reader *rd, struct target *t)
{
        _cleanup_free_ struct perf_map_entry *entries = NULL;
        size_t n = word_buf_get_array(rd, 3 * sizeof(uint64_t), sizeof(*entries), (void **)&entries);
        size_t k = 0;
        int r;

        for (; k < n && rd->ok; k++) {
                char *name = NULL;

                entries[k].start = word_buf_get(rd);
                entries[k].end = word_buf_get(rd);
                if (!word_buf_get_string(rd, PERF_MAP_LINE_MAX, &name) || !name || entries[k].end <= entries[k].start)
                        rd->ok = false;
                entries[k].name = name;
        }
        if (rd->ok && n > 0) {
                r = perf_map_new_from(entries, n, &t->perf_map);
                if (r == -ENOMEM)
                        rd->enomem = true;
                if (r < 0)
                        rd->ok = false;
        }
        for (size_t i = 0; i < k; i++)
                free((char *)entries[i].name);
}

static void get_exit_scan(struct word_buf_reader *rd, struct target *t)
{
        size_t n = word_buf_get_count(rd, 1);

        if (!rd->ok || n == 0)
                return;
        t->exit_scan = malloc(n);
        if (!t->exit_scan) {
                rd->enomem = true;
                rd->ok = false;
                return;
        }
        if (word_buf_get_bytes(rd, t->exit_scan, n))
                t->exit_scan_bytes = n;
}

static double get_double(struct word_buf_reader *rd)
{
        uint64_t v = word_buf_get(rd);
        double d;

        memcpy(&d, &v, sizeof(d));
        if (!isfinite(d))
                rd->ok = false;
        return d;
}

#define EXIT_VERDICT_WORDS 8

static void get_verdicts(struct word_buf_reader *rd, struct target *t)
{
        struct exit_verdicts *v;
        bool has = word_buf_get_bool(rd);
        size_t n;

        if (!has) {
                (void)word_buf_get_max(rd, 0);  /* none: a count of 0 */
                return;
        }
        v = t->verdicts = calloc(1, sizeof(*v));
        if (!v) {
                rd->enomem = true;
                rd->ok = false;
                return;
        }
        n = word_buf_get_array(rd, EXIT_VERDICT_WORDS * sizeof(uint64_t), sizeof(*v->items), (void **)&v->items);
        for (size_t i = 0; i < n && rd->ok; i++) {
                struct exit_verdict *k = &v->items[v->n++];

                k->stack_id = (int64_t)word_buf_get_max(rd, INT64_MAX);
                k->verdict = (uint32_t)word_buf_get_max(rd, EXIT_VERDICT_KINDS - 1);
                k->points_missing = (uint32_t)word_buf_get_max(rd, UINT32_MAX);
                k->slope_bytes_per_s = get_double(rd);
                k->fit_r2 = get_double(rd);
                k->recent_growth_bytes = get_double(rd);
                k->first_bytes = get_double(rd);
                k->last_bytes = get_double(rd);
        }
        /* found by a binary search: in order, each stack once */
        if (rd->ok && exit_verdicts_sort(v) < 0)
                rd->ok = false;
}

int exited_file_decode(const void *data, size_t n, struct target *t, struct exited_file_id **ret_ids)
{
        struct word_buf_reader rd = { .p = data, .n = n >= sizeof(uint64_t) ? n - sizeof(uint64_t) : 0, .ok = true };
        _cleanup_free_ struct exited_file_id *ids = NULL;
        uint64_t sum, magic;

        assert(data || n == 0);
        assert(t);
        assert(ret_ids);
        if (n < 2 * sizeof(uint64_t))
                return -EBADMSG;
        memcpy(&sum, (const unsigned char *)data + n - sizeof(sum), sizeof(sum));
        if (sum != checksum(data, n - sizeof(sum)))
                return -EBADMSG;
        magic = word_buf_get(&rd);
        if (magic != EXITED_FILE_MAGIC && magic != EXITED_FILE_MAGIC_2)
                return -EBADMSG;
        get_identity(&rd, t);
        get_counts(&rd, t);
        get_objects(&rd, t);
        get_forwarders(&rd, t);
        get_modules(&rd, t, &ids);
        get_rows(&rd, t);
        get_ring(&rd, t);
        get_jit_names(&rd, t);
        get_exit_scan(&rd, t);
        if (magic == EXITED_FILE_MAGIC)
                get_verdicts(&rd, t);
        if (rd.enomem)
                return -ENOMEM;
        if (!rd.ok || rd.at != rd.n || !t->ring)
                return -EBADMSG;
        t->phase = TARGET_PHASE_EXITED;
        *ret_ids = TAKE_PTR(ids);
        return 0;
}
