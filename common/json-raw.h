/* SPDX-License-Identifier: MIT */
/* A JSON text parsed with one array's elements kept as their text (cJSON_Raw items): a report
 * of 100,000 stacks is then a list of 100,000 strings, not a tree of millions of nodes, each
 * stack parsed when it is read (report-stacks.h). Pure. */
#pragma once

#include <stddef.h>
#include <cjson/cJSON.h>

/* The object in text[0..len) (whitespace around it allowed), parsed as cJSON_ParseWithLength()
 * would, except that the array at path (a NULL-terminated list of keys from the top object down:
 * {"report", "stacks", NULL}) has each element as a cJSON_Raw item holding that element's text.
 * Elements are not checked beyond their bounds: cJSON parses each when it is read. An absent
 * path, or one that leads to no array, leaves the text parsed as usual. 0, -EBADMSG (not one
 * JSON object), -ENOMEM. */
int json_parse_raw_array(const char *text, size_t len, const char *const *path, cJSON **ret);
