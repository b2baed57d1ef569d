/* SPDX-License-Identifier: GPL-2.0-only */
/* The file mappings BPF recorded for a target as it made them (record_file_mapping). */
#include <assert.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include "bpf-loader.h"
#include "bpf-types.h"
#include "macro.h"
#include "map-dump.h"
#include "mapping-log.h"

/* The kernel's dev_t: 12 bits of major above 20 of minor (include/linux/kdev_t.h). */
#define KERNEL_MINOR_BITS 20
#define KERNEL_MINOR_MASK ((1u << KERNEL_MINOR_BITS) - 1)

static const char *const recording_programs[] = { "record_exec", "record_mmap_exit" };

struct mapping_log {
        struct memleak_bpf *skel;
        struct bpf_link *links[ELEMENTSOF(recording_programs)];
        unsigned holds;
};

int mapping_log_new(struct memleak_bpf *skel, struct mapping_log **ret)
{
        struct mapping_log *l = calloc(1, sizeof(*l));

        assert(skel);
        assert(ret);
        if (!l)
                return -ENOMEM;
        l->skel = skel;
        *ret = l;
        return 0;
}

struct mapping_log *mapping_log_free(struct mapping_log *l)
{
        if (!l)
                return NULL;
        for (size_t i = 0; i < ELEMENTSOF(l->links); i++)
                bpf_link__destroy(l->links[i]);
        free(l);
        return NULL;
}

int mapping_log_hold(struct mapping_log *l)
{
        assert(l);
        if (l->holds > 0) {
                l->holds++;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(recording_programs); i++) {
                struct bpf_program *prog = bpf_object__find_program_by_name(bpf_loader_object(l->skel),
                                                                            recording_programs[i]);
                int r = prog ? 0 : -ENOENT;

                if (prog && !(l->links[i] = bpf_program__attach(prog)))
                        r = -errno;
                if (r < 0) {
                        for (size_t j = 0; j < i; j++) {
                                bpf_link__destroy(l->links[j]);
                                l->links[j] = NULL;
                        }
                        return r;
                }
        }
        l->holds = 1;
        return 0;
}

void mapping_log_release(struct mapping_log *l)
{
        assert(l);
        if (l->holds == 0 || --l->holds > 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(l->links); i++) {
                bpf_link__destroy(l->links[i]);
                l->links[i] = NULL;
        }
}

int mapping_log_read(struct mapping_log *l, pid_t pid, struct recorded_mapping **ret, size_t *n)
{
        _cleanup_(map_dump_done) struct map_dump d = {};
        struct recorded_mapping *out;
        size_t k = 0;
        int r;

        assert(l);
        assert(ret);
        assert(n);
        r = map_dump_hash(bpf_loader_file_mappings_fd(l->skel), sizeof(struct file_mapping_key),
                          sizeof(struct file_mapping), MEMLEAK_FILE_MAPPINGS_MAX, &d);
        if (r < 0)
                return r;
        out = calloc(MAX(d.n, (size_t)1), sizeof(*out));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < d.n; i++) {
                const struct file_mapping_key *key = (const struct file_mapping_key *)d.keys + i;
                const struct file_mapping *v = (const struct file_mapping *)d.values + i;

                if (key->tgid != (__u32)pid)
                        continue;
                out[k++] = (struct recorded_mapping) {
                        .start = key->start, .end = v->end, .pgoff = v->pgoff,
                        .dev = makedev(v->dev >> KERNEL_MINOR_BITS, v->dev & KERNEL_MINOR_MASK),
                        .ino = v->ino, .mm = v->mm, .timestamp_ns = v->timestamp_ns,
                };
        }
        *ret = out;
        *n = k;
        return 0;
}

static bool mapping_of(const void *key, const void *value, void *userdata)
{
        return ((const struct file_mapping_key *)key)->tgid == (__u32)*(const pid_t *)userdata;
}

void mapping_log_purge(struct mapping_log *l, pid_t pid)
{
        assert(l);
        (void)map_dump_purge(bpf_loader_file_mappings_fd(l->skel), sizeof(struct file_mapping_key),
                             sizeof(struct file_mapping), MEMLEAK_FILE_MAPPINGS_MAX, mapping_of, &pid);
}
