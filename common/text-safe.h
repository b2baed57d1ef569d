/* SPDX-License-Identifier: MIT */
/* Text a traced process controls (its comm, its file paths, the symbols in its files), made safe:
 * valid UTF-8 on the wire, and nothing a terminal would act on when printed. */
#pragma once

#include <stdbool.h>
#include <cjson/cJSON.h>

/* Whether s is valid UTF-8 (no overlongs, surrogates or code points past U+10FFFF). */
bool utf8_valid(const char *s);

/* s with every byte that is not part of valid UTF-8 replaced by U+FFFD. malloc'd. */
char *utf8_repair(const char *s);

/* s (valid UTF-8) with what a terminal acts on spelled out: C0 controls, DEL and C1 controls as
 * \xHH, bidirectional overrides and isolates as \u202E and the like, and a backslash as \\.
 * malloc'd. */
char *text_escape_controls(const char *s);

/* Whether s holds anything text_escape_controls() spells out. */
bool text_has_controls(const char *s);

/* Replace every string in the tree (values, and the keys of objects) for which needs() says so
 * by fn(string): json_strings_map(reply, utf8_needs_repair, utf8_repair). -ENOMEM. */
int json_strings_map(cJSON *root, bool (*needs)(const char *s), char *(*fn)(const char *s));
bool utf8_needs_repair(const char *s);
