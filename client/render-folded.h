/* SPDX-License-Identifier: MIT */
/* A report as folded stacks, the input of flame graph tools (flamegraph.pl, inferno, speedscope):
 * one line a stack, its frames from the outermost to the allocating one joined by ';', then its
 * outstanding bytes (pure: cJSON in, text out). */
#pragma once

#include <stdio.h>
#include <cjson/cJSON.h>

/* "leaky (pid 1234);main;handle_request;leak_buffer 10200" for each of the report's stacks. A
 * frame is its symbol, else its module's file name and offset ("libfoo.so+0x1a2b"), else its
 * address; ';' and control characters in names (a traced process chooses its own) become '_'.
 * When the report left stacks out (past --top), a first line says so as a comment ("# ..."),
 * which flame graph tools skip. 0, -EBADMSG without stacks, -EIO when the stream failed. */
int render_folded(FILE *f, const cJSON *report);
/* The same with each stack's outstanding allocations instead of its bytes. */
int render_folded_allocs(FILE *f, const cJSON *report);
