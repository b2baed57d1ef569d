/* SPDX-License-Identifier: GPL-2.0-only */
#include <assert.h>
#include <errno.h>
#include "auto-sample-json.h"
#include "json-util.h"

static cJSON *change_to_json(const struct auto_sample_change *c)
{
        cJSON *o = cJSON_CreateObject();

        if (!o)
                return NULL;
        json_add_u64(o, "at", c->at_usec / 1000000);
        json_add_u64(o, "sample_bytes", c->sample_bytes);
        json_add_u64(o, "table_percent", c->fill_percent);
        json_add_u64(o, "table_blocks", c->blocks);
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
                return cJSON_AddNullToObject(o, "auto_sample") ? 0 : -ENOMEM;
        a = cJSON_AddObjectToObject(o, "auto_sample");
        if (!a)
                return -ENOMEM;
        json_add_u64(a, "since", first->at_usec / 1000000);
        json_add_u64(a, "table_percent", first->fill_percent);
        json_add_u64(a, "sample_bytes", last->sample_bytes);
        json_add_u64(a, "changes_total", h->n_changes);
        changes = cJSON_AddArrayToObject(a, "changes");
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
