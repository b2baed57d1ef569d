/* SPDX-License-Identifier: MIT */
/* Enum names through one table each (systemd src/basic/string-table.h): a table indexed by the
 * enum, and the lookups it defines. */
#pragma once

#include <string.h>
#include "macro.h"

/* const char *name_to_string(type i): the table's entry, NULL past its end or for a hole. */
#define DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type)                                \
        const char *name##_to_string(type i)                                            \
        {                                                                               \
                if ((size_t)i >= ELEMENTSOF(name##_table))                              \
                        return NULL;                                                    \
                return name##_table[i];                                                 \
        }

/* type name_from_string(const char *s): the index whose entry is s, or -1. */
#define DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type)                              \
        type name##_from_string(const char *s)                                          \
        {                                                                               \
                for (size_t i = 0; s && i < ELEMENTSOF(name##_table); i++)              \
                        if (name##_table[i] && strcmp(name##_table[i], s) == 0)         \
                                return (type)i;                                         \
                return (type)-1;                                                        \
        }

#define DEFINE_STRING_TABLE_LOOKUP(name, type)                                          \
        DEFINE_STRING_TABLE_LOOKUP_TO_STRING(name, type)                                \
        DEFINE_STRING_TABLE_LOOKUP_FROM_STRING(name, type)
