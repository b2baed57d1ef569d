/* SPDX-License-Identifier: MIT */
/* A report as a pprof profile (google/pprof's profile.proto, common/profile.proto), the input of
 * go tool pprof, Pyroscope, Parca and speedscope: encoded by protobuf-c, then gzip'd as pprof
 * files are (pure: cJSON in, bytes out). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>

/* The report as a Profile, packed, not compressed: sample types inuse_objects (count) and
 * inuse_space (bytes, the default), one Sample a stack with its pid, comm and unit as string
 * labels (and kind: heap or mmap); a sampled target's heap samples carry its mean as the number
 * label sample_bytes (their values are the report's estimates), Profile.period the mean when every
 * target shares one, and a comment per sampled target says so with the error the report states.
 * A Location is an address of a process with the frames it stands for as Lines (inlined ones
 * first, as in the report), a Mapping a module of a process, spanning the addresses the report
 * has of it (its file offsets from module_offset, its build ID from the frames' build_id), a Function
 * a symbol in a file. The stacks past top are one sample, "[other: N stacks past top T]"; a
 * stack without frames one of "[no stack: why]"; the report's non-zero lost counters are a
 * comment, and so is what --suppressions took out of it (its "suppressed"). No alloc_space/alloc_objects: the report has no per-stack total allocations.
 * 0 with a malloc'd buffer, -EBADMSG when the report has no stacks, -ENOMEM. */
int pprof_export_encode(const cJSON *report, uint8_t **ret, size_t *ret_size);

/* size bytes at data as a gzip stream (RFC 1952: what pprof reads), malloc'd. 0, -ENOMEM, -EFBIG past
 * 4 GiB (zlib counts in 32 bits), -EIO. */
int pprof_export_gzip(const uint8_t *data, size_t size, uint8_t **ret, size_t *ret_size);

/* The report's profile, gzip'd, written to f: a renderer of call.h's views. 0, -EBADMSG, -ENOMEM,
 * -EIO when the stream failed. */
int pprof_export_write(FILE *f, const cJSON *report);
