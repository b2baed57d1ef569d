/* SPDX-License-Identifier: GPL-2.0-only */
#include <assert.h>
#include <errno.h>
#include "auto-sample-json.h"
#include "json-util.h"
#include "reply-fields.h"

static cJSON *change_to_json(const struct auto_sample_change *c)
{
        cJSON *o = cJSON_CreateObject();

        if (!o)
                return NULL;
        json_add_u64(o, RF_AT, c->at_usec / 1000000);
        json_add_u64(o, RF_SAMPLE_BYTES, c->sample_bytes);
        json_add_u64(o, RF_TABLE_PERCENT, c->fill_percent);
        json_add_u64(o, RF_TABLE_BLOCKS, c->blocks);
        return o;
}

int auto_sample_json_add(cJSON *o, const struct auto_sample_history *h)
{
        const struct auto_sample_change *first, *last;
        cJSON *a, *changes;

        assert(o);
        assert(h);
        first = auto_sample_first(h);
        last = auto_sample_last(h);
        if (!first)
                return cJSON_AddNullToObject(o, RF_AUTO_SAMPLE) ? 0 : -ENOMEM;
        a = cJSON_AddObjectToObject(o, RF_AUTO_SAMPLE);
        if (!a)
                return -ENOMEM;
        json_add_u64(a, RF_SINCE, first->at_usec / 1000000);
        json_add_u64(a, RF_TABLE_PERCENT, first->fill_percent);
        json_add_u64(a, RF_SAMPLE_BYTES, last->sample_bytes);
        json_add_u64(a, RF_CHANGES_TOTAL, h->n_changes);
        changes = cJSON_AddArrayToObject(a, RF_CHANGES);
        if (!changes)
                return -ENOMEM;
        for (uint32_t i = 0; i < auto_sample_kept(h); i++) {
                cJSON *c = change_to_json(&h->changes[i]);

                if (!c)
                        return -ENOMEM;
                cJSON_AddItemToArray(changes, c);
        }
        return 0;
}
