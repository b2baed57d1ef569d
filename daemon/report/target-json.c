/* SPDX-License-Identifier: GPL-2.0-only */
/* A target's fields every reply that names it shares, serialised once (pure). */
#include <errno.h>
#include "auto-sample-json.h"
#include "json-util.h"
#include "macro.h"
#include "reply-fields.h"
#include "target-json.h"

static void add_outstanding(cJSON *o, const struct target_json *t)
{
        json_add_u64(o, RF_OUTSTANDING_BYTES, t->outstanding_bytes);
        json_add_u64(o, RF_OUTSTANDING_ALLOCS, t->outstanding_allocs);
        json_add_u64(o, RF_OUTSTANDING_MMAP_BYTES, t->outstanding_mmap_bytes);
        json_add_u64(o, RF_OUTSTANDING_MMAPS, t->outstanding_mmaps);
}

static void add_attach(cJSON *o, const struct target_json *t)
{
        json_add_u64(o, RF_ATTACHED_S, t->attached_s);
        json_add_string_or_null(o, RF_ALLOCATOR, t->allocator);
        json_add_string_or_null(o, RF_ALLOCATOR_REASON, t->allocator_reason);
}

static void add_forks(cJSON *o, const struct target_json *t)
{
        json_add_u64(o, RF_CHILDREN_FORKED, t->children_forked);
        cJSON_AddBoolToObject(o, RF_FOLLOW_FORKS, t->follow_forks);
        json_add_u64(o, RF_CHILDREN_FOLLOWED, t->children_followed);
        json_add_u64(o, RF_CHILDREN_MISSED, t->children_missed);
        json_add_u64(o, RF_CHILDREN_MISSED_EXITED, t->children_missed_exited);
        if (t->forked_from)
                cJSON_AddNumberToObject(o, RF_FORKED_FROM, t->forked_from);
        else
                cJSON_AddNullToObject(o, RF_FORKED_FROM);
}

cJSON *target_json_new(const struct target_json *t)
{
        _cleanup_json_ cJSON *o = cJSON_CreateObject();

        if (!o)
                return NULL;
        cJSON_AddNumberToObject(o, RF_PID, t->pid);
        json_add_string_or_null(o, RF_COMM, t->comm);
        if (t->has_outstanding)
                add_outstanding(o, t);
        cJSON_AddBoolToObject(o, RF_EXITED, t->exited);
        if (t->has_attach)
                cJSON_AddBoolToObject(o, RF_MMAP, t->mmap);
        cJSON_AddNumberToObject(o, RF_SNAPSHOTS, t->snapshots);
        json_add_u64(o, RF_SAMPLE_BYTES, t->sample_bytes);
        if (t->auto_sample ? auto_sample_json_add(o, t->auto_sample) < 0 : !cJSON_AddNullToObject(o, RF_AUTO_SAMPLE))
                return NULL;
        if (t->has_attach)
                add_attach(o, t);
        add_forks(o, t);
        json_add_string_or_null(o, RF_UNIT, t->watch_is_unit ? t->watch_name : NULL);
        json_add_string_or_null(o, RF_CGROUP, t->watch_is_unit ? NULL : t->watch_name);
        return TAKE_PTR(o);
}
