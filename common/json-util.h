/* SPDX-License-Identifier: MIT */
/* cJSON cleanup and typed accessors used on both sides of the wire. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(cJSON *, cJSON_Delete)
#define _cleanup_json_ _cleanup_(cJSON_Deletep)

/* A JSON number that is an exact non-negative integer no larger than max: 0, else -EINVAL. */
int json_get_u64(const cJSON *item, uint64_t max, uint64_t *ret);

/* Add a 64-bit unsigned as a JSON number. cJSON prints 15 significant digits, so values are
 * exact below 10^15 (a petabyte of outstanding bytes); ids are capped at 2^32 for this reason. */
cJSON *json_add_u64(cJSON *obj, const char *name, uint64_t v);
/* v written as its decimal digits, never in exponent form (cJSON prints 5636063579599020 as
 * 5.63606357959902e+15, which a reader takes for a float, and 6474599761542939 as
 * 6.47459976154294e+15, which is another number: its check allows a relative error): for ids. In the tree it is raw text,
 * not a number, until printed and parsed again. */
cJSON *json_add_u64_digits(cJSON *obj, const char *name, uint64_t v);
/* Make every integral number from 10^15 to 2^53 in the tree at item (and its siblings) print as
 * its digits (see json_add_u64_digits): a parsed reply printed again keeps its ids exact. */
int json_integers_exact(cJSON *item);

/* Add a string, or null when s is NULL ("unknown fields are null, never guessed"). */
cJSON *json_add_string_or_null(cJSON *obj, const char *name, const char *s);
