/* SPDX-License-Identifier: GPL-2.0-only */
/* Unit tests for daemon/targets/exited-file.c: an exited target's record survives an encode and a
 * decode whole (rows with their addresses, modules with their files' identities, counters, the
 * ring's sums, its stacks' verdicts at its exit, who it was), a record of the version before
 * ("MEMEXIT2") is read as one without verdicts, and bytes it did not write (cut, altered, or well summed but out of
 * bounds) are refused without reading or allocating past them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit-verdicts.h"
#include "exited-file.h"
#include "macro.h"
#include "perf-map.h"
#include "snapshot.h"
#include "stack-collect.h"
#include "target.h"
#include "test-util.h"

static struct target *blank(void)
{
        struct target *t = calloc(1, sizeof(*t));

        ASSERT_TRUE(t);
        *t = (struct target) { .pidfd = -1, .jit_source = { .root_fd = -EBADF } };
        return t;
}

static struct target *sample(struct exited_file_id ids[3])
{
        struct target *t = blank();
        struct stack_row *rows;

        t->pid = 4242;
        strcpy(t->comm, "worker-3");
        t->phase = TARGET_PHASE_EXITED;
        t->attached_usec = 1795000000000000ULL;
        t->exited_usec = 1795000003600000ULL;
        t->proc_start_time = 998877;
        t->follow_forks = true;
        t->asked_by_user = true;
        t->asker_uid = 1000;
        t->asker_gid = 1000;
        t->creds_read = true;
        t->creds = (struct proc_creds) { .uid = { 1000, 1000, 1000, 1000 }, .gid = { 100, 100, 100, 100 },
                                         .dumpable = true };
        t->parent_pid = 4000;
        t->parent_link.pid = 3999;              /* re-linked to its grandparent */
        t->parent_link.start_time = 887766;
        t->watch_is_unit = true;
        t->watch_name = strdup("nginx.service");
        t->allocator = "jemalloc";
        t->allocator_reason = strdup("libjemalloc.so.2 defines malloc first");
        t->filter.sample_bytes = 4096;
        t->counters.stopped = true;
        for (size_t c = 0; c < _COUNTER_MAX; c++)
                t->counters.final[c] = 7 * c + 1;
        t->children_forked = 5;
        t->children_followed = 4;
        t->children_missed = 1;
        t->children_missed_exited = 1;
        for (uint32_t i = 0; i < AUTO_SAMPLE_CHANGES_MAX + 3; i++)
                auto_sample_note(&t->auto_sample, &(struct auto_sample_change) {
                        .at_usec = 1795000001000000ULL + i, .sample_bytes = 512u << (i % 8), .fill_percent = 80 + i,
                        .blocks = 1000 + i });
        t->unwind.mode = MEMLEAK_UNWIND_DWARF;
        t->unwind.tables = 3;
        t->unwind.rows = 12345;
        t->code_hold_stats.holds = 2;
        t->objects = calloc(1, sizeof(*t->objects));
        t->objects[0] = (struct target_object) { .path = strdup("/usr/lib/libjemalloc.so.2"), .probes = 9,
                                                 .forwarded = 2, .role = OBJECT_ROLE_ALLOCATOR, .fd = -1 };
        t->n_objects = 1;
        t->forwarders = calloc(1, sizeof(*t->forwarders));
        t->forwarders[0] = (struct file_range) { .dev = 2049, .ino = 77, .start = 0x1000, .end = 0x1040 };
        t->n_forwarders = 1;
        t->modules.read_ns = 555;
        t->modules.mappings = calloc(3, sizeof(*t->modules.mappings));
        t->modules.mappings[0] = (struct module_mapping) { .start = 0x400000, .end = 0x401000, .pgoff = 0,
                .dev = 2049, .ino = 10, .path = strdup("/usr/bin/worker"), .not_code = true };
        t->modules.mappings[1] = (struct module_mapping) { .start = 0x401000, .end = 0x405000, .pgoff = 0x1000,
                .dev = 2049, .ino = 10, .path = strdup("/usr/bin/worker") };
        t->modules.mappings[2] = (struct module_mapping) { .start = 0x7f0000000000, .end = 0x7f0000100000,
                .dev = 2049, .ino = 77, .path = strdup("/usr/lib/libjemalloc.so.2") };
        t->modules.n = 3;
        t->modules.anon_code = calloc(1, sizeof(*t->modules.anon_code));
        t->modules.anon_code[0] = (struct address_range) { .start = 0x10000000, .end = 0x10010000 };
        t->modules.n_anon_code = 1;
        ids[0] = (struct exited_file_id) { .known = true, .build_id_len = 20, .size = 123456, .mtime_ns = -5 };
        memset(ids[0].build_id, 0xab, 20);
        ids[1] = ids[0];
        ids[2] = (struct exited_file_id) { .known = false };
        t->frozen = calloc(1, sizeof(*t->frozen));
        rows = t->frozen->rows.rows = calloc(3, sizeof(*rows));
        rows[0] = (struct stack_row) { .pid = 4242, .stack_id = 17, .bytes = 16016, .allocs = 16, .n_cut = 1,
                                       .n_allocator = 2, .unwind_stop = 3 };
        rows[0].ips = calloc(3, sizeof(uint64_t));
        rows[0].ips[0] = 0x401234;
        rows[0].ips[1] = 0x7f0000000100;
        rows[0].ips[2] = 0x10000004;
        rows[0].n_ips = 3;
        rows[1] = (struct stack_row) { .pid = 4242, .stack_id = -14, .bytes = 100, .allocs = 1 };  /* no stack */
        rows[2] = (struct stack_row) { .pid = 4242, .space = 1, .stack_id = 18, .bytes = 1 << 20, .allocs = 1,
                                       .ips = calloc(1, sizeof(uint64_t)), .n_ips = 1 };
        t->frozen->rows.n = 3;
        {
                /* its JIT code's names: one names a frame (0x10000004's call), one does not */
                static const char text[] = "10000000 10 jit_stub\n20000000 10 jit_unused\n10000000 2 jit_stale\n";
                FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");

                ASSERT_TRUE(f);
                ASSERT_EQ(perf_map_parse(f, &t->perf_map), 0);
                fclose(f);
        }
        t->exit_scan_bytes = 11;
        t->exit_scan = malloc(t->exit_scan_bytes);
        memcpy(t->exit_scan, "opaque\0scan", t->exit_scan_bytes);
        /* its heap stacks' verdicts at its exit: one grew, one had too few snapshots */
        t->verdicts = calloc(1, sizeof(*t->verdicts));
        ASSERT_TRUE(t->verdicts);
        t->verdicts->items = calloc(2, sizeof(*t->verdicts->items));
        ASSERT_TRUE(t->verdicts->items);
        t->verdicts->items[0] = (struct exit_verdict) { .stack_id = 17, .verdict = 1, .slope_bytes_per_s = 2220.5,
                .fit_r2 = 0.998, .recent_growth_bytes = 3330, .first_bytes = 111, .last_bytes = 16016 };
        t->verdicts->items[1] = (struct exit_verdict) { .stack_id = 40, .verdict = 0, .points_missing = 3,
                .first_bytes = 64, .last_bytes = 64 };
        t->verdicts->n = 2;
        ASSERT_EQ(snapshot_ring_new(4, &t->ring), 0);
        for (uint64_t i = 0; i < 6; i++) {
                uint64_t counters[_COUNTER_MAX] = { [0] = i };

                snapshot_ring_push_sums(t->ring, 1795000000000000ULL + i * 1000000, 1000 * i, i);
                if (i % 2)
                        snapshot_ring_set_counters(t->ring, counters);
        }
        return t;
}

