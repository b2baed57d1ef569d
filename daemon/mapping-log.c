/* SPDX-License-Identifier: GPL-2.0-only */
/* The file mappings BPF recorded for a target as it made them (record_file_mapping). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/sysmacros.h>
#include "bpf-loader.h"
#include "bpf-types.h"
#include "macro.h"
#include "map-read.h"
#include "mapping-log.h"

/* The kernel's dev_t: 12 bits of major above 20 of minor (include/linux/kdev_t.h). */
#define KERNEL_MINOR_BITS 20
#define KERNEL_MINOR_MASK ((1u << KERNEL_MINOR_BITS) - 1)

static const char *const recording_programs[] = { "record_exec", "record_mmap_exit" };
static struct bpf_link *recording_links[ELEMENTSOF(recording_programs)];
static unsigned recording_holds;

int mapping_log_hold(struct memleak_bpf *skel)
{
        if (recording_holds > 0) {
                recording_holds++;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(recording_programs); i++) {
                struct bpf_program *prog = bpf_object__find_program_by_name(bpf_loader_object(skel),
                                                                            recording_programs[i]);
                int r = prog ? 0 : -ENOENT;

                if (prog && !(recording_links[i] = bpf_program__attach(prog)))
                        r = -errno;
                if (r < 0) {
                        for (size_t j = 0; j < i; j++) {
                                bpf_link__destroy(recording_links[j]);
                                recording_links[j] = NULL;
                        }
                        return r;
                }
        }
        recording_holds = 1;
        return 0;
}

void mapping_log_release(void)
{
        if (recording_holds == 0 || --recording_holds > 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(recording_links); i++) {
                bpf_link__destroy(recording_links[i]);
                recording_links[i] = NULL;
        }
}

int mapping_log_read(struct memleak_bpf *skel, pid_t pid, struct recorded_mapping **ret, size_t *n)
{
        _cleanup_(map_dump_done) struct map_dump d = {};
        struct recorded_mapping *out;
        size_t k = 0;
        int r;

        r = map_dump_hash(bpf_loader_file_mappings_fd(skel), sizeof(struct file_mapping_key),
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

void mapping_log_purge(struct memleak_bpf *skel, pid_t pid)
{
        _cleanup_(map_dump_done) struct map_dump d = {};
        int fd = bpf_loader_file_mappings_fd(skel);

        if (map_dump_hash(fd, sizeof(struct file_mapping_key), sizeof(struct file_mapping),
                          MEMLEAK_FILE_MAPPINGS_MAX, &d) < 0)
                return;
        for (size_t i = 0; i < d.n; i++) {
                const struct file_mapping_key *key = (const struct file_mapping_key *)d.keys + i;

                if (key->tgid == (__u32)pid)
                        bpf_map_delete_elem(fd, key);
        }
}

uint64_t mapping_log_lost(struct memleak_bpf *skel)
{
        uint64_t totals[_COUNTER_MAX];

        if (bpf_loader_read_counters(skel, totals) < 0)
                return 0;
        return totals[COUNTER_LOST_FILE_MAPPINGS];
}