static void assert_same(const struct target *a, const struct target *b)
{
        ASSERT_EQ(a->pid, b->pid);
        ASSERT_STREQ(a->comm, b->comm);
        ASSERT_EQ(b->phase, TARGET_PHASE_EXITED);
        ASSERT_EQ(a->attached_usec, b->attached_usec);
        ASSERT_EQ(a->exited_usec, b->exited_usec);
        ASSERT_EQ(a->proc_start_time, b->proc_start_time);
        ASSERT_EQ(a->follow_forks, b->follow_forks);
        ASSERT_EQ(a->asked_by_user, b->asked_by_user);
        ASSERT_EQ(a->asker_uid, b->asker_uid);
        ASSERT_TRUE(memcmp(&a->creds, &b->creds, sizeof(a->creds)) == 0);
        ASSERT_EQ(a->creds_read, b->creds_read);
        ASSERT_EQ(a->parent_pid, b->parent_pid);
        ASSERT_EQ(a->parent_link.pid, b->parent_link.pid);
        ASSERT_EQ(a->parent_link.start_time, b->parent_link.start_time);
        ASSERT_EQ(b->parent_id, 0);
        ASSERT_EQ(a->exit_scan_bytes, b->exit_scan_bytes);
        ASSERT_EQ(!a->exit_scan, !b->exit_scan);
        ASSERT_TRUE(!a->exit_scan || memcmp(a->exit_scan, b->exit_scan, a->exit_scan_bytes) == 0);
        ASSERT_STREQ(a->watch_name, b->watch_name);
        ASSERT_EQ(a->watch_is_unit, b->watch_is_unit);
        ASSERT_TRUE(a->allocator && b->allocator && strcmp(a->allocator, b->allocator) == 0);
        ASSERT_STREQ(a->allocator_reason, b->allocator_reason);
        ASSERT_EQ(a->filter.sample_bytes, b->filter.sample_bytes);
        ASSERT_EQ(a->counters.stopped, b->counters.stopped);
        ASSERT_TRUE(memcmp(a->counters.final, b->counters.final, sizeof(a->counters.final)) == 0);
        ASSERT_EQ(a->children_forked, b->children_forked);
        ASSERT_EQ(a->children_missed_exited, b->children_missed_exited);
        ASSERT_TRUE(memcmp(&a->auto_sample, &b->auto_sample, sizeof(a->auto_sample)) == 0);
        ASSERT_EQ(a->unwind.mode, b->unwind.mode);
        ASSERT_EQ(a->unwind.rows, b->unwind.rows);
        ASSERT_EQ(a->code_hold_stats.holds, b->code_hold_stats.holds);
        ASSERT_EQ(a->n_objects, b->n_objects);
        for (size_t i = 0; i < a->n_objects; i++) {
                ASSERT_STREQ(a->objects[i].path, b->objects[i].path);
                ASSERT_EQ(a->objects[i].probes, b->objects[i].probes);
                ASSERT_EQ(a->objects[i].role, b->objects[i].role);
                ASSERT_EQ(b->objects[i].fd, -1);
        }
        ASSERT_EQ(a->n_forwarders, b->n_forwarders);
        ASSERT_TRUE(memcmp(a->forwarders, b->forwarders, a->n_forwarders * sizeof(*a->forwarders)) == 0);
        ASSERT_EQ(a->modules.read_ns, b->modules.read_ns);
        ASSERT_EQ(a->modules.n, b->modules.n);
        for (size_t i = 0; i < a->modules.n; i++) {
                const struct module_mapping *x = &a->modules.mappings[i], *y = &b->modules.mappings[i];

                ASSERT_EQ(x->start, y->start);
                ASSERT_EQ(x->end, y->end);
                ASSERT_EQ(x->pgoff, y->pgoff);
                ASSERT_EQ(x->dev, y->dev);
                ASSERT_EQ(x->ino, y->ino);
                ASSERT_EQ(x->not_code, y->not_code);
                ASSERT_STREQ(x->path, y->path);
        }
        ASSERT_EQ(a->modules.n_anon_code, b->modules.n_anon_code);
        ASSERT_EQ(a->modules.anon_code[0].end, b->modules.anon_code[0].end);
        ASSERT_EQ(a->frozen->rows.n, b->frozen->rows.n);
        for (size_t i = 0; i < a->frozen->rows.n; i++) {
                const struct stack_row *x = &a->frozen->rows.rows[i], *y = &b->frozen->rows.rows[i];

                ASSERT_EQ(x->pid, y->pid);
                ASSERT_EQ(x->space, y->space);
                ASSERT_EQ(x->stack_id, y->stack_id);
                ASSERT_EQ(x->bytes, y->bytes);
                ASSERT_EQ(x->allocs, y->allocs);
                ASSERT_EQ(x->n_cut, y->n_cut);
                ASSERT_EQ(x->n_allocator, y->n_allocator);
                ASSERT_EQ(x->unwind_stop, y->unwind_stop);
                ASSERT_EQ(x->n_ips, y->n_ips);
                ASSERT_EQ(!x->ips, !y->ips);
                ASSERT_TRUE(x->n_ips == 0 || memcmp(x->ips, y->ips, x->n_ips * sizeof(*x->ips)) == 0);
        }
        /* each frame named as before, from no more of the map than its frames need */
        for (size_t i = 0; i < a->frozen->rows.n; i++)
                for (size_t k = 0; k < a->frozen->rows.rows[i].n_ips; k++) {
                        uint64_t addr = a->frozen->rows.rows[i].ips[k] - 1, oa = 0, ob = 0;
                        const char *na = a->perf_map ? perf_map_find(a->perf_map, addr, &oa) : NULL;
                        const char *nb = b->perf_map ? perf_map_find(b->perf_map, addr, &ob) : NULL;

                        ASSERT_EQ(!na, !nb);
                        ASSERT_TRUE(!na || (strcmp(na, nb) == 0 && oa == ob));
                }
        ASSERT_TRUE(!b->perf_map || !perf_map_find(b->perf_map, 0x20000004, NULL));
        ASSERT_EQ(snapshot_ring_count(a->ring), snapshot_ring_count(b->ring));
        for (uint32_t i = 0; i < snapshot_ring_count(a->ring); i++) {
                const struct snapshot *x = snapshot_ring_get(a->ring, i), *y = snapshot_ring_get(b->ring, i);

                ASSERT_EQ(x->timestamp_usec, y->timestamp_usec);
                ASSERT_EQ(x->bytes, y->bytes);
                ASSERT_EQ(x->allocs, y->allocs);
                ASSERT_EQ(x->has_counters, y->has_counters);
                ASSERT_TRUE(memcmp(x->counters, y->counters, sizeof(x->counters)) == 0);
                ASSERT_EQ(y->n_rows, 0);
        }
        ASSERT_EQ(!a->verdicts, !b->verdicts);
        ASSERT_EQ(a->verdicts ? a->verdicts->n : 0, b->verdicts ? b->verdicts->n : 0);
        for (size_t i = 0; a->verdicts && i < a->verdicts->n; i++)
                ASSERT_TRUE(memcmp(&a->verdicts->items[i], &b->verdicts->items[i], sizeof(a->verdicts->items[i])) == 0);
}

static void exited_file_round_trips_an_exited_target(void)
{
        struct exited_file_id ids[3], *back_ids = NULL;
        struct target *t = sample(ids), *back = blank();
        void *data = NULL;
        size_t n = 0;

        ASSERT_EQ(exited_file_encode(t, ids, &data, &n), 0);
        ASSERT_EQ(exited_file_decode(data, n, back, &back_ids), 0);
        assert_same(t, back);
        ASSERT_TRUE(memcmp(ids, back_ids, sizeof(ids)) == 0);
        ASSERT_EQ(snapshot_ring_count(back->ring), 4);  /* the newest of 6 */
        ASSERT_STREQ(perf_map_find(back->perf_map, 0x10000003, NULL), "jit_stub");
        ASSERT_EQ(exit_verdicts_find(back->verdicts, 17)->verdict, 1);
        ASSERT_EQ(exit_verdicts_find(back->verdicts, 40)->points_missing, 3);
        ASSERT_TRUE(exit_verdicts_find(back->verdicts, 18) == NULL);
        free(back_ids);
        target_free(back);
        free(data);
        target_free(t);
}

/* Without JIT names nor a scan: none read back. */
static void exited_file_round_trips_a_target_without_jit_names_or_scan(void)
{
        struct exited_file_id ids[3], *back_ids = NULL;
        struct target *t = sample(ids), *back = blank();
        void *data = NULL;
        size_t n = 0;

        t->perf_map = perf_map_unref(t->perf_map);
        free(t->exit_scan);
        t->exit_scan = NULL;
        t->exit_scan_bytes = 0;
        t->parent_link.pid = 0;
        t->parent_link.start_time = 0;
        ASSERT_EQ(exited_file_encode(t, ids, &data, &n), 0);
        ASSERT_EQ(exited_file_decode(data, n, back, &back_ids), 0);
        assert_same(t, back);
        ASSERT_TRUE(back->perf_map == NULL);
        ASSERT_TRUE(back->exit_scan == NULL);
        free(back_ids);
        target_free(back);
        free(data);
        target_free(t);
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
        uint64_t h = 0xcbf29ce484222325ULL;

        for (size_t i = 0; i < n; i++) {
                h ^= p[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}

static int decode_fresh(const void *data, size_t n);

/* A record "MEMEXIT2" wrote: this one without its verdicts (the last two words before the
 * checksum, none kept: 0 and a count of 0), under the magic before. Read whole, as a target that
 * kept no verdicts; one that kept some, under that magic, is refused (bytes past its end). */
static void exited_file_reads_the_version_before_without_verdicts(void)
{
        struct exited_file_id ids[3], *back_ids = NULL;
        struct target *t = sample(ids), *back = blank();
        unsigned char *data = NULL;
        size_t n = 0;
        uint64_t sum, words[2];

        t->verdicts = exit_verdicts_free(t->verdicts);
        ASSERT_EQ(exited_file_encode(t, ids, (void **)&data, &n), 0);
        memcpy(words, data + n - 3 * sizeof(uint64_t), sizeof(words));
        ASSERT_EQ(words[0], 0);
        ASSERT_EQ(words[1], 0);
        ASSERT_TRUE(memcmp(data, "MEMEXIT3", 8) == 0);
        memcpy(data, "MEMEXIT2", 8);
        n -= 2 * sizeof(uint64_t);
        sum = fnv(data, n - sizeof(sum));
        memcpy(data + n - sizeof(sum), &sum, sizeof(sum));
        ASSERT_EQ(exited_file_decode(data, n, back, &back_ids), 0);
        assert_same(t, back);
        ASSERT_TRUE(back->verdicts == NULL);
        free(back_ids);
        target_free(back);
        free(data);
        target_free(t);

        t = sample(ids);
        ASSERT_EQ(exited_file_encode(t, ids, (void **)&data, &n), 0);
        memcpy(data, "MEMEXIT2", 8);
        sum = fnv(data, n - sizeof(sum));
        memcpy(data + n - sizeof(sum), &sum, sizeof(sum));
        ASSERT_EQ(decode_fresh(data, n), -EBADMSG);
        free(data);
        target_free(t);
}

static int decode_fresh(const void *data, size_t n)
{
        struct exited_file_id *ids = NULL;
        struct target *t = blank();
        int r = exited_file_decode(data, n, t, &ids);

        ASSERT_TRUE(r == 0 ? ids != NULL : ids == NULL);
        free(ids);
        target_free(t);
        return r;
}

static void exited_file_refuses_what_it_did_not_write(void)
{
        struct exited_file_id ids[3];
        struct target *t = sample(ids);
        unsigned char *data = NULL;
        uint64_t sum;
        size_t n = 0;

        ASSERT_EQ(exited_file_encode(t, ids, (void **)&data, &n), 0);
        /* an earlier version's magic ("MEMEXIT1"), well summed: refused, as a corrupt file is */
        memcpy(data, "MEMEXIT1", 8);
        sum = fnv(data, n - sizeof(sum));
        memcpy(data + n - sizeof(sum), &sum, sizeof(sum));
        ASSERT_EQ(decode_fresh(data, n), -EBADMSG);
        free(data);
        ASSERT_EQ(exited_file_encode(t, ids, (void **)&data, &n), 0);
        for (size_t cut = 0; cut < n; cut++)
                ASSERT_EQ(decode_fresh(data, cut), -EBADMSG);
        for (size_t i = 0; i < n; i += 5) {
                data[i] ^= 0x10;
                ASSERT_EQ(decode_fresh(data, n), -EBADMSG);
                data[i] ^= 0x10;
        }
        ASSERT_EQ(decode_fresh(data, n), 0);
        free(data);
        target_free(t);
}

/* Each word made huge, or zero, or all ones, the checksum made right again: refused or read as
 * what it says, never past the bytes given (run under ASan) nor into a huge allocation. */
static void exited_file_bounds_every_count_it_reads(void)
{
        static const uint64_t values[] = { 0, 1, UINT32_MAX, 1ULL << 40, UINT64_MAX };
        struct exited_file_id ids[3];
        struct target *t = sample(ids);
        unsigned char *data = NULL, *copy;
        size_t n = 0;
        unsigned refused = 0;

        ASSERT_EQ(exited_file_encode(t, ids, (void **)&data, &n), 0);
        copy = malloc(n);
        ASSERT_TRUE(copy);
        for (size_t at = 0; at + 2 * sizeof(uint64_t) <= n; at += sizeof(uint64_t))
                for (size_t v = 0; v < ELEMENTSOF(values); v++) {
                        uint64_t sum;
                        int r;

                        memcpy(copy, data, n);
                        memcpy(copy + at, &values[v], sizeof(values[v]));
                        sum = fnv(copy, n - sizeof(sum));
                        memcpy(copy + n - sizeof(sum), &sum, sizeof(sum));
                        r = decode_fresh(copy, n);
                        ASSERT_TRUE(r == 0 || r == -EBADMSG);
                        refused += r == -EBADMSG;
                }
        ASSERT_TRUE(refused > 0);
        free(copy);
        free(data);
        target_free(t);
}

static const struct unit_test tests[] = {
        TEST(exited_file_round_trips_an_exited_target),
        TEST(exited_file_round_trips_a_target_without_jit_names_or_scan),
        TEST(exited_file_refuses_what_it_did_not_write),
        TEST(exited_file_reads_the_version_before_without_verdicts),
        TEST(exited_file_bounds_every_count_it_reads),
};

int main(void)
{
        return run_unit_tests(tests, ELEMENTSOF(tests));
}
